"""The version of the stored data a reader shows: one string that changes whenever a
stage or an analyst changes what the dashboard reads.

The dashboard caches its query results (:mod:`dashboard.cache`); it compares
:func:`data_version` every few seconds with the version its cache was filled at and
forgets every cached result when they differ, so a change made from the command line
(``webometrics category set``, ``analyse``, ``cluster``, a crawl) shows without a reload.

The version is :func:`store.aggregates.fingerprint` (the newest id or timestamp of every
input of the environment: crawl runs, links, citations, pages and their extraction,
documents, categories and overrides, the universities and their domains) and the newest
row of what the other pages read: clusterings, near-duplicate runs, pipeline runs, the
override history, the analyse stage's networks, aggregates and category labels, the rank
editions. Each is
a ``MAX`` or a ``COUNT`` over an indexed column or a small table, read in one
transaction: a few milliseconds on the demo database.

Examples
--------
>>> from store import make_engine, schema
>>> engine = make_engine("sqlite://")
>>> schema.upgrade(engine)
>>> before = data_version(engine)
>>> from store.models import University
>>> from store.session import session_scope
>>> with session_scope(engine) as s:
...     s.add(University(name="Oxford", country="UK"))
>>> data_version(engine) == before
False
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, func, select, text
from sqlalchemy.orm import InstrumentedAttribute

from store.aggregates import data_run_ids, fingerprint
from store.models import AggregateState, Link, Page

__all__ = ["Staleness", "data_version", "staleness"]

# what the pages read beyond the environment: added rows (ids), finished or rebuilt ones
# (timestamps), deleted ones (counts)
_MORE = text(
    """
    SELECT (SELECT MAX(id) FROM clustering),
           (SELECT COUNT(*) FROM clustering),
           (SELECT MAX(id) FROM dedup_run),
           (SELECT COUNT(*) FROM dedup_run),
           (SELECT MAX(id) FROM pipeline_run),
           (SELECT MAX(finished_at) FROM pipeline_run),
           (SELECT MAX(finished_at) FROM crawl_run),
           (SELECT MAX(id) FROM domain_category_history),
           (SELECT MAX(built_at) FROM network_file),
           (SELECT MAX(built_at) FROM agg_state),
           (SELECT MAX(id) FROM category_label),
           (SELECT MAX(id) FROM rank_edition),
           (SELECT COUNT(*) FROM rank_edition),
           (SELECT MAX(imported_at) FROM rank_edition)
    """
)


def data_version(engine: Engine) -> str:
    """One string that changes whenever the data the dashboard reads change.

    Parameters
    ----------
    engine : Engine

    Returns
    -------
    str
        Equal for two calls when no stage and no analyst wrote in between (a crawl's
        heartbeat alone changes nothing).
    """
    with engine.connect() as conn:
        more = ";".join(str(v) for v in conn.execute(_MORE).one())
        return f"{fingerprint(conn)}#{more}"


# the positions in store.aggregates.fingerprint's facts (its _FINGERPRINT query) and what
# a change there means for the analyst, in the order of the query
_CHANGES = (
    (0, "crawl runs added"),
    (1, "citing nodes added"),
    (2, "crawl runs added or deleted"),
    (4, "citations found"),
    (5, "citations verified"),
    (6, "environment rows added"),
    (8, "pages extracted"),
    (9, "documents built"),
    (10, "documents rebuilt"),
    (11, "domain documents added or deleted"),
)
_LINK, _PAGE = 3, 7
_CATEGORIES = "categories or overrides changed"
_UNIVERSITIES = "universities or their domains changed"


@dataclass(frozen=True)
class Staleness:
    """What changed since the aggregates (the figures of the dashboard and the report)
    were computed.

    Attributes
    ----------
    built_at : datetime or None
        When they were computed (UTC); ``None``: never (no ``webometrics analyse`` yet).
    pages : int
        Pages stored since (a crawl's).
    links : int
        Links stored since.
    changes : tuple of str
        The other changes, in words (``"pages extracted"``, ``"categories or overrides
        changed"``, ...).
    """

    built_at: dt.datetime | None
    pages: int
    links: int
    changes: tuple[str, ...]

    def message(self) -> str:
        """One sentence for the banner: what changed, since when, what to do."""
        what = [
            *([f"{_count(self.pages, 'page')} crawled"] if self.pages else []),
            *([f"{_count(self.links, 'link')} stored"] if self.links else []),
            *self.changes,
        ]
        since = (
            f"after the figures were computed at {self.built_at:%Y-%m-%d %H:%M} UTC"
            if self.built_at is not None
            else "and the figures were never computed"
        )
        done = ", ".join(what) if what else "the data changed"
        return (
            f"{done[0].upper()}{done[1:]} {since}; run `webometrics refresh` or press "
            "Refresh figures."
        )


def staleness(engine: Engine) -> Staleness | None:
    """What changed since the aggregates were computed (:mod:`store.aggregates`),
    ``None`` while they are fresh or there is nothing to compute.

    Compares the database's :func:`~store.aggregates.fingerprint` with the one stored by
    the last refresh: a few indexed ``MAX``/``COUNT`` reads, plus a count of the pages
    and links whose id is above the stored newest (an index range).

    Parameters
    ----------
    engine : Engine

    Returns
    -------
    Staleness or None
    """
    with engine.connect() as conn:
        now = fingerprint(conn)
        state = conn.execute(
            select(AggregateState.fingerprint, AggregateState.built_at)
            .order_by(AggregateState.built_at.desc())
            .limit(1)
        ).first()
        if state is None:
            if not data_run_ids(engine):  # nothing a refresh would give figures to
                return None
            pages = int(conn.execute(select(func.count()).select_from(Page)).scalar_one())
            return Staleness(None, pages, 0, ())
        then, built_at = str(state[0]), state[1]
        if then == now:
            return None
        old, new = _facts(then), _facts(now)
        pages = _added(conn, Page.id, old[_PAGE], new[_PAGE])
        links = _added(conn, Link.id, old[_LINK], new[_LINK])
    changes = [why for i, why in _CHANGES if old[i] != new[i]]
    if old[-1] != new[-1]:
        changes.append(_UNIVERSITIES)
    if then.split("|", 1)[-1] != now.split("|", 1)[-1]:
        changes.append(_CATEGORIES)
    if pages or links:  # said as counts
        changes = [c for c in changes if c not in ("crawl runs added",)]
    return Staleness(built_at, pages, links, tuple(dict.fromkeys(changes)))


def _facts(stamp: str) -> list[str]:
    """The data part of a fingerprint, one string per fact (the digest last)."""
    return stamp.split("|", 1)[0].split(";")


def _added(conn: Connection, column: InstrumentedAttribute[int], old: str, new: str) -> int:
    """Rows whose id is above ``old`` (the stored newest id, ``"None"``: none), when
    ``new`` differs."""
    if old == new:
        return 0
    stmt = select(func.count()).select_from(column.class_)
    if old != "None":
        stmt = stmt.where(column > int(old))
    return int(conn.execute(stmt).scalar_one())


def _count(n: int, noun: str) -> str:
    """``"1 page"``, ``"3,200 pages"``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
