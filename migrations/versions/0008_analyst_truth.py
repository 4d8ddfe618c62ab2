"""what the analyst reads is true: unknown kept apart, every citing source, clusters tied
to their run, the vote's support, category colours

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25

Issue 23. Columns:

``category_label.color``
    the category's fixed colour (``#rrggbb``) from the taxonomy, so every chart uses one
    palette.
``cluster.category_support``, ``cluster.category_voters``
    a cluster's category is voted only by members with evidence (fetched text, a listed
    domain, a host pattern ...); ``category_voters`` is how many voted and
    ``category_support`` the share of them whose own category is the cluster's.

Views replaced (the others of revision 0002 are re-created unchanged, because SQLite and
PostgreSQL both need the views on top of a replaced one dropped first):

``v_environment``
    one row per run x university x direction x external domain x **source**:
    ``crawl`` (links found on the university's pages; verified citations found by a crawl
    or a URL list), ``backlinks`` (verified citations of a Majestic/Ahrefs export),
    ``commoncrawl`` (a Common Crawl web graph's citing domains, and citations verified in
    Common Crawl captures). The graph's rows belong to the graph's own run and are also
    shown with every crawl run through the **newest** graph run (a release is a snapshot
    of the whole web, not of one crawl), so Table 2, Table 3 and the category shares of a
    crawl run count them. ``language`` is ``unknown`` (never NULL) for a domain without a
    fetched page in a known language. Count domains with ``COUNT(DISTINCT domain)``: a
    domain found by two sources has two rows.
``v_university_table2``
    distinct domains over the sources.
``v_category_share``, ``v_country_category_share``
    ``share`` over every domain (``unknown`` included, as before), and ``known_share``
    over the domains with evidence (``NULL`` on the ``unknown`` row): the figures' default.
    Domains are counted once across sources.
``v_cluster``
    ``run_id`` from the clustering's filter (the crawl run whose environment it
    clustered); ``category_support`` and ``category_voters``.
``v_latest_clustering`` (new)
    per university x direction x unit (NULLs: every university / both directions): the
    newest clustering's id, algorithm, run and size.
``v_latest_cluster`` (new)
    the rows of ``v_cluster`` of those clusterings: what the README's queries read.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from migrations.revisions import revision_module

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_FLOAT = "DOUBLE PRECISION"


def _json(dialect: str, kind: str, col: str, key: str = "") -> str:
    """0002's JSON helpers (an integer key, a text key, an array joined)."""
    m = revision_module("0002_analyst_views.py")
    table = {"int": m._JSON_INT, "text": m._JSON_TEXT, "join": m._JSON_JOIN}[kind]
    return table["sqlite" if dialect == "sqlite" else "postgresql"].format(col=col, key=key)


_CITATION_SOURCE = (
    "CASE WHEN c.source IN ('majestic', 'ahrefs') THEN 'backlinks' "
    "WHEN c.source LIKE 'commoncrawl%' THEN 'commoncrawl' ELSE 'crawl' END"
)


def _share_view(scope: str, partition: str) -> str:
    """Category shares per ``scope`` (columns of ``v_environment``; the shares sum to one
    over ``partition``), each domain once: ``share`` over every domain and ``known_share``
    over the domains with evidence."""
    return f"""
    WITH d AS (
        SELECT DISTINCT {scope}, domain, COALESCE(category, 'uncategorised') AS category
        FROM v_environment
    ),
    g AS (
        SELECT {scope}, category, COUNT(*) AS domains
        FROM d
        GROUP BY {scope}, category
    )
    SELECT {scope}, category, domains,
           CAST(domains AS {_FLOAT})
           / CAST(SUM(domains) OVER (PARTITION BY {partition}) AS {_FLOAT}) AS share,
           CASE WHEN category = 'unknown' THEN NULL ELSE
           CAST(domains AS {_FLOAT})
           / CAST(NULLIF(SUM(CASE WHEN category = 'unknown' THEN 0 ELSE domains END)
                  OVER (PARTITION BY {partition}), 0) AS {_FLOAT})
           END AS known_share
    FROM g
    """


