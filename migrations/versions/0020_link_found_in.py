"""link found_in: where the crawler found a link (HTML, a script, a JSON block, the DOM)

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28

Links built by scripts (issue 35, hostile live sites): besides the ``<a>``/``<area>`` of
the fetched HTML (``html``), the crawler follows speculative links, the URL literals of
scripts (``script``) and the values of JSON blocks (``json``), and the links that exist
only in the DOM after a headless browser ran the page's scripts (``rendered``). Every
link row existing before this revision was found in the HTML: the column's server
default says so.

Downgrade drops the column.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # in place (ALTER TABLE ... ADD COLUMN) on every backend: a batch copy of link would
    # drop the table the analyst views refer to
    op.add_column(
        "link",
        sa.Column("found_in", sa.String(length=10), nullable=False, server_default="html"),
    )


def downgrade() -> None:
    op.execute("ALTER TABLE link DROP COLUMN found_in")  # SQLite 3.35+, PostgreSQL
