"""A crawl's job: the options it was asked for, the universities it crawls, its job
directory (``state.json``: the run it belongs to and the phases done, so that a crawl
started again resumes), opening or resuming its :class:`~store.models.CrawlRun`, and the
job file each phase's crawler process reads.

No secret is written: the job file holds the database URL with its password masked;
the crawler processes get the real URL in their environment (:data:`DB_URL_ENV`, see
:func:`child_environment`). The job folder is the owner's only (0700, files 0600).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

from core.exceptions import ConfigError
from core.settings import Settings

STATE_FILE = "state.json"
FRONTIER_FILE = "frontier.sqlite"
#: the environment variable that carries the real database URL to a crawler process
DB_URL_ENV = "WEBOMETRICS_DB_URL"


def child_environment(db_url: str) -> dict[str, str]:
    """The environment of a crawler process: this one's, with the database URL (password
    included) in :data:`DB_URL_ENV`; the job file holds it masked."""
    return {**os.environ, DB_URL_ENV: db_url, "PYTHONUNBUFFERED": "1"}


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


@dataclass
class CrawlOptions:
    """What one crawl is asked to do (the command line's options)."""

    universities_file: str | None = None
    direction: str = "both"
    proxy: str | None = None
    backlinks: Sequence[str] = ()
    urls: Sequence[str] = ()
    testbed_dir: str | None = None
    jobdir: str | None = None
    progress: bool = True
    pipeline_run_id: int | None = None
    redis: str | None = None
    processes: int = 1
    extra_settings: dict[str, Any] = field(default_factory=dict)


def _universities(engine: Engine, names: Sequence[str] | None) -> list[dict[str, Any]]:
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


def _absolute_url(engine: Engine) -> str:
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


def _write_state(jobdir: Path, state: dict[str, Any]) -> None:
    write_private(jobdir / STATE_FILE, json.dumps(state, indent=1))


def _open_run(
    engine: Engine, settings: Settings, opts: CrawlOptions, jobdir: Path, uni_ids: list[int]
) -> tuple[int, dict[str, Any], bool]:
    """(run id, job state, resumed?)."""
    from store.models import CrawlRun
    from store.session import session_scope

    make_private(jobdir)
    state = _read_state(jobdir)
    if state.get("run_id"):
        with session_scope(engine) as s:
            run = s.get(CrawlRun, state["run_id"])
            if run is not None and run.status != "finished" and run.kind == opts.direction:
                run.status = "running"
                run.finished_at = None
                run.error = None
                return run.id, state, True
    for name in (FRONTIER_FILE, FRONTIER_FILE + "-wal", FRONTIER_FILE + "-shm"):
        with contextlib.suppress(FileNotFoundError):
            (jobdir / name).unlink()
    run_id = _create_run(engine, settings, opts, uni_ids)
    state = {"run_id": run_id, "direction": opts.direction, "phases_done": []}
    _write_state(jobdir, state)
    return run_id, state, False


def _create_run(engine: Engine, settings: Settings, opts: CrawlOptions, uni_ids: list[int]) -> int:
    """A new ``running`` crawl run with the options it was asked for; its id."""
    from store.models import CrawlRun
    from store.session import session_scope

    recorded = {
        "crawl": settings.crawl.model_dump(),
        "direction": opts.direction,
        "universities": uni_ids,
        "proxy": opts.proxy or settings.crawl.proxy,
        "backlinks": list(opts.backlinks),
        "urls": list(opts.urls),
        "testbed": opts.testbed_dir,
    }
    with session_scope(engine) as s:
        run = CrawlRun(
            kind=opts.direction,
            status="running",
            settings=recorded,
            stats={},
            pipeline_run_id=opts.pipeline_run_id,
        )
        s.add(run)
        s.flush()
        return run.id


def resume_command(settings: Settings, opts: CrawlOptions, jobdir: Path, db_url: str) -> str:
    """The command line that resumes this crawl from its job folder (shell-quoted).

    The database URL is given when it holds no password (an SQLite file, a PostgreSQL URL
    without one); otherwise the resumed crawl takes it where this one did (environment,
    settings file). Paths are absolute; the budgets are this crawl's.

    >>> from core.settings import Settings
    >>> resume_command(Settings(), CrawlOptions(direction="outgoing"), Path("/j/crawl-3"),
    ...                "postgresql+psycopg://u:secret@h/db")
    'webometrics crawl --jobdir /j/crawl-3 --direction outgoing --depth 3 --max-pages 2000'
    """
    import shlex

    from sqlalchemy import make_url

    args = ["webometrics"]
    if make_url(db_url).password is None:
        args += ["--db-url", db_url]
    args += ["crawl", "--jobdir", str(jobdir), "--direction", opts.direction]
    if opts.universities_file:
        args += ["--universities", str(Path(opts.universities_file).resolve())]
    if opts.proxy:
        args += ["--proxy", opts.proxy]
    for path in opts.backlinks:
        args += ["--backlinks", str(Path(path).resolve())]
    for path in opts.urls:
        args += ["--urls", str(Path(path).resolve())]
    if opts.testbed_dir:
        args += ["--testbed", str(Path(opts.testbed_dir).resolve())]
    crawl = settings.crawl
    args += ["--depth", str(crawl.depth), "--max-pages", str(crawl.max_pages_per_university)]
    if crawl.warc_dir:
        args += ["--warc-dir", str(Path(crawl.warc_dir).resolve())]
    if opts.redis:
        args += ["--redis", opts.redis]
    if opts.processes > 1:
        args += ["--processes", str(opts.processes)]
    return shlex.join(args)


def _phase_job(
    settings: Settings,
    opts: CrawlOptions,
    jobdir: Path,
    run_id: int,
    phase: str,
    universities: list[dict[str, Any]],
    db_url: str,
    candidates: list[Any] | None = None,
) -> Path:
    """Write the job file of one phase (``<phase>.json``, the database URL masked: the
    crawler process takes the real one from :func:`child_environment`)."""
    from store.session import redact

    job: dict[str, Any] = {
        "direction": phase,
        "run_id": run_id,
        "db_url": redact(db_url),
        "crawl": settings.crawl.model_dump(),
        "extract": {
            "extract": settings.extract.model_dump(mode="json"),
            "shingle": settings.shingle.model_dump(mode="json"),
            "workers": settings.crawl.extract_workers,
        },
        "proxy": opts.proxy or settings.crawl.proxy,
        "universities": universities,
        "frontier": str(jobdir / FRONTIER_FILE),
        "log_file": str(jobdir / f"{phase}.log"),
    }
    if opts.redis:
        from crawler.redis_frontier import run_prefix

        job["redis"] = {
            "url": opts.redis,
            "prefix": run_prefix(settings.crawl.redis_key, run_id),
            "lease": settings.crawl.worker_lease,
        }
    if candidates is not None:
        job["candidates"] = [
            {"url": c.url, "uni": c.university_id, "source": c.source} for c in candidates
        ]
    make_private(jobdir)
    for name in (FRONTIER_FILE, f"{phase}.log"):  # made by the crawler process: 0600 too
        os.close(os.open(jobdir / name, os.O_CREAT | os.O_WRONLY, 0o600))
    path = jobdir / f"{phase}.json"
    write_private(path, json.dumps(job))
    return path
