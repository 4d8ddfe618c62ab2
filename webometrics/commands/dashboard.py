"""``webometrics dashboard``: the Streamlit dashboard for analysts, on 127.0.0.1.

The command checks the database (reachable, schema at head) before it starts
``streamlit run dashboard/app.py`` headless, without usage statistics, then prints the
address once the server answers its health check and waits until it is stopped (Ctrl-C
or SIGTERM). The database URL and the settings file reach the app through
``WEBOMETRICS_DB_URL`` and ``WEBOMETRICS_CONFIG`` in the child's environment.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from dashboard import PAGE_TITLES

if TYPE_CHECKING:
    from webometrics.cli import Context

ORDER = 80


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "dashboard",
        help="start the Streamlit dashboard (127.0.0.1:8501 by default)",
        description=(
            f"Start the analysts' dashboard ({', '.join(PAGE_TITLES)}) on the stored data. "
            "It reads through a read-only connection; only the category override writes. "
            "Stop it with Ctrl-C."
        ),
    )
    p.add_argument("--host", help="address to listen on (default [dashboard] host, 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default [dashboard] port, 8501)")
    p.add_argument(
        "--db-url",
        metavar="URL",
        default=argparse.SUPPRESS,
        help="database URL (same as the global --db-url)",
    )
    p.set_defaults(func=_dashboard)


#: the options of ``streamlit run``: headless, no usage statistics, no file watcher
STREAMLIT_OPTIONS = (
    "--server.headless",
    "true",
    "--browser.gatherUsageStats",
    "false",
    "--server.fileWatcherType",
    "none",
    "--server.runOnSave",
    "false",
    "--global.developmentMode",
    "false",
    "--client.toolbarMode",
    "viewer",
    "--logger.level",
    "warning",
)
#: seconds to wait for the server's health check
START_SECONDS = 60


def _dashboard(ctx: Context) -> int:
    import signal
    import subprocess

    from core.exceptions import ParameterError
    from store import redact

    settings = ctx.settings
    if getattr(ctx.args, "db_url", None):
        settings = settings.replace(database={"url": ctx.args.db_url})
        ctx.settings = settings
    host = ctx.args.host or settings.dashboard.host
    port = ctx.args.port if ctx.args.port is not None else settings.dashboard.port
    if not 1 <= port <= 65535:
        raise ParameterError(f"--port {port} is not a port number: give 1..65535")
    # fail here, with the CLI's message and exit code, rather than inside the app
    ctx.engine(read_only=True)
    _check_free(host, port)
    child = _start_streamlit(host, port, settings.database.url, ctx.args.config)
    shown = f"[{host}]" if ":" in host else host
    address = f"http://{shown}:{port}/"

    def _stop(*_args: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        _wait_healthy(child, address)
        print(
            f"dashboard running at {address} (database {redact(settings.database.url)}); "
            "stop it with Ctrl-C",
            flush=True,
        )
        return child.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def _check_free(host: str, port: int) -> None:
    """Refuse an address something else listens on, before starting the server."""
    import socket

    from core.exceptions import ParameterError

    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ParameterError(
                f"cannot listen on {host}:{port} ({exc.strerror}): give another --port, or "
                "stop what is using it"
            ) from exc


def _start_streamlit(host: str, port: int, db_url: str, config: str | None) -> Any:
    """``streamlit run dashboard/app.py`` with the database and settings file in its
    environment."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import dashboard
    from core import defaults as D

    app = Path(dashboard.__file__).resolve().parent / "app.py"
    env = dict(os.environ)
    env[D.DB_URL_ENV] = db_url
    if config:
        env[D.CONFIG_ENV] = str(Path(config).resolve())
    env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] = "false"
    cmd = [sys.executable, "-m", "streamlit", "run", str(app)]
    cmd += ["--server.address", host, "--server.port", str(port), *STREAMLIT_OPTIONS]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)


def _wait_healthy(child: Any, address: str) -> None:
    """Wait until the server answers its health check.

    Raises
    ------
    StageError
        The server exited, or did not answer within :data:`START_SECONDS`.
    """
    import time
    import urllib.error
    import urllib.request

    from core.exceptions import StageError

    deadline = time.monotonic() + START_SECONDS
    while True:
        if child.poll() is not None:
            raise StageError(
                f"streamlit exited with code {child.returncode} before serving the "
                "dashboard; run with -v and read its messages above"
            )
        try:
            with urllib.request.urlopen(f"{address}_stcore/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise StageError(f"the dashboard did not answer at {address} within {START_SECONDS} s")
        time.sleep(0.2)
