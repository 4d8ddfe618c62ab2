"""``webometrics crawl``: crawl the outgoing and/or citing environment of the universities."""

from __future__ import annotations

import argparse
import json

ORDER = 30


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "crawl",
        help="crawl the universities' outgoing and/or citing web environment (Scrapy)",
        description="Crawl each university's site within its domains and fetch the external "
        "pages it links to (outgoing), and/or fetch the pages said to link to it and verify "
        "the links (citing). Pages, links and citations are stored in a crawl run; main "
        "text is extracted later by `webometrics extract` unless [crawl] extract_inline. "
        "With --jobdir the crawl is resumable, even after a kill.",
    )
    p.add_argument(
        "--universities",
        metavar="FILE",
        help="universities file (TOML): imported, and only these are crawled "
        "(default: every stored university)",
    )
    p.add_argument(
        "--direction",
        choices=("outgoing", "citing", "both"),
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
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_crawl)


def _crawl(ctx) -> int:
    from webometrics.stages.crawl import run

    settings = ctx.settings
    overrides = {}
    if ctx.args.depth is not None:
        overrides["depth"] = ctx.args.depth
    if ctx.args.max_pages is not None:
        overrides["max_pages_per_university"] = ctx.args.max_pages
    if ctx.args.warc_dir:
        overrides["warc_dir"] = ctx.args.warc_dir
    if overrides:
        settings = settings.replace(crawl=overrides)
    stats = run(
        ctx.engine(),
        settings,
        universities_file=ctx.args.universities,
        direction=ctx.args.direction,
        proxy=ctx.args.proxy,
        backlinks=ctx.args.backlinks,
        urls=ctx.args.urls,
        testbed_dir=ctx.args.testbed,
        jobdir=ctx.args.jobdir,
        progress=not ctx.args.no_progress and not ctx.args.quiet,
    )
    errors = ", ".join(f"{k} {v}" for k, v in stats["errors"].items()) or "none"
    print(
        f"crawl run {stats['run_id']} finished: {stats['pages']} pages fetched "
        f"({stats['bytes'] / 1e6:.1f} MB), {stats['links']} links, "
        f"{stats['environment']['outgoing_domains']} outgoing and "
        f"{stats['environment']['citing_domains']} citing domains; errors: {errors}"
    )
    if stats["citations"]:
        print("citations: " + json.dumps(stats["citations"]))
    return 0
