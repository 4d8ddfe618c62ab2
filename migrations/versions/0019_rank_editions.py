"""rank editions: every edition of a ranking kept, the newest mirrored on university

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28

``webometrics universities import-ranks FILE --edition NAME`` stores each edition of a
ranking table: ``rank_edition`` (name, source file, publication date, import time, rows
left unmatched) and ``university_rank`` (a university's rank and impact rank in the
edition, the row it came from and how it was matched). ``university.rank`` and
``impact_rank`` stay: they hold the newest edition's ranks, so every view reading them
reads the default edition.

Upgrade moves the ranks stored so far (typed in the universities file) into the edition
``universities file``; downgrade drops the two tables (``university.rank`` keeps the
newest edition's ranks).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FILE_EDITION = "universities file"  # store.models.FILE_EDITION


def upgrade() -> None:
    edition = op.create_table(
        "rank_edition",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("source", sa.String(length=500), nullable=True),
        sa.Column("published", sa.Date(), nullable=True),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("unmatched_rows", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rank_edition")),
        sa.UniqueConstraint("name", name=op.f("uq_rank_edition_name")),
    )
    op.create_table(
        "university_rank",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("edition_id", sa.Integer(), nullable=False),
        sa.Column("university_id", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=True),
        sa.Column("impact_rank", sa.Integer(), nullable=True),
        sa.Column("name_given", sa.String(length=300), nullable=True),
        sa.Column("domain_given", sa.String(length=500), nullable=True),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.Column("matched_by", sa.String(length=40), nullable=False),
        sa.ForeignKeyConstraint(
            ["edition_id"],
            ["rank_edition.id"],
            name=op.f("fk_university_rank_edition_id_rank_edition"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["university_id"],
            ["university.id"],
            name=op.f("fk_university_rank_university_id_university"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_university_rank")),
        sa.UniqueConstraint(
            "edition_id", "university_id", name=op.f("uq_university_rank_edition_id_university_id")
        ),
    )
    op.create_index(op.f("ix_university_rank_university_id"), "university_rank", ["university_id"])
    conn = op.get_bind()
    ranked = conn.execute(
        sa.text(
            "SELECT id, name, rank, impact_rank FROM university "
            "WHERE rank IS NOT NULL OR impact_rank IS NOT NULL"
        )
    ).all()
    if not ranked:
        return
    op.bulk_insert(
        edition,
        [
            {
                "id": 1,
                "name": FILE_EDITION,
                "source": None,
                "published": None,
                "imported_at": dt.datetime.now(dt.UTC),
                "unmatched_rows": 0,
            }
        ],
    )
    if conn.dialect.name == "postgresql":  # the id was given: move the sequence past it
        conn.execute(sa.text("SELECT setval('rank_edition_id_seq', 1)"))
    conn.execute(
        sa.text(
            "INSERT INTO university_rank (edition_id, university_id, rank, impact_rank, "
            "name_given, line, matched_by) SELECT 1, id, rank, impact_rank, name, NULL, "
            "'file' FROM university WHERE rank IS NOT NULL OR impact_rank IS NOT NULL"
        )
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_university_rank_university_id"), table_name="university_rank")
    op.drop_table("university_rank")
    op.drop_table("rank_edition")
