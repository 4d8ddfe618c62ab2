"""archived collection: pages read from a web archive, crawl runs of a period

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28

Issue 35 (docs/archives.md). Columns:

``crawl_run.archive``, ``crawl_run.archive_from``, ``crawl_run.archive_to``
    the run's collection: NULL for the live web, else the archive (``wayback`` or
    ``commoncrawl``) and the period (days, inclusive) whose captures it read.
``page.archive``, ``page.original_url``, ``page.captured_at``, ``page.capture_status``
    an archived page: the archive, the URL the archive captured, when, and ``captured``
    or ``no_capture``. ``page.url`` stays unique: an archived page's ``url`` is its
    capture's memento URL (``https://web.archive.org/web/<timestamp>id_/<url>``), so two
    versions of one URL are two rows and a live page keeps its own.

View replaced: ``v_university_table2`` counts as a run's site pages only the pages of
the run's collection (a live page seen by runs before and after an archived run is not
one of the archived run's pages).

Downgrade drops the columns and puts 0008's view back.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from migrations.revisions import revision_module

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

VIEW = "v_university_table2"
#: the condition 0008's view counts site pages by
_RUN_RANGE = "AND COALESCE(p.last_run_id, p.first_run_id) >= t.run_id)"
#: ... and the run's collection
SAME_COLLECTION = (
    "AND COALESCE(p.last_run_id, p.first_run_id) >= t.run_id "
    "AND COALESCE(p.archive, '') = "
    "COALESCE((SELECT r.archive FROM crawl_run r WHERE r.id = t.run_id), ''))"
)


def _old_body(dialect: str) -> str:
    return dict(revision_module("0008_analyst_truth.py")._views(dialect))[VIEW]


def new_body(dialect: str) -> str:
    """The view's SELECT after this revision."""
    old = _old_body(dialect)
    if _RUN_RANGE not in old:  # pragma: no cover - 0008's text is fixed
        raise RuntimeError(f"0018: {VIEW} of 0008 no longer has the site pages condition")
    return old.replace(_RUN_RANGE, SAME_COLLECTION)


def upgrade() -> None:
    # in place (ALTER TABLE ... ADD COLUMN) on both dialects: a batch copy of crawl_run or
    # page would drop the old table, and with foreign keys on that cascades to their rows
    op.add_column("crawl_run", sa.Column("archive", sa.String(length=20), nullable=True))
    op.add_column("crawl_run", sa.Column("archive_from", sa.Date(), nullable=True))
    op.add_column("crawl_run", sa.Column("archive_to", sa.Date(), nullable=True))
    op.add_column("page", sa.Column("archive", sa.String(length=20), nullable=True))
    op.add_column("page", sa.Column("original_url", sa.Text(), nullable=True))
    op.add_column("page", sa.Column("captured_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("page", sa.Column("capture_status", sa.String(length=20), nullable=True))
    op.create_index(op.f("ix_page_original_url"), "page", ["original_url"])
    op.execute(f"DROP VIEW IF EXISTS {VIEW}")
    op.execute(f"CREATE VIEW {VIEW} AS {new_body(op.get_bind().dialect.name).strip()}")


def downgrade() -> None:
    op.execute(f"DROP VIEW IF EXISTS {VIEW}")
    op.drop_index(op.f("ix_page_original_url"), table_name="page")
    for column in ("capture_status", "captured_at", "original_url", "archive"):
        op.execute(f"ALTER TABLE page DROP COLUMN {column}")
    for column in ("archive_to", "archive_from", "archive"):
        op.execute(f"ALTER TABLE crawl_run DROP COLUMN {column}")
    op.execute(f"CREATE VIEW {VIEW} AS {_old_body(op.get_bind().dialect.name).strip()}")
