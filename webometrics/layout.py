"""The pipeline's layout: its stages in order and the folders a run keeps by default.

A leaf module: it imports nothing of webometrics (only the kernel's
:mod:`core.folders`), so the orchestrator (:mod:`webometrics.stages.pipeline`), the
crawl stage (:mod:`webometrics.stages.crawl`),
the liveness checks (:mod:`webometrics.liveness`) and the commands all read the stage
list and the folder defaults without importing one another (tests/test_architecture.py
checks that the modules import each other in no cycle).
"""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import Engine

from core.folders import user_folder

__all__ = [
    "ALL_STAGES",
    "COMMONCRAWL_STAGES",
    "STAGES",
    "default_crawl_folder",
    "default_http_cache_dir",
]

STAGES: tuple[str, ...] = ("crawl", "extract", "dedup", "cluster", "analyse")
#: stages a run may add, in this order after the crawl (they need files to read)
COMMONCRAWL_STAGES: tuple[str, ...] = ("commoncrawl-graph", "commoncrawl-index")
ALL_STAGES: tuple[str, ...] = ("crawl", *COMMONCRAWL_STAGES, *STAGES[1:])


def _database_folder(engine: Engine, suffix: str, base: Path) -> str | None:
    """A folder of this database: beside an SQLite file (``<name>-<suffix>``), else
    ``<base>/<suffix>/<backend-host-port-database>`` (``base``: one of the user's folders,
    :func:`core.folders.user_folder`); None for an in-memory database."""
    url = engine.url
    if url.get_backend_name() == "sqlite":
        db = url.database
        if not db or db == ":memory:" or db.startswith("file:"):
            return None
        path = Path(db).resolve()
        return str(path.with_name(f"{path.stem}-{suffix}"))
    name = f"{url.get_backend_name()}-{url.host or 'local'}-{url.port or ''}-{url.database or ''}"
    return str(base / suffix / re.sub(r"[^A-Za-z0-9._-]+", "_", name))


def default_http_cache_dir(engine: Engine) -> str | None:
    """Where a pipeline run keeps its HTTP cache when ``[crawl] http_cache_dir`` is unset:
    beside an SQLite file (``<name>-httpcache``), else in the user's cache folder, one per
    database; None for an in-memory database.

    >>> from sqlalchemy import create_engine
    >>> default_http_cache_dir(create_engine("sqlite:////data/webometrics.db"))
    '/data/webometrics-httpcache'
    >>> default_http_cache_dir(create_engine("sqlite://")) is None
    True
    """
    return _database_folder(engine, "httpcache", user_folder("cache"))


def default_crawl_folder(engine: Engine) -> str | None:
    """Where crawls without ``--jobdir`` keep their resumable state, one folder per run
    (``crawl-<run id>``): beside an SQLite file (``<name>-crawls``), else in the user's
    state folder (``$XDG_STATE_HOME``, ``~/.local/state``), one per database; None for an
    in-memory database.

    >>> from sqlalchemy import create_engine
    >>> default_crawl_folder(create_engine("sqlite:////data/webometrics.db"))
    '/data/webometrics-crawls'
    """
    return _database_folder(engine, "crawls", user_folder("state"))
