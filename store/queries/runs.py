"""Crawl runs and whole-pipeline runs with their status, duration, statistics and error."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from core.archives import collection_label
from store.models import (
    CrawlRun,
    PipelineRun,
)


def _seconds(start: dt.datetime | None, end: dt.datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return round((end - start).total_seconds(), 3)


@dataclass(frozen=True)
class CrawlRunRow:
    """A crawl (or import) run with its statistics and error."""

    id: int
    kind: str
    status: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    seconds: float | None
    pipeline_run_id: int | None
    stats: dict[str, Any]
    settings: dict[str, Any]
    error: str | None
    #: ``live`` or ``<archive> <from>..<to>`` (:func:`core.archives.collection_label`)
    collection: str = "live"


def list_crawl_runs(engine: Engine) -> list[CrawlRunRow]:
    """Every crawl run, newest first."""
    with Session(engine) as s:
        runs = s.scalars(select(CrawlRun).order_by(CrawlRun.id.desc())).all()
        return [
            CrawlRunRow(
                r.id,
                r.kind,
                r.status,
                r.started_at,
                r.finished_at,
                _seconds(r.started_at, r.finished_at),
                r.pipeline_run_id,
                dict(r.stats or {}),
                dict(r.settings or {}),
                r.error,
                collection_label(r.archive, r.archive_from, r.archive_to),
            )
            for r in runs
        ]


@dataclass(frozen=True)
class PipelineRunRow:
    """A whole-pipeline run: trigger, status, each stage's status, seconds, stats, error."""

    id: int
    trigger: str
    status: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    seconds: float | None
    universities_file: str | None
    stages: tuple[dict[str, Any], ...]
    error: str | None


def list_pipeline_runs(engine: Engine) -> list[PipelineRunRow]:
    """Every whole-pipeline run, newest first."""
    with Session(engine) as s:
        runs = s.scalars(select(PipelineRun).order_by(PipelineRun.id.desc())).all()
        return [
            PipelineRunRow(
                r.id,
                r.trigger,
                r.status,
                r.started_at,
                r.finished_at,
                _seconds(r.started_at, r.finished_at),
                r.universities_file,
                tuple(dict(x) for x in (r.stages or []) if isinstance(x, dict)),
                r.error,
            )
            for r in runs
        ]
