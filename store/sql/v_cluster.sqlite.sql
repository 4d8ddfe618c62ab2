-- v_cluster: one row per cluster of every clustering: its clustering, level, size,
--   theme, top domains, category (override first) and the clustering's run, university,
--   direction and unit read from its filter (migrations 0002, 0008).
-- Columns: cluster_id, clustering_id, run_id, university_id, university, country,
--   direction, unit, algorithm, label, size, category, assigned_category,
--   category_score, category_support, category_voters, overridden, theme, top_domains,
--   created_at.
-- Dialect: sqlite; v_cluster.postgresql.sql differs only in its JSON functions
--   and must change with it.
CREATE VIEW v_cluster AS WITH c AS (
                SELECT cl.id AS cluster_id, cl.clustering_id AS clustering_id,
                       cl.label AS label, cl.size AS size,
                       cl.category AS assigned_category,
                       cl.override_category AS override_category,
                       cl.category_score AS category_score,
                       cl.category_support AS category_support,
                       cl.category_voters AS category_voters,
                       CASE WHEN json_valid(cl.theme_terms) AND json_type(cl.theme_terms) = 'array' THEN (SELECT group_concat(j.value, ', ') FROM json_each(cl.theme_terms) AS j) END AS theme,
                       CASE WHEN json_valid(cl.top_domains) AND json_type(cl.top_domains) = 'array' THEN (SELECT group_concat(j.value, ', ') FROM json_each(cl.top_domains) AS j) END AS top_domains,
                       CASE WHEN json_valid(g.filter) AND json_type(g.filter, '$.run_id') = 'integer' THEN json_extract(g.filter, '$.run_id') END AS run_id,
                       CASE WHEN json_valid(g.filter) AND json_type(g.filter, '$.university_id') = 'integer' THEN json_extract(g.filter, '$.university_id') END AS university_id,
                       CASE WHEN json_valid(g.filter) THEN json_extract(g.filter, '$.direction') END AS direction,
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
