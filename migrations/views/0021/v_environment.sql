-- v_environment: one row per run x university x direction (outgoing, citing) x external
--   registered domain: links, pages, the citing source kind and the domain's category;
--   the environment every other analyst view reads (migrations 0002, 0007, 0008, 0014).
-- Columns: run_id, university_id, university, country, direction, source, domain,
--   links, pages, language, category.
CREATE VIEW v_environment AS WITH base AS (
                SELECT l.run_id AS run_id, p.university_id AS university_id,
                       'outgoing' AS direction, 'crawl' AS source, l.target_domain AS domain,
                       COUNT(*) AS links, COUNT(DISTINCT l.target_url) AS pages
                FROM link l
                JOIN page p ON p.id = l.source_page_id
                LEFT JOIN university_domain ud
                       ON ud.domain = l.target_domain AND ud.university_id = p.university_id
                WHERE l.external AND l.run_id IS NOT NULL AND p.university_id IS NOT NULL
                  AND ud.id IS NULL
                GROUP BY l.run_id, p.university_id, l.target_domain
                UNION ALL
                SELECT c.run_id AS run_id, c.university_id AS university_id,
                       'citing' AS direction, CASE WHEN c.source IN ('majestic', 'ahrefs') THEN 'backlinks' WHEN c.source LIKE 'commoncrawl%' THEN 'commoncrawl' ELSE 'crawl' END AS source,
                       c.citing_domain AS domain,
                       COUNT(*) AS links, COUNT(DISTINCT c.citing_url) AS pages
                FROM citation c
                WHERE c.status = 'verified' AND c.run_id IS NOT NULL
                GROUP BY c.run_id, c.university_id, CASE WHEN c.source IN ('majestic', 'ahrefs') THEN 'backlinks' WHEN c.source LIKE 'commoncrawl%' THEN 'commoncrawl' ELSE 'crawl' END, c.citing_domain
            ),
            graph AS (
                SELECT e.run_id AS graph_run, e.university_id AS university_id,
                       e.domain AS domain, e.link_count AS links, e.page_count AS pages
                FROM environment e
                JOIN crawl_run r ON r.id = e.run_id
                WHERE r.kind = 'commoncrawl-graph' AND e.direction = 'citing'
            ),
            newest_graph AS (SELECT MAX(graph_run) AS run_id FROM graph),
            crawl_runs AS (SELECT DISTINCT run_id FROM base),
            env AS (
                SELECT run_id, university_id, direction, source, domain, links, pages
                FROM base
                UNION ALL
                SELECT g.graph_run, g.university_id, 'citing', 'commoncrawl', g.domain,
                       g.links, g.pages
                FROM graph g
                UNION ALL
                SELECT cr.run_id, g.university_id, 'citing', 'commoncrawl', g.domain,
                       g.links, g.pages
                FROM graph g
                JOIN newest_graph ng ON ng.run_id = g.graph_run
                CROSS JOIN crawl_runs cr
            )
            SELECT env.run_id AS run_id, env.university_id AS university_id,
                   u.name AS university, u.country AS country, env.direction AS direction,
                   env.source AS source, env.domain AS domain, env.links AS links,
                   env.pages AS pages,
                   COALESCE(dl.language, 'unknown') AS language,
                   COALESCE(dc.override_category, dc.category) AS category
            FROM env
            JOIN university u ON u.id = env.university_id
            LEFT JOIN v_domain_language dl ON dl.domain = env.domain
            LEFT JOIN domain_category dc ON dc.domain = env.domain;
