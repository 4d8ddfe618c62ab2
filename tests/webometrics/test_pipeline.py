"""Pipeline runs: recorded stages, failures recorded, the run lock, the scheduler."""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

import pytest
from sqlalchemy import select

from core.exceptions import ParameterError, RunLockedError, StageError
from core.settings import Settings
from store import make_engine, session_scope
from store.models import PipelineRun
from webometrics.runlock import RunLock
from webometrics.scheduler import make_trigger, run_on_schedule
from webometrics.stages import StageResult
from webometrics.stages.pipeline import PipelineOptions, run_pipeline


@dataclass(frozen=True)
class _Result(StageResult):
    items: int
    scope: dict[str, Any] | None


def _stages(calls: list[str], fail: str | None = None):
    def lookup(name: str):
        def run(engine: Any, settings: Settings, scope: Any) -> _Result:
            calls.append(name)
            if name == fail:
                raise RuntimeError(f"{name} broke")
            return _Result(len(calls), None if scope is None else asdict(scope))

        return run

    return lookup


def _runs(engine) -> list[PipelineRun]:
    with session_scope(engine) as s:
        return list(s.scalars(select(PipelineRun).order_by(PipelineRun.id)))


def test_stages_run_in_order_and_are_recorded(migrated_url: str) -> None:
    engine = make_engine(migrated_url)
    calls: list[str] = []
    run_id = run_pipeline(
        engine, Settings(), PipelineOptions(universities_file="u.toml"), stage_lookup=_stages(calls)
    )
    assert calls == ["crawl", "extract", "dedup", "cluster", "analyse"]
    (row,) = _runs(engine)
    assert row.id == run_id and row.status == "finished" and row.finished_at is not None
    assert [s["name"] for s in row.stages] == calls
    assert all(s["status"] == "finished" and s["seconds"] >= 0 for s in row.stages)
    crawl = row.stages[0]["stats"]
    assert crawl["items"] == 1
    assert crawl["scope"]["universities_file"] == "u.toml"
    assert crawl["scope"]["pipeline_run_id"] == run_id
    assert row.stages[1]["stats"] == {"items": 2, "scope": None}
    engine.dispose()


def test_a_failed_stage_is_recorded_and_stops_the_run(migrated_url: str) -> None:
    engine = make_engine(migrated_url)
    calls: list[str] = []
    with pytest.raises(StageError, match="stage dedup failed: dedup broke"):
        run_pipeline(engine, Settings(), PipelineOptions(), stage_lookup=_stages(calls, "dedup"))
    assert calls == ["crawl", "extract", "dedup"]
    (row,) = _runs(engine)
    assert row.status == "failed" and "dedup broke" in row.error
    assert [s["status"] for s in row.stages] == ["finished", "finished", "failed"]
    engine.dispose()


def test_unknown_stage_is_refused(migrated_url: str) -> None:
    engine = make_engine(migrated_url)
    with pytest.raises(StageError, match="unknown stage 'crawll'"):
        run_pipeline(engine, Settings(), PipelineOptions(stages=("crawll",)))
    engine.dispose()


def test_two_runs_never_overlap(migrated_url: str) -> None:
    engine = make_engine(migrated_url)
    other = make_engine(migrated_url)
    with RunLock(engine), pytest.raises(RunLockedError) as info, RunLock(other):
        pass
    assert info.value.exit_code == 4
    with RunLock(other):  # released after the first run
        pass
    # a run that starts while another holds the lock fails at once, writing nothing
    started = threading.Event()
    release = threading.Event()

    def slow_stage(engine: Any, settings: Settings, scope: Any) -> StageResult:
        started.set()
        release.wait(10)
        return StageResult()

    first = threading.Thread(
        target=run_pipeline,
        args=(engine, Settings(), PipelineOptions(stages=("extract",))),
        kwargs={"stage_lookup": lambda name: slow_stage},
    )
    first.start()
    assert started.wait(10)
    with pytest.raises(RunLockedError):
        run_pipeline(
            other,
            Settings(),
            PipelineOptions(stages=("extract",)),
            stage_lookup=lambda name: slow_stage,
        )
    release.set()
    first.join(10)
    assert [r.status for r in _runs(engine)] == ["finished"]
    engine.dispose()
    other.dispose()


def test_scheduler_goes_on_after_a_failed_run() -> None:
    outcomes = iter([RuntimeError("first run fails"), None, None])
    times: list[float] = []

    def job() -> None:
        times.append(time.monotonic())
        err = next(outcomes)
        if err:
            raise err

    counts = run_on_schedule(job, make_trigger(None, 0.3), max_runs=3)
    assert counts == {"ok": 2, "failed": 1}
    assert len(times) == 3 and times[-1] - times[0] >= 0.5


@pytest.mark.parametrize(
    ("cron", "interval", "msg"),
    [
        ("61 * * * *", None, "invalid cron expression"),
        (None, None, "exactly one"),
        ("0 3 * * 1", 5.0, "exactly one"),
        (None, -1.0, "must be > 0"),
    ],
)
def test_bad_schedules(cron: str | None, interval: float | None, msg: str) -> None:
    with pytest.raises(ParameterError, match=msg):
        make_trigger(cron, interval)


def test_weekly_cron_fires_on_mondays_at_three() -> None:
    import datetime as dt

    trig = make_trigger("0 3 * * 1", None)
    now = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)  # a Monday, after 03:00
    nxt = trig.get_next_fire_time(None, now)
    assert nxt == dt.datetime(2026, 11, 30, 3, 0, tzinfo=dt.UTC)


def test_the_crawl_keeps_an_http_cache_beside_the_database(tmp_path) -> None:
    """A pipeline run crawls with an HTTP cache by default, so that the next run
    revalidates what it fetched (tests/crawler/test_local_crawl.py shows the 304s)."""
    from store import schema
    from webometrics.layout import default_http_cache_dir

    engine = make_engine(f"sqlite:///{tmp_path / 'w.db'}")
    schema.upgrade(engine)
    seen: list[str | None] = []

    def lookup(name: str):
        def run(engine: Any, settings: Settings, scope: Any) -> StageResult:
            seen.append(settings.crawl.http_cache_dir)
            return StageResult()

        return run

    only_crawl = ("crawl",)
    run_pipeline(engine, Settings(), PipelineOptions(stages=only_crawl), stage_lookup=lookup)
    run_pipeline(
        engine,
        Settings(),
        PipelineOptions(stages=only_crawl, http_cache=False),
        stage_lookup=lookup,
    )
    mine = Settings().replace(crawl={"http_cache_dir": str(tmp_path / "mine")})
    run_pipeline(engine, mine, PipelineOptions(stages=only_crawl), stage_lookup=lookup)
    assert seen == [str(tmp_path / "w-httpcache"), None, str(tmp_path / "mine")]
    pg = make_engine("postgresql+psycopg://u:secret@db.example.org:5433/webometrics")
    cache = default_http_cache_dir(pg)
    assert cache is not None and "secret" not in cache
    assert cache.endswith("postgresql-db.example.org-5433-webometrics")
    engine.dispose()
