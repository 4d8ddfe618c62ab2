"""A crawl's job: what it was asked to crawl (:class:`CrawlScope`), the universities it
crawls, its job directory (``state.json``: the run it belongs to and the phases done, so
that a crawl started again resumes), opening or resuming its
:class:`~store.models.CrawlRun` (:func:`open_job`, giving the :class:`CrawlJob`), and the
job file each phase's crawler process reads.

No secret is written: the job file and the run's row hold the database, proxy and
Redis URLs with their passwords masked (:func:`core.secrets.redact_url`); the crawler
processes get the real URLs in their environment (:data:`DB_URL_ENV`, :data:`PROXY_ENV`,
:data:`REDIS_ENV`, see :func:`child_environment`), and the resume command names those
variables instead of a password. The job folder is the owner's only (0700, files 0600).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

from core.exceptions import ConfigError
from core.secrets import redact_url
from core.settings import CrawlSettings, Settings
from webometrics.layout import default_crawl_folder

log = logging.getLogger(__name__)

STATE_FILE = "state.json"
FRONTIER_FILE = "frontier.sqlite"
#: the environment variable that carries the real database URL to a crawler process
DB_URL_ENV = "WEBOMETRICS_DB_URL"
#: ... the real proxy and Redis URLs (the settings' own variables, ``[crawl] proxy`` and
#: ``redis_url``, so that a pasted resume command finds them too)
PROXY_ENV = "WEBOMETRICS_CRAWL__PROXY"
REDIS_ENV = "WEBOMETRICS_CRAWL__REDIS_URL"


def child_environment(db_url: str | None, crawl: CrawlSettings | None = None) -> dict[str, str]:
    """The environment of a crawler process: this one's, with the database URL (password
    included) in :data:`DB_URL_ENV` and the crawl's proxy and Redis URLs in
    :data:`PROXY_ENV` and :data:`REDIS_ENV` (unset when the crawl has none); the job file
    holds them masked."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if db_url:
        env[DB_URL_ENV] = db_url
    if crawl is not None:
        for name, value in ((PROXY_ENV, crawl.proxy), (REDIS_ENV, crawl.redis_url)):
            if value:
                env[name] = value
            else:
                env.pop(name, None)
    return env


def public_crawl_settings(crawl: CrawlSettings) -> dict[str, Any]:
    """``[crawl]`` as written to a job file or a run row: the proxy and Redis URLs with
    their passwords masked."""
    out = crawl.model_dump()
    for key in ("proxy", "redis_url"):
        if out.get(key):
            out[key] = redact_url(out[key])
    return out


