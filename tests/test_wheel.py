"""The program as a user installs it: a wheel in a clean virtual environment.

The wheel is built from the checkout's files (tracked and new, not ignored) and installed
without its dependencies into a new virtual environment; the dependencies come from the
test environment's site-packages through a path file (no network, and not the editable
install: a path line adds a folder to ``sys.path`` without running the ``.pth`` hooks in
it). Then the installed ``webometrics`` answers ``--help``, makes a database, serves the
local test web and crawls its outgoing environment as ``make demo`` does (the citing
crawl runs the same code again, and would double the time), from a folder far from the
checkout:
a module, data file or migration the wheel forgets, or a default that points into the
checkout, fails here.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _checkout_files(dest: Path) -> Path:
    """The checkout's files as ``git`` sees them (tracked and new, not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean virtual environment with the wheel installed; its ``bin`` folder."""
    root = tmp_path_factory.mktemp("wheel")
    src = _checkout_files(root / "src")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "-w", str(root / "dist"), str(src)],
        check=True, cwd=root,
    )  # fmt: skip
    (wheel,) = (root / "dist").glob("webometrics-*.whl")
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(root / "env")], check=True)
    env_python = root / "env" / "bin" / "python"
    purelib = subprocess.run(
        [env_python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--target", purelib, str(wheel)],
        check=True, cwd=root,
    )  # fmt: skip
    # pip --target writes the scripts to <target>/bin: the console script goes to env/bin
    script = root / "env" / "bin" / "webometrics"
    script.write_text(
        f"#!{env_python}\nimport sys\nfrom webometrics.cli import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    deps = Path(sysconfig.get_paths()["purelib"])
    (Path(purelib) / "test-dependencies.pth").write_text(f"{deps}\n")
    return root / "env" / "bin"


def _run(bin_dir: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    return subprocess.run(
        [str(bin_dir / "webometrics"), *args],
        cwd=cwd, env=clean | env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.mark.slow
def test_the_wheel_runs_help_upgrade_and_the_demo_crawl(
    installed: Path, tmp_path: Path, shared_data: Path
) -> None:
    from testbed.build import shared_build

    where = subprocess.run(
        [installed / "python", "-c", "import core, webometrics, testbed; print(core.__file__)"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert where.startswith(str(installed.parent)), where  # the wheel's, not the checkout's
    helped = _run(installed, "--help", cwd=tmp_path)
    assert helped.returncode == 0 and "crawl" in helped.stdout, helped.stderr
    db = f"sqlite:///{tmp_path / 'w.db'}"
    upgraded = _run(installed, "db", "upgrade", cwd=tmp_path, WEBOMETRICS_DB_URL=db)
    assert upgraded.returncode == 0, upgraded.stderr
    site = Path(where).parents[1]
    universities = site / "testbed" / "universities.toml"  # shipped with the wheel
    imported = _run(
        installed, "universities", "import", str(universities), cwd=tmp_path,
        WEBOMETRICS_DB_URL=db,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    web = shared_build(data_dir=shared_data)
    port = _free_port()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    server = subprocess.Popen(
        [installed / "webometrics", "testbed", "serve", "--dir", str(web), "--port", str(port)],
        cwd=tmp_path, env=clean, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        crawled = _run(
            installed, "crawl", "--universities", str(universities), "--direction", "outgoing",
            "--proxy", f"http://127.0.0.1:{port}", "--testbed", str(web), cwd=tmp_path,
            WEBOMETRICS_DB_URL=db, WEBOMETRICS_CRAWL__DOWNLOAD_DELAY="0",
            WEBOMETRICS_CRAWL__AUTOTHROTTLE="false",
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(10)
    assert crawled.returncode == 0, crawled.stderr[-3000:]
    assert "finished" in crawled.stdout and "pages fetched" in crawled.stdout, crawled.stdout
    listed = _run(installed, "runs", cwd=tmp_path, WEBOMETRICS_DB_URL=db)
    assert listed.returncode == 0 and "finished" in listed.stdout, listed.stdout
    import sqlite3

    with sqlite3.connect(tmp_path / "w.db") as stored:
        pages = stored.execute("SELECT COUNT(*) FROM page WHERE http_status = 200").fetchone()
        domains = stored.execute(
            "SELECT COUNT(DISTINCT target_domain) FROM link WHERE external"
        ).fetchone()
        figures = stored.execute("SELECT COUNT(*) FROM agg_state").fetchone()
    assert pages[0] > 50 and domains[0] > 20, (pages, domains)
    assert figures[0] == 1  # the crawl computed the figures of its run, from the views
    fresh = _run(installed, "refresh", "--check", cwd=tmp_path, WEBOMETRICS_DB_URL=db)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
