"""The crawl stage: a recorded crawl run of the outgoing and/or citing environment.

:func:`run` imports the universities file (when given), opens a crawl run (or resumes the
unfinished run of the job directory), then runs each direction as its own process
(:mod:`crawler.run`; Twisted's reactor cannot be restarted within one process), showing
progress from the JSON lines it prints. The outgoing phase crawls the universities'
sites; the citing phase fetches the citing candidates (backlink exports, URL lists, the
test web's citing files, links found in stored pages). Both phases share the job's
frontier, so a page fetched by the first is not fetched again by the second. At the end
each citing candidate is decided from the stored pages (verified / missing / error), and
the run's environment rows and statistics are computed from what is stored.

Job directory: ``[crawl] jobdir`` (``--jobdir``), else the run's own folder
``crawl-<run id>`` beside an SQLite file (``<name>-crawls/``) or in the user's state folder
(:func:`~webometrics.layout.default_crawl_folder`), removed when the run is
finished and kept otherwise. A crawl killed in any way (even SIGKILL), stopped by a
database outage longer than ``[crawl] store_retry_seconds`` or interrupted, started again
with the same job directory resumes its run: stored pages stay, queued requests are sent,
answers that arrived but were not stored yet are replayed without a new fetch. The run
records the command that does so (``settings["resume"]``); every error says it.

The package: this module holds :func:`run` and :class:`CrawlResult`; :mod:`.job` what a
crawl works on (:class:`CrawlScope`), the job directory, its state and the phase job
files; :mod:`.citing` the citing candidates; :mod:`.processes` running and watching the
crawler processes; :mod:`.farm` crawl farms (:func:`work`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import logging
import shutil
import signal
from typing import Any, ClassVar

from sqlalchemy import Engine

from core.choices import DIRECTION_CHOICES
from core.exceptions import DatabaseError, ParameterError, StageError
from core.settings import Settings
from webometrics.liveness import Heartbeat
from webometrics.stages import StageResult, refreshes_figures
from webometrics.stages.crawl.citing import job_candidates
from webometrics.stages.crawl.farm import (
    WorkResult,
    check_farm,
    farm_frontier,
    publish,
    unpublish,
    work,
)
from webometrics.stages.crawl.job import (
    FRONTIER_FILE,
    STATE_FILE,
    CrawlJob,
    CrawlScope,
    child_environment,
    crawled_universities,
    open_job,
    phase_job,
    write_state,
)
from webometrics.stages.crawl.processes import merge_scrapy_stats, run_children

__all__ = [
    "DIRECTIONS",
    "FRONTIER_FILE",
    "STATE_FILE",
    "CrawlResult",
    "CrawlScope",
    "WorkResult",
    "run",
    "work",
]

log = logging.getLogger(__name__)

DIRECTIONS = DIRECTION_CHOICES

#: the statistics only a crawl farm has (left out of :meth:`CrawlResult.stats` otherwise)


@dataclasses.dataclass(frozen=True)
class CrawlResult(StageResult):
    """A crawl run's statistics, computed from what is stored (also kept in its
    :class:`~store.models.CrawlRun` row, but for ``run_id``)."""

    run_id: int
    #: pages answered (an HTTP status), pages recorded (errors included), their bytes
    pages: int
    pages_recorded: int
    bytes: int
    #: error pages by kind (:mod:`crawler.errors`) and in all
    errors: dict[str, int]
    error_pages: int
    #: pages by role and by HTTP status
    roles: dict[str, int]
    http_status: dict[str, int]
    links: int
    #: citations by status (verified / missing / error)
    citations: dict[str, int]
    #: ``outgoing_domains`` and ``citing_domains``
    environment: dict[str, int]
    finalized_at: str
    citing_candidates: int
    #: citing source rows skipped, by reason
    citing_skipped: dict[str, int]
    #: the citing candidates decided in this run, by status
    citing_checked: dict[str, int]
    #: the summed Scrapy statistics of each phase's processes
    scrapy: dict[str, dict[str, Any]]
    resumed: bool
    #: a crawl farm's processes started here and the processes that joined it
    processes: int | None = None
    farm_workers: int | None = None

    #: what to say of a crawl most of whose pages got no answer (:func:`failures_warning`)
    warning: str | None = None

    #: ``processes``, ``farm_workers`` and ``warning`` only when there is one
    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"processes", "farm_workers", "warning"})


@refreshes_figures
def run(
    engine: Engine,
    settings: Settings,
    scope: CrawlScope | None = None,
    *,
    progress: bool = False,
) -> CrawlResult:
    """Crawl the outgoing and/or citing environment of the universities.

    Parameters
    ----------
    engine : Engine
        The database (schema at head).
    settings : Settings
        ``[crawl]`` and ``[extract]`` are used; among them ``[crawl] proxy`` (HTTP proxy
        for every request, e.g. ``webometrics testbed serve``), ``jobdir`` (the resumable
        job directory, else the run's own folder: see the module docstring),
        ``redis_url`` (a crawl farm: the Redis of the shared frontier; the database must
        be a server every process can reach, PostgreSQL; crawler processes on other
        machines join with :func:`work`, ``webometrics crawl-worker``) and ``processes``
        (crawler processes started here; more than one needs ``redis_url``).
    scope : CrawlScope, optional
        The universities file, direction, citing sources and pipeline run (default: both
        directions of every stored university).
    progress : bool
        Show a progress bar.

    Returns
    -------
    CrawlResult
        The run's statistics: ``run_id``, pages, bytes, errors by kind, links,
        citations by status, environment sizes, per-phase Scrapy statistics.

    Raises
    ------
    ParameterError
        An unknown direction, or several processes without Redis.
    ConfigError
        No universities, an unreadable citing source, an unreachable Redis server, or a
        crawl farm on SQLite.
    StageError
        A crawl process failed or was killed, or the database stayed unreachable past
        ``[crawl] store_retry_seconds`` (the run is ``failed`` or ``interrupted``, its
        state kept; the message gives the command that resumes it).
    """
    from store.models import CrawlRun

    scope = scope if scope is not None else CrawlScope()
    farm, universities, phases = _prepare(engine, settings, scope)
    job = open_job(engine, settings, scope, universities)
    finished = False
    with Heartbeat(engine, CrawlRun, job.run_id, settings.database.heartbeat_seconds):
        try:
            for phase in phases:
                _run_phase(engine, settings, job, phase, farm=farm, progress=progress)
            stats, shared = _finish(engine, settings, job, farm, citing="citing" in phases)
            finished = True
            if shared is not None:  # the shared frontier is no longer needed
                unpublish(farm, settings, job.run_id)
                shared.clear()
        except BaseException as exc:
            _record_end(engine, job, exc)
            raise
        finally:
            if farm is not None:
                with contextlib.suppress(Exception):
                    unpublish(farm, settings, job.run_id)
            if job.own_folder and finished:  # kept until the run is finished, to resume it
                shutil.rmtree(job.path, ignore_errors=True)
                with contextlib.suppress(OSError):  # the crawls folder, when it is empty
                    job.path.parent.rmdir()
    return CrawlResult(run_id=job.run_id, **stats)


def _prepare(
    engine: Engine, settings: Settings, scope: CrawlScope
) -> tuple[Any, list[dict[str, Any]], list[str]]:
    """Check what the crawl is asked for before a run is made: (the crawl farm's Redis
    connection or None, the universities, the phases)."""
    if scope.direction not in DIRECTIONS:
        raise ParameterError(
            f"direction {scope.direction!r} must be one of {', '.join(DIRECTIONS)}"
        )
    if settings.crawl.render != "never":  # Playwright and Chromium, before a run is made
        from crawler.render import find_browser

        find_browser(settings.crawl.render_browser)
    farm = check_farm(engine, settings.crawl)
    universities = _universities(engine, scope)
    phases: list[str] = ["outgoing", "citing"] if scope.direction == "both" else [scope.direction]
    if settings.crawl.archive is not None:  # an archived collection: the outgoing side
        phases = archived_phases(scope.direction)
    if "citing" in phases:
        _check_sources(scope, universities)  # a rejected file: no run is made
    return farm, universities, phases


def archived_phases(direction: str) -> list[str]:
    """The phases of an archived crawl: the outgoing environment (``both`` means it);
    the citing environment of a past year comes from Common Crawl's web graph
    (``webometrics citing commoncrawl-graph``), not from today's backlink exports.

    Raises
    ------
    ParameterError
        ``citing`` asked of an archive.
    """
    if direction == "citing":
        raise ParameterError(
            "--archive crawls the outgoing environment of the period; for its citing "
            "environment use `webometrics citing commoncrawl-graph` with a release of the "
            "period (docs/archives.md)"
        )
    return ["outgoing"]


def _universities(engine: Engine, scope: CrawlScope) -> list[dict[str, Any]]:
    """The universities to crawl: those of the scope's universities file (imported first),
    else every stored one."""
    names = None
    if scope.universities_file:
        from core.universities import parse_universities
        from store.universities import import_universities

        specs = parse_universities(scope.universities_file)
        import_universities(engine, specs)
        names = [spec.name for spec in specs]
    return crawled_universities(engine, names)


def _check_sources(scope: CrawlScope, universities: list[dict[str, Any]]) -> None:
    """Read the citing sources given on the command line once before the run is made, so
    that a file refused (missing, unreadable, not a backlink export) makes no run."""
    from crawler.sources import UniversityDomains, read_backlinks, read_url_list

    unis = [UniversityDomains(u["id"], frozenset(u["domains"])) for u in universities]
    for path in scope.backlinks:
        read_backlinks(path, unis)
    for path in scope.urls:
        read_url_list(path, unis)


def _run_phase(
    engine: Engine, settings: Settings, job: CrawlJob, phase: str, *, farm: Any, progress: bool
) -> None:
    """Run one phase's crawler processes (unless the job did already) and record it done;
    the citing phase first gathers its candidates."""
    if phase == "citing":
        job.candidates, job.skipped = job_candidates(engine, job)
    if phase in job.state.get("phases_done", []):
        return
    from store.entities import site_rules

    job_file = phase_job(
        settings,
        job,
        phase,
        job.candidates if phase == "citing" else None,
        site_rules=site_rules(engine).analyst_spec(),
    )
    if farm is not None:
        publish(farm, settings, job.run_id, phase, job_file)
    processes = settings.crawl.processes
    env = child_environment(job.db_url, settings.crawl)
    outcome = run_children(job_file, phase, progress, processes, env=env)
    phase_stats = outcome.get("stats") or {}
    job.scrapy_stats[phase] = merge_scrapy_stats(job.scrapy_stats.get(phase, {}), phase_stats)
    if outcome["returncode"] != 0:
        _phase_failed(engine, job, phase, outcome, settings.crawl.store_retry_seconds)
    job.state.setdefault("phases_done", []).append(phase)
    write_state(job.path, job.state)


def _finish(
    engine: Engine, settings: Settings, job: CrawlJob, farm: Any, *, citing: bool
) -> tuple[dict[str, Any], Any]:
    """Decide the citing candidates, compute the run's statistics and mark it finished;
    return them (without ``run_id``) and the farm's shared frontier (None without one)."""
    from crawler.storage import finalize_run, resolve_citations, update_run

    shared = farm_frontier(farm, settings, job.run_id) if farm is not None else None
    citations: dict[str, int] = {}
    if citing:
        redirects = shared.redirects() if shared is not None else _redirects(job)
        citations = dict(
            resolve_citations(
                engine,
                job.run_id,
                job.candidates,
                redirects,
                max_redirects=settings.crawl.max_redirects,
            )
        )
    stats = finalize_run(engine, job.run_id)
    warning = failures_warning(stats)
    if warning:
        stats["warning"] = warning
        log.warning("crawl run %d: %s", job.run_id, warning)
    stats["citing_candidates"] = len(job.candidates)
    stats["citing_skipped"] = job.skipped
    stats["citing_checked"] = citations
    stats["scrapy"] = job.scrapy_stats
    stats["resumed"] = bool(job.resumed)
    if shared is not None:
        stats["processes"] = settings.crawl.processes
        stats["farm_workers"] = shared.counts()["joined"]
    finished_at = dt.datetime.now(dt.UTC)
    update_run(engine, job.run_id, status="finished", finished_at=finished_at, stats=stats)
    return stats, shared


def failures_warning(stats: dict[str, Any]) -> str | None:
    """What to say of a crawl most of whose recorded pages got no answer for a connection
    reason (:data:`crawler.outage.CONNECTION_KINDS`), else None.

    >>> failures_warning({"pages_recorded": 10, "errors": {"connection_refused": 6}})[:59]
    '6 of 10 pages recorded got no answer (connection_refused 6)'
    >>> failures_warning({"pages_recorded": 10, "errors": {"http_404": 9}}) is None
    True
    """
    from crawler.outage import CONNECTION_KINDS

    errors = {k: v for k, v in (stats.get("errors") or {}).items() if k in CONNECTION_KINDS}
    failed, recorded = sum(errors.values()), int(stats.get("pages_recorded") or 0)
    if not recorded or failed * 2 <= recorded:
        return None
    kinds = ", ".join(f"{k} {v:,}" for k, v in sorted(errors.items(), key=lambda kv: -kv[1]))
    return (
        f"{failed:,} of {recorded:,} pages recorded got no answer ({kinds}): the proxy, the "
        "network or the sites were down for much of the crawl; check the log, then crawl again"
    )


def _redirects(job: CrawlJob) -> dict[str, str]:
    """The redirects the job's frontier file recorded (none without the file)."""
    frontier_file = job.path / FRONTIER_FILE
    if not frontier_file.is_file():
        return {}
    from crawler.frontier import SQLiteFrontier

    frontier = SQLiteFrontier(frontier_file)
    try:
        return frontier.redirects()
    finally:
        frontier.close()


#: the crawler processes' exit codes that stop a crawl to resume it later:
#: (the marker of their reason on standard error, the reason without one, the advice)
_STOPPED = {
    "store": ("store_unavailable", "the database stayed unreachable", "When the database is back"),
    "network": (
        "connection_lost",
        "the fetches stopped answering",
        "When the proxy or the network is back",
    ),
}


def _phase_failed(
    engine: Engine, job: CrawlJob, phase: str, outcome: dict[str, Any], window: float
) -> None:
    """Record a crawler process that did not finish (waiting up to ``window`` seconds for
    the database) and raise the error that says how to resume the run."""
    from crawler.run import EXIT_CONNECTION_LOST, EXIT_STORE_UNAVAILABLE
    from crawler.storage import update_run
    from crawler.storage.retry import retried

    run_id, job_path, resume = job.run_id, job.path, job.resume
    code = outcome["returncode"]
    stderr = outcome.get("stderr", "")
    stopped = {EXIT_STORE_UNAVAILABLE: "store", EXIT_CONNECTION_LOST: "network"}.get(code)
    advice = "Resume"
    if stopped is not None:
        marker, without, advice = _STOPPED[stopped]
        reason = f"{phase} crawl stopped: {_marked_reason(stderr, marker) or without}"
        status = "interrupted"
    elif code < 0 or code == 130:
        what = f"killed by {signal.Signals(-code).name}" if code < 0 else "interrupted"
        reason = f"{phase} crawl {what}"
        status = "interrupted"
    else:
        cause = child_error(
            stderr, engine.url.database if engine.dialect.name == "sqlite" else None
        )
        reason = f"{phase} crawl failed (exit {code})" + (f": {cause}" if cause else "")
        status = "failed"
    marked = ""
    try:
        # the database may still be coming back: wait for it as the writes did
        retried(
            lambda: update_run(
                engine,
                run_id,
                status=status,
                finished_at=dt.datetime.now(dt.UTC),
                error=reason,
                stats={"scrapy": job.scrapy_stats},
            ),
            window,
            what=f"marking crawl run {run_id} {status}",
        )
    except DatabaseError:
        marked = (
            f" (the run could not be marked {status}: the database is unreachable; the "
            "next command marks it once its heartbeat is older than the lease)"
        )
    log_file = job_path / f"{phase}.log"
    raise StageError(
        f"crawl run {run_id} {status}: {reason}.\nWhat was "
        "stored is kept; so is the crawl's state (the answers fetched but not stored "
        f"included) in {job_path}{marked}. {advice}"
        + (" it with" if advice == "Resume" else ", resume it with")
        + f":\n  {resume}\nLog: {log_file}"
    )


def child_error(stderr: str, database: str | None = None) -> str:
    """The error a crawler process died of: the last line of its standard error that is
    neither blank, a warning nor a traceback frame (a damaged database file named so)."""
    from store.session import damaged_database_advice

    lines = [line.strip() for line in stderr.splitlines()]
    for line in reversed(lines):
        if not line or line.startswith(("File ", "Traceback", "^", "~")):
            continue
        if "Warning" in line.split(":", 1)[0] or "warnings.warn" in line:
            continue
        advice = damaged_database_advice(line, database)
        return f"{line[:500]}{'; ' + advice if advice else ''}"
    return ""


def _marked_reason(stderr: str, marker: str) -> str | None:
    """Why the crawler process stopped (its ``crawler.run: <marker>: <reason>`` line)."""
    prefix = f"crawler.run: {marker}: "
    for line in reversed(stderr.splitlines()):
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
    return None


def _record_end(engine: Engine, job: CrawlJob, exc: BaseException) -> None:
    """Mark a run that ended on an exception (unless it was already): ``interrupted`` on
    Ctrl-C or SIGTERM, else ``failed``, with the error; say how to resume it."""
    from crawler.storage import update_run
    from store.models import CrawlRun
    from store.session import session_scope

    run_id = job.run_id
    interrupted = isinstance(exc, KeyboardInterrupt)
    with contextlib.suppress(Exception):
        with session_scope(engine) as s:
            row = s.get(CrawlRun, run_id)
            if row is None or row.status != "running":
                return  # recorded where it happened (_phase_failed)
        update_run(
            engine,
            run_id,
            status="interrupted" if interrupted else "failed",
            finished_at=dt.datetime.now(dt.UTC),
            error=(str(exc) or "interrupted by the user")
            if interrupted
            else f"{type(exc).__name__}: {exc}",
            stats={"scrapy": job.scrapy_stats},
        )
    if interrupted:
        log.warning("crawl run %d interrupted; resume it with:\n  %s", run_id, job.resume)