def _views(dialect: str) -> list[tuple[str, str]]:
    """``(name, SELECT ...)`` of every view after this revision, in creation order."""
    old = dict(revision_module("0002_analyst_views.py")._views(dialect))
    domain_language = revision_module("0004_domain_language_view.py").NEW_BODY
    return [
        ("v_domain_language", domain_language),
        ("v_domain_category", old["v_domain_category"]),
        (
            "v_environment",
            f"""
            WITH base AS (
                SELECT l.run_id AS run_id, p.university_id AS university_id,
                       'outgoing' AS direction, 'crawl' AS source, l.target_domain AS domain,
                       COUNT(*) AS links, COUNT(DISTINCT l.target_url) AS pages
                FROM link l
                JOIN page p ON p.id = l.source_page_id
                LEFT JOIN university_domain ud
                       ON ud.domain = l.target_domain AND ud.university_id = p.university_id
                WHERE l.external AND l.run_id IS NOT NULL AND p.university_id IS NOT NULL
                  AND ud.id IS NULL
                GROUP BY l.run_id, p.university_id, l.target_domain
                UNION ALL
                SELECT c.run_id AS run_id, c.university_id AS university_id,
                       'citing' AS direction, {_CITATION_SOURCE} AS source,
                       c.citing_domain AS domain,
                       COUNT(*) AS links, COUNT(DISTINCT c.citing_url) AS pages
                FROM citation c
                WHERE c.status = 'verified' AND c.run_id IS NOT NULL
                GROUP BY c.run_id, c.university_id, {_CITATION_SOURCE}, c.citing_domain
            ),
            graph AS (
                SELECT e.run_id AS graph_run, e.university_id AS university_id,
                       e.domain AS domain, e.link_count AS links, e.page_count AS pages
                FROM environment e
                JOIN crawl_run r ON r.id = e.run_id
                WHERE r.kind = 'commoncrawl-graph' AND e.direction = 'citing'
            ),
            newest_graph AS (SELECT MAX(graph_run) AS run_id FROM graph),
            crawl_runs AS (SELECT DISTINCT run_id FROM base),
            env AS (
                SELECT run_id, university_id, direction, source, domain, links, pages
                FROM base
                UNION ALL
                SELECT g.graph_run, g.university_id, 'citing', 'commoncrawl', g.domain,
                       g.links, g.pages
                FROM graph g
                UNION ALL
                SELECT cr.run_id, g.university_id, 'citing', 'commoncrawl', g.domain,
                       g.links, g.pages
                FROM graph g
                JOIN newest_graph ng ON ng.run_id = g.graph_run
                CROSS JOIN crawl_runs cr
            )
            SELECT env.run_id AS run_id, env.university_id AS university_id,
                   u.name AS university, u.country AS country, env.direction AS direction,
                   env.source AS source, env.domain AS domain, env.links AS links,
                   env.pages AS pages,
                   COALESCE(dl.language, 'unknown') AS language,
                   COALESCE(dc.override_category, dc.category) AS category
            FROM env
            JOIN university u ON u.id = env.university_id
            LEFT JOIN v_domain_language dl ON dl.domain = env.domain
            LEFT JOIN domain_category dc ON dc.domain = env.domain
            """,
        ),
        (
            "v_university_table2",
            """
            WITH t AS (
                SELECT run_id, university_id,
                       CAST(SUM(CASE WHEN direction = 'outgoing' THEN links ELSE 0 END) AS BIGINT)
                           AS external_links,
                       CAST(COUNT(DISTINCT CASE WHEN direction = 'outgoing' THEN domain END)
                            AS BIGINT) AS external_domains,
                       CAST(SUM(CASE WHEN direction = 'citing' THEN pages ELSE 0 END) AS BIGINT)
                           AS citing_pages,
                       CAST(COUNT(DISTINCT CASE WHEN direction = 'citing' THEN domain END)
                            AS BIGINT) AS citing_domains
                FROM v_environment
                GROUP BY run_id, university_id
            )
            SELECT t.run_id AS run_id, t.university_id AS university_id,
                   u.name AS university, u.country AS country, u.rank AS rank,
                   (SELECT COUNT(*) FROM page p
                    WHERE p.university_id = t.university_id AND p.role = 'university'
                      AND p.first_run_id <= t.run_id
                      AND COALESCE(p.last_run_id, p.first_run_id) >= t.run_id) AS site_pages,
                   t.external_links AS external_links,
                   t.external_domains AS external_domains,
                   t.citing_pages AS citing_pages,
                   t.citing_domains AS citing_domains
            FROM t
            JOIN university u ON u.id = t.university_id
            """,
        ),
        (
            "v_category_share",
            _share_view(
                "run_id, university_id, university, country, direction",
                "run_id, university_id, direction",
            ),
        ),
        (
            "v_country_category_share",
            _share_view("run_id, country, direction", "run_id, country, direction"),
        ),
        (
            "v_cluster",
            f"""
            WITH c AS (
                SELECT cl.id AS cluster_id, cl.clustering_id AS clustering_id,
                       cl.label AS label, cl.size AS size,
                       cl.category AS assigned_category,
                       cl.override_category AS override_category,
                       cl.category_score AS category_score,
                       cl.category_support AS category_support,
                       cl.category_voters AS category_voters,
                       {_json(dialect, "join", "cl.theme_terms")} AS theme,
                       {_json(dialect, "join", "cl.top_domains")} AS top_domains,
                       {_json(dialect, "int", "g.filter", "run_id")} AS run_id,
                       {_json(dialect, "int", "g.filter", "university_id")} AS university_id,
                       {_json(dialect, "text", "g.filter", "direction")} AS direction,
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
            LEFT JOIN university u ON u.id = c.university_id
            """,
        ),
        ("v_cluster_member", old["v_cluster_member"]),
        ("v_domain_history", old["v_domain_history"]),
        (
            "v_latest_clustering",
            f"""
            WITH g AS (
                SELECT g.id AS clustering_id, g.algorithm AS algorithm, g.unit AS unit,
                       {_json(dialect, "int", "g.filter", "run_id")} AS run_id,
                       {_json(dialect, "int", "g.filter", "university_id")} AS university_id,
                       {_json(dialect, "text", "g.filter", "direction")} AS direction,
                       g.n_documents AS n_documents, g.n_clusters AS n_clusters,
                       g.created_at AS created_at
                FROM clustering g
            ),
            ranked AS (
                SELECT g.*,
                       ROW_NUMBER() OVER (
                           PARTITION BY university_id, direction, unit
                           ORDER BY created_at DESC, clustering_id DESC) AS rk
                FROM g
            )
            SELECT ranked.clustering_id AS clustering_id, ranked.run_id AS run_id,
                   ranked.university_id AS university_id, u.name AS university,
                   ranked.direction AS direction, ranked.unit AS unit,
                   ranked.algorithm AS algorithm, ranked.n_documents AS n_documents,
                   ranked.n_clusters AS n_clusters, ranked.created_at AS created_at
            FROM ranked
            LEFT JOIN university u ON u.id = ranked.university_id
            WHERE ranked.rk = 1
            """,
        ),
        (
            "v_latest_cluster",
            """
            SELECT vc.*
            FROM v_cluster vc
            JOIN v_latest_clustering lc ON lc.clustering_id = vc.clustering_id
            """,
        ),
    ]


