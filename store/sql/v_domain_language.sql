-- v_domain_language: one row per external registered domain: its pages' main language
--   and the share of pages in it, from the page language and the domain document
--   (migrations 0002, 0004).
-- Columns: domain, language, n_pages.
CREATE VIEW v_domain_language AS WITH page_lang AS (
    SELECT p.registered_domain AS domain, p.language AS language, COUNT(*) AS n
    FROM page p
    WHERE p.language IS NOT NULL AND p.role <> 'university'
    GROUP BY p.registered_domain, p.language
),
ranked AS (
    SELECT domain, language, n,
           ROW_NUMBER() OVER (PARTITION BY domain ORDER BY n DESC, language) AS rk,
           SUM(n) OVER (PARTITION BY domain) AS n_pages
    FROM page_lang
),
both_sources AS (
    SELECT d.domain AS domain, d.language AS doc_language, NULL AS page_language,
           0 AS n_pages
    FROM document d
    WHERE d.unit = 'domain' AND d.language IS NOT NULL
    UNION ALL
    SELECT domain, NULL, language, n_pages FROM ranked WHERE rk = 1
)
SELECT domain AS domain,
       COALESCE(MIN(doc_language), MIN(page_language)) AS language,
       MAX(n_pages) AS n_pages
FROM both_sources
GROUP BY domain;
