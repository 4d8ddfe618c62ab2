-- v_cluster_member: one row per member of a cluster: the cluster, the clustering's run,
--   university and direction, the member document and its registered domain (migration
--   0002).
-- Columns: cluster_id, clustering_id, run_id, university_id, direction, document_id,
--   unit, key, domain, language, n_pages, category.
CREATE VIEW v_cluster_member AS SELECT vc.cluster_id AS cluster_id, vc.clustering_id AS clustering_id,
                   vc.run_id AS run_id, vc.university_id AS university_id,
                   vc.direction AS direction, d.id AS document_id, d.unit AS unit,
                   d.key AS key, d.domain AS domain, d.language AS language,
                   d.n_pages AS n_pages,
                   COALESCE(dc.override_category, dc.category) AS category
            FROM v_cluster vc
            JOIN cluster_member cm ON cm.cluster_id = vc.cluster_id
            JOIN document d ON d.id = cm.document_id
            LEFT JOIN domain_category dc ON dc.domain = d.domain;
