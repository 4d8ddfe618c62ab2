"""The program as a user installs it: a wheel in a clean virtual environment.

The wheel is built once per session from the checkout's files (tracked and new, not
ignored) and installed without its dependencies into a new virtual environment; the
dependencies come from the test environment's site-packages through a path file (no
network, and not the editable install: a path line adds a folder to ``sys.path`` without
running the ``.pth`` hooks in it). Then, from folders far from the checkout (and once
from inside it), with a home folder of its own and no ``WEBOMETRICS_*`` variable:

- the wheel holds every file of the packages it ships (data files, SQL views,
  migrations, templates, the test web's files), and the installed modules find theirs
  in site-packages;
- the installed program looks for no data folder inside a checkout;
- the installed ``webometrics`` answers ``--help``, makes a database and crawls the
  session's local test web (:func:`tests.conftest.testbed_server`) as ``make demo``
  does, both directions, on a small budget; the test reads what it stored with SQL and
  compares it with the test web's manifest.

A module, data file or migration the wheel forgets, or a default that points into the
checkout, fails here.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.entities import site_of
from tests.tiers import slow_fixture

REPO = Path(__file__).resolve().parents[1]

#: the crawl's budget: the start pages and the pages they link to, a few pages each
DEPTH = 1
MAX_PAGES = 25
EXTERNAL_PAGES = 1


@dataclass(frozen=True)
class Installed:
    """The clean environment with the wheel installed."""

    bin: Path  # its bin folder: python, webometrics
    site: Path  # its site-packages, where the wheel went
    wheel: Path
    sources: Path  # the checkout's files the wheel was built from


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


@pytest.fixture(scope="session")
@slow_fixture
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """One wheel per session, installed in a clean virtual environment."""
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
    return Installed(bin=root / "env" / "bin", site=Path(purelib), wheel=wheel, sources=src)


def _clean_env(home: Path, **env: str) -> dict[str, str]:
    """The environment of a user who installed the program: no ``WEBOMETRICS_*`` or XDG
    variable, a home folder of its own (where the user folders default to)."""
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("WEBOMETRICS_", "XDG_")) and k not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    home.mkdir(parents=True, exist_ok=True)
    return keep | {"HOME": str(home)} | env


def _run(
    where: Installed, *args: str, cwd: Path, home: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(where.bin / "webometrics"), *args],
        cwd=cwd, env=_clean_env(home, **env), capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def _probe(where: Installed, code: str, cwd: Path, home: Path) -> list[str]:
    """The lines ``code`` prints, run by the clean environment's python in ``cwd`` (with
    ``-P``: as the console script, it does not import from the working folder)."""
    done = subprocess.run(
        [str(where.bin / "python"), "-P", "-c", code],
        cwd=cwd, env=_clean_env(home), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _shipped_packages() -> list[str]:
    """The top-level packages pyproject.toml ships (``[tool.setuptools.packages.find]``)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    return sorted({pattern.rstrip("*").rstrip(".") for pattern in include})


