-- agg_v_category_share: v_category_share computed from the saved aggregate table
--   agg_domain_count (migration 0010); same grain and columns.
-- Columns: run_id, university_id, university, country, direction, category, domains,
--   share, known_share.
CREATE VIEW agg_v_category_share AS WITH g AS (
                SELECT run_id, university_id, direction, category, SUM(domains) AS domains
                FROM agg_domain_count
                WHERE source = 'all'
                GROUP BY run_id, university_id, direction, category
            )
            SELECT g.run_id AS run_id, g.university_id AS university_id,
                   u.name AS university, u.country AS country, g.direction AS direction,
                   g.category AS category, g.domains AS domains,
                   
           CAST(g.domains AS DOUBLE PRECISION)
           / CAST(SUM(g.domains) OVER (PARTITION BY g.run_id, g.university_id, g.direction) AS DOUBLE PRECISION) AS share,
           CASE WHEN g.category = 'unknown' THEN NULL ELSE
           CAST(g.domains AS DOUBLE PRECISION)
           / CAST(NULLIF(SUM(CASE WHEN g.category = 'unknown' THEN 0 ELSE g.domains END)
                  OVER (PARTITION BY g.run_id, g.university_id, g.direction), 0) AS DOUBLE PRECISION)
           END AS known_share
            FROM g
            JOIN university u ON u.id = g.university_id;
