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
from sqlalchemy.orm import Session

from core.exceptions import ConfigError
from core.settings import Settings
from webometrics.stages import StageResult, refreshes_figures

log = logging.getLogger(__name__)

RUN_KIND = "commoncrawl-index"


@dataclass(frozen=True, kw_only=True)
class IndexScope:
    """What one run looks up and where it fetches from.

    Attributes
    ----------
    index_files : tuple of str
        CDXJ, ``cluster.idx`` or Parquet index files.
    warc_prefix : str
        Where the WARC files named by the index are: an http(s) URL prefix or a folder.
    limit_per_domain : int
        Captures (distinct URLs, newest first) to fetch per citing name.
    universities : tuple of str
        University names; empty = every stored university.
    domains : tuple of str
        Citing names to look up for every selected university; empty = the stored
        citing environment.
    cdx_prefix : str, optional
        Where the cdx files of a ``cluster.idx`` are (default: its folder).
    mime_types : tuple of str
        The MIME types a chosen capture may have.
    """

    index_files: tuple[str, ...]
    warc_prefix: str
    limit_per_domain: int = 10
    universities: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    cdx_prefix: str | None = None
    mime_types: tuple[str, ...] = ("text/html", "application/xhtml+xml")


@dataclass(frozen=True)
class IndexFileResult:
    """One index file's captures of wanted names, those chosen and the pages stored."""

    captures: int
    chosen: int
    pages: int


@dataclass(frozen=True)
class IndexResult(StageResult):
    """The crawl run's id, the citing names looked up and found, the index lines of
    wanted names (``captures``; ``page_captures`` of them choosable), the captures
    chosen, the pages and links stored, the citations by status, the counts per index
    file and the run's statistics as stored in its ``stats`` (``run_stats``: recorded
    under ``stats``, the name the method :meth:`stats` has)."""

    run_id: int
    names: int
    names_found: int
    captures: int
    page_captures: int
    chosen: int
    pages: int
    links: int
    citations: dict[str, int]
    files: dict[str, IndexFileResult]
    run_stats: dict[str, Any]

    def stats(self) -> dict[str, Any]:
        """The statistics as JSON values, the run's under ``stats``."""
        return {("stats" if k == "run_stats" else k): v for k, v in super().stats().items()}


@dataclass
class CitingNames:
    """The citing names to look up and the universities each is said to cite."""

    universities: list[dict[str, Any]]
    cites: dict[str, set[int]] = field(default_factory=dict)


def _citing_pairs(s: Session, ids: list[int], domains: Sequence[str]) -> set[tuple[int, str]]:
    """(university id, citing name) pairs: each of ``domains`` for every university, else
    the stored ``citing`` environment rows and citations' citing domains."""
    from crawler.commoncrawl.index import idna_name
    from store.models import Citation, Environment

    if domains:
        return {(uid, idna_name(d)) for uid in ids for d in domains}
    pairs: set[tuple[int, str]] = set()
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
    return pairs


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
    from store.models import University
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
        pairs = _citing_pairs(s, [u["id"] for u in unis], domains)
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


def _read_indexes(
    files: list[str], matcher: Any, selector: Any, cdx_fetcher: Any, progress: bool
) -> dict[str, dict[str, int]]:
    """Read every index file to its end into ``selector``; the counts per file (its
    captures of wanted names; nothing chosen or stored yet)."""
    from tqdm import tqdm

    from crawler.commoncrawl.index import read_index

    per_file: dict[str, dict[str, int]] = {}
    bar = tqdm(desc="read index", unit="capture", disable=not progress)
    try:
        for path in files:
            before = selector.seen
            for capture in read_index(path, matcher, cdx_fetcher):
                selector.add(capture)
                bar.update()
            per_file[path] = {"captures": selector.seen - before, "chosen": 0, "pages": 0}
    finally:
        bar.close()
    return per_file


def _fetch_and_store(
    engine: Engine,
    run_id: int,
    by_file: dict[str, list[Any]],
    totals: dict[str, Any],
    context: tuple[CitingNames, Any, int],
    progress: bool,
) -> None:
    """Fetch and store the chosen captures, index file by index file (one transaction
    each), adding to ``totals`` and its per-file counts; a failure marks the run
    ``failed``."""
    from tqdm import tqdm

    from crawler.storage import failure_recorded

    names, fetcher, batch_size = context
    per_file = totals["files"]
    bar = tqdm(total=totals["chosen"], desc="fetch warc", unit="record", disable=not progress)
    try:
        with failure_recorded(engine, run_id):
            for index_file, captures in by_file.items():
                stored = _store_file(engine, run_id, captures, names, fetcher, batch_size, bar)
                per_file[index_file].update(chosen=len(captures), pages=stored["pages"])
                totals["pages"] += stored["pages"]
                totals["links"] += stored["links"]
                for status, n in stored["citations"].items():
                    totals["citations"][status] = totals["citations"].get(status, 0) + n
    finally:
        bar.close()


