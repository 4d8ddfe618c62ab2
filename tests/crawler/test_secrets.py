"""No secret on disk: a crawl, a pipeline run and a report against a PostgreSQL database
whose URL carries a password leave that password in no file (job folder, logs, report),
in no console output and in no stored run row; the job folder is the owner's only.

The session's PostgreSQL server trusts every connection, so this module starts its own
that asks TCP clients for a password (scram-sha-256) and connects as a role with one.
"""

from __future__ import annotations

import json
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tests.cli import FAST_CRAWL, run_webometrics
from tests.conftest import PostgresServer

from .conftest import html, migrated_engine, write_universities

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "Zx9-secret-Pw-4711"
A = "http://www.alpha-university.edu"


class PasswordPostgres(PostgresServer):
    """A throw-away server on 127.0.0.1 that asks TCP clients other than the superuser
    for a password."""

    def start(self) -> None:
        super().start()
        (self.data / "pg_hba.conf").write_text(
            "local all all trust\n"
            f"host all {self.user} 127.0.0.1/32 trust\n"
            "host all all 127.0.0.1/32 scram-sha-256\n",
            encoding="utf-8",
        )
        self._run("pg_ctl", "-D", str(self.data), "reload")

    def role_database(self, role: str, password: str) -> str:
        """A role with a password and a database it owns; the URL with the password."""
        import psycopg

        super_url = self.create_database()
        name = super_url.rsplit("/", 1)[1]
        dsn = f"host=127.0.0.1 port={self.port} user={self.user} dbname=postgres"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
            conn.execute(f'ALTER DATABASE "{name}" OWNER TO {role}')
        own = f"host=127.0.0.1 port={self.port} user={self.user} dbname={name}"
        with psycopg.connect(own, autocommit=True) as conn:
            conn.execute(f"ALTER SCHEMA public OWNER TO {role}")
        return f"postgresql+psycopg://{role}:{password}@127.0.0.1:{self.port}/{name}"


@pytest.fixture(scope="module")
def password_db() -> Iterator[str]:
    server = PasswordPostgres()
    try:
        server.start()
        yield server.role_database("crawler", PASSWORD)
    finally:
        server.stop()


