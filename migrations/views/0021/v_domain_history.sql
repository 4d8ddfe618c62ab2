-- v_domain_history: one row per university x direction x external domain: the first and
--   last run it appears in and in how many runs (migration 0002).
-- Columns: university_id, university, country, direction, domain, first_run_id,
--   last_run_id, runs.
CREATE VIEW v_domain_history AS SELECT university_id, university, country, direction, domain,
                   MIN(run_id) AS first_run_id, MAX(run_id) AS last_run_id,
                   COUNT(DISTINCT run_id) AS runs
            FROM v_environment
            GROUP BY university_id, university, country, direction, domain;