def test_the_wheel_holds_every_file_of_its_packages(installed: Installed) -> None:
    """Every file of a shipped package folder (data, SQL views, migrations, templates,
    the test web's files) is in the wheel: a file type package-data forgets fails here
    with its name, before the crawl below would fail on it."""
    packages = _shipped_packages()
    assert {"core", "store", "migrations", "analyse", "testbed", "webometrics"} <= set(packages)
    with zipfile.ZipFile(installed.wheel) as whl:
        in_wheel = set(whl.namelist())
    in_checkout = {
        path.relative_to(installed.sources).as_posix()
        for package in packages
        for path in (installed.sources / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    data = {name for name in in_checkout if not name.endswith(".py")}
    assert any(name.endswith(".sql") for name in data) and "analyse/taxonomy.toml" in data
    missing = sorted(in_checkout - in_wheel)
    assert missing == [], (
        f"{len(missing)} files of the shipped packages are not in the wheel: {missing[:20]}; "
        "add their patterns to [tool.setuptools.package-data] in pyproject.toml (a folder "
        "without __init__.py needs its own pattern, as migrations/views)"
    )


def test_the_installed_modules_read_their_files_from_site_packages(
    installed: Installed, tmp_path: Path
) -> None:
    """The files the stages read at run time resolve inside the installed packages and
    exist there: the taxonomy, the registries' snapshot, the site rules, the migrations
    and their frozen views, the views' SQL, the test web's universities, the SQL examples,
    Alembic's template, the dashboard's app."""
    code = """
from pathlib import Path
import dashboard, migrations, store
from analyse.registries import packaged_snapshot
from analyse.taxonomy import default_taxonomy_path
from core.entities import DEFAULT_RULES_FILE
from migrations.revisions import VERSIONS
from migrations.views import FROZEN
from store.sql import SQL_DIR
from testbed.universities import UNIVERSITIES_FILE
for path in (default_taxonomy_path(), packaged_snapshot(), DEFAULT_RULES_FILE, VERSIONS,
             FROZEN, SQL_DIR, UNIVERSITIES_FILE, Path(store.__file__).with_name("examples.sql"),
             Path(migrations.__file__).with_name("script.py.mako"),
             Path(dashboard.__file__).with_name("app.py")):
    print(path)
print(len(list(SQL_DIR.glob("*.sql"))), len(list(VERSIONS.glob("0*.py"))),
      len(list(FROZEN.glob("*/*.sql"))))
"""
    *paths, counts = _probe(installed, code, cwd=tmp_path, home=tmp_path / "home")
    for path in map(Path, paths):
        assert path.is_relative_to(installed.site), f"{path} is read from outside the wheel"
        assert path.exists(), f"{path} is not installed: add it to pyproject.toml's package data"
    views, revisions, frozen = map(int, counts.split())
    checkout = installed.sources
    assert views == len(list((checkout / "store" / "sql").glob("*.sql"))) > 0
    assert revisions == len(list((checkout / "migrations" / "versions").glob("0*.py"))) > 0
    assert frozen == len(list((checkout / "migrations" / "views").glob("*/*.sql"))) > 0


@pytest.mark.parametrize("inside", [False, True], ids=["elsewhere", "in-the-checkout"])
def test_the_installed_program_looks_for_no_data_in_a_checkout(
    installed: Installed, tmp_path: Path, inside: bool
) -> None:
    """Installed, the program has no checkout (even run from inside one): the shared data
    and the user folders are the user's, and a command that needs the shared data says
    to set WEBOMETRICS_DATA rather than finding the checkout's ``../shared/data``."""
    home = tmp_path / "home"
    cwd = REPO if inside else tmp_path
    code = """
from core.folders import checkout_root, shared_data_root, user_folder
print(checkout_root())
print(shared_data_root())
for kind in ("data", "cache", "state"):
    print(user_folder(kind))
"""
    checkout, data, *folders = _probe(installed, code, cwd=cwd, home=home)
    assert checkout == "None"
    assert Path(data) == home / ".local" / "share" / "webometrics" / "shared-data"
    for folder in folders:
        assert Path(folder).is_relative_to(home), folder
    built = _run(installed, "testbed", "build", "--out", str(tmp_path / "web"), cwd=cwd, home=home)
    assert built.returncode == 2, built.stderr[-2000:]
    assert "WEBOMETRICS_DATA" in built.stderr and data in built.stderr, built.stderr[-2000:]
    assert str(REPO.parent / "shared") not in built.stderr + built.stdout


def _stored(db: Path) -> dict[str, Any]:
    """What the crawl stored, read with SQL."""
    con = sqlite3.connect(db)
    try:
        q = con.execute
        domains: dict[str, set[str]] = defaultdict(set)
        for name, domain in q(
            "SELECT u.name, d.domain FROM university u JOIN university_domain d"
            " ON d.university_id = u.id"
        ):
            domains[name].add(domain)
        pages: dict[tuple[str, str], list[tuple[str, int | None, int | None]]]
        pages = defaultdict(list)
        for name, role, domain, depth, status in q(
            "SELECT u.name, p.role, p.registered_domain, p.depth, p.http_status FROM page p"
            " LEFT JOIN university u ON u.id = p.university_id"
        ):
            pages[(role, name)].append((domain, depth, status))
        environment: dict[tuple[str, str], set[str]] = defaultdict(set)
        for name, direction, domain in q(
            "SELECT u.name, e.direction, e.domain FROM environment e"
            " JOIN university u ON u.id = e.university_id"
        ):
            environment[(direction, name)].add(domain)
        return {
            "runs": q("SELECT kind, status FROM crawl_run").fetchall(),
            "domains": domains,
            "pages": pages,
            "environment": environment,
            "external_per_domain": dict(
                q(
                    "SELECT registered_domain, count(*) FROM page WHERE role = 'external'"
                    " AND http_status IS NOT NULL GROUP BY registered_domain"
                ).fetchall()
            ),
            "linked_domains": {
                domain
                for (domain,) in q(
                    "SELECT DISTINCT l.target_domain FROM link l"
                    " JOIN page p ON p.id = l.source_page_id WHERE p.role = 'university'"
                )
            },
            "citations": dict(q("SELECT status, count(*) FROM citation GROUP BY status")),
            "figures": q("SELECT count(*) FROM agg_state").fetchone()[0],
        }
    finally:
        con.close()


@pytest.mark.slow
def test_the_wheel_runs_help_upgrade_and_the_demo_crawl(
    installed: Installed, tmp_path: Path, testbed_server: Any, testbed_dir: Path,
    testbed_manifest: Any,
) -> None:  # fmt: skip
    """``--help``, ``db upgrade``, ``universities import`` and make demo's crawl (both
    directions) by the installed program on the session's test web; then what it stored,
    read with SQL, against the test web's manifest."""
    home = tmp_path / "home"
    where = _probe(
        installed, "import core, webometrics, testbed; print(webometrics.__file__)",
        cwd=tmp_path, home=home,
    )  # fmt: skip
    assert Path(where[0]).is_relative_to(installed.site), where  # the wheel's, not the checkout's
    helped = _run(installed, "--help", cwd=tmp_path, home=home)
    assert helped.returncode == 0 and "crawl" in helped.stdout, helped.stderr
    db = tmp_path / "w.db"
    url = f"sqlite:///{db}"
    upgraded = _run(installed, "db", "upgrade", cwd=tmp_path, home=home, WEBOMETRICS_DB_URL=url)
    assert upgraded.returncode == 0, upgraded.stderr
    universities = installed.site / "testbed" / "universities.toml"  # shipped with the wheel
    imported = _run(
        installed, "universities", "import", str(universities), cwd=tmp_path, home=home,
        WEBOMETRICS_DB_URL=url,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    # make demo's crawl (scripts/demo.sh) on the session's test web, with a small budget
    crawled = _run(
        installed, "crawl", "--universities", str(universities), "--direction", "both",
        "--proxy", testbed_server.proxy_url, "--testbed", str(testbed_dir),
        "--depth", str(DEPTH), "--max-pages", str(MAX_PAGES), "--no-progress",
        cwd=tmp_path, home=home, WEBOMETRICS_DB_URL=url,
        WEBOMETRICS_CRAWL__DOWNLOAD_DELAY="0", WEBOMETRICS_CRAWL__AUTOTHROTTLE="false",
        WEBOMETRICS_CRAWL__EXTERNAL_PAGES_PER_DOMAIN=str(EXTERNAL_PAGES),
    )  # fmt: skip
    assert crawled.returncode == 0, crawled.stderr[-3000:]
    assert "finished" in crawled.stdout and "pages fetched" in crawled.stdout, crawled.stdout
    listed = _run(installed, "runs", cwd=tmp_path, home=home, WEBOMETRICS_DB_URL=url)
    assert listed.returncode == 0 and "finished" in listed.stdout, listed.stdout

    stored = _stored(db)
    assert stored["runs"] == [("both", "finished")]
    manifest = {uni["name"]: uni for uni in testbed_manifest.universities}
    every_link_target = {
        site_of(link["target"]) for uni in manifest.values() for link in uni["external_links"]
    }
    assert set(stored["domains"]) == set(manifest)
    for name, uni in manifest.items():
        # the university's own pages: within its domains, depth and budget (the sitemap
        # named by robots.txt is fetched besides, at no depth)
        own = stored["pages"][("university", name)]
        crawled = [depth for _, depth, _ in own if depth is not None]
        assert 0 < len(crawled) <= MAX_PAGES and max(crawled) <= DEPTH, (name, len(own))
        assert {domain for domain, _, _ in own} <= stored["domains"][name], name
        assert any(status == 200 for _, depth, status in own if depth == 0), name
        # the outgoing environment: the external sites (web entities: a domain, or a home
        # folder on an ISP's host) the university's pages link to
        outgoing = stored["environment"][("outgoing", name)]
        linked = {site_of(link["target"]) for link in uni["external_links"]}
        assert outgoing and outgoing <= linked, (name, sorted(outgoing - linked))
        assert not outgoing & stored["domains"][name], name  # its own: not external
        # the citing environment: the sites of the test web's citing pages (its backlink
        # files), and the crawled pages found linking to the university (another
        # university's, an external page's)
        citing = stored["environment"][("citing", name)]
        said = {site_of(c["url"]) for c in uni["citing"] if c["expected"] == "verified"}
        found = every_link_target | set().union(*stored["domains"].values())
        assert citing & said and citing <= said | found, (name, sorted(citing - said - found))
    # the external pages fetched: each of a domain a crawled university page links to
    fetched, linked = stored["external_per_domain"], stored["linked_domains"]
    assert fetched and set(fetched) <= linked, sorted(set(fetched) - linked)
    assert stored["citations"].get("verified", 0) > 0, stored["citations"]
    # the crawl computed the figures of its run from the views the migrations create
    assert stored["figures"] == 1
    fresh = _run(installed, "refresh", "--check", cwd=tmp_path, home=home, WEBOMETRICS_DB_URL=url)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
