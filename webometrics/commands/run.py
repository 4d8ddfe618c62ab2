"""``webometrics run`` and ``webometrics schedule``: the whole pipeline, now or on a schedule."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from core.choices import DIRECTION_CHOICES

if TYPE_CHECKING:
    from webometrics.cli import Context

ORDER = 90


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--universities",
        metavar="FILE",
        required=True,
        help="universities file (TOML); imported before the crawl",
    )
    p.add_argument(
        "--stages",
        default="crawl,extract,dedup,cluster,analyse",
        help="comma-separated stages to run, in order (default: all)",
    )
    p.add_argument("--direction", choices=DIRECTION_CHOICES, default="both")
    p.add_argument("--proxy", metavar="URL", help="HTTP proxy for the crawl (the test web)")
    p.add_argument(
        "--testbed", metavar="DIR", help="test-web folder (citing sources of the local test web)"
    )
    p.add_argument(
        "--no-http-cache",
        action="store_true",
        help="fetch every page in full (default: keep an HTTP cache beside the database, or "
        "[crawl] http_cache_dir, so that a second run revalidates pages and refetches only "
        "what changed)",
    )
    p.add_argument(
        "--redis",
        metavar="URL",
        help="crawl as a farm on this Redis (see `webometrics crawl --help`; default [crawl] "
        "redis_url)",
    )
    p.add_argument(
        "--processes",
        type=int,
        metavar="N",
        help="crawler processes here (needs --redis; default [crawl] processes)",
    )
    cc = p.add_argument_group(
        "Common Crawl (optional)",
        "Take a Common Crawl release into the run after the crawl: the citing domains of a "
        "web graph release (stage commoncrawl-graph, see `webometrics citing "
        "commoncrawl-graph --help`), then the pages of every stored citing domain, the "
        "graph's included, from a URL index (stage commoncrawl-index, see `webometrics "
        "citing commoncrawl-index --help`), so they are extracted, clustered and "
        "categorised like crawled pages.",
    )
    cc.add_argument(
        "--graph-vertices", nargs="+", metavar="FILE", help="every vertices part of the release"
    )
    cc.add_argument("--graph-edges", nargs="+", metavar="FILE", help="every edges part")
    cc.add_argument("--graph-ranks", metavar="FILE", help="the release's ranks file (optional)")
    cc.add_argument(
        "--cc-index",
        nargs="+",
        metavar="FILE",
        help="URL index files (CDXJ, cluster.idx or Parquet) for the citing domains' pages",
    )
    cc.add_argument(
        "--cc-warc-prefix",
        metavar="URL_OR_FOLDER",
        default="https://data.commoncrawl.org/",
        help="where the index's WARC files are (default https://data.commoncrawl.org/)",
    )
    cc.add_argument(
        "--cc-limit-per-domain",
        type=int,
        default=10,
        metavar="N",
        help="captures to fetch per citing domain (default 10)",
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run the whole pipeline once (crawl, extract, dedup, cluster, analyse)",
        description="Run the whole pipeline for a universities file and record a pipeline "
        "run with each stage's status and timing. A second run reuses fetched pages "
        "(HTTP cache with conditional requests). Exit 4 when another run holds the lock.",
    )
    _common(p)
    p.set_defaults(func=_run)
    s = sub.add_parser(
        "schedule",
        help="run the whole pipeline on a schedule (cron expression)",
        description="Run the pipeline at every fire time of a crontab expression (UTC) until "
        "stopped. Runs never overlap; a failed run is recorded and the next one still "
        "happens. See examples/ for cron and systemd-timer alternatives.",
    )
    _common(s)
    when = s.add_mutually_exclusive_group(required=True)
    when.add_argument(
        "--cron", metavar="EXPR", help="crontab expression, e.g. '0 3 * * 1' (Mondays at 03:00 UTC)"
    )
    when.add_argument("--interval", type=float, metavar="SECONDS", help="fixed interval")
    s.add_argument("--max-runs", type=int, metavar="N", help="stop after N runs")
    s.add_argument("--now", action="store_true", help="also run once immediately")
    s.set_defaults(func=_schedule)


def _commoncrawl(args) -> tuple[list[str], dict[str, object]]:
    """The Common Crawl stages asked for by the options, and their scopes."""
    from core.exceptions import ParameterError

    stages: list[str] = []
    scopes: dict[str, object] = {}
    if bool(args.graph_vertices) != bool(args.graph_edges):
        raise ParameterError("give both --graph-vertices and --graph-edges (every part of each)")
    if args.graph_vertices:
        from webometrics.stages.citing_graph import GraphScope

        stages.append("commoncrawl-graph")
        scopes["commoncrawl-graph"] = GraphScope(
            vertices=tuple(args.graph_vertices),
            edges=tuple(args.graph_edges),
            ranks=args.graph_ranks,
        )
    elif args.graph_ranks:
        raise ParameterError("--graph-ranks needs --graph-vertices and --graph-edges")
    if args.cc_index:
        from webometrics.stages.citing_index import IndexScope

        if args.cc_limit_per_domain < 1:
            raise ParameterError(f"--cc-limit-per-domain {args.cc_limit_per_domain}: use 1 or more")
        stages.append("commoncrawl-index")
        scopes["commoncrawl-index"] = IndexScope(
            index_files=tuple(args.cc_index),
            warc_prefix=args.cc_warc_prefix,
            limit_per_domain=args.cc_limit_per_domain,
        )
    return stages, scopes


def _options(ctx: Context, trigger: str):
    """The settings of a pipeline run (the crawl options that are ``[crawl]`` keys applied)
    and its :class:`PipelineOptions`."""
    from webometrics.stages.crawl import CrawlScope
    from webometrics.stages.pipeline import PipelineOptions

    args = ctx.args
    stages = tuple(x.strip() for x in args.stages.split(",") if x.strip())
    cc_stages, cc_scopes = _commoncrawl(args)
    if cc_stages:  # after the crawl (or first, without one)
        at = stages.index("crawl") + 1 if "crawl" in stages else 0
        stages = (*stages[:at], *(x for x in cc_stages if x not in stages), *stages[at:])
    settings = ctx.settings.with_options(
        crawl={"proxy": args.proxy, "redis_url": args.redis, "processes": args.processes}
    )
    crawl = CrawlScope(direction=args.direction, testbed_dir=args.testbed)
    return settings, PipelineOptions(
        universities_file=args.universities,
        stages=stages,
        trigger=trigger,
        scopes={"crawl": crawl, **cc_scopes},
        http_cache=not args.no_http_cache,
        resume=_resume_command(ctx, settings),
    )


def _resume_command(ctx: Context, settings) -> str:
    """This run's command line without ``--stages``, to paste into a shell: paths made
    absolute, the database given (a URL with a password by the variable that holds it,
    :func:`core.secrets.shell_word`), the crawl's proxy, Redis and options."""
    import shlex
    from pathlib import Path

    from core.secrets import shell_word
    from webometrics.stages.crawl.job import DB_URL_ENV, PROXY_ENV, REDIS_ENV, absolute_url

    args = ctx.args

    def path(value: str) -> str:
        return shlex.quote(str(Path(value).resolve()))

    db = shell_word(absolute_url(ctx.engine()), DB_URL_ENV, "the database URL")
    words = ["webometrics", "--db-url", db]
    if args.config:
        words += ["--config", path(args.config)]
    words += ["run", "--universities", path(args.universities), "--direction", args.direction]
    if args.testbed:
        words += ["--testbed", path(args.testbed)]
    if args.no_http_cache:
        words.append("--no-http-cache")
    crawl = settings.crawl
    if crawl.proxy:
        words += ["--proxy", shell_word(crawl.proxy, PROXY_ENV, "the proxy URL")]
    if crawl.redis_url:
        words += ["--redis", shell_word(crawl.redis_url, REDIS_ENV, "the Redis URL")]
        words += ["--processes", str(crawl.processes)]
    parts = (
        ("--graph-vertices", args.graph_vertices),
        ("--graph-edges", args.graph_edges),
        ("--cc-index", args.cc_index),
    )
    for option, files in parts:
        if files:
            words += [option, *(path(f) for f in files)]
    if args.graph_ranks:
        words += ["--graph-ranks", path(args.graph_ranks)]
    if args.cc_index:
        if args.cc_warc_prefix:
            words += ["--cc-warc-prefix", shlex.quote(args.cc_warc_prefix)]
        words += ["--cc-limit-per-domain", str(args.cc_limit_per_domain)]
    return " ".join(words)


