"""Shared fixtures: the shared data folder, real SQLite and PostgreSQL databases.

PostgreSQL: a private server started for the session with ``initdb`` and ``pg_ctl`` (as
the ``postgres`` user when running as root) in a temporary folder, listening on
127.0.0.1 on a free port, stopped afterwards. ``make test`` installs the server from
Debian's packages when it is missing; these tests never skip.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import tiers

# the stored worlds (databases filled with known rows) of the store, analyse, report and
# dashboard tests, and the pipeline-made world (the real stages on the local test web)
pytest_plugins = ["tests.stored_world", "tests.pipeline_world", "tests.cli"]

REPO = Path(__file__).resolve().parent.parent


#: the tiers of the suite: what a test needs, marked on collection from the fixtures it uses
#: (a new test gets its marks without writing them), plus ``slow`` for the tests built on
#: the pipeline-made world or marked by hand. ``make test-fast`` runs what has none of them.
TIER_MARKS = {
    "requires_postgres": "starts a PostgreSQL server (initdb + pg_ctl on loopback)",
    "requires_redis": "starts a Redis server on loopback",
    "requires_browser": "drives a headless Chromium",
    "slow": "runs a whole stage, builds the pipeline-made world or takes a second or more"
    " (tests/tiers.py)",
}
_POSTGRES_FIXTURES = frozenset({"postgres_server", "postgres_url"})
_SLOW_FIXTURES = frozenset({"pipeline_db", "pipeline_db_copy", "pipeline_page"})


def _tier_marks(item: pytest.Item) -> set[str]:
    """The tier marks ``item`` needs, read from its fixtures and its parameters (a
    ``db_url`` or world parametrised as ``postgresql`` / ``pipeline``)."""
    names = set(getattr(item, "fixturenames", ()))
    params = getattr(getattr(item, "callspec", None), "params", {})
    values = {v for v in params.values() if isinstance(v, str)}
    marks = set()
    if names & _POSTGRES_FIXTURES or "postgresql" in values:
        marks.add("requires_postgres")
    if "redis_server" in names:
        marks.add("requires_redis")
    if names & _SLOW_FIXTURES or "pipeline" in values or tiers.uses_a_slow_fixture(item):
        marks.add("slow")
    return marks


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with the tiers its fixtures need (see :data:`TIER_MARKS`), and
    ``slow`` on what took a second or more when last measured (:mod:`tests.tiers`)."""
    durations = tiers.measured_durations()
    for item in items:
        names = _tier_marks(item)
        if tiers.measured_slow(item, durations):
            names.add("slow")
        for name in names:
            item.add_marker(getattr(pytest.mark, name))


