"""``webometrics run`` and ``webometrics schedule``: the whole pipeline, now or on a schedule."""

from __future__ import annotations

import argparse

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
    p.add_argument("--direction", choices=("outgoing", "citing", "both"), default="both")
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


def _options(ctx, trigger: str):
    from webometrics.stages.pipeline import PipelineOptions

    args = ctx.args
    stages = tuple(x.strip() for x in args.stages.split(",") if x.strip())
    crawl = {"direction": args.direction}
    if args.proxy:
        crawl["proxy"] = args.proxy
    if args.testbed:
        crawl["testbed_dir"] = args.testbed
    if args.redis:
        crawl["redis"] = args.redis
    if args.processes is not None:
        crawl["processes"] = args.processes
    return PipelineOptions(
        universities_file=args.universities,
        stages=stages,
        trigger=trigger,
        stage_options={"crawl": crawl},
        http_cache=not args.no_http_cache,
    )


def _once(ctx, trigger: str) -> int:
    from core.universities import parse_universities
    from store.universities import import_universities
    from webometrics.stages.pipeline import run_pipeline

    engine = ctx.engine()
    import_universities(engine, parse_universities(ctx.args.universities))
    run_id = run_pipeline(engine, ctx.settings, _options(ctx, trigger))
    print(f"pipeline run {run_id} finished")
    return run_id


def _run(ctx) -> int:
    _once(ctx, "manual")
    return 0


def _schedule(ctx) -> int:
    from webometrics.scheduler import make_trigger, run_on_schedule

    trigger = make_trigger(ctx.args.cron, ctx.args.interval)
    ctx.engine()  # fail now, not at the first fire time, if the database is wrong
    counts = run_on_schedule(
        lambda: _once(ctx, "schedule"), trigger, max_runs=ctx.args.max_runs, run_now=ctx.args.now
    )
    print(f"scheduled runs: {counts['ok']} finished, {counts['failed']} failed")
    return 0 if counts["failed"] == 0 else 1
