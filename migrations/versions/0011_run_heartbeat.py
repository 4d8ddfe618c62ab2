"""run heartbeat: crawl_run.heartbeat_at and pipeline_run.heartbeat_at

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02

A running crawl or pipeline run writes the time into its row's ``heartbeat_at`` every
``[database] heartbeat_seconds``; a ``running`` row whose heartbeat is older than
``[database] run_lease_seconds`` belongs to a process that died (kill -9, power loss)
and is marked ``interrupted`` by the next command (:mod:`webometrics.liveness`). Rows
without a heartbeat (older runs, imports) are left as they are.

Downgrade drops the two columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("crawl_run", "pipeline_run")


def upgrade() -> None:
    # in place (ALTER TABLE ... ADD COLUMN) on every backend: a batch copy of crawl_run
    # would drop the table its pages, links and views refer to
    for table in TABLES:
        op.add_column(table, sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} DROP COLUMN heartbeat_at")