def private_opener(path: str, flags: int) -> int:
    """``open(..., opener=private_opener)``: a new file is created readable by its owner
    only (0600)."""
    return os.open(path, flags, 0o600)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (0600) through a temporary file and a rename."""
    tmp = path.with_name(path.name + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    with open(tmp, "w", encoding="utf-8", opener=private_opener) as fh:
        fh.write(text)
    os.replace(tmp, path)


def make_private(jobdir: Path) -> None:
    """The job folder and everything in it readable by the owner only (folders 0700,
    files 0600), also when it was made by an older version or under another umask."""
    jobdir.mkdir(parents=True, exist_ok=True)
    jobdir.chmod(0o700)
    for root, dirs, files in os.walk(jobdir):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o700)
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(os.path.join(root, name), 0o600)


@dataclass(frozen=True)
class CrawlScope:
    """What one crawl works on (the settings say how: ``[crawl]`` proxy, jobdir,
    redis_url and processes included).

    Attributes
    ----------
    universities_file : str, optional
        A universities TOML file: imported, and only its universities are crawled (else
        every stored university).
    direction : {"outgoing", "citing", "both"}
    backlinks, urls : tuple of str
        Backlink exports (Majestic / Ahrefs CSV) and URL lists of citing pages.
    testbed_dir : str, optional
        A built test web: its per-university citing files are used as backlink exports.
    pipeline_run_id : int, optional
        The whole-pipeline run this crawl belongs to.
    """

    universities_file: str | None = None
    direction: str = "both"
    backlinks: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    testbed_dir: str | None = None
    pipeline_run_id: int | None = None


@dataclass
class CrawlJob:
    """A crawl under way: its scope and universities, its run and job folder, and what
    its phases gathered (Scrapy statistics, citing candidates)."""

    scope: CrawlScope
    universities: list[dict[str, Any]]
    path: Path
    run_id: int
    state: dict[str, Any]
    resumed: bool
    #: the run's own folder (not one given by ``--jobdir``): removed once it is finished
    own_folder: bool
    #: the database URL for the crawler processes (password included, never in a file)
    db_url: str
    #: the command line that resumes the run
    resume: str
    scrapy_stats: dict[str, Any] = field(default_factory=dict)
    candidates: list[Any] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)


def crawled_universities(engine: Engine, names: Sequence[str] | None) -> list[dict[str, Any]]:
    """The universities to crawl (those named, else every stored one) with their domains
    and start URLs.

    Raises
    ------
    ConfigError
        There is none.
    """
    from store.models import University
    from store.session import session_scope

    with session_scope(engine) as s:
        query = select(University).order_by(University.id)
        if names is not None:
            query = query.where(University.name.in_(list(names)))
        rows = [
            {
                "id": u.id,
                "name": u.name,
                "domains": sorted(d.domain for d in u.domains),
                "start_urls": list(u.home_urls or [])
                or [f"https://{d.domain}/" for d in sorted(u.domains, key=lambda d: d.domain)],
            }
            for u in s.scalars(query)
        ]
    if not rows:
        raise ConfigError(
            "no universities to crawl: import some with `webometrics universities import "
            "FILE` or give --universities FILE"
        )
    return rows


def absolute_url(engine: Engine) -> str:
    """The engine's URL for the crawl process (a relative SQLite path made absolute)."""
    url = engine.url
    db = url.database
    if (
        url.get_backend_name() == "sqlite"
        and db
        and db != ":memory:"
        and not db.startswith("file:")
    ):
        url = url.set(database=str(Path(db).resolve()))
    return url.render_as_string(hide_password=False)


def _read_state(jobdir: Path) -> dict[str, Any]:
    path = jobdir / STATE_FILE
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return {}


def write_state(jobdir: Path, state: dict[str, Any]) -> None:
    """Write the job state (``state.json``: the run and the phases done)."""
    write_private(jobdir / STATE_FILE, json.dumps(state, indent=1))


def open_job(
    engine: Engine, settings: Settings, scope: CrawlScope, universities: list[dict[str, Any]]
) -> CrawlJob:
    """Open the crawl's run and job folder: the unfinished run of ``[crawl] jobdir`` is
    resumed, else a new run is made (in its own folder when no jobdir is set). The run
    records its folder and the command that resumes it."""
    db_url = absolute_url(engine)
    uni_ids = [u["id"] for u in universities]
    path, run_id, state, resumed = _job_folder(engine, settings, scope, uni_ids)
    base = default_crawl_folder(engine)
    # the run's own folder, also when resumed with --jobdir: removed once it is finished
    own_folder = settings.crawl.jobdir is None or (
        base is not None and path == Path(base).resolve() / f"crawl-{run_id}"
    )
    resume = resume_command(settings, scope, path, db_url)
    scrapy_stats = _record_resume(engine, run_id, path, resume)
    if resumed:
        log.info("resuming crawl run %d from %s", run_id, path)
    return CrawlJob(
        scope=scope,
        universities=universities,
        path=path,
        run_id=run_id,
        state=state,
        resumed=resumed,
        own_folder=own_folder,
        db_url=db_url,
        resume=resume,
        scrapy_stats=scrapy_stats,
    )


