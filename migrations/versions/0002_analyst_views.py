"""analyst views: environment, Table 2, category shares, clusters, domain categories

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23 10:00:00

SQL views for analysts (README "SQL for analysts"; the read functions of
:mod:`store.analytics` query them, so SQL and Python agree by construction):

``v_domain_language``
    domain, language (of its domain document, else the most frequent language of its
    fetched external pages), n_pages.
``v_domain_category``
    domain, category (the analyst's override when set, else the assigned one),
    assigned_category, override_category, overridden (0/1), score, override_note,
    override_at, updated_at.
``v_environment``
    one row per run x university x direction x external domain: run_id, university_id,
    university, country, direction ('outgoing': links found on the university's pages to
    the domain; 'citing': verified citations from the domain), links, pages (distinct
    target / citing pages), language, category (overrides applied).
``v_university_table2``
    one row per run x university (with at least one external link or verified citation):
    the paper's Table 2 -- external_links, external_domains, citing_pages, citing_domains
    -- and site_pages (the university's own pages seen in the run).
``v_category_share``
    run x university x direction x category: domains and share of the university's
    domains (the paper's Figures 2 and 3 per university).
``v_country_category_share``
    run x country x direction x category: distinct domains and share (per country).
``v_cluster``
    one row per final cluster (level -1): clustering, run, university, direction, unit,
    size, category (override applied), assigned_category, category_score, theme (its
    terms, comma-separated), top_domains.
``v_cluster_member``
    one row per final cluster x member document: domain, key, language, category.
``v_domain_history``
    university x direction x domain: first_run_id, last_run_id, runs (how many runs saw it).

Later revisions: a SQLite batch migration that recreates a table these views use works
because ``migrations/env.py`` sets ``PRAGMA legacy_alter_table=ON`` (alembic issue #1207);
a revision that drops or retypes a column the views use must call :func:`drop_views`
first and :func:`create_views` after (PostgreSQL refuses otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# JSON helpers per dialect: an integer key of a JSON object, a JSON array as text
_JSON_INT = {
    "sqlite": (
        "CASE WHEN json_valid({col}) AND json_type({col}, '$.{key}') = 'integer' "
        "THEN json_extract({col}, '$.{key}') END"
    ),
    "postgresql": (
        "CASE WHEN ({col} ->> '{key}') ~ '^[0-9]+$' THEN CAST({col} ->> '{key}' AS INTEGER) END"
    ),
}
_JSON_TEXT = {
    "sqlite": ("CASE WHEN json_valid({col}) THEN json_extract({col}, '$.{key}') END"),
    "postgresql": "({col} ->> '{key}')",
}
_JSON_JOIN = {
    "sqlite": (
        "CASE WHEN json_valid({col}) AND json_type({col}) = 'array' THEN "
        "(SELECT group_concat(j.value, ', ') FROM json_each({col}) AS j) END"
    ),
    "postgresql": (
        "CASE WHEN json_typeof({col}) = 'array' THEN "
        "(SELECT string_agg(j.value, ', ' ORDER BY j.ord) "
        "FROM json_array_elements_text({col}) WITH ORDINALITY AS j(value, ord)) END"
    ),
}

_FLOAT = "DOUBLE PRECISION"


def _views(dialect: str) -> list[tuple[str, str]]:
    """``(name, SELECT ...)`` in creation order."""
    if dialect not in _JSON_INT:
        dialect = "postgresql"

    def jint(col: str, key: str) -> str:
        return _JSON_INT[dialect].format(col=col, key=key)

    def jtext(col: str, key: str) -> str:
        return _JSON_TEXT[dialect].format(col=col, key=key)

    def jjoin(col: str) -> str:
        return _JSON_JOIN[dialect].format(col=col)

    return [
        (
            "v_domain_language",
            """
            WITH page_lang AS (
                SELECT p.registered_domain AS domain, p.language AS language,
                       COUNT(*) AS n
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
            doc AS (
                SELECT d.domain AS domain, MIN(d.language) AS language
                FROM document d
                WHERE d.unit = 'domain' AND d.language IS NOT NULL
                GROUP BY d.domain
            ),
            names AS (
                SELECT domain FROM doc UNION SELECT domain FROM ranked
            )
            SELECT names.domain AS domain,
                   COALESCE(doc.language, ranked.language) AS language,
                   COALESCE(ranked.n_pages, 0) AS n_pages
            FROM names
            LEFT JOIN doc ON doc.domain = names.domain
            LEFT JOIN ranked ON ranked.domain = names.domain AND ranked.rk = 1
            """,
        ),
        (
            "v_domain_category",
            """
            SELECT dc.domain AS domain,
                   COALESCE(dc.override_category, dc.category) AS category,
                   dc.category AS assigned_category,
                   dc.override_category AS override_category,
                   CASE WHEN dc.override_category IS NOT NULL THEN 1 ELSE 0 END AS overridden,
                   dc.score AS score,
                   dc.override_note AS override_note,
                   dc.override_at AS override_at,
                   dc.updated_at AS updated_at
            FROM domain_category dc
            """,
        ),
        (
            "v_environment",
            """
            WITH env AS (
                SELECT l.run_id AS run_id, p.university_id AS university_id,
                       'outgoing' AS direction, l.target_domain AS domain,
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
                       'citing' AS direction, c.citing_domain AS domain,
                       COUNT(*) AS links, COUNT(DISTINCT c.citing_url) AS pages
                FROM citation c
                WHERE c.status = 'verified' AND c.run_id IS NOT NULL
                GROUP BY c.run_id, c.university_id, c.citing_domain
            )
            SELECT env.run_id AS run_id, env.university_id AS university_id,
                   u.name AS university, u.country AS country, env.direction AS direction,
                   env.domain AS domain, env.links AS links, env.pages AS pages,
                   dl.language AS language,
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
                       CAST(SUM(CASE WHEN direction = 'outgoing' THEN 1 ELSE 0 END) AS BIGINT)
                           AS external_domains,
                       CAST(SUM(CASE WHEN direction = 'citing' THEN pages ELSE 0 END) AS BIGINT)
                           AS citing_pages,
                       CAST(SUM(CASE WHEN direction = 'citing' THEN 1 ELSE 0 END) AS BIGINT)
                           AS citing_domains
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
            f"""
            SELECT run_id, university_id, university, country, direction,
                   COALESCE(category, 'uncategorised') AS category,
                   COUNT(*) AS domains,
                   CAST(COUNT(*) AS {_FLOAT})
                   / CAST(SUM(COUNT(*)) OVER (PARTITION BY run_id, university_id, direction)
                          AS {_FLOAT}) AS share
            FROM v_environment
            GROUP BY run_id, university_id, university, country, direction,
                     COALESCE(category, 'uncategorised')
            """,
        ),
        (
            "v_country_category_share",
            f"""
            WITH d AS (
                SELECT DISTINCT run_id, country, direction, domain,
                       COALESCE(category, 'uncategorised') AS category
                FROM v_environment
            )
            SELECT run_id, country, direction, category, COUNT(*) AS domains,
                   CAST(COUNT(*) AS {_FLOAT})
                   / CAST(SUM(COUNT(*)) OVER (PARTITION BY run_id, country, direction)
                          AS {_FLOAT}) AS share
            FROM d
            GROUP BY run_id, country, direction, category
            """,
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
                       {jjoin("cl.theme_terms")} AS theme,
                       {jjoin("cl.top_domains")} AS top_domains,
                       {jint("g.filter", "run_id")} AS run_id,
                       {jint("g.filter", "university_id")} AS university_id,
                       {jtext("g.filter", "direction")} AS direction,
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
                   CASE WHEN c.override_category IS NOT NULL THEN 1 ELSE 0 END AS overridden,
                   c.theme AS theme, c.top_domains AS top_domains, c.created_at AS created_at
            FROM c
            LEFT JOIN university u ON u.id = c.university_id
            """,
        ),
        (
            "v_cluster_member",
            """
            SELECT vc.cluster_id AS cluster_id, vc.clustering_id AS clustering_id,
                   vc.run_id AS run_id, vc.university_id AS university_id,
                   vc.direction AS direction, d.id AS document_id, d.unit AS unit,
                   d.key AS key, d.domain AS domain, d.language AS language,
                   d.n_pages AS n_pages,
                   COALESCE(dc.override_category, dc.category) AS category
            FROM v_cluster vc
            JOIN cluster_member cm ON cm.cluster_id = vc.cluster_id
            JOIN document d ON d.id = cm.document_id
            LEFT JOIN domain_category dc ON dc.domain = d.domain
            """,
        ),
        (
            "v_domain_history",
            """
            SELECT university_id, university, country, direction, domain,
                   MIN(run_id) AS first_run_id, MAX(run_id) AS last_run_id,
                   COUNT(DISTINCT run_id) AS runs
            FROM v_environment
            GROUP BY university_id, university, country, direction, domain
            """,
        ),
    ]


VIEW_NAMES: tuple[str, ...] = tuple(name for name, _ in _views("sqlite"))


def create_views() -> None:
    """Create every view of this revision (in dependency order)."""
    dialect = op.get_bind().dialect.name
    for name, body in _views(dialect):
        op.execute(f"CREATE VIEW {name} AS {body.strip()}")


def drop_views() -> None:
    """Drop every view of this revision (in reverse dependency order)."""
    for name in reversed(VIEW_NAMES):
        op.execute(f"DROP VIEW IF EXISTS {name}")


def upgrade() -> None:
    create_views()


def downgrade() -> None:
    drop_views()