def pytest_addoption(parser: pytest.Parser) -> None:
    tiers.add_option(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C works in the commands the tests start: a suite launched in the background
    (``make test &``, nohup) inherits SIGINT ignored, and every child process with it, so
    the tests that interrupt a crawl, an extraction or a server with SIGINT would wait in
    vain. Python's own handler again, which children reset to the default at exec."""
    for name, what in TIER_MARKS.items():
        config.addinivalue_line("markers", f"{name}: {what}")
    tiers.configure(config)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _keep_the_main_module() -> Iterator[None]:
    """Put ``sys.modules["__main__"]`` back after each test. Streamlit's AppTest runs a
    page as ``__main__`` and leaves it there; a process pool started later with the spawn
    method then re-runs that page in every worker (which fails without its database), so
    an extract or crawl test after a dashboard test would see its workers die."""
    import sys

    main = sys.modules.get("__main__")
    yield
    if main is not None and sys.modules.get("__main__") is not main:
        sys.modules["__main__"] = main


def find_shared_data() -> Path:
    """``$WEBOMETRICS_DATA`` or ``../shared/data`` beside the checkout; fail if missing."""
    env = os.environ.get("WEBOMETRICS_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    if not path.is_dir():
        pytest.fail(
            f"shared data folder not found at {path}: set WEBOMETRICS_DATA or put "
            "shared/data beside the checkout",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return find_shared_data()


@pytest.fixture(scope="session")
def testbed_dir(shared_data: Path) -> Path:
    """The local test web with default options, built once per machine (cached by its
    code and options: :func:`testbed.build.shared_build`)."""
    from testbed.build import shared_build

    return shared_build(data_dir=shared_data)


@pytest.fixture(scope="session")
def testbed_manifest(testbed_dir: Path) -> Any:
    """The test web's ground truth (:class:`testbed.manifest.Manifest`)."""
    from testbed.manifest import load_manifest

    return load_manifest(testbed_dir)


@pytest.fixture(scope="session")
def testbed_server(testbed_dir: Path) -> Iterator[Any]:
    """The local test web served on 127.0.0.1 for the session: one server per session
    (per xdist worker); a crawler reaches it as its HTTP proxy (``proxy_url``), in this
    process or another. A test that reads its fetch log clears it first."""
    from testbed.server import TestbedServer

    with TestbedServer(testbed_dir) as server:
        yield server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_bin() -> Path:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    if not found:
        pytest.fail(
            "PostgreSQL server binaries not found: run `make test` (it installs "
            "them with apt-get install -y postgresql)",
            pytrace=False,
        )
    return Path(found[-1]).parent


def memory_folder(min_free: int = 4 << 30) -> str | None:
    """``/dev/shm`` when it is a writable folder with ``min_free`` bytes free, else ``None``
    (the system's temporary folder).

    A session's PostgreSQL data folder grows by one copy of ``template1`` (7.5 MB, ~300
    files) per test database: 200 of them are 2.2 GB, which took 22 s to create and
    185 s to delete on this machine's disk, and a fraction of that in memory.
    """
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
    except OSError:
        return None
    if not os.access(shm, os.W_OK) or st.f_bavail * st.f_frsize < min_free:
        return None
    return shm


class PostgresServer:
    """A throw-away PostgreSQL server on 127.0.0.1, its data in memory where it can be
    (:func:`memory_folder`)."""

    def __init__(self) -> None:
        self.bin = _pg_bin()
        self.root = Path(tempfile.mkdtemp(prefix="webometrics-pg-", dir=memory_folder()))
        self.root.chmod(0o755)
        self.data = self.root / "data"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        self.user = "postgres" if self.as_root else os.environ.get("USER", "postgres")

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=self.root)

    def start(self) -> None:
        if self.as_root:
            shutil.chown(self.root, "postgres")
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            self.user,
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        )
        opts = f"-h 127.0.0.1 -p {self.port} -k {self.root} -F -c fsync=off"
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            opts,
            "-l",
            str(self.root / "log"),
            "-w",
            "-t",
            "60",
            "start",
        )

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user={self.user} dbname=postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server = PostgresServer()
    try:
        server.start()
    except subprocess.CalledProcessError as exc:
        server.stop()
        pytest.fail(f"could not start PostgreSQL: {exc.stderr}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """URL of a fresh, empty PostgreSQL database."""
    return postgres_server.create_database()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """URL of a fresh, empty SQLite file."""
    return f"sqlite:///{tmp_path / 'test.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh empty database URL, once for SQLite and once for PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'test.db'}"
    return request.getfixturevalue("postgres_server").create_database()


@pytest.fixture
def migrated_url(db_url: str) -> str:
    """``db_url`` with the schema upgraded to head."""
    from store import make_engine, schema

    engine = make_engine(db_url)
    schema.upgrade(engine)
    engine.dispose()
    return db_url


class RedisServer:
    """A throw-away redis-server on 127.0.0.1 (no persistence)."""

    def __init__(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.fail(
                "redis-server not found: run `make test` (it installs it with "
                "apt-get install -y redis-server)",
                pytrace=False,
            )
        self.exe = exe
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="webometrics-redis-"))
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import time

        self.proc = subprocess.Popen(
            [
                self.exe,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.root),
                "--protected-mode",
                "yes",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5),
            ):
                return
            time.sleep(0.05)
        self.stop()
        pytest.fail("redis-server did not start", pytrace=False)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
            self.proc = None
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    yield server
    server.stop()
