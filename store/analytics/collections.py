"""Collections: the live web and each archive period crawled, compared year by year.

A crawl run reads one collection (:mod:`core.archives`): the live web, or the captures a
web archive holds in a period (``crawl_run.archive``, ``archive_from``, ``archive_to``;
migration 0018). :func:`collections` lists the collections that have environment data
with their newest such run; :func:`compare_collections` puts Table 2 of each chosen
collection's newest run side by side, so an analyst compares years.

Time: one query for the runs, then :func:`store.analytics.tables.table2` per collection.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from core.archives import LIVE, collection_label
from store.analytics.runs import run_ids
from store.analytics.tables import table2
from store.models import CrawlRun


@dataclass(frozen=True)
class CollectionRow:
    """A collection with environment data: its label, archive and period (None: the live
    web), its runs with data (ascending) and the newest of them."""

    collection: str
    archive: str | None
    archive_from: dt.date | None
    archive_to: dt.date | None
    run_ids: tuple[int, ...]
    newest_run_id: int


@dataclass(frozen=True)
class CollectionTable2Row:
    """Table 2 of one university in a collection's newest run."""

    collection: str
    run_id: int
    university_id: int
    university: str
    country: str
    rank: int | None
    site_pages: int
    external_links: int
    external_domains: int
    citing_pages: int
    citing_domains: int


def run_collections(engine: Engine) -> dict[int, str]:
    """The collection label of every crawl run."""
    with Session(engine) as s:
        rows = s.execute(
            select(CrawlRun.id, CrawlRun.archive, CrawlRun.archive_from, CrawlRun.archive_to)
        ).all()
    return {int(i): collection_label(a, f, t) for i, a, f, t in rows}


def collections(engine: Engine) -> list[CollectionRow]:
    """The collections with environment data: the live web first, then the archived ones
    by period."""
    with_data = set(run_ids(engine))
    with Session(engine) as s:
        rows = s.execute(
            select(
                CrawlRun.id, CrawlRun.archive, CrawlRun.archive_from, CrawlRun.archive_to
            ).order_by(CrawlRun.id)
        ).all()
    found: dict[str, tuple[str | None, dt.date | None, dt.date | None, list[int]]] = {}
    for run_id, archive, start, end in rows:
        if run_id not in with_data:
            continue
        label = collection_label(archive, start, end)
        found.setdefault(label, (archive, start, end, []))[3].append(int(run_id))

    def order(item: tuple[str, tuple]) -> tuple:
        label, (_, start, end, _) = item
        return (label != LIVE, start or dt.date.min, end or dt.date.min, label)

    return [
        CollectionRow(label, archive, start, end, tuple(ids), ids[-1])
        for label, (archive, start, end, ids) in sorted(found.items(), key=order)
    ]


def compare_collections(
    engine: Engine, labels: list[str] | None = None
) -> list[CollectionTable2Row]:
    """Table 2 of each collection's newest run with data (``labels``: the collections
    wanted, all when None), by university then collection."""
    out = []
    for coll in collections(engine):
        if labels is not None and coll.collection not in labels:
            continue
        for r in table2(engine, run_id=coll.newest_run_id):
            out.append(
                CollectionTable2Row(
                    coll.collection,
                    coll.newest_run_id,
                    r.university_id,
                    r.university,
                    r.country,
                    r.rank,
                    r.site_pages,
                    r.external_links,
                    r.external_domains,
                    r.citing_pages,
                    r.citing_domains,
                )
            )
    return sorted(out, key=lambda r: (r.university, r.collection != LIVE, r.collection))
