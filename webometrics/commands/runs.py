"""``webometrics runs``: the crawl and pipeline runs with their status, and how to resume
the unfinished ones."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.choices import RUN_STATUSES

if TYPE_CHECKING:
    from webometrics.cli import Context

ORDER = 92


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "runs",
        help="list the crawl and pipeline runs: status, and the command that resumes an "
        "unfinished one",
        description="List the newest crawl and pipeline runs with their status (running, "
        "finished, failed, interrupted), start, end or last heartbeat, pages stored, the "
        "reason of a failed or interrupted run and the command that resumes it. A run "
        "whose process died (kill -9, power loss) is marked interrupted first, once its "
        "heartbeat is older than [database] run_lease_seconds.",
    )
    p.add_argument("--limit", type=int, default=20, metavar="N", help="runs of each kind (20)")
    p.add_argument(
        "--status",
        choices=RUN_STATUSES,
        help="only runs with this status",
    )
    p.add_argument(
        "--prune",
        action="store_true",
        help="remove the job folders that crawls without --jobdir keep to be resumed "
        "(crawl-<id> in <database>-crawls/ or the state folder), of the runs that failed "
        "or were interrupted: those runs can no longer be resumed (a crawl of the same "
        "scope starts afresh); empty crawls folders go too. Folders given with --jobdir "
        "are left alone",
    )
    p.set_defaults(func=_runs)


def _when(value) -> str:
    return f"{value:%Y-%m-%d %H:%M:%S}" if value is not None else "-"


def _runs(ctx: Context) -> int:
    from sqlalchemy import select

    from store.models import CrawlRun, PipelineRun
    from store.session import session_scope
    from webometrics.liveness import resume_hint

    if ctx.args.prune:
        return _prune(ctx)
    limit = max(1, ctx.args.limit)
    with session_scope(ctx.reader()) as s:
        pipeline_runs = select(PipelineRun).order_by(PipelineRun.id.desc()).limit(limit)
        crawl_runs = select(CrawlRun).order_by(CrawlRun.id.desc()).limit(limit)
        if ctx.args.status:
            pipeline_runs = pipeline_runs.where(PipelineRun.status == ctx.args.status)
            crawl_runs = crawl_runs.where(CrawlRun.status == ctx.args.status)
        kinds: list[tuple[str, Sequence[PipelineRun | CrawlRun]]] = [
            ("pipeline", s.scalars(pipeline_runs).all()),
            ("crawl", s.scalars(crawl_runs).all()),
        ]
        for kind, rows in kinds:
            print(f"{kind} runs" + ("" if rows else ": none"))
            for row in rows:
                end = row.finished_at if row.status != "running" else row.heartbeat_at
                label = "ended" if row.status != "running" else "heartbeat"
                extra = ""
                if isinstance(row, CrawlRun):
                    pages = (row.stats or {}).get("pages")
                    extra = f"  {row.kind}" + (f", {pages} pages" if pages is not None else "")
                print(
                    f"  {row.id:>5}  {row.status:<11}  started {_when(row.started_at)}  "
                    f"{label} {_when(end)}{extra}"
                )
                if row.status in ("failed", "interrupted") and row.error:
                    print(f"         reason: {row.error.strip().splitlines()[0][:300]}")
                warning = isinstance(row, CrawlRun) and (row.stats or {}).get("warning")
                if warning:
                    print(f"         warning: {warning}")
                crawl = None
                if kind == "pipeline":
                    crawl = s.scalars(
                        select(CrawlRun)
                        .where(CrawlRun.pipeline_run_id == row.id)
                        .order_by(CrawlRun.id.desc())
                    ).first()
                hint = resume_hint(kind, row, crawl)
                if hint and row.status in ("failed", "interrupted"):
                    print(f"         resume: {hint}")
    return 0


def _prune(ctx: Context) -> int:
    """Remove the own job folders of the failed and interrupted crawl runs (their
    settings record it: ``pruned``, no ``resume``), then the crawls folder if empty."""
    import shutil
    from pathlib import Path

    from sqlalchemy import select

    from store.models import CrawlRun
    from store.session import session_scope
    from webometrics.layout import default_crawl_folder

    engine = ctx.engine()
    base = default_crawl_folder(engine)
    if base is None:
        print("no crawls folder (an in-memory database): nothing to prune")
        return 0
    folder = Path(base).resolve()
    removed, size = [], 0
    with session_scope(engine) as s:
        rows = s.scalars(select(CrawlRun).where(CrawlRun.status.in_(["failed", "interrupted"])))
        for row in rows:
            settings = dict(row.settings or {})
            jobdir = Path(settings.get("jobdir") or "/nonexistent")
            if jobdir != folder / f"crawl-{row.id}" or not jobdir.is_dir():
                continue  # a folder given with --jobdir, or gone already
            size += sum(f.stat().st_size for f in jobdir.rglob("*") if f.is_file())
            shutil.rmtree(jobdir)
            settings.pop("resume", None)
            settings["pruned"] = True
            row.settings = settings
            removed.append(row.id)
    with_empty = ""
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        with_empty = f"; the empty folder {folder} removed"
    runs = ", ".join(map(str, removed)) or "none"
    print(
        f"pruned the job folders of {len(removed)} crawl run(s) ({runs}; "
        f"{size / 1e6:.1f} MB){with_empty}"
    )
    return 0
