"""category_label, colink_overlap, shared_domain, network_file: what the dashboard reads

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25

The dashboard only reads stored results. Until this revision it loaded the taxonomy file
and ran the network analysis (co-link overlaps, shared domains, the GEXF graph) inside
its pages; the analyse stage now writes them:

- ``category_label``: each taxonomy category's label per language, in the file's order;
- ``colink_overlap``: per run and direction, every pair of universities with the domains
  they share, Jaccard, and the domains only one of them has;
- ``shared_domain``: per run and direction, the domains linked with two universities or
  more, with the universities (names, JSON) and the summed weight;
- ``network_file``: per run and direction, the whole university-domain graph as GEXF
  (zlib-compressed).

New tables only: nothing existing is copied or altered.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.schema import SchemaItem

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _run_direction(table: str) -> list[SchemaItem]:
    return [
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("direction", sa.String(length=10), nullable=False),
        sa.CheckConstraint(
            "direction IN ('outgoing', 'citing')", name=op.f(f"ck_{table}_direction")
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["crawl_run.id"],
            name=op.f(f"fk_{table}_run_id_crawl_run"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}")),
    ]


def upgrade() -> None:
    op.create_table(
        "category_label",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("category", sa.String(length=40), nullable=False),
        sa.Column("language", sa.String(length=10), nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_category_label")),
        sa.UniqueConstraint(
            "category", "language", name=op.f("uq_category_label_category_language")
        ),
    )
    op.create_table(
        "colink_overlap",
        *_run_direction("colink_overlap"),
        sa.Column("university_a_id", sa.Integer(), nullable=False),
        sa.Column("university_b_id", sa.Integer(), nullable=False),
        sa.Column("shared", sa.Integer(), nullable=False),
        sa.Column("jaccard", sa.Float(), nullable=False),
        sa.Column("only_a", sa.Integer(), nullable=False),
        sa.Column("only_b", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["university_a_id"],
            ["university.id"],
            name=op.f("fk_colink_overlap_university_a_id_university"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["university_b_id"],
            ["university.id"],
            name=op.f("fk_colink_overlap_university_b_id_university"),
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint(
            "run_id",
            "direction",
            "university_a_id",
            "university_b_id",
            name=op.f("uq_colink_overlap_run_id_direction_university_a_id_university_b_id"),
        ),
    )
    op.create_table(
        "shared_domain",
        *_run_direction("shared_domain"),
        sa.Column("domain", sa.String(length=253), nullable=False),
        sa.Column("n_universities", sa.Integer(), nullable=False),
        sa.Column("universities", sa.JSON(), nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.UniqueConstraint(
            "run_id", "direction", "domain", name=op.f("uq_shared_domain_run_id_direction_domain")
        ),
    )
    op.create_table(
        "network_file",
        *_run_direction("network_file"),
        sa.Column("format", sa.String(length=10), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.Column("built_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint(
            "run_id", "direction", "format", name=op.f("uq_network_file_run_id_direction_format")
        ),
    )
    for table in ("colink_overlap", "shared_domain", "network_file"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.create_index(batch_op.f(f"ix_{table}_run_id"), ["run_id"], unique=False)


def downgrade() -> None:
    for table in ("network_file", "shared_domain", "colink_overlap", "category_label"):
        op.drop_table(table)