VIEW_NAMES: tuple[str, ...] = tuple(name for name, _ in _views("sqlite"))


def create_views() -> None:
    """Create every view of this revision (in dependency order)."""
    for name, body in _views(op.get_bind().dialect.name):
        op.execute(f"CREATE VIEW {name} AS {body.strip()}")


def drop_views() -> None:
    """Drop every view of this revision (in reverse dependency order)."""
    for name in reversed(VIEW_NAMES):
        op.execute(f"DROP VIEW IF EXISTS {name}")


def upgrade() -> None:
    revision_module("0002_analyst_views.py").drop_views()
    op.add_column("category_label", sa.Column("color", sa.String(length=7), nullable=True))
    op.add_column("cluster", sa.Column("category_support", sa.Float(), nullable=True))
    op.add_column("cluster", sa.Column("category_voters", sa.Integer(), nullable=True))
    create_views()


def downgrade() -> None:
    drop_views()
    # in place on both dialects (SQLite >= 3.35): a batch copy of cluster would drop the old
    # table, and with foreign keys on that cascades to every cluster_member row
    op.execute("ALTER TABLE cluster DROP COLUMN category_voters")
    op.execute("ALTER TABLE cluster DROP COLUMN category_support")
    op.execute("ALTER TABLE category_label DROP COLUMN color")
    old = revision_module("0002_analyst_views.py")
    old.create_views()
    revision_module("0004_domain_language_view.py").upgrade()