def _alpha(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """Alpha University's two pages and one external page, and its universities file."""
    pages = {
        f"{A}/": html("Alpha", "/a.html", "http://ext.example.org/"),
        f"{A}/a.html": html("Alpha page a"),
        "http://ext.example.org/": html("External"),
    }
    unis = write_universities(
        tmp_path / "u.toml",
        {"name": "Alpha University", "domains": ["alpha-university.edu"], "home": [f"{A}/"]},
    )
    return pages, unis


def _cli(*args: str, cwd: Path, db: str) -> subprocess.CompletedProcess[str]:
    # the database on the command line (--db), where a password would show
    few_retries = {"WEBOMETRICS_CRAWL__RETRY_TIMES": "1", "WEBOMETRICS_CRAWL__FLUSH_SECONDS": "0.5"}
    return run_webometrics("--db", db, *args, cwd=cwd, env={**FAST_CRAWL, **few_retries})


@pytest.mark.slow
def test_password_is_nowhere_on_disk(password_db: str, tmp_path: Path, local_web) -> None:
    import psycopg

    wrong = password_db.replace(PASSWORD, "wrong").replace("postgresql+psycopg", "postgresql")
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(wrong).close()  # the server really checks the password
    migrated_engine(password_db).dispose()
    pages, unis = _alpha(tmp_path)
    outputs = []
    with local_web(pages) as web:
        for args in (
            ("crawl", "--universities", str(unis), "--direction", "outgoing", "--jobdir", "job"),
            ("crawl", "--universities", str(unis), "--direction", "outgoing", "--jobdir", "job"),
            ("run", "--universities", str(unis), "--stages", "crawl,extract", "--direction",
             "outgoing"),
        ):  # fmt: skip
            out = _cli(*args, "--proxy", web.proxy_url, cwd=tmp_path, db=password_db)
            assert out.returncode == 0, out.stderr
            outputs.append(out.stdout + out.stderr)
        assert f"{A}/a.html" in web.fetched()
    report = _cli("report", "--out", "report", cwd=tmp_path, db=password_db)
    outputs.append(report.stdout + report.stderr)
    job = tmp_path / "job"
    assert (job / "outgoing.json").is_file() and (job / "outgoing.log").is_file()
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".json" for p in written)
    for path in written:
        assert PASSWORD.encode() not in path.read_bytes(), path
    for out in outputs:
        assert PASSWORD not in out
    assert '"db_url": "postgresql+psycopg://crawler:***@127.0.0.1' in (
        (job / "outgoing.json").read_text(encoding="utf-8")
    )
    # the job folder is the owner's only
    for path in [job, *job.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
    # stored run parameters and errors
    engine = migrated_engine(password_db)
    with engine.connect() as conn:
        for table in ("crawl_run", "pipeline_run"):
            rows = conn.execute(text(f"SELECT CAST(t.* AS text) FROM {table} AS t")).scalars()
            rows = list(rows)
            assert rows, table
            assert not any(PASSWORD in row for row in rows), table
        runs = conn.execute(text("SELECT status FROM crawl_run ORDER BY id")).scalars().all()
    assert runs and set(runs) == {"finished"}
    engine.dispose()


PROXY_PASSWORD = "Px7-proxy-Pw-0815"
REDIS_PASSWORD = "Rd3-redis-Pw-2718"


@pytest.fixture
def password_redis() -> Iterator[str]:
    """A throw-away redis-server that asks for a password; its URL with the password."""
    import redis

    from tests.conftest import RedisServer

    server = RedisServer()
    server.start()
    try:
        redis.Redis(host="127.0.0.1", port=server.port).config_set("requirepass", REDIS_PASSWORD)
        yield f"redis://:{REDIS_PASSWORD}@127.0.0.1:{server.port}/0"
    finally:
        server.stop()


@pytest.mark.slow
def test_proxy_and_redis_passwords_are_nowhere_but_in_the_crawlers_environment(
    password_db: str, password_redis: str, tmp_path: Path, local_web
) -> None:
    import base64

    import redis

    with pytest.raises(redis.AuthenticationError):  # the server really asks for it
        redis.Redis.from_url(password_redis.replace(REDIS_PASSWORD, "wrong")).ping()
    migrated_engine(password_db).dispose()
    pages, unis = _alpha(tmp_path)
    with local_web(pages) as web:
        proxy = web.proxy_url.replace("http://", f"http://agent:{PROXY_PASSWORD}@")
        out = _cli(
            "crawl", "--universities", str(unis), "--direction", "outgoing", "--jobdir", "job",
            "--proxy", proxy, "--redis", password_redis, cwd=tmp_path, db=password_db,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-3000:]
        requests = web.requests
    # the crawler processes had the real secrets: the proxy got its credentials
    token = base64.b64encode(f"agent:{PROXY_PASSWORD}".encode()).decode()
    assert requests and all(r["proxy_authorization"] == f"Basic {token}" for r in requests)
    secrets = (PROXY_PASSWORD, REDIS_PASSWORD, PASSWORD)
    for secret in secrets:
        assert secret not in out.stdout + out.stderr
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert (tmp_path / "job" / "outgoing.json") in written
    for path in written:
        for secret in secrets:
            assert secret.encode() not in path.read_bytes(), path
    job = json.loads((tmp_path / "job" / "outgoing.json").read_text(encoding="utf-8"))
    assert job["proxy"] == proxy.replace(PROXY_PASSWORD, "***")
    assert job["redis"]["url"] == password_redis.replace(REDIS_PASSWORD, "***")
    engine = migrated_engine(password_db)
    with engine.connect() as conn:
        rows = list(conn.execute(text("SELECT CAST(t.* AS text) FROM crawl_run AS t")).scalars())
        settings = conn.execute(
            text("SELECT settings FROM crawl_run ORDER BY id DESC LIMIT 1")
        ).scalar_one()
    engine.dispose()
    assert rows and not any(secret in row for row in rows for secret in secrets)
    # the resume command names the variables that hold the secrets
    resume = settings["resume"]
    assert '--proxy "${WEBOMETRICS_CRAWL__PROXY:?' in resume
    assert '--redis "${WEBOMETRICS_CRAWL__REDIS_URL:?' in resume
    assert '--db-url "${WEBOMETRICS_DB_URL:?' in resume
