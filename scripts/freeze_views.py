"""Freeze the current SQL of views for a new migration.

Copies ``store/sql/<view>[.<dialect>].sql`` into ``migrations/views/<revision>/``, the
files that revision creates the views from (:mod:`migrations.views`), so that later edits
of ``store/sql/`` never change what an old revision creates.

Run: ``.venv/bin/python scripts/freeze_views.py 0022 v_environment v_category_share``
(no view names: every view).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from store.sql import SQL_DIR, view_files  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revision", help="the new migration's revision, e.g. 0022")
    parser.add_argument("views", nargs="*", help="views to freeze (default: every view)")
    args = parser.parse_args(argv)
    files = view_files(SQL_DIR)
    unknown = sorted(set(args.views) - set(files))
    if unknown:
        parser.error(f"no file in store/sql for {unknown}")
    target = ROOT / "migrations" / "views" / args.revision
    target.mkdir(parents=True, exist_ok=True)
    for name in args.views or sorted(files):
        for path in files[name].values():
            shutil.copy2(path, target / path.name)
            print(f"{path.relative_to(ROOT)} -> {(target / path.name).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