def _finish(
    engine: Engine, run_id: int, totals: dict[str, Any], fetcher: Any, cdx_fetcher: Any
) -> dict[str, Any]:
    """Recompute the run's environment and statistics, with this stage's counts under
    ``commoncrawl_index``; mark it finished; return its statistics."""
    from crawler.storage import finalize_run, update_run

    stats = finalize_run(engine, run_id)
    stats["commoncrawl_index"] = {
        k: v for k, v in totals.items() if k not in ("run_id", "citations")
    } | {"requests": fetcher.requests, "retried": fetcher.retried, "bytes": fetcher.bytes}
    if cdx_fetcher is not None:
        stats["commoncrawl_index"]["cdx_requests"] = cdx_fetcher.requests
        stats["commoncrawl_index"]["cdx_bytes"] = cdx_fetcher.bytes
    update_run(engine, run_id, status="finished", finished_at=dt.datetime.now(dt.UTC), stats=stats)
    return stats


def _by_file(chosen: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """The chosen captures (per citing name) grouped by their index file."""
    by_file: dict[str, list[Any]] = defaultdict(list)
    for captures in chosen.values():
        for capture in captures:
            by_file[capture.index_file].append(capture)
    return by_file


@refreshes_figures
def run(
    engine: Engine,
    settings: Settings,
    scope: IndexScope | None = None,
    *,
    progress: bool = False,
) -> IndexResult:
    """Find, fetch and store the captured citing pages (see the module docstring).

    Parameters
    ----------
    engine : Engine
    settings : Settings
        ``[crawl]``: the fetch policy (delay, retries, timeout, user agent) and
        ``batch_size`` (pages per stored batch).
    scope : IndexScope
        The index files, the WARC location and what to look up (required: without index
        files there is nothing to read).
    progress : bool
        Show progress bars.

    Returns
    -------
    IndexResult
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
    from crawler.commoncrawl.captures import CaptureSelector
    from crawler.commoncrawl.fetch import FetchPolicy, RangeFetcher
    from crawler.commoncrawl.index import NameMatcher

    if scope is None or not scope.index_files:
        raise ConfigError("give at least one index file with --index")
    files = list(dict.fromkeys(str(Path(p)) for p in scope.index_files))
    names = citing_names(engine, scope.universities, scope.domains)
    matcher = NameMatcher(names.cites)
    selector = CaptureSelector(scope.limit_per_domain, scope.mime_types)
    policy = FetchPolicy.from_settings(settings)
    fetcher = RangeFetcher(scope.warc_prefix, policy)
    cdx_fetcher = RangeFetcher(scope.cdx_prefix, policy) if scope.cdx_prefix else None
    per_file = _read_indexes(files, matcher, selector, cdx_fetcher, progress)
    chosen = selector.chosen()
    by_file = _by_file(chosen)
    run_id = _open_run(engine, scope, sorted(matcher.names))
    totals: dict[str, Any] = {
        "run_id": run_id,
        "names": len(matcher.names),
        "names_found": len(chosen),
        "captures": selector.seen,
        "page_captures": selector.pages,
        "chosen": sum(len(v) for v in by_file.values()),
        "pages": 0,
        "links": 0,
        "citations": {},
        "files": per_file,
    }
    in_order = {f: by_file[f] for f in files if by_file.get(f)}  # the files' order
    context = (names, fetcher, settings.crawl.batch_size)
    _fetch_and_store(engine, run_id, in_order, totals, context, progress)
    stats = _finish(engine, run_id, totals, fetcher, cdx_fetcher)
    files_done = {f: IndexFileResult(**counts) for f, counts in per_file.items()}
    return IndexResult(**{**totals, "files": files_done}, run_stats=stats)


def _open_run(engine: Engine, options: IndexScope, names: list[str]) -> int:
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
def one_transaction(engine: Engine) -> Iterator[Connection]:
    """One transaction for a whole index file: :func:`crawler.storage.store_batch` and
    :func:`~crawler.storage.resolve_citations` get its connection, so their sessions join
    it (their commits do not end it; an error rolls everything back)."""
    from sqlalchemy.exc import OperationalError

    from core.exceptions import DatabaseError
    from store.session import display_url

    try:
        with engine.begin() as conn:
            yield conn
    except OperationalError as exc:
        url = display_url(engine)
        raise DatabaseError(f"database {url} failed: {exc.orig}") from exc


def _store_file(
    engine: Engine,
    run_id: int,
    captures: list[Any],
    names: CitingNames,
    fetcher: Any,
    batch_size: int,
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
        with one_transaction(engine) as conn:
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
                if len(batch) >= batch_size or n == len(spans):
                    res = store_batch(conn, run_id, batch)  # type: ignore[arg-type]
                    result["pages"] += res.pages
                    result["links"] += res.links
                    batch = []
            result["citations"] = dict(resolve_citations(conn, run_id, candidates))  # type: ignore[arg-type]
    return result
