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

Indexes for the freshness check (the newest row of each input is read from an index):
``page.extracted_at``, ``citation.checked_at``, ``document.created_at``,
``domain_category.updated_at`` and ``.override_at``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

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
    "agg_network_domain",
    "agg_country_count",
    "agg_table2",
    "agg_domain_count",
    "agg_environment",
    "agg_state",
)


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{table}_{column}_{target}"), ondelete="CASCADE"
    )


def _head(table: str, *, university: bool = True) -> list[sa.SchemaItem]:
    """id, run_id (and university_id) with their keys."""
    items: list[sa.SchemaItem] = [
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


def downgrade() -> None:
    for table in TABLES:
        op.drop_table(table)
    for name, table, _column in reversed(FRESHNESS_INDEXES):
        op.drop_index(name, table_name=table)
