"""aggregates the dashboard reads at the paper's scale, and the indexes of their
freshness check

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25

Issue 23, part 8. At 1,000,000 pages and 100,000 domains the views of revision 0008
(``v_environment`` and the tables on it) take 10-14 s per dashboard page on SQLite,
because every read groups the links, citations and page languages again. The analyse
stage now writes what the pages read (:mod:`store.aggregates`), and
:mod:`store.analytics` reads these tables while they are fresh, the views otherwise:

``agg_state``
    one row per crawl run with environment data: the fingerprint of what the aggregates
    were built from, when, and the run's distinct outgoing and citing domains over every
    university.
``agg_environment``
    the rows of ``v_environment`` (university, direction, source, domain, links, pages,
    language, category).
``agg_domain_count``
    distinct domains, links and pages per run x university x direction x source x
    category x language (``source = 'all'``: every source, a domain counted once).
``agg_table2``
    Table 2 per run x university.
``agg_country_count``
    distinct domains per run x country x direction x category.
``agg_network_domain``
    per run x direction x domain: universities linked with it, links, pages, language,
    category.
``agg_citing_overlap``, ``agg_citing_rank``
    the rows of ``v_citing_overlap`` and ``v_citing_rank`` (revision 0007: the impact
    figures over every stored run).

Views on them, with the columns of the views they stand in for:
``agg_v_category_share`` (``v_category_share``), ``agg_v_country_category_share``
(``v_country_category_share``), ``agg_v_rank_factors`` and ``agg_v_rank_factor_share``
(revision 0009's SQL reading ``agg_v_category_share``). A later revision that drops or
replaces ``v_cluster`` must drop ``agg_v_rank_factors`` first (PostgreSQL refuses
otherwise): :func:`drop_views`, :func:`create_views`.

Indexes for the freshness check (the newest row of each input is read from an index):
``page.extracted_at``, ``citation.checked_at``, ``document.created_at``,
``domain_category.updated_at`` and ``.override_at``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.schema import SchemaItem

from migrations.revisions import revision_module

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FRESHNESS_INDEXES: tuple[tuple[str, str, str], ...] = (
    ("ix_page_extracted_at", "page", "extracted_at"),
    ("ix_citation_checked_at", "citation", "checked_at"),
    ("ix_document_created_at", "document", "created_at"),
    ("ix_domain_category_updated_at", "domain_category", "updated_at"),
    ("ix_domain_category_override_at", "domain_category", "override_at"),
)
TABLES = (
    "agg_citing_rank",
    "agg_citing_overlap",
    "agg_network_domain",
    "agg_country_count",
    "agg_table2",
    "agg_domain_count",
    "agg_environment",
    "agg_state",
)


_FLOAT = "DOUBLE PRECISION"


def _shares(partition: str) -> str:
    """``share`` and ``known_share`` of ``g.domains`` as revision 0008's views compute them."""
    return f"""
           CAST(g.domains AS {_FLOAT})
           / CAST(SUM(g.domains) OVER (PARTITION BY {partition}) AS {_FLOAT}) AS share,
           CASE WHEN g.category = 'unknown' THEN NULL ELSE
           CAST(g.domains AS {_FLOAT})
           / CAST(NULLIF(SUM(CASE WHEN g.category = 'unknown' THEN 0 ELSE g.domains END)
                  OVER (PARTITION BY {partition}), 0) AS {_FLOAT})
           END AS known_share"""


def _views() -> list[tuple[str, str]]:
    """``(name, SELECT ...)`` of this revision's views, in creation order."""
    views = [
        (
            "agg_v_category_share",
            f"""
            WITH g AS (
                SELECT run_id, university_id, direction, category, SUM(domains) AS domains
                FROM agg_domain_count
                WHERE source = 'all'
                GROUP BY run_id, university_id, direction, category
            )
            SELECT g.run_id AS run_id, g.university_id AS university_id,
                   u.name AS university, u.country AS country, g.direction AS direction,
                   g.category AS category, g.domains AS domains,
                   {_shares("g.run_id, g.university_id, g.direction")}
            FROM g
            JOIN university u ON u.id = g.university_id
            """,
        ),
        (
            "agg_v_country_category_share",
            f"""
            SELECT g.run_id AS run_id, g.country AS country, g.direction AS direction,
                   g.category AS category, g.domains AS domains,
                   {_shares("g.run_id, g.country, g.direction")}
            FROM agg_country_count g
            """,
        ),
    ]
    for name, body in revision_module("0009_rank_factors.py")._views():
        fast = body.replace("FROM v_category_share", "FROM agg_v_category_share")
        assert fast != body, f"{name} no longer reads v_category_share"
        views.append((f"agg_{name}", fast))
    return views


VIEW_NAMES: tuple[str, ...] = tuple(name for name, _ in _views())


def create_views() -> None:
    """Create the views of this revision (in dependency order)."""
    for name, body in _views():
        op.execute(f"CREATE VIEW {name} AS {body.strip()}")


def drop_views() -> None:
    """Drop the views of this revision (in reverse dependency order)."""
    for name in reversed(VIEW_NAMES):
        op.execute(f"DROP VIEW IF EXISTS {name}")


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{table}_{column}_{target}"), ondelete="CASCADE"
    )


def _head(table: str, *, university: bool = True) -> list[SchemaItem]:
    """id, run_id (and university_id) with their keys."""
    items: list[SchemaItem] = [
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}")),
        _fk(table, "run_id", "crawl_run"),
    ]
    if university:
        items += [
            sa.Column("university_id", sa.Integer(), nullable=False),
            _fk(table, "university_id", "university"),
        ]
    return items


