"""``webometrics import warc FILE...``: load WARC/ARC records as pages."""

from __future__ import annotations

import argparse

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
    )
    w.add_argument("files", nargs="+", metavar="FILE")
    w.add_argument("--no-progress", action="store_true", help="no progress bar")
    w.set_defaults(func=_warc)


def _warc(ctx) -> int:
    from crawler.warc import import_warc

    result = import_warc(
        ctx.engine(),
        ctx.args.files,
        batch_size=ctx.settings.crawl.batch_size,
        progress=not ctx.args.no_progress and not ctx.args.quiet,
    )
    print(
        f"crawl run {result['run_id']}: {result['records']} records from "
        f"{len(result['files'])} file(s), {result['pages']} pages stored "
        f"({result['stats']['pages_recorded']} distinct URLs), {result['links']} links"
    )
    return 0
