-- v_cluster: one row per cluster of every clustering: its clustering, level, size,
--   theme, top domains, category (override first) and the clustering's run, university,
--   direction and unit read from its filter (migrations 0002, 0008).
-- Columns: cluster_id, clustering_id, run_id, university_id, university, country,
--   direction, unit, algorithm, label, size, category, assigned_category,
--   category_score, category_support, category_voters, overridden, theme, top_domains,
--   created_at.
-- Dialect: postgresql; v_cluster.sqlite.sql differs only in its JSON functions
--   and must change with it.
CREATE VIEW v_cluster AS WITH c AS (
                SELECT cl.id AS cluster_id, cl.clustering_id AS clustering_id,
                       cl.label AS label, cl.size AS size,
                       cl.category AS assigned_category,
                       cl.override_category AS override_category,
                       cl.category_score AS category_score,
                       cl.category_support AS category_support,
                       cl.category_voters AS category_voters,
                       CASE WHEN json_typeof(cl.theme_terms) = 'array' THEN (SELECT string_agg(j.value, ', ' ORDER BY j.ord) FROM json_array_elements_text(cl.theme_terms) WITH ORDINALITY AS j(value, ord)) END AS theme,
                       CASE WHEN json_typeof(cl.top_domains) = 'array' THEN (SELECT string_agg(j.value, ', ' ORDER BY j.ord) FROM json_array_elements_text(cl.top_domains) WITH ORDINALITY AS j(value, ord)) END AS top_domains,
                       CASE WHEN (g.filter ->> 'run_id') ~ '^[0-9]+$' THEN CAST(g.filter ->> 'run_id' AS INTEGER) END AS run_id,
                       CASE WHEN (g.filter ->> 'university_id') ~ '^[0-9]+$' THEN CAST(g.filter ->> 'university_id' AS INTEGER) END AS university_id,
                       (g.filter ->> 'direction') AS direction,
                       g.unit AS unit, g.algorithm AS algorithm, g.created_at AS created_at
                FROM cluster cl
                JOIN clustering g ON g.id = cl.clustering_id
                WHERE cl.level = -1
            )
            SELECT c.cluster_id AS cluster_id, c.clustering_id AS clustering_id,
                   c.run_id AS run_id, c.university_id AS university_id,
                   u.name AS university, u.country AS country, c.direction AS direction,
                   c.unit AS unit, c.algorithm AS algorithm, c.label AS label, c.size AS size,
                   COALESCE(c.override_category, c.assigned_category) AS category,
                   c.assigned_category AS assigned_category,
                   c.category_score AS category_score,
                   c.category_support AS category_support,
                   c.category_voters AS category_voters,
                   CASE WHEN c.override_category IS NOT NULL THEN 1 ELSE 0 END AS overridden,
                   c.theme AS theme, c.top_domains AS top_domains, c.created_at AS created_at
            FROM c
            LEFT JOIN university u ON u.id = c.university_id;
