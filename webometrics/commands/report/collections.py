"""The collection a report is built from (``webometrics report --collection LABEL``) and
the collections compared (``collections.csv|md``, written when two or more collections
have data): Table 2 of each collection's newest run, so that a reader compares years.

A collection is the live web or a web archive's captures of a period
(:mod:`core.archives`, :mod:`store.analytics.collections`; docs/archives.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.archives import LIVE
from core.exceptions import ParameterError
from webometrics.commands.report.render import table_rows, write_table

COLLECTION_FIELDS = (
    "university",
    "collection",
    "run_id",
    "country",
    "rank",
    "site_pages",
    "external_links",
    "external_domains",
    "citing_pages",
    "citing_domains",
)


@dataclass(frozen=True)
class Chosen:
    """The run a report reads, its collection (None: no run with data) and every
    collection with data (:class:`store.analytics.CollectionRow`, live first)."""

    run_id: int | None
    collection: str | None
    found: tuple[Any, ...]


def choose(engine: Any, run_id: int | None, collection: str | None) -> Chosen:
    """The run of ``run_id`` (its own collection), else the newest run with data of
    ``collection`` (when ``None``: the live web, or the only collection there is).

    Raises
    ------
    ParameterError
        ``collection`` has no run with data (the message lists the collections that
        have), or ``run_id`` belongs to another collection than ``collection``.
    """
    from store import analytics as A

    found = tuple(A.collections(engine))
    labels = [c.collection for c in found]
    have = ", ".join(repr(label) for label in labels) or "none (crawl first: `webometrics crawl`)"
    if collection is not None and collection not in labels:
        raise ParameterError(
            f"no collection {collection!r} with data; --collection takes one of: {have}"
        )
    if run_id is not None:
        run = A.resolve_run(engine, run_id)
        own = A.run_collections(engine).get(int(run_id)) if run is not None else None
        if collection is not None and own != collection:
            raise ParameterError(
                f"crawl run {run_id} belongs to the collection {own!r}, not {collection!r}: "
                "give --run or --collection, or a run of that collection"
            )
        return Chosen(run, own, found)
    if not found:  # an empty database: the report of no run, as before
        return Chosen(A.resolve_run(engine, None), None, found)
    wanted = LIVE if collection is None else collection
    if collection is None and len(found) == 1:
        wanted = found[0].collection  # an archive-only database: its one collection
    row = next((c for c in found if c.collection == wanted), None)
    if row is None:
        raise ParameterError(
            f"no live crawl run with data (the default collection) and several archived "
            f"collections; give --collection, one of: {have}"
        )
    return Chosen(row.newest_run_id, wanted, found)


def write_collections(engine: Any, out: Path, chosen: Chosen) -> list[Path]:
    """``collections.csv|md``: Table 2 of each collection's newest run, by university
    then collection (nothing written when fewer than two collections have data)."""
    from store import analytics as A

    if len(chosen.found) < 2:
        return []
    runs = ", ".join(f"{c.collection}: run {c.newest_run_id}" for c in chosen.found)
    return write_table(
        out,
        "collections",
        COLLECTION_FIELDS,
        table_rows(A.compare_collections(engine), COLLECTION_FIELDS),
        f"Collections compared: Table 2 of each collection's newest run ({runs}); this "
        f"report is built from {chosen.collection}",
    )
