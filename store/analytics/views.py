"""The analyst views of migration 0002 as SQLAlchemy table clauses (``v_environment``,
``v_university_table2``, ``v_category_share``, ``v_country_category_share``, ``v_cluster``,
``v_cluster_member``, ``v_domain_category``), which every query of :mod:`store.analytics`
reads, and the category name of domains never categorised.
"""

from __future__ import annotations

from sqlalchemy import column, table

UNCATEGORISED = "uncategorised"  # no category stored yet: `webometrics analyse` not run

V_ENVIRONMENT = table(
    "v_environment",
    *(
        column(c)
        for c in (
            "run_id",
            "university_id",
            "university",
            "country",
            "direction",
            "source",
            "domain",
            "links",
            "pages",
            "language",
            "category",
        )
    ),
)
V_TABLE2 = table(
    "v_university_table2",
    *(
        column(c)
        for c in (
            "run_id",
            "university_id",
            "university",
            "country",
            "rank",
            "site_pages",
            "external_links",
            "external_domains",
            "citing_pages",
            "citing_domains",
        )
    ),
)
V_SHARE = table(
    "v_category_share",
    *(
        column(c)
        for c in (
            "run_id",
            "university_id",
            "university",
            "country",
            "direction",
            "category",
            "domains",
            "share",
            "known_share",
        )
    ),
)
V_COUNTRY_SHARE = table(
    "v_country_category_share",
    *(
        column(c)
        for c in ("run_id", "country", "direction", "category", "domains", "share", "known_share")
    ),
)
# the same over the aggregates the analyse stage keeps (revision 0010, store.aggregates)
AGG_SHARE = table("agg_v_category_share", *(column(c.name) for c in V_SHARE.c))
AGG_COUNTRY_SHARE = table(
    "agg_v_country_category_share", *(column(c.name) for c in V_COUNTRY_SHARE.c)
)
V_CLUSTER = table(
    "v_cluster",
    *(
        column(c)
        for c in (
            "cluster_id",
            "clustering_id",
            "run_id",
            "university_id",
            "university",
            "country",
            "direction",
            "unit",
            "algorithm",
            "label",
            "size",
            "category",
            "assigned_category",
            "category_score",
            "category_support",
            "category_voters",
            "overridden",
            "theme",
            "top_domains",
            "created_at",
        )
    ),
)
V_LATEST_CLUSTERING = table(
    "v_latest_clustering",
    *(
        column(c)
        for c in (
            "clustering_id",
            "run_id",
            "university_id",
            "university",
            "direction",
            "unit",
            "algorithm",
            "n_documents",
            "n_clusters",
            "created_at",
        )
    ),
)
V_CLUSTER_MEMBER = table(
    "v_cluster_member",
    *(
        column(c)
        for c in (
            "cluster_id",
            "clustering_id",
            "run_id",
            "university_id",
            "direction",
            "document_id",
            "unit",
            "key",
            "domain",
            "language",
            "n_pages",
            "category",
        )
    ),
)
V_DOMAIN_CATEGORY = table(
    "v_domain_category",
    *(
        column(c)
        for c in (
            "domain",
            "category",
            "assigned_category",
            "override_category",
            "overridden",
            "score",
            "override_note",
            "override_at",
            "updated_at",
        )
    ),
)
