-- Example queries on the analyst views (migrations 0002, 0007, 0008). Each runs unchanged
-- on SQLite and PostgreSQL; tests/store/test_sql_examples.py runs every one of them, and
-- the README's section "Analysis, report and SQL" shows the first ones verbatim.
-- v_environment has one row per domain and source (crawl, backlinks, commoncrawl): count
-- domains with COUNT(DISTINCT domain). "unknown" (language or category) is a domain
-- without evidence: never fetched, or no text.
-- Open a shell with `sqlite3 webometrics.db` or `psql "$WEBOMETRICS_DB_URL"`.

-- name: table2
-- The paper's Table 2 for the latest crawl run: external links and domains on each
-- university's site, citing pages and domains, by Webometrics rank.
SELECT university, rank, external_links, external_domains, citing_pages, citing_domains
FROM v_university_table2
WHERE run_id = (SELECT MAX(run_id) FROM v_university_table2)
ORDER BY rank, university;

-- name: table3
-- The paper's Table 3: external (outgoing) and citing domains in Russian and English,
-- other languages, and domains of unknown language (never fetched or no text) apart.
SELECT university, direction,
       COUNT(DISTINCT CASE WHEN language = 'ru' THEN domain END) AS ru,
       COUNT(DISTINCT CASE WHEN language = 'en' THEN domain END) AS en,
       COUNT(DISTINCT CASE WHEN language NOT IN ('ru', 'en', 'unknown') THEN domain END)
           AS other,
       COUNT(DISTINCT CASE WHEN language = 'unknown' THEN domain END) AS unknown
FROM v_environment
WHERE run_id = (SELECT MAX(run_id) FROM v_environment)
GROUP BY university, direction
ORDER BY university, direction DESC;

-- name: country-shares
-- Figure 3: the categories of the sites citing each country's universities, in percent
-- of the domains with evidence (analyst overrides applied; unknown left out).
SELECT country, category, domains, ROUND(CAST(100 * known_share AS NUMERIC), 1) AS percent
FROM v_country_category_share
WHERE direction = 'citing' AND category <> 'unknown'
  AND run_id = (SELECT MAX(run_id) FROM v_country_category_share)
ORDER BY country, share DESC, category;

-- name: largest-clusters
-- The largest clusters of the latest clustering of every university and direction, with
-- the crawl run it clustered, category, the vote's support and theme.
SELECT university, direction, run_id, size, category,
       ROUND(CAST(category_support AS NUMERIC), 2) AS support, theme
FROM v_latest_cluster
WHERE size >= 2
ORDER BY university, direction, size DESC, cluster_id;

-- name: cluster-domains
-- The domains of the clusters categorised as scientific communities.
SELECT c.university, c.direction, c.theme, m.domain, m.language, m.category
FROM v_latest_cluster c
JOIN v_cluster_member m ON m.cluster_id = c.cluster_id
WHERE c.category = 'scientific_communities'
ORDER BY c.university, c.cluster_id, m.domain;

-- name: level-themes
-- The clusters of every stored level of the latest clusterings (the activity clustering's
-- finer and coarser Leiden levels, the paper's r-steps), two or more documents, largest
-- first: analyse names them as it names the final clusters (theme terms, a voted category).
SELECT lc.university, lc.direction, cl.level, cl.size,
       COALESCE(cl.override_category, cl.category) AS category, cl.theme_terms
FROM v_latest_clustering lc
JOIN cluster cl ON cl.clustering_id = lc.clustering_id
WHERE cl.level >= 0 AND cl.size >= 2
ORDER BY lc.university, lc.direction, cl.level, cl.size DESC, cl.label;

-- name: shared-domains
-- External domains that several universities link to (co-outlinks), most shared first.
SELECT domain, category, COUNT(DISTINCT university_id) AS universities, SUM(links) AS links
FROM v_environment
WHERE direction = 'outgoing' AND run_id = (SELECT MAX(run_id) FROM v_environment)
GROUP BY domain, category
HAVING COUNT(DISTINCT university_id) >= 2
ORDER BY universities DESC, links DESC, domain;

-- name: co-outlink-pairs
-- Co-outlink overlap of every pair of universities: domains both link to.
SELECT a.university AS university_a, b.university AS university_b,
       COUNT(DISTINCT a.domain) AS shared_domains
FROM v_environment a
JOIN v_environment b
  ON b.run_id = a.run_id AND b.direction = a.direction AND b.domain = a.domain
 AND b.university_id > a.university_id
WHERE a.direction = 'outgoing' AND a.run_id = (SELECT MAX(run_id) FROM v_environment)
GROUP BY a.university, b.university
ORDER BY shared_domains DESC, university_a, university_b;

-- name: environment-by-source
-- The citing environment of the latest crawl run by source: domains each source finds
-- (a Common Crawl web graph's citing domains join every crawl run).
SELECT university, source, COUNT(DISTINCT domain) AS domains,
       COUNT(DISTINCT CASE WHEN category <> 'unknown' THEN domain END) AS with_evidence
FROM v_environment
WHERE direction = 'citing' AND run_id = (SELECT MAX(run_id) FROM v_environment)
GROUP BY university, source
ORDER BY university, source;

-- name: new-domains
-- Domains seen for the first time in the latest run (new since every earlier run).
SELECT university, direction, domain
FROM v_domain_history
WHERE first_run_id = (SELECT MAX(run_id) FROM v_environment)
  AND first_run_id > (SELECT MIN(run_id) FROM v_environment)
ORDER BY university, direction, domain;

-- name: overrides
-- The analyst's category overrides next to the category the taxonomy assigned.
SELECT domain, assigned_category, override_category, override_note
FROM v_domain_category
WHERE overridden = 1
ORDER BY domain;

-- name: citing-sources
-- Citing domains per university and source, with those no other source finds.
SELECT university, kind, domains, hosts, only_here, missed, domains_all
FROM v_citing_overlap
ORDER BY university, kind;

-- name: rank-weighted-inlinks
-- Universities by the summed harmonic centrality of the domains linking to them.
SELECT university, source, nodes, harmonic_sum, pagerank_sum
FROM v_citing_rank
WHERE level = 'domain'
ORDER BY harmonic_sum DESC, university;

-- name: only-in-common-crawl
-- Citing domains of each university found in the web graph and by no other source.
SELECT s.university, s.domain
FROM v_citing_source s
WHERE s.kind = 'commoncrawl'
  AND NOT EXISTS (SELECT 1 FROM v_citing_source o
                  WHERE o.university_id = s.university_id AND o.domain = s.domain
                    AND o.kind <> 'commoncrawl')
ORDER BY s.university, s.domain;

-- name: rank-factors
-- The paper's finding, per university and direction of the latest run: its rank, its groups
-- (clusters of two or more members and their size, from its newest activity clustering
-- of the run, else the newest of another method) and the share of universities plus
-- scientific communities among its domains with evidence; rank 1 first.
SELECT direction, university, rank, n_clusters, clustered_size, evidence_domains, unknown,
       ROUND(CAST(100 * share_academic AS NUMERIC), 1) AS academic_percent
FROM v_rank_factors
WHERE run_id = (SELECT MAX(run_id) FROM v_rank_factors)
ORDER BY direction DESC, rank, university;