def _job_folder(
    engine: Engine, settings: Settings, scope: CrawlScope, uni_ids: list[int]
) -> tuple[Path, int, dict[str, Any], bool]:
    """(job folder, run id, job state, resumed?): ``[crawl] jobdir`` when set (a crawl
    started again with it resumes its run), else a new run's own folder
    ``crawl-<run id>`` under :func:`~webometrics.layout.default_crawl_folder`,
    kept until the run is finished."""
    if settings.crawl.jobdir is not None:
        job_path = Path(settings.crawl.jobdir).resolve()
        run_id, state, resumed = _open_run(engine, settings, scope, job_path, uni_ids)
        return job_path, run_id, state, resumed
    run_id = _create_run(engine, settings, scope, uni_ids)
    base = default_crawl_folder(engine)
    if base is None:  # an in-memory database: nothing could resume it anyway
        job_path = Path(tempfile.mkdtemp(prefix=f"crawl-{run_id}-"))
    else:
        job_path = Path(base).resolve() / f"crawl-{run_id}"
        Path(base).mkdir(parents=True, exist_ok=True)
    make_private(job_path)
    state = {"run_id": run_id, "direction": scope.direction, "phases_done": []}
    write_state(job_path, state)
    return job_path, run_id, state, False


def _open_run(
    engine: Engine, settings: Settings, scope: CrawlScope, jobdir: Path, uni_ids: list[int]
) -> tuple[int, dict[str, Any], bool]:
    """(run id, job state, resumed?)."""
    from store.models import CrawlRun
    from store.session import session_scope

    make_private(jobdir)
    state = _read_state(jobdir)
    if state.get("run_id"):
        with session_scope(engine) as s:
            run = s.get(CrawlRun, state["run_id"])
            same_collection = run is not None and (
                run.archive,
                run.archive_from and run.archive_from.isoformat(),
                run.archive_to and run.archive_to.isoformat(),
            ) == (settings.crawl.archive, settings.crawl.archive_from, settings.crawl.archive_to)
            if (
                run is not None
                and run.status != "finished"
                and run.kind == scope.direction
                and same_collection
            ):
                run.status = "running"
                run.finished_at = None
                run.error = None
                return run.id, state, True
    for name in (FRONTIER_FILE, FRONTIER_FILE + "-wal", FRONTIER_FILE + "-shm"):
        with contextlib.suppress(FileNotFoundError):
            (jobdir / name).unlink()
    run_id = _create_run(engine, settings, scope, uni_ids)
    state = {"run_id": run_id, "direction": scope.direction, "phases_done": []}
    write_state(jobdir, state)
    return run_id, state, False


def _create_run(engine: Engine, settings: Settings, scope: CrawlScope, uni_ids: list[int]) -> int:
    """A new ``running`` crawl run with what it was asked for; its id."""
    from store.models import CrawlRun
    from store.session import session_scope

    public = public_crawl_settings(settings.crawl)
    recorded = {
        "crawl": public,
        "direction": scope.direction,
        "universities": uni_ids,
        "proxy": public["proxy"],
        "backlinks": list(scope.backlinks),
        "urls": list(scope.urls),
        "testbed": scope.testbed_dir,
    }
    with session_scope(engine) as s:
        period = settings.crawl.archive_period()  # the collection (docs/archives.md)
        run = CrawlRun(
            kind=scope.direction,
            status="running",
            settings=recorded,
            stats={},
            pipeline_run_id=scope.pipeline_run_id,
            archive=period.archive if period else None,
            archive_from=period.start if period else None,
            archive_to=period.end if period else None,
        )
        s.add(run)
        s.flush()
        return run.id


def _record_resume(engine: Engine, run_id: int, job_path: Path, resume: str) -> dict[str, Any]:
    """Keep the job folder and the command that resumes the run with its settings; return
    the Scrapy statistics of the phases it already ran (``stats["scrapy"]``)."""
    from store.models import CrawlRun
    from store.session import session_scope
    from webometrics.liveness import process_record

    with session_scope(engine) as s:
        row = s.get(CrawlRun, run_id)
        if row is None:
            return {}
        row.settings = {
            **(row.settings or {}),
            "jobdir": str(job_path),
            "resume": resume,
            "process": process_record(),  # who runs it (webometrics.liveness.live_crawl)
        }
        return dict(row.stats.get("scrapy", {})) if isinstance(row.stats, dict) else {}


