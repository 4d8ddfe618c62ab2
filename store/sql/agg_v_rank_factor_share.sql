-- agg_v_rank_factor_share: v_rank_factor_share over agg_v_category_share (migration
--   0010); same grain and columns.
-- Columns: run_id, direction, university_id, university, country, rank, impact_rank,
--   category, domains, share.
CREATE VIEW agg_v_rank_factor_share AS SELECT s.run_id AS run_id, s.direction AS direction,
                   s.university_id AS university_id, u.name AS university,
                   u.country AS country, u.rank AS rank, u.impact_rank AS impact_rank,
                   s.category AS category, s.domains AS domains,
                   CAST(s.domains AS DOUBLE PRECISION)
                   / CAST(SUM(s.domains) OVER (
                         PARTITION BY s.run_id, s.university_id, s.direction) AS DOUBLE PRECISION)
                       AS share
            FROM agg_v_category_share s
            JOIN university u ON u.id = s.university_id
            WHERE s.category NOT IN ('unknown', 'uncategorised');
