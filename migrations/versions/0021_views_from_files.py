"""views from store/sql: every view re-created from its file

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28

Issue 37, item 2: a view's current SQL lives in ``store/sql/<view>.sql`` (see
``store/sql/__init__.py``), no longer only in whichever revision last replaced it (0002,
0004, 0007, 0008, 0009, 0010, 0013, 0015, 0018). This revision drops every view and
creates it again from ``migrations/views/0021/``, the copy of those files frozen with it
(``scripts/freeze_views.py``), so that editing a file later does not change what this
revision creates. It changes no view's definition: the files hold, character for
character, the SQL revisions 0002-0020 left (``tests/store/test_view_files.py`` compares
them). From here on a revision that changes a view freezes the new file beside it and
calls :func:`migrations.views.recreate` (CONTRIBUTING.md, "Recipe: add a migration").

Downgrade re-creates the views from the same frozen files: the views of 0020.
"""

from __future__ import annotations

from collections.abc import Sequence

from migrations.views import frozen_files, recreate
from store.sql import view_names

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    recreate(view_names(frozen_files(revision)), revision)


def downgrade() -> None:
    # 0021 froze the SQL 0020 left: the same files put 0020's views back
    recreate(view_names(frozen_files(revision)), revision)
