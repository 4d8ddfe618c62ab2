-- v_citing_overlap: one row per university x citing source kind: citing domains found
--   by that kind only and by other kinds too (migrations 0007, 0013).
-- Columns: university_id, university, country, kind, domains, hosts, only_here, missed,
--   domains_all.
CREATE VIEW v_citing_overlap AS WITH s AS (
    SELECT university_id, university, country, kind, domain, hosts,
           COUNT(*) OVER (PARTITION BY university_id, domain) AS kinds
    FROM v_citing_source
),
t AS (
    SELECT university_id, COUNT(DISTINCT domain) AS domains_all
    FROM s
    GROUP BY university_id
)
SELECT s.university_id AS university_id, s.university AS university,
       s.country AS country, s.kind AS kind,
       COUNT(*) AS domains,
       CAST(SUM(s.hosts) AS BIGINT) AS hosts,
       CAST(SUM(CASE WHEN s.kinds = 1 THEN 1 ELSE 0 END) AS BIGINT) AS only_here,
       MAX(t.domains_all) - COUNT(*) AS missed,
       MAX(t.domains_all) AS domains_all
FROM s
JOIN t ON t.university_id = s.university_id
GROUP BY s.university_id, s.university, s.country, s.kind;