def resume_command(settings: Settings, scope: CrawlScope, jobdir: Path, db_url: str) -> str:
    """The command line that resumes this crawl from its job folder, to paste into a shell.

    Paths are absolute; the budgets are this crawl's. A URL with a password (database,
    proxy, Redis) is not written: its word names the environment variable that holds it
    (:func:`core.secrets.shell_word`), which the shell refuses to expand when unset.

    >>> from core.settings import Settings
    >>> resume_command(Settings(), CrawlScope(direction="outgoing"), Path("/j/crawl-3"),
    ...                "postgresql+psycopg://u:secret@h/db")  # doctest: +NORMALIZE_WHITESPACE
    'webometrics --db-url "${WEBOMETRICS_DB_URL:?set it to the database URL with its
    password}" crawl --jobdir /j/crawl-3 --direction outgoing --depth 3 --max-pages 2000'
    """
    import shlex

    from core.secrets import shell_word

    words = ["webometrics", "--db-url", shell_word(db_url, DB_URL_ENV, "the database URL")]
    args = ["crawl", "--jobdir", str(jobdir), "--direction", scope.direction]
    if scope.universities_file:
        args += ["--universities", str(Path(scope.universities_file).resolve())]
    for path in scope.backlinks:
        args += ["--backlinks", str(Path(path).resolve())]
    for path in scope.urls:
        args += ["--urls", str(Path(path).resolve())]
    if scope.testbed_dir:
        args += ["--testbed", str(Path(scope.testbed_dir).resolve())]
    crawl = settings.crawl
    args += ["--depth", str(crawl.depth), "--max-pages", str(crawl.max_pages_per_university)]
    if crawl.warc_dir:
        args += ["--warc-dir", str(Path(crawl.warc_dir).resolve())]
    if crawl.processes > 1:
        args += ["--processes", str(crawl.processes)]
    words += [shlex.quote(arg) for arg in args]
    if crawl.proxy:
        words += ["--proxy", shell_word(crawl.proxy, PROXY_ENV, "the proxy URL")]
    if crawl.redis_url:
        words += ["--redis", shell_word(crawl.redis_url, REDIS_ENV, "the Redis URL")]
    return " ".join(words)


def phase_job(
    settings: Settings,
    job: CrawlJob,
    phase: str,
    candidates: list[Any] | None = None,
    site_rules: dict[str, list[Any]] | None = None,
) -> Path:
    """Write the job file of one phase (``<phase>.json``, the database URL masked: the
    crawler process takes the real one from :func:`child_environment`); ``site_rules``
    are the analysts' web-entity rules (:meth:`core.entities.SiteRules.analyst_spec`)
    the spiders budget external sites by."""
    from store.session import redact

    jobdir = job.path
    public = public_crawl_settings(settings.crawl)
    spec: dict[str, Any] = {
        "direction": phase,
        "run_id": job.run_id,
        "db_url": redact(job.db_url),
        "crawl": public,
        "extract": {
            "extract": settings.extract.model_dump(mode="json"),
            "shingle": settings.shingle.model_dump(mode="json"),
            "workers": settings.crawl.extract_workers,
        },
        "proxy": public["proxy"],
        "universities": job.universities,
        "site_rules": site_rules or {},
        "frontier": str(jobdir / FRONTIER_FILE),
        "log_file": str(jobdir / f"{phase}.log"),
    }
    if settings.crawl.redis_url:
        from crawler.redis_frontier import run_prefix

        spec["redis"] = {
            "url": public["redis_url"],
            "prefix": run_prefix(settings.crawl.redis_key, job.run_id),
            "lease": settings.crawl.worker_lease,
        }
    if candidates is not None:
        spec["candidates"] = [
            {"url": c.url, "uni": c.university_id, "source": c.source} for c in candidates
        ]
    make_private(jobdir)
    for name in (FRONTIER_FILE, f"{phase}.log"):  # made by the crawler process: 0600 too
        os.close(os.open(jobdir / name, os.O_CREAT | os.O_WRONLY, 0o600))
    path = jobdir / f"{phase}.json"
    write_private(path, json.dumps(spec))
    return path
