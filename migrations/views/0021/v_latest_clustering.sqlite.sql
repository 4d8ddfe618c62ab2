-- v_latest_clustering: one row per university x direction x unit (page or domain): the
--   clustering analysts read, the newest of the default method activity, else the
--   newest of any method (migrations 0008, 0015).
-- Columns: clustering_id, run_id, university_id, university, direction, unit,
--   algorithm, n_documents, n_clusters, created_at.
-- Dialect: sqlite; v_latest_clustering.postgresql.sql differs only in its JSON functions
--   and must change with it.
CREATE VIEW v_latest_clustering AS WITH g AS (
                SELECT g.id AS clustering_id, g.algorithm AS algorithm, g.unit AS unit,
                       CASE WHEN json_valid(g.filter) AND json_type(g.filter, '$.run_id') = 'integer' THEN json_extract(g.filter, '$.run_id') END AS run_id,
                       CASE WHEN json_valid(g.filter) AND json_type(g.filter, '$.university_id') = 'integer' THEN json_extract(g.filter, '$.university_id') END AS university_id,
                       CASE WHEN json_valid(g.filter) THEN json_extract(g.filter, '$.direction') END AS direction,
                       g.n_documents AS n_documents, g.n_clusters AS n_clusters,
                       g.created_at AS created_at
                FROM clustering g
            ),
            ranked AS (
                SELECT g.*,
                       ROW_NUMBER() OVER (
                           PARTITION BY university_id, direction, unit
                           ORDER BY CASE WHEN algorithm = 'activity' THEN 0 ELSE 1 END, created_at DESC, clustering_id DESC) AS rk
                FROM g
            )
            SELECT ranked.clustering_id AS clustering_id, ranked.run_id AS run_id,
                   ranked.university_id AS university_id, u.name AS university,
                   ranked.direction AS direction, ranked.unit AS unit,
                   ranked.algorithm AS algorithm, ranked.n_documents AS n_documents,
                   ranked.n_clusters AS n_clusters, ranked.created_at AS created_at
            FROM ranked
            LEFT JOIN university u ON u.id = ranked.university_id
            WHERE ranked.rk = 1;
