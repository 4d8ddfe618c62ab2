"""Scheduled whole-pipeline runs with APScheduler.

One job, one worker thread, ``max_instances=1`` and ``coalesce=True``, so runs never
overlap inside one scheduler; the database run lock (:mod:`webometrics.runlock`) keeps
several schedulers apart. A failed run is recorded (by the pipeline) and logged, and the
scheduler goes on to the next fire time.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import Any

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, JobExecutionEvent
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from core.exceptions import ParameterError

log = logging.getLogger(__name__)


_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _crontab_day_of_week(field: str) -> str:
    """Crontab's day-of-week numbers (0 or 7 = Sunday, 1 = Monday) as names.

    APScheduler 3 numbers days from Monday = 0, so ``CronTrigger.from_crontab('0 3 * * 1')``
    would fire on Tuesdays; names avoid the off-by-one.

    >>> _crontab_day_of_week("1"), _crontab_day_of_week("1-5"), _crontab_day_of_week("0,6")
    ('mon', 'mon-fri', 'sun,sat')
    """

    def name(match: re.Match[str]) -> str:
        number = int(match.group(0))
        if number > 7:
            raise ValueError(f"day of week {number} is outside 0-7")
        return _DAY_NAMES[number]

    # numbers after '/' are steps, not days
    return re.sub(r"(?<![/\d])\d+", name, field)


def make_trigger(cron: str | None, interval_seconds: float | None) -> Any:
    """An APScheduler trigger from a crontab expression or an interval.

    Raises
    ------
    ParameterError
        Neither or both given, or the crontab expression is invalid.
    """
    if (cron is None) == (interval_seconds is None):
        raise ParameterError("give exactly one of --cron EXPR and --interval SECONDS")
    if cron is not None:
        fields = cron.split()
        try:
            if len(fields) != 5:
                raise ValueError(f"expected 5 fields, got {len(fields)}")
            minute, hour, day, month, dow = fields
            return CronTrigger(
                minute=minute,
                hour=hour,
                day=day,
                month=month,
                day_of_week=_crontab_day_of_week(dow),
                timezone="UTC",
            )
        except ValueError as exc:
            raise ParameterError(
                f"invalid cron expression {cron!r}: {exc}; use five fields "
                "'minute hour day-of-month month day-of-week', e.g. '0 3 * * 1'"
            ) from exc
    assert interval_seconds is not None
    if interval_seconds <= 0:
        raise ParameterError(f"--interval must be > 0 seconds, got {interval_seconds}")
    return IntervalTrigger(seconds=interval_seconds, timezone="UTC")


def run_on_schedule(
    job: Callable[[], object], trigger: Any, *, max_runs: int | None = None, run_now: bool = False
) -> dict[str, int]:
    """Run ``job`` at every fire time of ``trigger`` until interrupted or ``max_runs``.

    Returns
    -------
    dict
        ``{"ok": n, "failed": m}``.
    """
    counts = {"ok": 0, "failed": 0}
    lock = threading.Lock()
    scheduler = BlockingScheduler(
        executors={"default": ThreadPoolExecutor(1)},
        job_defaults={"max_instances": 1, "coalesce": True, "misfire_grace_time": 3600},
        timezone="UTC",
    )

    def listener(event: JobExecutionEvent) -> None:
        with lock:
            if event.exception is not None:
                counts["failed"] += 1
                log.error("scheduled run failed: %s (the next run still happens)", event.exception)
            else:
                counts["ok"] += 1
            total = counts["ok"] + counts["failed"]
        if max_runs is not None and total >= max_runs:
            scheduler.shutdown(wait=False)

    scheduler.add_listener(listener, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR)
    job_ = scheduler.add_job(job, trigger, id="pipeline", name="webometrics pipeline run")
    if run_now:
        job_.modify(next_run_time=None)
        scheduler.add_job(job, id="pipeline-now", name="webometrics pipeline run (now)")
    log.info("scheduler started; next run at %s", getattr(job_, "next_run_time", None))
    try:
        scheduler.start()
    except (KeyboardInterrupt, SystemExit):
        log.info("scheduler stopped")
    return counts
