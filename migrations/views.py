"""The frozen view files a revision creates its views from (``migrations/views/<revision>/``).

A migration that changes a view reads the copy of ``store/sql/<view>.sql`` frozen beside it
(``scripts/freeze_views.py <revision> <view>``), never ``store/sql/`` itself: a revision is
history, and an old one must produce the schema it produced when a file is edited later.
:func:`frozen_files` resolves every view to its newest frozen copy at or before a revision;
:func:`recreate` drops and re-creates views (and the views that read them) from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from store.sql import recreate_views, view_files

#: one folder per revision that froze view files, named by the revision
FROZEN = Path(__file__).with_name("views")


def frozen_files(revision: str) -> dict[str, dict[str, Path]]:
    """Every view's files as revision ``revision`` left them: for each view, the copy in
    the newest folder of :data:`FROZEN` whose revision is at most ``revision``."""
    files: dict[str, dict[str, Path]] = {}
    for folder in sorted(p for p in FROZEN.iterdir() if p.is_dir() and p.name <= revision):
        files.update(view_files(folder))
    return files


def recreate(names: Iterable[str], revision: str) -> list[str]:
    """In a migration: drop views ``names`` and their dependents and create them as
    revision ``revision`` froze them (its own revision on upgrade, ``down_revision`` on
    downgrade); returns the views re-created."""
    from alembic import op

    return recreate_views(op.get_bind(), names, frozen_files(revision))
