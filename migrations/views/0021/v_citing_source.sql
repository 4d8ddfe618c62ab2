-- v_citing_source: one row per cited university x citing source kind (backlinks, URL
--   list, crawl, Common Crawl graph) x citing registered domain: how often and by which
--   nodes the domain cites the university (migration 0007).
-- Columns: university_id, university, country, kind, domain, sources, hosts.
CREATE VIEW v_citing_source AS WITH cited AS (
            SELECT c.university_id AS university_id,
                   CASE WHEN c.source IN ('majestic', 'ahrefs') THEN 'backlinks'
                        ELSE 'crawl' END AS kind,
                   c.source AS source, c.citing_domain AS domain, p.host AS host
            FROM citation c
            LEFT JOIN page p ON p.id = c.page_id
            WHERE c.status = 'verified'
            UNION ALL
            SELECT n.university_id AS university_id, 'commoncrawl' AS kind,
                   n.source AS source, n.domain AS domain,
                   CASE WHEN n.level = 'host' THEN n.node END AS host
            FROM citing_node n
        )
        SELECT cited.university_id AS university_id, u.name AS university,
               u.country AS country, cited.kind AS kind, cited.domain AS domain,
               COUNT(DISTINCT cited.source) AS sources,
               COUNT(DISTINCT cited.host) AS hosts
        FROM cited
        JOIN university u ON u.id = cited.university_id
        GROUP BY cited.university_id, u.name, u.country, cited.kind, cited.domain;
