"""A crawl run's end: its environment rows and statistics recomputed from what is stored
(the same answer after a resumed crawl), and the columns of its
:class:`~store.models.CrawlRun` row.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, delete, func, select

from crawler.storage.pages import dialect_insert
from store.entities import environment_rows
from store.models import Citation, CrawlRun, Environment, Link, Page
from store.session import session_scope


def finalize_run(engine: Engine, run_id: int) -> dict[str, Any]:
    """Recompute the run's environment rows and return its statistics (from the store).

    The rows are :func:`store.entities.environment_rows`: per university and external
    site (web entity, :mod:`core.entities`) and direction, links and pages; the same
    function recomputes them when ``webometrics sites apply`` re-keys stored rows.
    """
    with session_scope(engine) as session:
        session.execute(delete(Environment).where(Environment.run_id == run_id))
        env_rows = environment_rows(session, run_id)
        if env_rows:
            session.execute(dialect_insert(session, Environment), env_rows)
        # statistics
        n_pages, n_fetched, n_bytes = session.execute(
            select(
                func.count(),
                func.count(Page.http_status),
                func.coalesce(func.sum(Page.content_length), 0),
            ).where(Page.last_run_id == run_id)
        ).one()
        errors: Counter[str] = Counter()
        for err, n in session.execute(
            select(Page.fetch_error, func.count())
            .where(Page.last_run_id == run_id, Page.fetch_error.is_not(None))
            .group_by(Page.fetch_error)
        ):
            errors[(err or "").split(":", 1)[0]] += n
        roles = dict(
            session.execute(
                select(Page.role, func.count())
                .where(Page.last_run_id == run_id)
                .group_by(Page.role)
            ).all()
        )
        statuses: Counter[str] = Counter()
        for status, n in session.execute(
            select(Page.http_status, func.count())
            .where(Page.last_run_id == run_id, Page.http_status.is_not(None))
            .group_by(Page.http_status)
        ):
            statuses[str(status)] += n
        n_links = session.execute(
            select(func.count()).select_from(Link).where(Link.run_id == run_id)
        ).scalar_one()
        citations = dict(
            session.execute(
                select(Citation.status, func.count())
                .where(Citation.run_id == run_id)
                .group_by(Citation.status)
            ).all()
        )
    return {
        "pages": int(n_fetched or 0),
        "pages_recorded": int(n_pages or 0),
        "bytes": int(n_bytes or 0),
        "errors": dict(sorted(errors.items())),
        "error_pages": int(sum(errors.values())),
        "roles": {str(k): int(v) for k, v in sorted(roles.items())},
        "http_status": dict(sorted(statuses.items())),
        "links": int(n_links),
        "citations": {str(k): int(v) for k, v in sorted(citations.items())},
        "environment": {
            "outgoing_domains": sum(r["direction"] == "outgoing" for r in env_rows),
            "citing_domains": sum(r["direction"] == "citing" for r in env_rows),
        },
        "finalized_at": dt.datetime.now(dt.UTC).isoformat(),
    }


def update_run(engine: Engine, run_id: int, **values: Any) -> None:
    """Set columns of a crawl run (``status``, ``stats``, ``finished_at``, ``error``)."""
    with session_scope(engine) as session:
        run = session.get(CrawlRun, run_id)
        if run is None:
            raise LookupError(f"crawl run {run_id} does not exist")
        for key, value in values.items():
            setattr(run, key, value)


@contextmanager
def failure_recorded(engine: Engine, run_id: int) -> Iterator[None]:
    """Run the block; when it raises, mark the crawl run ``failed`` (``interrupted`` on
    Ctrl-C) with the error and its end time, then let the exception go on."""
    try:
        yield
    except BaseException as exc:
        update_run(
            engine,
            run_id,
            status="interrupted" if isinstance(exc, KeyboardInterrupt) else "failed",
            finished_at=dt.datetime.now(dt.UTC),
            error=f"{type(exc).__name__}: {exc}",
        )
        raise
