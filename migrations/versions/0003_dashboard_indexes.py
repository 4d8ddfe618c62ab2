"""indexes for the analyst views the dashboard reads

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 11:00:00

The views of 0002 aggregate ``link``, ``citation`` and ``page`` on every read. These
indexes let SQLite read the columns they group on from an index instead of the table
rows (measured on the 100,000-page database of ``bench/dashboard.py``; see
``bench/results/dashboard.md``): links by run and source page, verified citations by
run and university, page languages per registered domain, a university's own pages by
run. URL columns are left out so that a very long URL never exceeds PostgreSQL's
b-tree row limit.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "ix_link_run_source_domain",
        "link",
        ("run_id", "source_page_id", "target_domain", "external"),
    ),
    (
        "ix_citation_status_run_university",
        "citation",
        ("status", "run_id", "university_id", "citing_domain"),
    ),
    ("ix_page_domain_language_role", "page", ("registered_domain", "language", "role")),
    (
        "ix_page_university_role_runs",
        "page",
        ("university_id", "role", "first_run_id", "last_run_id"),
    ),
)


def upgrade() -> None:
    for name, table, columns in INDEXES:
        op.create_index(name, table, list(columns))


def downgrade() -> None:
    for name, table, _columns in reversed(INDEXES):
        op.drop_index(name, table_name=table)
