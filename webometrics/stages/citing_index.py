"""The Common Crawl URL-index stage: captured citing pages, verified like a live crawl.

:func:`run` takes the citing domains (and hosts) already stored for each university (its
``citing`` environment rows from any source: crawls, backlink exports, the Common Crawl
web graph; and the citing domains of its stored citations), or the names given, then

1. streams every index file (CDXJ, gzip or plain; Parquet through DuckDB; or the
   secondary index ``cluster.idx``, of which only the cdx blocks that may hold the
   citing names are fetched by byte range from ``cdx_prefix``) and keeps,
   per citing name, the ``limit_per_domain`` newest distinct URLs that Common Crawl
   captured as HTML with status 200 (:mod:`crawler.commoncrawl.index` reads,
   :mod:`crawler.commoncrawl.captures` chooses); every file is read to its end first,
   so a bad line stops the command before anything is stored;
2. opens a crawl run of kind ``commoncrawl-index``;
3. for each index file in turn, fetches the WARC record of each of its chosen captures by
   byte range (:mod:`crawler.commoncrawl.fetch`: the ``[crawl]`` delay, retries, timeout
   and user agent apply), checks it is
   the record asked for, spools it to a temporary file, and then stores the file's
   captures in **one transaction**: each record as a citing page through the WARC import
   path (:func:`crawler.warc.record_item`: status, headers, body, links into the
   universities; ``warc_file`` = the WARC file's URL or path, ``warc_offset`` = the
   record's offset), and each (university, page) as a citation of source
   ``commoncrawl-index:<crawl>``, decided as for a live crawl
   (:func:`crawler.storage.resolve_citations`: ``verified`` when the page links into the
   university's domains, ``missing`` when it does not);
4. recomputes the run's environment and statistics (:func:`crawler.storage.finalize_run`).

A fetch that fails (a 404, another record at the offset, a missing local file) stops
the command: the index files already done stay stored, the current one is not stored at
all, and the run is marked ``failed`` with the message.

Time: linear in the index size plus one request per chosen capture (at most one every
``[crawl] download_delay`` seconds). Memory: ``limit_per_domain`` captures per citing
name and one batch of pages; fetched records wait in a temporary file.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, select

from core.exceptions import ConfigError
from core.settings import Settings

log = logging.getLogger(__name__)

RUN_KIND = "commoncrawl-index"


@dataclass(frozen=True)
class IndexOptions:
    """What ``webometrics citing commoncrawl-index`` was asked to do."""

    index_files: tuple[str, ...]
    warc_prefix: str
    limit_per_domain: int = 10
    universities: tuple[str, ...] = ()  # names; empty = every stored university
    domains: tuple[str, ...] = ()  # citing names; empty = the stored citing environment
    cdx_prefix: str | None = None  # where the cdx files of a cluster.idx are (its folder)
    mime_types: tuple[str, ...] = ("text/html", "application/xhtml+xml")
    progress: bool = False
    batch_size: int = 200


@dataclass
class CitingNames:
    """The citing names to look up and the universities each is said to cite."""

    universities: list[dict[str, Any]]
    cites: dict[str, set[int]] = field(default_factory=dict)


def citing_names(
    engine: Engine, university_names: Sequence[str] = (), domains: Sequence[str] = ()
) -> CitingNames:
    """The stored universities (all, or those named) and their citing names.

    With ``domains``, those names cite every selected university; otherwise the names
    are the ``citing`` environment rows and the citations' citing domains stored for
    each university (any run, any source). A university's own domains are never among
    its citing names.

    Raises
    ------
    ConfigError
        No universities are stored, a named one is unknown, or no citing names are found.
    """
    from core.domains import in_domains
    from crawler.commoncrawl.index import idna_name
    from store.models import Citation, Environment, University
    from store.session import session_scope

    with session_scope(engine) as s:
        query = select(University).order_by(University.id)
        if university_names:
            query = query.where(University.name.in_(list(university_names)))
        unis: list[dict[str, Any]] = [
            {"id": u.id, "name": u.name, "domains": sorted(d.domain for d in u.domains)}
            for u in s.scalars(query)
        ]
        if university_names:
            unknown = sorted(set(university_names) - {u["name"] for u in unis})
            if unknown:
                raise ConfigError(
                    f"unknown universit{'y' if len(unknown) == 1 else 'ies'}: "
                    f"{', '.join(unknown)} (see `webometrics universities list`)"
                )
        if not unis:
            raise ConfigError(
                "no universities stored: import some with `webometrics universities import FILE`"
            )
        ids = [u["id"] for u in unis]
        pairs: set[tuple[int, str]] = set()
        if domains:
            pairs = {(uid, idna_name(d)) for uid in ids for d in domains}
        else:
            pairs.update(
                s.execute(
                    select(Environment.university_id, Environment.domain)
                    .where(Environment.direction == "citing", Environment.university_id.in_(ids))
                    .distinct()
                ).all()
            )
            pairs.update(
                s.execute(
                    select(Citation.university_id, Citation.citing_domain)
                    .where(Citation.university_id.in_(ids))
                    .distinct()
                ).all()
            )
    own = {u["id"]: frozenset(u["domains"]) for u in unis}
    cites: dict[str, set[int]] = defaultdict(set)
    for uid, name in pairs:
        name = idna_name(name or "")
        if name and not in_domains(name, own[uid]):
            cites[name].add(uid)
    if not cites:
        raise ConfigError(
            "no citing domains stored for "
            + ("the named universities" if university_names else "any university")
            + ": run `webometrics citing commoncrawl-graph`, a citing crawl with a backlink "
            "export, or give the citing domains with --domain"
        )
    return CitingNames(universities=unis, cites=dict(cites))


def _source(capture: Any) -> str:
    return f"commoncrawl-index:{capture.collection or Path(capture.index_file).name}"[:40]


def run(engine: Engine, settings: Settings, options: IndexOptions) -> dict[str, Any]:
    """Find, fetch and store the captured citing pages (see the module docstring).

    Returns
    -------
    dict
        ``run_id``, ``names`` looked up, ``captures`` (index lines of wanted names),
        ``chosen``, ``pages`` stored, per-file counts, the citations by status and the
        run's statistics.

    Raises
    ------
    ConfigError
        Bad input: an index file, a WARC range, the options (nothing of the current
        index file is stored).
    StageError
        The WARC server kept failing after the retries.
    """
    from tqdm import tqdm

    from crawler.commoncrawl.captures import CaptureSelector
    from crawler.commoncrawl.fetch import FetchPolicy, RangeFetcher
    from crawler.commoncrawl.index import NameMatcher, read_index

    if not options.index_files:
        raise ConfigError("give at least one index file with --index")
    files = list(dict.fromkeys(str(Path(p)) for p in options.index_files))
    names = citing_names(engine, options.universities, options.domains)
    matcher = NameMatcher(names.cites)
    selector = CaptureSelector(options.limit_per_domain, options.mime_types)
    policy = FetchPolicy.from_settings(settings)
    fetcher = RangeFetcher(options.warc_prefix, policy)
    cdx_fetcher = RangeFetcher(options.cdx_prefix, policy) if options.cdx_prefix else None
    per_file: dict[str, dict[str, int]] = {}
    bar = tqdm(desc="read index", unit="capture", disable=not options.progress)
    try:
        for path in files:
            before = selector.seen
            for capture in read_index(path, matcher, cdx_fetcher):
                selector.add(capture)
                bar.update()
            per_file[path] = {"captures": selector.seen - before, "chosen": 0, "pages": 0}
    finally:
        bar.close()
    chosen = selector.chosen()
    by_file: dict[str, list[Any]] = defaultdict(list)
    for captures in chosen.values():
        for capture in captures:
            by_file[capture.index_file].append(capture)
    n_chosen = sum(len(v) for v in by_file.values())
    run_id = _open_run(engine, options, sorted(matcher.names))
    totals: dict[str, Any] = {
        "run_id": run_id,
        "names": len(matcher.names),
        "names_found": len(chosen),
        "captures": selector.seen,
        "page_captures": selector.pages,
        "chosen": n_chosen,
        "pages": 0,
        "links": 0,
        "citations": {},
        "files": per_file,
    }
    from crawler.storage import failure_recorded, finalize_run, update_run

    bar = tqdm(total=n_chosen, desc="fetch warc", unit="record", disable=not options.progress)
    try:
        with failure_recorded(engine, run_id):
            for index_file in files:
                captures = by_file.get(index_file, [])
                if not captures:
                    continue
                stored = _store_file(engine, run_id, captures, names, fetcher, options, bar)
                per_file[index_file].update(chosen=len(captures), pages=stored["pages"])
                totals["pages"] += stored["pages"]
                totals["links"] += stored["links"]
                for status, n in stored["citations"].items():
                    totals["citations"][status] = totals["citations"].get(status, 0) + n
    finally:
        bar.close()
    stats = finalize_run(engine, run_id)
    stats["commoncrawl_index"] = {
        k: v for k, v in totals.items() if k not in ("run_id", "citations")
    } | {"requests": fetcher.requests, "retried": fetcher.retried, "bytes": fetcher.bytes}
    if cdx_fetcher is not None:
        stats["commoncrawl_index"]["cdx_requests"] = cdx_fetcher.requests
        stats["commoncrawl_index"]["cdx_bytes"] = cdx_fetcher.bytes
    update_run(engine, run_id, status="finished", finished_at=dt.datetime.now(dt.UTC), stats=stats)
    totals["stats"] = stats
    return totals


def _open_run(engine: Engine, options: IndexOptions, names: list[str]) -> int:
    from store.models import CrawlRun
    from store.session import session_scope

    with session_scope(engine) as s:
        row = CrawlRun(
            kind=RUN_KIND,
            settings={
                "index": [str(p) for p in options.index_files],
                "warc_prefix": options.warc_prefix,
                "limit_per_domain": options.limit_per_domain,
                "universities": list(options.universities),
                "names": names[:1000],
                "n_names": len(names),
            },
        )
        s.add(row)
        s.flush()
        return row.id


@contextlib.contextmanager
def _one_transaction(engine: Engine) -> Iterator[Connection]:
    """One transaction for a whole index file: :func:`crawler.storage.store_batch` and
    :func:`~crawler.storage.resolve_citations` get its connection, so their sessions join
    it (their commits do not end it; an error rolls everything back)."""
    from sqlalchemy.exc import OperationalError

    from core.exceptions import DatabaseError
    from store.session import redact

    try:
        with engine.begin() as conn:
            yield conn
    except OperationalError as exc:
        url = redact(str(engine.url))
        raise DatabaseError(f"database {url} failed: {exc.orig}") from exc


def _store_file(
    engine: Engine,
    run_id: int,
    captures: list[Any],
    names: CitingNames,
    fetcher: Any,
    options: IndexOptions,
    bar: Any,
) -> dict[str, Any]:
    """Fetch one index file's chosen captures, then store them in one transaction."""
    from crawler.commoncrawl.captures import capture_time
    from crawler.commoncrawl.fetch import parse_capture
    from crawler.spiders.base import Universities
    from crawler.storage import CitingCandidate, resolve_citations, store_batch
    from crawler.warc import record_item

    unis = Universities(names.universities)
    captures = sorted(captures, key=lambda c: (c.filename, c.offset))  # sequential reads
    with tempfile.TemporaryFile(prefix="webometrics-ccindex-") as spool:
        spans: list[tuple[Any, int, int]] = []
        for capture in captures:
            data = fetcher.fetch(capture)
            parse_capture(data, capture, fetcher.location(capture))  # the right record?
            spans.append((capture, spool.tell(), len(data)))
            spool.write(data)
            bar.update()
        result: dict[str, Any] = {"pages": 0, "links": 0}
        candidates: list[CitingCandidate] = []
        with _one_transaction(engine) as conn:
            batch = []
            for n, (capture, start, size) in enumerate(spans, start=1):
                spool.seek(start)
                rec = parse_capture(spool.read(size), capture, fetcher.location(capture))
                if rec["date"] is None:
                    rec["date"] = capture_time(capture.timestamp)
                item = record_item(rec, fetcher.location(capture), unis)
                if item.role == "external":
                    item.role = "citing"
                batch.append(item)
                owner = unis.owner(capture.url)  # a university's own page cites nothing
                candidates.extend(
                    CitingCandidate(capture.url, uid, _source(capture))
                    for uid in sorted(names.cites.get(capture.name, ()))
                    if owner is None or owner.id != uid
                )
                if len(batch) >= options.batch_size or n == len(spans):
                    res = store_batch(conn, run_id, batch)  # type: ignore[arg-type]
                    result["pages"] += res.pages
                    result["links"] += res.links
                    batch = []
            result["citations"] = dict(resolve_citations(conn, run_id, candidates))  # type: ignore[arg-type]
    return result
