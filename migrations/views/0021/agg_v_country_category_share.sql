-- agg_v_country_category_share: v_country_category_share computed from the saved
--   aggregate table agg_country_count (migration 0010); same grain and columns.
-- Columns: run_id, country, direction, category, domains, share, known_share.
CREATE VIEW agg_v_country_category_share AS SELECT g.run_id AS run_id, g.country AS country, g.direction AS direction,
                   g.category AS category, g.domains AS domains,
                   
           CAST(g.domains AS DOUBLE PRECISION)
           / CAST(SUM(g.domains) OVER (PARTITION BY g.run_id, g.country, g.direction) AS DOUBLE PRECISION) AS share,
           CASE WHEN g.category = 'unknown' THEN NULL ELSE
           CAST(g.domains AS DOUBLE PRECISION)
           / CAST(NULLIF(SUM(CASE WHEN g.category = 'unknown' THEN 0 ELSE g.domains END)
                  OVER (PARTITION BY g.run_id, g.country, g.direction), 0) AS DOUBLE PRECISION)
           END AS known_share
            FROM agg_country_count g;
