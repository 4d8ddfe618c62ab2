"""``webometrics crawl``: crawl the outgoing and/or citing environment of the universities."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from core.choices import DIRECTION_CHOICES

if TYPE_CHECKING:
    from core.settings import Settings
    from webometrics.cli import Context

ORDER = 30


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "crawl",
        epilog=(
            "lock: a second `crawl` on the same database (or a `webometrics run`) exits 4 "
            "naming this one; `extract`, `dedup`, `cluster` and `analyse` may run meanwhile "
            "(docs/operations.md)."
        ),
        help="crawl the universities' outgoing and/or citing web environment (Scrapy)",
        description="Crawl each university's site within its domains and fetch the external "
        "pages it links to (outgoing), and/or fetch the pages said to link to it and verify "
        "the links (citing). Pages, links and citations are stored in a crawl run; main "
        "text is extracted later by `webometrics extract` unless [crawl] extract_inline. "
        "With --jobdir the crawl is resumable, even after a kill.",
    )
    _scope_options(p)
    _crawl_key_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_crawl)
    _register_worker(sub)


def _scope_options(p: argparse.ArgumentParser) -> None:
    """The options of what to crawl (its :class:`~webometrics.stages.crawl.CrawlScope`)."""
    p.add_argument(
        "--universities",
        metavar="FILE",
        help="universities file (TOML): imported, and only these are crawled "
        "(default: every stored university)",
    )
    p.add_argument(
        "--direction",
        choices=DIRECTION_CHOICES,
        default="both",
        help="which environment to crawl (default: both)",
    )
    p.add_argument(
        "--proxy",
        metavar="URL",
        help="HTTP proxy for every request, e.g. the test web of `webometrics testbed serve`",
    )
    p.add_argument(
        "--backlinks",
        metavar="CSV",
        action="append",
        default=[],
        help="backlink export of citing pages (Majestic or Ahrefs column names; repeatable)",
    )
    p.add_argument(
        "--urls",
        metavar="FILE",
        action="append",
        default=[],
        help="plain list of citing page URLs, one per line, optionally followed by the "
        "cited university's domain (repeatable)",
    )
    p.add_argument(
        "--testbed",
        metavar="DIR",
        help="a built test web: use its per-university citing files as backlink exports",
    )


def _crawl_key_options(p: argparse.ArgumentParser) -> None:
    """The options that override ``[crawl]`` keys (but --proxy, listed with the scope's)."""
    p.add_argument(
        "--jobdir",
        metavar="DIR",
        help="job directory: the crawl can be resumed from it after an interruption "
        "(default [crawl] jobdir, else a temporary folder)",
    )
    p.add_argument("--depth", type=int, metavar="N", help="overrides [crawl] depth")
    p.add_argument(
        "--max-pages", type=int, metavar="N", help="overrides [crawl] max_pages_per_university"
    )
    p.add_argument("--warc-dir", metavar="DIR", help="also write every response to WARC files here")
    p.add_argument(
        "--redis",
        metavar="URL",
        help="crawl farm: share the frontier and duplicate filter of this run through Redis "
        "(scrapy-redis), e.g. redis://127.0.0.1:6379/0; needs a PostgreSQL database; other "
        "machines join with `webometrics crawl-worker --redis URL` (default [crawl] redis_url)",
    )
    p.add_argument(
        "--processes",
        type=int,
        metavar="N",
        help="crawler processes to run here on the shared frontier (needs --redis; default "
        "[crawl] processes = 1)",
    )
    _archive_options(p)


def _archive_options(p: argparse.ArgumentParser) -> None:
    """The options of an archived crawl (``[crawl] archive``, docs/archives.md)."""
    from core.archives import ARCHIVES

    p.add_argument(
        "--archive",
        choices=ARCHIVES,
        help="crawl the sites as this web archive holds them in the period --from..--to "
        "(the capture nearest the period's middle of each URL; the outgoing environment "
        "only; default [crawl] archive: the live web)",
    )
    p.add_argument(
        "--from",
        dest="archive_from",
        metavar="DATE",
        help="the period's first day: YYYY, YYYY-MM or YYYY-MM-DD (with --archive; "
        "default [crawl] archive_from)",
    )
    p.add_argument(
        "--to",
        dest="archive_to",
        metavar="DATE",
        help="the period's last day: YYYY, YYYY-MM or YYYY-MM-DD, a year or month meaning "
        "its last day (with --archive; default [crawl] archive_to)",
    )


def _register_worker(sub: argparse._SubParsersAction) -> None:
    w = sub.add_parser(
        "crawl-worker",
        help="join a crawl farm: crawl the phases `webometrics crawl --redis` announces",
        description="Run crawler processes on the shared Redis frontier of the crawl that "
        "`webometrics crawl --redis URL` is running (on this machine or another), storing "
        "pages in this machine's db_url (the same PostgreSQL database). The worker follows "
        "the run's phases (outgoing, then citing) and exits 0 when the run is over. "
        "Exit 1 when there is nothing to join within --wait seconds.",
    )
    w.add_argument("--redis", metavar="URL", help="the farm's Redis (default [crawl] redis_url)")
    w.add_argument(
        "--processes",
        type=int,
        metavar="N",
        help="crawler processes to run here (default [crawl] processes = 1)",
    )
    w.add_argument(
        "--wait",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait for a crawl to join and for its next phase (default 60)",
    )
    w.add_argument("--no-progress", action="store_true", help="no progress bar")
    w.set_defaults(func=_worker)


def _crawl_settings(ctx: Context) -> Settings:
    """The settings with the ``[crawl]`` keys given on the command line."""
    args = ctx.args
    keys = {
        # an empty text is no value
        "proxy": args.proxy or None,
        "jobdir": args.jobdir or None,
        "warc_dir": args.warc_dir or None,
        "redis_url": args.redis or None,
        "depth": args.depth,
        "max_pages_per_university": args.max_pages,
        "processes": args.processes,
        "archive": args.archive,
        "archive_from": args.archive_from or None,
        "archive_to": args.archive_to or None,
    }
    return ctx.settings.with_options(crawl=keys)


def _worker(ctx: Context) -> int:
    from webometrics.stages.crawl import work

    keys = {"redis_url": ctx.args.redis or None, "processes": ctx.args.processes}
    settings = ctx.settings.with_options(crawl=keys)
    result = work(
        ctx.engine(),
        settings,
        wait=ctx.args.wait,
        progress=not ctx.args.no_progress and not ctx.args.quiet,
    )
    print(
        f"crawl run {result.run_id}: worked on {', '.join(result.phases)}; "
        f"{result.stored} pages stored by this worker"
    )
    return 0


def _crawl(ctx: Context) -> int:
    from webometrics.runlock import stage_lock
    from webometrics.stages.crawl import CrawlScope, run

    settings = _crawl_settings(ctx)
    scope = CrawlScope(
        universities_file=ctx.args.universities,
        direction=ctx.args.direction,
        backlinks=tuple(ctx.args.backlinks),
        urls=tuple(ctx.args.urls),
        testbed_dir=ctx.args.testbed,
    )
    bad_rows = _report_bad_rows(ctx.args.backlinks)
    with stage_lock(ctx.engine(), "crawl"):  # exit 4 naming the holder
        result = run(
            ctx.engine(),
            settings,
            scope,
            progress=not ctx.args.no_progress and not ctx.args.quiet,
        )
    if bad_rows:
        _store_bad_rows(ctx.engine(), result.run_id, bad_rows)
    errors = ", ".join(f"{k} {v}" for k, v in result.errors.items()) or "none"
    print(
        f"crawl run {result.run_id} finished: {result.pages} pages fetched "
        f"({result.bytes / 1e6:.1f} MB), {result.links} links, "
        f"{result.environment['outgoing_domains']} outgoing and "
        f"{result.environment['citing_domains']} citing domains; errors: {errors}"
    )
    if result.citations:
        print("citations: " + json.dumps(result.citations))
    if result.warning:
        print(f"webometrics: warning: crawl run {result.run_id}: {result.warning}", file=sys.stderr)
    return 0


def _report_bad_rows(paths: list[str]) -> list:
    """Read each backlink export once before the crawl: an unterminated quote (or a
    missing or foreign file) stops the command here, before a run is made (exit 2); the
    malformed rows of each file are printed (how many, the first few by line)."""
    from crawler.sources import read_backlinks

    bad = []
    for path in paths:
        bad.extend(read_backlinks(path, []).bad)  # rows, not universities, are checked
    for rows in bad:
        print(f"webometrics: warning: {rows.message()}", file=sys.stderr)
    return bad


def _store_bad_rows(engine, run_id: int, bad: list) -> None:
    """Keep the bad rows with the run: ``crawl_run.stats["citing_bad_rows"]``."""
    from crawler.storage import update_run
    from store.models import CrawlRun
    from store.session import session_scope

    with session_scope(engine) as s:
        row = s.get(CrawlRun, run_id)
        stats = dict(row.stats or {}) if row is not None else {}
    stats["citing_bad_rows"] = [rows.as_dict() for rows in bad]
    update_run(engine, run_id, stats=stats)
