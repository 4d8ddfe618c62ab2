"""``webometrics import warc FILE...``: load WARC/ARC records as pages."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from webometrics.cli import Context

ORDER = 32


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "import",
        help="load pages from web archives (WARC/ARC)",
        description="Load pages from other crawlers' output.",
    )
    isub = p.add_subparsers(dest="import_command", metavar="FORMAT", required=True)
    w = isub.add_parser(
        "warc",
        help="load the HTTP responses of WARC or ARC files (gzip or not) as pages",
        description="Store every http(s) response/resource record as a page of a new crawl "
        "run (kind import-warc), with the links of university pages; main text is "
        "extracted by `webometrics extract`.",
        epilog="Every file is checked first: an empty file or one that is not WARC/ARC "
        "(gzip or not) stops the import before anything is stored (exit 2). A file cut "
        "inside a record or gzip member, or holding an unreadable record, stops it at that "
        "record (exit 1): the records before it stay stored, the run is marked failed with "
        "the file, byte offset and reason. Running the same command again (same files) "
        "resumes that run: pages are updated by URL, nothing is stored twice. "
        "Exit codes: 0 ok, 1 a file is cut or damaged, 2 a file is missing, empty or not "
        "WARC/ARC.",
    )
    w.add_argument("files", nargs="+", metavar="FILE")
    w.add_argument("--no-progress", action="store_true", help="no progress bar")
    w.set_defaults(func=_warc)


def _warc(ctx: Context) -> int:
    from crawler.warc import import_warc

    result = import_warc(
        ctx.engine(),
        ctx.args.files,
        batch_size=ctx.settings.crawl.batch_size,
        max_bytes=ctx.settings.crawl.max_response_bytes,
        progress=not ctx.args.no_progress and not ctx.args.quiet,
    )
    ctx.refresh_figures()
    print(
        f"crawl run {result['run_id']}{' (resumed)' if result['resumed'] else ''}: "
        f"{result['records']} records from "
        f"{len(result['files'])} file(s), {result['pages']} pages stored "
        f"({result['stats']['pages_recorded']} distinct URLs), {result['links']} links"
    )
    return 0
