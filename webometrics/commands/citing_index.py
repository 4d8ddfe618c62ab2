"""``webometrics citing commoncrawl-index`` (registered by :mod:`webometrics.commands.citing`)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from webometrics.cli import Context

DESCRIPTION = """\
Find the pages of each university's citing domains in a Common Crawl URL index and
store them as citing pages, with their citations checked as a live citing crawl checks
them (verified: the page links into the university's domains; missing: it does not).

The citing domains are those already stored for each university (its citing environment
from `webometrics citing commoncrawl-graph`, a citing crawl or a backlink export, and the
domains of its stored citations), or the names given with --domain. For each name the
newest captures of distinct URLs that were HTML and answered 200 are chosen (up to
--limit-per-domain), and each capture's WARC record is fetched by byte range from
--warc-prefix, obeying [crawl] download_delay, retry_times, download_timeout and
user_agent.

Index files: the CDXJ index (cc-index/collections/CC-MAIN-YYYY-WW/indexes/cdx-NNNNN.gz,
gzip or plain text), its secondary index cluster.idx (then only the cdx blocks that may
hold the citing domains are fetched, by byte range from --cdx-prefix), or the columnar
index (cc-index/table/cc-main/warc/crawl=.../subset=warc/part-*.parquet, read with
DuckDB). Every index file is read to its end before
anything is fetched; the captures of one index file are stored in one transaction.
Exit codes: 0 done, 2 bad input (an index line, a WARC range answering 404 or holding
another record, a missing file: the message names the file and line, or URL and range),
1 the WARC server kept failing."""


def add_parser(csub: argparse._SubParsersAction) -> None:
    """Register ``commoncrawl-index``."""
    p = csub.add_parser(
        "commoncrawl-index",
        help="fetch the citing domains' pages from a Common Crawl URL index (CDXJ or Parquet) "
        "by WARC byte range, and verify their links",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--index",
        metavar="FILE",
        nargs="+",
        action="extend",
        required=True,
        help="index files: CDXJ (cdx-*.gz, or plain) or columnar Parquet; repeatable",
    )
    p.add_argument(
        "--warc-prefix",
        metavar="URL_OR_FOLDER",
        default="https://data.commoncrawl.org/",
        help="where the WARC files named by the index are: an http(s) URL prefix or a local "
        "folder (the path the index gives below it, or the bare file name in it) "
        "(default %(default)s)",
    )
    p.add_argument(
        "--cdx-prefix",
        metavar="URL_OR_FOLDER",
        help="with a secondary index cluster.idx as --index: where the cdx-*.gz files it "
        "names are, e.g. https://data.commoncrawl.org/cc-index/collections/CC-MAIN-2024-33/"
        "indexes/ (default: the folder holding cluster.idx); only the blocks that may hold "
        "the citing domains are fetched, by byte range",
    )
    p.add_argument(
        "--limit-per-domain",
        type=int,
        default=10,
        metavar="N",
        help="captures (distinct URLs, newest first) to fetch per citing domain (default 10)",
    )
    p.add_argument(
        "--university",
        metavar="NAME",
        action="append",
        default=[],
        help="only this stored university (repeatable; default every stored university)",
    )
    p.add_argument(
        "--domain",
        metavar="NAME",
        action="append",
        default=[],
        help="look up this citing domain or host for every selected university instead of "
        "the stored citing environment (repeatable)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_run)


def _run(ctx: Context) -> int:
    from core.exceptions import ParameterError
    from webometrics.stages.citing_index import IndexScope, run

    args = ctx.args
    if args.limit_per_domain < 1:
        raise ParameterError(f"--limit-per-domain {args.limit_per_domain} must be at least 1")
    scope = IndexScope(
        index_files=tuple(args.index),
        warc_prefix=args.warc_prefix,
        limit_per_domain=args.limit_per_domain,
        universities=tuple(args.university),
        domains=tuple(args.domain),
        cdx_prefix=args.cdx_prefix,
    )
    progress = not args.no_progress and not args.quiet
    result = run(ctx.engine(), ctx.settings, scope, progress=progress)
    print(
        f"crawl run {result.run_id}: {result.captures} captures of "
        f"{result.names_found}/{result.names} citing domains in "
        f"{len(result.files)} index file(s), {result.chosen} chosen, "
        f"{result.pages} pages stored, {result.links} links"
    )
    print("citations: " + json.dumps(result.citations, sort_keys=True))
    return 0
