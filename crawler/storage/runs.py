"""A crawl run's end: its environment rows and statistics recomputed from what is stored
(the same answer after a resumed crawl), and the columns of its
:class:`~store.models.CrawlRun` row.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, delete, func, select

from core.domains import in_domains
from crawler.storage.pages import dialect_insert
from store.models import Citation, CrawlRun, Environment, Link, Page, UniversityDomain
from store.session import session_scope


def finalize_run(engine: Engine, run_id: int) -> dict[str, Any]:
    """Recompute the run's environment rows and return its statistics (from the store).

    Outgoing rows: per university and external registered domain, ``link_count`` = links
    of the university's pages to the domain, ``page_count`` = the domain's pages fetched
    (HTTP 200) in the run. Citing rows: per university and citing domain, ``page_count``
    = verified citing pages, ``link_count`` = their stored links into the university.
    """
    with session_scope(engine) as session:
        uni_domains: dict[int, set[str]] = defaultdict(set)
        for uid, dom in session.execute(
            select(UniversityDomain.university_id, UniversityDomain.domain)
        ):
            uni_domains[uid].add(dom)
        fetched_pages = dict(
            session.execute(
                select(Page.registered_domain, func.count())
                .where(Page.last_run_id == run_id, Page.http_status == 200)
                .group_by(Page.registered_domain)
            ).all()
        )
        outgoing: Counter[tuple[int, str]] = Counter()
        for source_uni, dom, n in session.execute(
            select(Page.university_id, Link.target_domain, func.count())
            .join(Page, Page.id == Link.source_page_id)
            .where(Link.run_id == run_id, Link.external, Page.role == "university")
            .group_by(Page.university_id, Link.target_domain)
        ):
            if source_uni is not None and dom not in uni_domains.get(source_uni, ()):
                outgoing[(source_uni, dom)] += n
        citing_pages: dict[tuple[int, str], set[int]] = defaultdict(set)
        for uid, dom, pid in session.execute(
            select(Citation.university_id, Citation.citing_domain, Citation.page_id).where(
                Citation.run_id == run_id, Citation.status == "verified"
            )
        ):
            if pid is not None:
                citing_pages[(uid, dom)].add(pid)
        citing_links: Counter[tuple[int, str]] = Counter()
        all_pids = sorted({p for s in citing_pages.values() for p in s})
        page_links: dict[int, list[str]] = defaultdict(list)
        for start in range(0, len(all_pids), 500):
            for src, host in session.execute(
                select(Link.source_page_id, Link.target_host).where(
                    Link.source_page_id.in_(all_pids[start : start + 500])
                )
            ):
                page_links[src].append(host)
        for (uid, dom), pids in citing_pages.items():
            doms = uni_domains.get(uid, set())
            citing_links[(uid, dom)] = sum(
                1 for pid in pids for host in page_links.get(pid, ()) if in_domains(host, doms)
            )
        session.execute(delete(Environment).where(Environment.run_id == run_id))
        env_rows = [
            {
                "run_id": run_id,
                "university_id": uid,
                "domain": dom,
                "direction": "outgoing",
                "link_count": n,
                "page_count": fetched_pages.get(dom, 0),
            }
            for (uid, dom), n in sorted(outgoing.items())
        ] + [
            {
                "run_id": run_id,
                "university_id": uid,
                "domain": dom,
                "direction": "citing",
                "link_count": citing_links[(uid, dom)],
                "page_count": len(pids),
            }
            for (uid, dom), pids in sorted(citing_pages.items())
        ]
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
            "outgoing_domains": len(outgoing),
            "citing_domains": len(citing_pages),
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
