-- v_domain_category: one row per external registered domain: its effective category
--   (the analyst's override, else the computed one), score and evidence (migration
--   0002).
-- Columns: domain, category, assigned_category, override_category, overridden, score,
--   override_note, override_at, updated_at.
CREATE VIEW v_domain_category AS SELECT dc.domain AS domain,
                   COALESCE(dc.override_category, dc.category) AS category,
                   dc.category AS assigned_category,
                   dc.override_category AS override_category,
                   CASE WHEN dc.override_category IS NOT NULL THEN 1 ELSE 0 END AS overridden,
                   dc.score AS score,
                   dc.override_note AS override_note,
                   dc.override_at AS override_at,
                   dc.updated_at AS updated_at
            FROM domain_category dc;
