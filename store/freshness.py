"""The version of the stored data a reader shows: one string that changes whenever a
stage or an analyst changes what the dashboard reads.

The dashboard caches its query results (:mod:`dashboard.data`); it compares
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

from sqlalchemy import Engine, text

from store.aggregates import fingerprint

__all__ = ["data_version"]

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
