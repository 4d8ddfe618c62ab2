-- v_country_category_share: one row per run x country x direction x category: domains
--   of the category over the country's universities and their share (migration 0002).
-- Columns: run_id, country, direction, category, domains, share, known_share.
CREATE VIEW v_country_category_share AS WITH d AS (
        SELECT DISTINCT run_id, country, direction, domain, COALESCE(category, 'uncategorised') AS category
        FROM v_environment
    ),
    g AS (
        SELECT run_id, country, direction, category, COUNT(*) AS domains
        FROM d
        GROUP BY run_id, country, direction, category
    )
    SELECT run_id, country, direction, category, domains,
           CAST(domains AS DOUBLE PRECISION)
           / CAST(SUM(domains) OVER (PARTITION BY run_id, country, direction) AS DOUBLE PRECISION) AS share,
           CASE WHEN category = 'unknown' THEN NULL ELSE
           CAST(domains AS DOUBLE PRECISION)
           / CAST(NULLIF(SUM(CASE WHEN category = 'unknown' THEN 0 ELSE domains END)
                  OVER (PARTITION BY run_id, country, direction), 0) AS DOUBLE PRECISION)
           END AS known_share
    FROM g;
