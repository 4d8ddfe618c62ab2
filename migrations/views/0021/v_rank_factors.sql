-- v_rank_factors: one row per run x direction x university: rank, impact rank, its
--   current clustering's group counts and the share of each category among domains with
--   evidence (migrations 0009, 0015).
-- Columns: run_id, direction, university_id, university, country, rank, impact_rank,
--   clustering_id, unit, n_clusters, clustered_size, singletons, domains,
--   evidence_domains, unknown, uncategorised, share_universities,
--   share_scientific_communities, share_search_engines, share_social_networks,
--   share_media, share_news_portals, share_other_organisations, share_academic.
CREATE VIEW v_rank_factors AS WITH clusterings AS (
                SELECT DISTINCT clustering_id, run_id, university_id, direction, unit,
                       created_at, algorithm
                FROM v_cluster
                WHERE run_id IS NOT NULL AND university_id IS NOT NULL
                  AND direction IS NOT NULL
            ),
            latest AS (
                SELECT clustering_id, run_id, university_id, direction, unit,
                       ROW_NUMBER() OVER (
                           PARTITION BY run_id, university_id, direction
                           ORDER BY CASE WHEN algorithm = 'activity' THEN 0 ELSE 1 END, created_at DESC, clustering_id DESC) AS rk
                FROM clusterings
            ),
            clusters AS (
                SELECT l.run_id AS run_id, l.university_id AS university_id,
                       l.direction AS direction, l.clustering_id AS clustering_id,
                       l.unit AS unit,
                       CAST(SUM(CASE WHEN c.size >= 2 THEN 1 ELSE 0 END) AS BIGINT)
                           AS n_clusters,
                       CAST(SUM(CASE WHEN c.size >= 2 THEN c.size ELSE 0 END) AS BIGINT)
                           AS clustered_size,
                       CAST(SUM(CASE WHEN c.size < 2 THEN 1 ELSE 0 END) AS BIGINT)
                           AS singletons
                FROM latest l
                JOIN v_cluster c ON c.clustering_id = l.clustering_id
                WHERE l.rk = 1
                GROUP BY l.run_id, l.university_id, l.direction, l.clustering_id, l.unit
            ),
            f AS (
                SELECT run_id, university_id, direction,
                       CAST(SUM(domains) AS BIGINT) AS domains,
                       CAST(SUM(CASE WHEN category NOT IN ('unknown', 'uncategorised') THEN domains ELSE 0 END) AS BIGINT) AS evidence_domains,
                       CAST(SUM(CASE WHEN category = 'unknown' THEN domains ELSE 0 END) AS BIGINT) AS unknown,
                       CAST(SUM(CASE WHEN category = 'uncategorised' THEN domains ELSE 0 END) AS BIGINT) AS uncategorised,
                   CAST(SUM(CASE WHEN category = 'universities' THEN domains ELSE 0 END) AS BIGINT) AS n_universities,
                   CAST(SUM(CASE WHEN category = 'scientific_communities' THEN domains ELSE 0 END) AS BIGINT) AS n_scientific_communities,
                   CAST(SUM(CASE WHEN category = 'search_engines' THEN domains ELSE 0 END) AS BIGINT) AS n_search_engines,
                   CAST(SUM(CASE WHEN category = 'social_networks' THEN domains ELSE 0 END) AS BIGINT) AS n_social_networks,
                   CAST(SUM(CASE WHEN category = 'media' THEN domains ELSE 0 END) AS BIGINT) AS n_media,
                   CAST(SUM(CASE WHEN category = 'news_portals' THEN domains ELSE 0 END) AS BIGINT) AS n_news_portals,
                   CAST(SUM(CASE WHEN category = 'other_organisations' THEN domains ELSE 0 END) AS BIGINT) AS n_other_organisations
                FROM v_category_share
                GROUP BY run_id, university_id, direction
            )
            SELECT f.run_id AS run_id, f.direction AS direction,
                   f.university_id AS university_id, u.name AS university,
                   u.country AS country, u.rank AS rank, u.impact_rank AS impact_rank,
                   c.clustering_id AS clustering_id, c.unit AS unit,
                   c.n_clusters AS n_clusters, c.clustered_size AS clustered_size,
                   c.singletons AS singletons,
                   f.domains AS domains, f.evidence_domains AS evidence_domains,
                   f.unknown AS unknown, f.uncategorised AS uncategorised,
                   CAST(f.n_universities AS DOUBLE PRECISION) / CAST(NULLIF(f.evidence_domains, 0) AS DOUBLE PRECISION) AS share_universities,
                   CAST(f.n_scientific_communities AS DOUBLE PRECISION) / CAST(NULLIF(f.evidence_domains, 0) AS DOUBLE PRECISION) AS share_scientific_communities,
                   CAST(f.n_search_engines AS DOUBLE PRECISION) / CAST(NULLIF(f.evidence_domains, 0) AS DOUBLE PRECISION) AS share_search_engines,
                   CAST(f.n_social_networks AS DOUBLE PRECISION) / CAST(NULLIF(f.evidence_domains, 0) AS DOUBLE PRECISION) AS share_social_networks,
                   CAST(f.n_media AS DOUBLE PRECISION) / CAST(NULLIF(f.evidence_domains, 0) AS DOUBLE PRECISION) AS share_media,
                   CAST(f.n_news_portals AS DOUBLE PRECISION) / CAST(NULLIF(f.evidence_domains, 0) AS DOUBLE PRECISION) AS share_news_portals,
                   CAST(f.n_other_organisations AS DOUBLE PRECISION) / CAST(NULLIF(f.evidence_domains, 0) AS DOUBLE PRECISION) AS share_other_organisations,
                   CAST(f.n_universities + f.n_scientific_communities AS DOUBLE PRECISION) / CAST(NULLIF(f.evidence_domains, 0) AS DOUBLE PRECISION) AS share_academic
            FROM f
            JOIN university u ON u.id = f.university_id
            LEFT JOIN clusters c
                   ON c.run_id = f.run_id AND c.university_id = f.university_id
                  AND c.direction = f.direction;
