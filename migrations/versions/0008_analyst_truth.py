"""what the analyst reads is true: unknown kept apart, clusters tied to their run, sources

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25

(Filled in by the following commits of issue 23.)
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
