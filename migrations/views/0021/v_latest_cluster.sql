-- v_latest_cluster: the rows of v_cluster that belong to v_latest_clustering: one row
--   per cluster of each university's current clustering (migration 0008).
-- Columns: cluster_id, clustering_id, run_id, university_id, university, country,
--   direction, unit, algorithm, label, size, category, assigned_category,
--   category_score, category_support, category_voters, overridden, theme, top_domains,
--   created_at.
CREATE VIEW v_latest_cluster AS SELECT vc.*
            FROM v_cluster vc
            JOIN v_latest_clustering lc ON lc.clustering_id = vc.clustering_id;
