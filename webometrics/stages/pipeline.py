"""The whole pipeline as one recorded run: crawl -> extract -> dedup -> cluster -> analyse.

Two optional stages take a Common Crawl release into the same run, after the crawl:
``commoncrawl-graph`` (the citing domains of a web graph release,
:mod:`webometrics.stages.citing_graph`) and ``commoncrawl-index`` (the pages of every
stored citing domain, the graph's included, fetched from the URL index's WARC records,
:mod:`webometrics.stages.citing_index`), so the graph's citing domains are extracted,
clustered and categorised like crawled ones.

Each stage is ``webometrics.stages.<name>.run(engine, settings, scope)``, returning a
:class:`~webometrics.stages.StageResult`. A
:class:`~store.models.PipelineRun` row records every stage's status, seconds and
statistics (or its error) as the run goes, so a killed or failed run still shows how far
it got, and its heartbeat while it runs (:mod:`webometrics.liveness`). Runs hold
:class:`~webometrics.runlock.RunLock`: two never overlap.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import logging
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from core.exceptions import StageError, WebometricsError
from core.settings import Settings
from store.models import PipelineRun, utcnow
from store.session import session_scope
from webometrics.layout import (  # the stage list and folder defaults: a leaf module
    ALL_STAGES,
    STAGES,
    default_http_cache_dir,
)
from webometrics.liveness import Heartbeat
from webometrics.runlock import RunLock
from webometrics.stages import StageResult

log = logging.getLogger(__name__)

#: the module of each stage under ``webometrics.stages``
_MODULES: dict[str, str] = {
    "commoncrawl-graph": "citing_graph",
    "commoncrawl-index": "citing_index",
}

StageFunc = Callable[[Engine, Settings, Any], StageResult]


def _check_stage(name: str) -> None:
    if name not in ALL_STAGES:
        raise StageError(f"unknown stage {name!r}; the stages are {', '.join(ALL_STAGES)}")


def stage_function(name: str) -> StageFunc:
    """The ``run`` function of stage ``name``: ``run(engine, settings, scope)``."""
    _check_stage(name)
    module = importlib.import_module(f"webometrics.stages.{_MODULES.get(name, name)}")
    return module.run  # type: ignore[no-any-return]


@dataclass
class PipelineOptions:
    """What a whole-pipeline run is asked to do."""

    universities_file: str | None = None
    stages: Sequence[str] = STAGES
    trigger: str = "manual"
    #: the scope of each stage (its module's ``<Stage>Scope``); a stage without one runs
    #: on its default scope. The crawl's gets the run's universities file and id.
    scopes: Mapping[str, Any] = field(default_factory=dict)
    http_cache: bool = True
    #: the command line that runs this pipeline again, without ``--stages`` (recorded with
    #: each stage, so that an unfinished run says how to run the stages still to do)
    resume: str | None = None


def _crawl_scope(scope: Any, universities_file: str | None, run_id: int) -> Any:
    """The crawl's scope in pipeline run ``run_id``: the run's universities file unless the
    scope names its own."""
    from webometrics.stages.crawl import CrawlScope

    scope = scope if scope is not None else CrawlScope()
    return dataclasses.replace(
        scope,
        universities_file=scope.universities_file or universities_file,
        pipeline_run_id=run_id,
    )


def _save(engine: Engine, run_id: int, **values: Any) -> None:
    with session_scope(engine) as s:
        row = s.get(PipelineRun, run_id)
        assert row is not None
        for key, value in values.items():
            setattr(row, key, value)


def run_pipeline(
    engine: Engine,
    settings: Settings,
    options: PipelineOptions,
    *,
    stage_lookup: Callable[[str], StageFunc] = stage_function,
) -> int:
    """Run the stages in order under the run lock; return the pipeline run's id.

    A stage that fails stops the run: the run is recorded as ``failed`` with the stage's
    error, and the error is raised again (as :class:`StageError` unless it already is a
    :class:`WebometricsError`).

    Raises
    ------
    ConfigError
        The taxonomy is invalid or lacks a category an analyst's override gives (before
        any stage runs, when the run has the analyse stage).
    RunLockedError
        Another run is in progress.
    StageError
        A stage failed.
    """
    for name in options.stages:
        _check_stage(name)
    if "analyse" in options.stages:  # what the analyse stage would refuse, before the crawl
        from analyse.taxonomy import load_taxonomy
        from store.overrides import check_overrides

        check_overrides(engine, load_taxonomy(settings.analyse.taxonomy))
    with RunLock(engine):
        with session_scope(engine) as s:
            row = PipelineRun(
                trigger=options.trigger,
                universities_file=options.universities_file,
                stages=[],
                status="running",
            )
            s.add(row)
            s.flush()
            run_id = row.id
        with Heartbeat(engine, PipelineRun, run_id, settings.database.heartbeat_seconds):
            done: list[dict[str, Any]] = []
            for at, name in enumerate(options.stages):
                stage_settings, scope = _stage_input(engine, settings, options, name, run_id)
                call = functools.partial(
                    _call_stage, stage_lookup, name, engine, stage_settings, scope
                )
                resume = None
                if options.resume:  # what is left to do should this stage not finish
                    resume = {"command": options.resume, "todo": list(options.stages[at:])}
                done.append(_run_stage(engine, run_id, done, name, call, resume))
            _save(engine, run_id, status="finished", finished_at=utcnow())
    return run_id


def _stage_input(
    engine: Engine, settings: Settings, options: PipelineOptions, name: str, run_id: int
) -> tuple[Settings, Any]:
    """The settings and the scope stage ``name`` runs with in pipeline run ``run_id``."""
    scope = options.scopes.get(name)
    if name != "crawl":
        return settings, scope
    scope = _crawl_scope(scope, options.universities_file, run_id)
    cache = default_http_cache_dir(engine) if options.http_cache else None
    if cache and settings.crawl.http_cache_dir is None:
        # a second run revalidates what it fetched and refetches what changed
        return settings.replace(crawl={"http_cache_dir": cache}), scope
    return settings, scope


def _call_stage(
    lookup: Callable[[str], StageFunc], name: str, engine: Engine, settings: Settings, scope: Any
) -> StageResult:
    return lookup(name)(engine, settings, scope)


def _run_stage(
    engine: Engine,
    run_id: int,
    done: list[dict[str, Any]],
    name: str,
    call: Callable[[], StageResult],
    resume: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run one stage, recording it as running, then finished (its entry, returned) or
    failed: then the run is recorded failed (or interrupted) and the error raised again.
    ``resume`` (the run's command and the stages left from this one) stays in the entry
    until the stage is finished (:func:`webometrics.liveness.resume_hint` reads it)."""
    started = time.perf_counter()
    entry: dict[str, Any] = {"name": name, "status": "running", "started_at": utcnow().isoformat()}
    if resume:
        entry["resume"] = resume
    _save(engine, run_id, stages=[*done, entry])
    try:
        log.info("pipeline run %d: stage %s", run_id, name)
        stats = call().stats()
    except BaseException as exc:
        entry.update(
            status="interrupted" if isinstance(exc, KeyboardInterrupt) else "failed",
            seconds=round(time.perf_counter() - started, 3),
            error=f"{type(exc).__name__}: {exc}",
        )
        _save(
            engine,
            run_id,
            stages=[*done, entry],
            status=entry["status"],
            finished_at=utcnow(),
            error=f"stage {name}: {exc}\n{traceback.format_exc(limit=5)}",
        )
        if isinstance(exc, WebometricsError | KeyboardInterrupt):
            raise
        raise StageError(f"pipeline run {run_id}: stage {name} failed: {exc}") from exc
    entry.pop("resume", None)
    entry.update(status="finished", seconds=round(time.perf_counter() - started, 3), stats=stats)
    _save(engine, run_id, stages=[*done, entry])
    return entry
