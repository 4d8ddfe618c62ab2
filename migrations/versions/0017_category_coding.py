"""category coding: each coder's category of a domain from a coding sheet

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28

The review workflow (``webometrics category export --sheet`` / ``import --coder``) hands
coding sheets to coders; each filled sheet's rows become ``category_coding`` rows (domain,
coder, the category given as a taxonomy key, the coder's note, what the sheet suggested
and with which confidence, the sheet's file name and line, when). One row per coder and
domain: importing a coder's sheet again replaces their codings of its domains. Two
coders' rows give Cohen's kappa and the disagreements; what an analyst accepts or
adjudicates becomes an override of ``domain_category`` with its history (revision 0012).

Downgrade drops the table (the overrides made from it stay).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "category_coding"


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("domain", sa.String(length=253), nullable=False),
        sa.Column("coder", sa.String(length=100), nullable=False),
        sa.Column("category", sa.String(length=40), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("suggested", sa.String(length=40), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("sheet", sa.String(length=300), nullable=True),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.Column("coded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{TABLE}")),
        sa.UniqueConstraint("coder", "domain", name=op.f(f"uq_{TABLE}_coder_domain")),
    )
    op.create_index(f"ix_{TABLE}_domain", TABLE, ["domain"])


def downgrade() -> None:
    op.drop_index(f"ix_{TABLE}_domain", table_name=TABLE)
    op.drop_table(TABLE)
