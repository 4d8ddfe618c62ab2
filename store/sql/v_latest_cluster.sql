-- v_latest_cluster: v_cluster restricted to the clusterings of v_latest_clustering: one
-- row per final cluster of the clustering the figures read.
-- Columns: cluster_id, clustering_id, run_id, university_id, university, country,
--   direction, unit, algorithm, label, size, category, assigned_category,
--   category_score, category_support, category_voters, overridden, theme, top_domains,
--   created_at.
-- Edit only with a migration that calls store.sql.recreate_views (CONTRIBUTING.md).
CREATE VIEW v_latest_cluster AS
SELECT vc.*
FROM v_cluster vc
JOIN v_latest_clustering lc ON lc.clustering_id = vc.clustering_id
