-- v_citing_rank: one row per university x citing source x level of the citing node
--   (page, host, domain): the university's citing counts and its rank among
--   universities by them (migration 0007).
-- Columns: university_id, university, country, source, level, nodes, domains, links,
--   harmonic_sum, pagerank_sum, ranked_nodes.
CREATE VIEW v_citing_rank AS WITH n AS (
            SELECT university_id, source, level, node, MAX(domain) AS domain,
                   MAX(links) AS links, MAX(harmonic_centrality) AS harmonic_centrality,
                   MAX(pagerank) AS pagerank
            FROM citing_node
            GROUP BY university_id, source, level, node
        )
        SELECT n.university_id AS university_id, u.name AS university,
               u.country AS country, n.source AS source, n.level AS level,
               COUNT(*) AS nodes, COUNT(DISTINCT n.domain) AS domains,
               CAST(SUM(n.links) AS BIGINT) AS links,
               SUM(n.harmonic_centrality) AS harmonic_sum,
               SUM(n.pagerank) AS pagerank_sum,
               COUNT(n.harmonic_centrality) AS ranked_nodes
        FROM n
        JOIN university u ON u.id = n.university_id
        GROUP BY n.university_id, u.name, u.country, n.source, n.level;