def _once(ctx: Context, trigger: str) -> int:
    from core.universities import parse_universities
    from store.universities import ReimportRefusedError, import_universities
    from webometrics.stages.pipeline import run_pipeline

    engine = ctx.engine()
    try:
        import_universities(engine, parse_universities(ctx.args.universities))
    except ReimportRefusedError as exc:
        raise ReimportRefusedError(
            exc.changes,
            exc.reason,
            "Nothing was crawled. Reconcile them first with `webometrics universities import "
            f"--merge {ctx.args.universities}` (or --replace), then run again.",
        ) from None
    run_id = run_pipeline(engine, *_options(ctx, trigger))
    print(f"pipeline run {run_id} finished")
    return run_id


def _run(ctx: Context) -> int:
    _once(ctx, "manual")
    return 0


def _schedule(ctx: Context) -> int:
    from webometrics.scheduler import make_trigger, run_on_schedule

    trigger = make_trigger(ctx.args.cron, ctx.args.interval)
    ctx.engine()  # fail now, not at the first fire time, if the database is wrong
    counts = run_on_schedule(
        lambda: _once(ctx, "schedule"), trigger, max_runs=ctx.args.max_runs, run_now=ctx.args.now
    )
    print(f"scheduled runs: {counts['ok']} finished, {counts['failed']} failed")
    return 0 if counts["failed"] == 0 else 1