def upgrade() -> None:
    for name, table, column in FRESHNESS_INDEXES:
        op.create_index(name, table, [column])
    op.create_table(
        "agg_state",
        *_head("agg_state", university=False),
        sa.Column("fingerprint", sa.Text(), nullable=False),
        sa.Column("built_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("outgoing_domains", sa.BigInteger(), nullable=False),
        sa.Column("citing_domains", sa.BigInteger(), nullable=False),
        sa.UniqueConstraint("run_id", name=op.f("uq_agg_state_run_id")),
    )
    op.create_table(
        "agg_environment",
        *_head("agg_environment"),
        sa.Column("direction", sa.String(length=10), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("domain", sa.String(length=253), nullable=False),
        sa.Column("links", sa.BigInteger(), nullable=False),
        sa.Column("pages", sa.BigInteger(), nullable=False),
        sa.Column("language", sa.String(length=10), nullable=False),
        sa.Column("category", sa.String(length=40), nullable=True),
    )
    op.create_index(
        "ix_agg_environment_run_direction_domain",
        "agg_environment",
        ["run_id", "direction", "domain"],
    )
    op.create_index(
        "ix_agg_environment_run_university",
        "agg_environment",
        ["run_id", "university_id", "direction"],
    )
    op.create_table(
        "agg_domain_count",
        *_head("agg_domain_count"),
        sa.Column("direction", sa.String(length=10), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("category", sa.String(length=40), nullable=False),
        sa.Column("language", sa.String(length=10), nullable=False),
        sa.Column("domains", sa.BigInteger(), nullable=False),
        sa.Column("links", sa.BigInteger(), nullable=False),
        sa.Column("pages", sa.BigInteger(), nullable=False),
    )
    op.create_index(
        "ix_agg_domain_count_run_source",
        "agg_domain_count",
        ["run_id", "source", "university_id"],
    )
    op.create_table(
        "agg_table2",
        *_head("agg_table2"),
        sa.Column("site_pages", sa.BigInteger(), nullable=False),
        sa.Column("external_links", sa.BigInteger(), nullable=False),
        sa.Column("external_domains", sa.BigInteger(), nullable=False),
        sa.Column("citing_pages", sa.BigInteger(), nullable=False),
        sa.Column("citing_domains", sa.BigInteger(), nullable=False),
        sa.UniqueConstraint(
            "run_id", "university_id", name=op.f("uq_agg_table2_run_id_university_id")
        ),
    )
    op.create_table(
        "agg_country_count",
        *_head("agg_country_count", university=False),
        sa.Column("country", sa.String(length=100), nullable=False),
        sa.Column("direction", sa.String(length=10), nullable=False),
        sa.Column("category", sa.String(length=40), nullable=False),
        sa.Column("domains", sa.BigInteger(), nullable=False),
    )
    op.create_index(
        "ix_agg_country_count_run_direction", "agg_country_count", ["run_id", "direction"]
    )
    op.create_table(
        "agg_network_domain",
        *_head("agg_network_domain", university=False),
        sa.Column("direction", sa.String(length=10), nullable=False),
        sa.Column("domain", sa.String(length=253), nullable=False),
        sa.Column("universities", sa.Integer(), nullable=False),
        sa.Column("links", sa.BigInteger(), nullable=False),
        sa.Column("pages", sa.BigInteger(), nullable=False),
        sa.Column("language", sa.String(length=10), nullable=False),
        sa.Column("category", sa.String(length=40), nullable=True),
    )
    op.create_index(
        "ix_agg_network_domain_run_direction_universities",
        "agg_network_domain",
        ["run_id", "direction", "universities"],
    )
    op.create_table(
        "agg_citing_overlap",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("university_id", sa.Integer(), nullable=False),
        sa.Column("university", sa.String(length=300), nullable=False),
        sa.Column("country", sa.String(length=100), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("domains", sa.BigInteger(), nullable=False),
        sa.Column("hosts", sa.BigInteger(), nullable=True),
        sa.Column("only_here", sa.BigInteger(), nullable=True),
        sa.Column("missed", sa.BigInteger(), nullable=True),
        sa.Column("domains_all", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agg_citing_overlap")),
        _fk("agg_citing_overlap", "university_id", "university"),
    )
    op.create_table(
        "agg_citing_rank",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("university_id", sa.Integer(), nullable=False),
        sa.Column("university", sa.String(length=300), nullable=False),
        sa.Column("country", sa.String(length=100), nullable=False),
        sa.Column("source", sa.String(length=80), nullable=False),
        sa.Column("level", sa.String(length=10), nullable=False),
        sa.Column("nodes", sa.BigInteger(), nullable=False),
        sa.Column("domains", sa.BigInteger(), nullable=False),
        sa.Column("links", sa.BigInteger(), nullable=True),
        sa.Column("harmonic_sum", sa.Float(), nullable=True),
        sa.Column("pagerank_sum", sa.Float(), nullable=True),
        sa.Column("ranked_nodes", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agg_citing_rank")),
        _fk("agg_citing_rank", "university_id", "university"),
    )
    create_views()


def downgrade() -> None:
    drop_views()
    for table in TABLES:
        op.drop_table(table)
    for name, table, _column in reversed(FRESHNESS_INDEXES):
        op.drop_index(name, table_name=table)
