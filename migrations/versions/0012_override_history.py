"""override history: every analyst's override action on a domain, append-only

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03

``domain_category`` keeps one override per domain, so a second analyst who overrides the
same domain replaced the first one's category and note without a trace. Each set or
clear is now also a row of ``domain_category_history`` (domain, action ``set`` or
``clear``, the category set, the note, the analyst as they named themselves, when),
written in the same transaction by :mod:`store.overrides` and never updated or deleted.

The overrides stored before this revision become one ``set`` row each (their note and
time; no analyst), so every domain's history starts with the override it has.

Downgrade drops the table (the overrides themselves stay in ``domain_category``).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "domain_category_history"


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("domain", sa.String(length=253), nullable=False),
        sa.Column("action", sa.String(length=10), nullable=False),
        sa.Column("category", sa.String(length=40), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("analyst", sa.String(length=100), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("action IN ('set', 'clear')", name=op.f(f"ck_{TABLE}_action")),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{TABLE}")),
    )
    op.create_index(f"ix_{TABLE}_domain_id", TABLE, ["domain", "id"])
    op.execute(
        f"INSERT INTO {TABLE} (domain, action, category, note, analyst, at) "
        "SELECT domain, 'set', override_category, override_note, NULL, override_at "
        "FROM domain_category WHERE override_category IS NOT NULL AND override_at IS NOT NULL "
        "ORDER BY override_at, domain"
    )


def downgrade() -> None:
    op.drop_index(f"ix_{TABLE}_domain_id", table_name=TABLE)
    op.drop_table(TABLE)
