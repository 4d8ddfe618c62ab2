-- v_university_table2: one row per run x university: the paper's Table 2, site pages of
--   the run's collection, external links and domains out, citing domains in (migrations
--   0008, 0018).
-- Columns: run_id, university_id, university, country, rank, site_pages,
--   external_links, external_domains, citing_pages, citing_domains.
CREATE VIEW v_university_table2 AS WITH t AS (
                SELECT run_id, university_id,
                       CAST(SUM(CASE WHEN direction = 'outgoing' THEN links ELSE 0 END) AS BIGINT)
                           AS external_links,
                       CAST(COUNT(DISTINCT CASE WHEN direction = 'outgoing' THEN domain END)
                            AS BIGINT) AS external_domains,
                       CAST(SUM(CASE WHEN direction = 'citing' THEN pages ELSE 0 END) AS BIGINT)
                           AS citing_pages,
                       CAST(COUNT(DISTINCT CASE WHEN direction = 'citing' THEN domain END)
                            AS BIGINT) AS citing_domains
                FROM v_environment
                GROUP BY run_id, university_id
            )
            SELECT t.run_id AS run_id, t.university_id AS university_id,
                   u.name AS university, u.country AS country, u.rank AS rank,
                   (SELECT COUNT(*) FROM page p
                    WHERE p.university_id = t.university_id AND p.role = 'university'
                      AND p.first_run_id <= t.run_id
                      AND COALESCE(p.last_run_id, p.first_run_id) >= t.run_id AND COALESCE(p.archive, '') = COALESCE((SELECT r.archive FROM crawl_run r WHERE r.id = t.run_id), '')) AS site_pages,
                   t.external_links AS external_links,
                   t.external_domains AS external_domains,
                   t.citing_pages AS citing_pages,
                   t.citing_domains AS citing_domains
            FROM t
            JOIN university u ON u.id = t.university_id;
