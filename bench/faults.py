"""The faults and bad inputs of issues 20 and 36, provoked for real: what happens, what
is lost.

Each row runs the ``webometrics`` command line in a fresh temporary folder against a
local web on 127.0.0.1 (``tests/crawler/conftest.py``'s ``LocalWeb``, the gzip-bomb and
chunked server of ``tests/crawler/test_bounds.py``) and a SQLite database (a private
PostgreSQL server where the fault needs one: a password in the URL, a restart), then
reads the database and the files to say what happened, the data lost (it must be none),
the message a user reads and the exit code.

Run: ``.venv/bin/python bench/faults.py`` (about two minutes; needs PostgreSQL's
``initdb``/``pg_ctl`` for the two PostgreSQL rows, skipped with a note otherwise).
Writes ``bench/results/faults.json`` and ``faults.md``.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import RESULTS, machine, run_date, write_results
from tests.crawler.conftest import Answer, LocalWeb, html, write_universities

A = "http://www.alpha-university.edu"
NOT_WARC = b"hello, this is not a WARC file\n" * 50
Row = dict[str, Any]


# --- running the command line ---------------------------------------------------------------


class Folder:
    """A temporary folder with its SQLite database (or ``db``) and the CLI's environment."""

    def __init__(self, root: Path, name: str, db: str | None = None) -> None:
        self.path = root / name
        self.path.mkdir()
        self.db = db or f"sqlite:///{self.path / 'w.db'}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
        self.env.update(
            WEBOMETRICS_DB_URL=self.db,
            WEBOMETRICS_CRAWL__DOWNLOAD_DELAY="0",
            WEBOMETRICS_CRAWL__AUTOTHROTTLE="false",
            WEBOMETRICS_CRAWL__RETRY_TIMES="0",
        )
        self.cli("db", "upgrade")

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "webometrics", *args],
            cwd=self.path,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: kill -9 takes the Scrapy child too
        )

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "webometrics", *args],
            cwd=self.path,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        con = sqlite3.connect(self.path / "w.db")
        try:
            rows = con.execute(sql).fetchall()
            con.commit()  # an UPDATE too
            return rows
        finally:
            con.close()

    def universities(self, *unis: dict[str, Any]) -> str:
        return str(write_universities(self.path / "u.toml", *unis))


def message(stderr: str) -> str:
    """What a user reads: the error (with the lines that continue it), else the first
    warning or note, else the last line; temporary folders left out, shortened."""
    lines = [ln.rstrip() for ln in stderr.splitlines() if ln.strip()]
    pick: list[str] = []
    for prefix in ("webometrics: error:", "webometrics: warning:", "webometrics: note:"):
        starts = [i for i, ln in enumerate(lines) if ln.startswith(prefix)]
        if starts:
            i = starts[0]
            pick = [lines[i]]
            pick += [ln for ln in lines[i + 1 : i + 4] if ln.startswith((" ", "\t"))]
            break
    if not pick:  # a traceback: its exception line, else the last line
        errors = [ln for ln in lines if re.match(r"^[\w.]+(Error|Exception): ", ln)]
        pick = errors[-1:] or lines[-1:]
    text = " / ".join(" ".join(ln.split()) for ln in pick) or "(none)"
    text = re.sub(r"/tmp/webometrics-faults-\w+/\w+/", "", text)
    return text if len(text) <= 320 else text[:317] + "..."


def alpha(folder: Folder, home: bool = True) -> str:
    spec: dict[str, Any] = {"name": "Alpha University", "domains": ["alpha-university.edu"]}
    if home:
        spec["home"] = [f"{A}/"]
    return folder.universities(spec)


# --- WARC and universities ------------------------------------------------------------------


def _warc(path: Path, n: int) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for i in range(n):
            body = f"<html><body><p>page {i} " + "text " * 400 + "</p></body></html>"
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], "HTTP/1.1")
            rec = writer.create_warc_record(
                f"http://news.example.org/{i}.html",
                "response",
                payload=io.BytesIO(body.encode()),
                http_headers=headers,
            )
            writer.write_record(rec)


def truncated_warc(root: Path) -> Row:
    f = Folder(root, "trunc")
    full = f.path / "full.warc.gz"
    _warc(full, 50)
    data = full.read_bytes()
    cut = f.path / "trunc.warc.gz"
    cut.write_bytes(data[: int(len(data) * 0.6)])
    from warcio.archiveiterator import ArchiveIterator

    whole = 0  # records wholly before the cut
    with full.open("rb") as fh:
        for _rec in (it := ArchiveIterator(fh)):
            if it.get_record_offset() + it.get_record_length() <= len(cut.read_bytes()):
                whole += 1
    out = f.cli("import", "warc", str(cut))
    stored = f.query("SELECT count(*) FROM page")[0][0]
    status = f.query("SELECT status FROM crawl_run")
    return {
        "fault": "truncated WARC (50 records, cut at 60 %)",
        "happened": f"{stored} pages stored of {whole} whole records before the cut; "
        f"run {status[0][0] if status else 'none'}",
        "lost": "none" if stored >= whole else f"{whole - stored} records",
        "message": message(out.stderr),
        "exit": out.returncode,
    }


def foreign_file(root: Path, name: str, content: bytes, label: str) -> Row:
    f = Folder(root, name)
    path = f.path / f"{name}.warc.gz"
    path.write_bytes(content)
    out = f.cli("import", "warc", str(path))
    runs = f.query("SELECT status FROM crawl_run")
    return {
        "fault": label,
        "happened": f"refused; runs made: {len(runs)}"
        + (f" ({', '.join(r[0] for r in runs)})" if runs else ""),
        "lost": "none",
        "message": message(out.stderr),
        "exit": out.returncode,
    }


def reimport(root: Path) -> Row:
    f = Folder(root, "reimport")
    first = f.universities({"name": "Cornell University", "domains": ["cornell.edu"]})
    f.cli("universities", "import", first)
    second = f.path / "other.toml"
    write_universities(
        second, {"name": "Cornell University", "domains": ["other.edu"], "country": "Canada"}
    )
    out = f.cli("universities", "import", str(second))
    domains = f.query("SELECT domain FROM university_domain") or f.query(
        "SELECT domains FROM university"
    )
    return {
        "fault": "same-name university re-import with other domains and country",
        "happened": f"refused without --replace/--merge; stored domains: "
        f"{', '.join(str(d[0]) for d in domains)}",
        "lost": "none" if any("cornell.edu" in str(d[0]) for d in domains) else "cornell.edu",
        "message": message(out.stderr),
        "exit": out.returncode,
    }


def bad_config(root: Path) -> Row:
    f = Folder(root, "config")
    (f.path / "bad.toml").write_text('[crawl]\ndepth = "three"\n', encoding="utf-8")
    out = f.cli("--config", "bad.toml", "crawl", "--universities", alpha(f))
    return {
        "fault": 'bad config file (depth = "three")',
        "happened": "refused before any work; runs made: "
        f"{len(f.query('SELECT id FROM crawl_run'))}",
        "lost": "none",
        "message": message(out.stderr),
        "exit": out.returncode,
    }


def bad_universities(root: Path) -> Row:
    f = Folder(root, "unis")
    (f.path / "u.toml").write_text(
        '[[university]]\nname = "No Domains"\ncountry = "USA"\n', encoding="utf-8"
    )
    out = f.cli("crawl", "--universities", "u.toml")
    return {
        "fault": "bad universities file (no domains)",
        "happened": f"refused; runs made: {len(f.query('SELECT id FROM crawl_run'))}",
        "lost": "none",
        "message": message(out.stderr),
        "exit": out.returncode,
    }


# --- crawls ---------------------------------------------------------------------------------


def crawl_args(unis: str, proxy: str, *more: str) -> list[str]:
    return ["crawl", "--universities", unis, "--proxy", proxy, "--no-progress", *more]


def bomb_and_chunked(root: Path) -> list[Row]:
    from tests.crawler.test_bounds import BoundsWeb, U, gzip_bomb

    server = BoundsWeb(gzip_bomb(1024), chunks=64)
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    proxy = f"http://127.0.0.1:{server.server_address[1]}"
    f = Folder(root, "bomb")
    f.env["WEBOMETRICS_CRAWL__MAX_RESPONSE_BYTES"] = str(2 << 20)  # the bomb's 1 MB passes
    unis = f.universities({"name": "Bounded U", "domains": ["bounded-u.edu"], "home": [f"{U}/"]})
    measure = (
        "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)"
    )
    cmd = [sys.executable, "-m", "webometrics", *crawl_args(unis, proxy, "--direction", "outgoing")]
    out = subprocess.run(
        [sys.executable, "-c", measure, *cmd], cwd=f.path, env=f.env, capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip
    server.shutdown()
    server.server_close()
    rss, rc = out.stdout.split()[-2:]
    errors = dict(f.query("SELECT url, fetch_error FROM page"))
    home_ok = errors.get(f"{U}/") is None and f"{U}/" in errors
    rows = []
    for path, label in (
        ("/bomb", "gzip bomb (1 MB inflating to 1 GiB; cap 2 MiB)"),
        ("/chunked", "oversized chunked body (4 MiB, no length; cap 2 MiB)"),
    ):
        error = errors.get(f"{U}{path}") or ""
        rows.append(
            {
                "fault": label,
                "happened": f"recorded {error.split(':')[0] or 'nothing'}; crawl finished, "
                f"peak RSS {int(rss) // 1024} MiB",
                "lost": "none" if home_ok else "the home page",
                "message": f"page.fetch_error: {error[:160]}",
                "exit": int(rc),
            }
        )
    return rows


def backlinks(root: Path) -> list[Row]:
    from tests.crawler.test_bad_backlinks import AHREFS_UNTERMINATED, MAJESTIC

    f = Folder(root, "backlinks")
    unis = alpha(f, home=False)
    (f.path / "majestic.csv").write_text(MAJESTIC, encoding="utf-8")
    (f.path / "ahrefs.csv").write_text(AHREFS_UNTERMINATED, encoding="utf-8")
    refused = f.cli("crawl", "--universities", unis, "--direction", "citing", "--backlinks",
                    "ahrefs.csv", "--no-progress")  # fmt: skip
    runs_after_refusal = len(f.query("SELECT id FROM crawl_run"))
    with LocalWeb({"http://news.example.org/a": html("cites", (f"{A}/", "Alpha"))}) as web:
        out = f.cli(*crawl_args(unis, web.proxy_url, "--direction", "citing", "--backlinks",
                                "majestic.csv"))  # fmt: skip
    stored = f.query("SELECT json_extract(stats, '$.citing_bad_rows[0].count') FROM crawl_run")
    cands = f.query("SELECT json_extract(stats, '$.citing_candidates') FROM crawl_run")
    return [
        {
            "fault": "malformed backlink CSV (Majestic: 3 bad rows of 8)",
            "happened": f"{cands[0][0] if cands else 0} good rows crawled; bad rows shown and "
            f"stored with the run (count {stored[0][0] if stored else '?'})",
            "lost": "none (every good row kept)",
            "message": message(out.stderr),
            "exit": out.returncode,
        },
        {
            "fault": "unterminated quote (Ahrefs, line 3)",
            "happened": f"refused before the crawl; runs made: {runs_after_refusal}",
            "lost": "none",
            "message": message(refused.stderr),
            "exit": refused.returncode,
        },
    ]


def slow_site() -> dict[str, Answer]:
    pages = {f"{A}/": html("Home", *[f"/p{i}.html" for i in range(6)])}
    for i in range(6):
        pages[f"{A}/p{i}.html"] = Answer(body=html(f"P{i}").body, delay=2.0)
    return pages


def _wait_fetched(web: LocalWeb, proc: subprocess.Popen[str], url: str) -> None:
    deadline = time.monotonic() + 60
    while url not in web.fetched():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError(f"the crawl never fetched {url}")
        time.sleep(0.05)


def two_crawls(root: Path) -> Row:
    f = Folder(root, "two")
    unis = alpha(f)
    with LocalWeb(slow_site()) as web:
        first = f.popen(*crawl_args(unis, web.proxy_url, "--direction", "outgoing"))
        _wait_fetched(web, first, f"{A}/")
        second = f.cli(*crawl_args(unis, web.proxy_url, "--direction", "outgoing"))
        first.communicate(timeout=300)
    pages = f.query("SELECT count(*) FROM page")[0][0]
    return {
        "fault": "two crawls at once on one database",
        "happened": f"the second refused at once; the first finished ({pages} pages, exit "
        f"{first.returncode})",
        "lost": "none",
        "message": message(second.stderr),
        "exit": second.returncode,
    }


def sigterm(root: Path) -> Row:
    f = Folder(root, "sigterm")
    unis = alpha(f)
    with LocalWeb(slow_site()) as web:
        proc = f.popen(*crawl_args(unis, web.proxy_url, "--direction", "outgoing", "--jobdir",
                                   "job"))  # fmt: skip
        _wait_fetched(web, proc, f"{A}/p0.html")  # while the slow pages are answered
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        stored = f.query("SELECT count(*) FROM page")[0][0]
        status = f.query("SELECT status FROM crawl_run ORDER BY id")
        resumed = f.cli(*crawl_args(unis, web.proxy_url, "--direction", "outgoing", "--jobdir",
                                    "job"))  # fmt: skip
    pages = f.query("SELECT count(*) FROM page")[0][0]
    return {
        "fault": "SIGTERM to a crawl (--jobdir)",
        "happened": f"run marked {status[0][0]} with {stored} pages stored (the requests in "
        f"flight were finished); resumed with the same "
        f"--jobdir: exit {resumed.returncode}, {pages} pages",
        "lost": "none" if pages == 7 else f"{7 - pages} pages",
        "message": message(err),
        "exit": proc.returncode,
    }


def kill9(root: Path) -> Row:
    f = Folder(root, "kill9")
    f.env.update(
        WEBOMETRICS_DATABASE__HEARTBEAT_SECONDS="1", WEBOMETRICS_DATABASE__RUN_LEASE_SECONDS="2"
    )
    unis = alpha(f)
    with LocalWeb(slow_site()) as web:
        proc = f.popen(*crawl_args(unis, web.proxy_url, "--direction", "outgoing"))
        _wait_fetched(web, proc, f"{A}/")
        os.killpg(proc.pid, signal.SIGKILL)  # the command and its Scrapy child, as power loss
        proc.communicate(timeout=60)
    time.sleep(3)
    out = f.cli("runs")
    status = f.query("SELECT status FROM crawl_run")
    return {
        "fault": "kill -9 of a crawl, then the next command",
        "happened": f"the next command marked the run {status[0][0]}; `webometrics runs` "
        "lists it with its resume command",
        "lost": "none (stored pages stay)",
        "message": message(out.stderr),
        "exit": out.returncode,
    }


# --- PostgreSQL -----------------------------------------------------------------------------


def postgres_rows(root: Path) -> list[Row]:
    from tests.conftest import PostgresServer

    server = PostgresServer()
    server.start()
    rows = []
    try:
        url = server.create_database()
        secret = "S3cret-pw-4711"
        with_pw = url.replace(f"{server.user}@", f"{server.user}:{secret}@")
        f = Folder(root, "secret", db=with_pw)
        unis = alpha(f)
        with LocalWeb({f"{A}/": html("Home", "/a.html"), f"{A}/a.html": html("A")}) as web:
            out = f.cli(*crawl_args(unis, web.proxy_url, "--direction", "outgoing", "--jobdir",
                                    "job", "--warc-dir", "warc"))  # fmt: skip
        leaks = [
            str(p.relative_to(f.path))
            for p in f.path.rglob("*")
            if p.is_file() and secret.encode() in p.read_bytes()
        ]
        modes = sorted({oct(p.stat().st_mode & 0o777) for p in (f.path / "job").rglob("*")})
        rows.append(
            {
                "fault": "password in the database URL (PostgreSQL, --jobdir)",
                "happened": f"files holding the password: {len(leaks)}"
                + (f" ({', '.join(leaks)})" if leaks else "")
                + f"; job folder modes {', '.join(modes) or 'removed'}",
                "lost": "none",
                "message": message(out.stderr),
                "exit": out.returncode,
            }
        )
        rows.append(outage(root, server))
    finally:
        server.stop()
    return rows


def outage(root: Path, server: Any) -> Row:
    url = server.create_database()
    f = Folder(root, "outage", db=url)
    unis = alpha(f)
    with LocalWeb(slow_site()) as web:
        proc = f.popen(*crawl_args(unis, web.proxy_url, "--direction", "outgoing"))
        _wait_fetched(web, proc, f"{A}/p0.html")
        log = str(server.root / "log")  # -l: the new server must not hold our pipe open
        server._run("pg_ctl", "-D", str(server.data), "-l", log, "-m", "fast", "-w", "restart")
        _out, err = proc.communicate(timeout=300)
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.connect() as conn:
        pages = int(conn.execute(text("SELECT count(*) FROM page")).scalar() or 0)
        status = conn.execute(text("SELECT status FROM crawl_run")).scalar()
    engine.dispose()
    return {
        "fault": "PostgreSQL restart during a crawl",
        "happened": f"run {status}, {pages} of 7 pages stored"
        + (
            "; then the command failed on a connection the restart had closed"
            if proc.returncode and status == "finished"
            else ""
        ),
        "lost": "none" if pages == 7 else f"{7 - pages} pages",
        "message": message(err),
        "exit": proc.returncode,
    }


# --- issue 36: the second round ---------------------------------------------------------------


def warc_bomb(root: Path) -> list[Row]:
    from tests.crawler.test_warc_bomb import URL, gzip_bomb, peak_run, write_bomb_warc

    inflated = 2 << 30
    f = Folder(root, "warcbomb")
    bomb = write_bomb_warc(f.path / "bomb.warc.gz", gzip_bomb(inflated), page=html("A").body)
    size = bomb.stat().st_size
    code, peak, _err = peak_run("import", "warc", "--no-progress", str(bomb), db=f.db, cwd=f.path)
    (fetch_error,) = f.query(f"SELECT fetch_error FROM page WHERE url = '{URL}'")[0]
    f.query(
        f"UPDATE page SET fetch_error = NULL, extraction_status = 'pending' WHERE url = '{URL}'"
    )
    code2, peak2, _err2 = peak_run("extract", "--workers", "1", db=f.db, cwd=f.path)
    (status,) = f.query(f"SELECT extraction_status FROM page WHERE url = '{URL}'")[0]
    return [
        {
            "fault": f"decompression bomb in a WARC ({size / 1e3:.1f} KB, a record inflating "
            f"to {inflated >> 30} GiB)",
            "happened": f"import warc: page stored as {str(fetch_error).split(':')[0]} without "
            f"a body, peak RSS {peak / 2**20:.0f} MiB; extract of that record: "
            f"{status}, peak RSS {peak2 / 2**20:.0f} MiB",
            "lost": "none",
            "message": f"page.fetch_error: {fetch_error}",
            "exit": f"{code}, {code2}",
        }
    ]


def lost_proxy(root: Path) -> list[Row]:
    from tests.crawler.test_lost_proxy import crawl_until_stopped

    rows = []
    for failures, what in ((50, "stops"), (0, "stop off")):
        f = Folder(root, f"lostproxy{failures}")
        done, _pages, _port = crawl_until_stopped(f.path, f.db, failures, stop_after=15)
        status, error, stats = f.query("SELECT status, error, stats FROM crawl_run")[0]
        rows.append(
            {
                "fault": f"the proxy goes away mid-crawl ([crawl] outage_failures = "
                f"{failures}: {what})",
                "happened": f"run {status}"
                + (f": {error.splitlines()[0][:160]}" if error else "")
                + ("; stats.warning set" if '"warning"' in (stats or "") else ""),
                "lost": "none (the failed fetches are sent again on resume)"
                if status == "interrupted"
                else "none (pages recorded as connection_refused)",
                "message": message(done.stderr),
                "exit": done.returncode,
            }
        )
    return rows


def proxy_password(root: Path) -> Row:
    f = Folder(root, "proxypw")
    unis = alpha(f)
    secret = "Px7-proxy-pw"
    with LocalWeb({f"{A}/": html("Home", "/a.html"), f"{A}/a.html": html("A")}) as web:
        proxy = web.proxy_url.replace("http://", f"http://agent:{secret}@")
        out = f.cli(*crawl_args(unis, proxy, "--direction", "outgoing", "--jobdir", "job"))
        auth = {r["proxy_authorization"] for r in web.requests}
    leaks = [str(p.relative_to(f.path)) for p in f.path.rglob("*")
             if p.is_file() and p.name != "w.db" and secret.encode() in p.read_bytes()]  # fmt: skip
    rows = f.query("SELECT settings, error FROM crawl_run")
    in_rows = sum(secret in str(r) for r in rows)
    return {
        "fault": "proxy URL with a password (--proxy http://user:pw@host)",
        "happened": f"files holding it: {len(leaks)}, run rows: {in_rows}, console: "
        f"{int(secret in out.stdout + out.stderr)}; the proxy got the credentials: "
        f"{'yes' if len(auth) == 1 and None not in auth else 'no'}",
        "lost": "none",
        "message": message(out.stderr),
        "exit": out.returncode,
    }


def read_only(root: Path) -> list[Row]:
    import shutil

    from tests.webometrics.test_read_only import read_only_folder

    f = Folder(root, "readonly")
    alpha(f)
    f.cli("universities", "import", str(f.path / "u.toml"))
    db = f.path / "db"
    db.mkdir()
    shutil.copy(f.path / "w.db", db / "w.db")
    with read_only_folder(db) as ro:
        f.env["WEBOMETRICS_DB_URL"] = f"sqlite:///{ro / 'w.db'}"
        reads = [f.cli("runs"), f.cli("universities", "list")]
        write = f.cli("universities", "import", str(f.path / "u.toml"))
    return [
        {
            "fault": "a database in a read-only folder (read-only bind mount)",
            "happened": "runs and universities list: exit "
            + ", ".join(str(r.returncode) for r in reads)
            + "; a write refused at once",
            "lost": "none",
            "message": message(write.stderr),
            "exit": write.returncode,
        }
    ]


def damaged(root: Path) -> Row:
    from tests.webometrics.test_damaged_database import damage

    f = Folder(root, "damaged")
    unis = alpha(f)
    with LocalWeb({f"{A}/": html("Home", "/a.html"), f"{A}/a.html": html("A")}) as web:
        f.cli(*crawl_args(unis, web.proxy_url, "--direction", "outgoing"))
    damage(f.path / "w.db")
    out = f.cli("extract", "--workers", "1")
    return {
        "fault": "a damaged SQLite page (the page table's root overwritten), then extract",
        "happened": f"stopped at once; {len(out.stderr.splitlines())} line(s) on the console",
        "lost": "(the damaged page)",
        "message": message(out.stderr),
        "exit": out.returncode,
    }


def silent_server(root: Path) -> Row:
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        try:
            while True:
                held.append(listener.accept()[0])
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    f = Folder(root, "silent")
    f.env["WEBOMETRICS_DB_URL"] = f"postgresql://u@127.0.0.1:{listener.getsockname()[1]}/db"
    started = time.perf_counter()
    out = f.cli("runs")
    took = time.perf_counter() - started
    listener.close()
    for conn in held:
        conn.close()
    return {
        "fault": "a database server that accepts and never answers",
        "happened": f"gave up after {took:.0f} s (the command's whole run)",
        "lost": "none",
        "message": message(out.stderr),
        "exit": out.returncode,
    }


def doubled_space(root: Path) -> Row:
    f = Folder(root, "names")
    for name in ("Alpha University", "Alpha  University"):
        f.universities({"name": name, "domains": ["alpha-university.edu"]})
        out = f.cli("universities", "import", str(f.path / "u.toml"))
    (n,) = f.query("SELECT count(*) FROM university")[0]
    return {
        "fault": "a university name with a doubled space, imported again",
        "happened": f"universities stored: {n}",
        "lost": "none",
        "message": message(out.stderr),
        "exit": out.returncode,
    }


# --- the table ------------------------------------------------------------------------------


SMOKE_SKIP = "starts PostgreSQL and restarts it under a crawl (about two minutes)"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0]).parse_args(argv)
    rows: list[Row] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="webometrics-faults-") as tmp:
        root = Path(tmp)
        steps: list[Callable[[], Row | list[Row]]] = [
            lambda: truncated_warc(root),
            lambda: foreign_file(root, "text", NOT_WARC, "a file that is not WARC"),
            lambda: foreign_file(root, "empty", b"", "an empty file"),
            lambda: reimport(root),
            lambda: bomb_and_chunked(root),
            lambda: backlinks(root),
            lambda: two_crawls(root),
            lambda: bad_config(root),
            lambda: bad_universities(root),
            lambda: sigterm(root),
            lambda: kill9(root),
            lambda: postgres_rows(root),
            lambda: warc_bomb(root),
            lambda: lost_proxy(root),
            lambda: proxy_password(root),
            lambda: read_only(root),
            lambda: damaged(root),
            lambda: silent_server(root),
            lambda: doubled_space(root),
        ]
        for step in steps:
            started = time.perf_counter()
            try:
                got = step()
            except Exception as exc:  # one fault that cannot be provoked here is a note
                notes.append(f"{type(exc).__name__}: {exc}")
                continue
            for row in got if isinstance(got, list) else [got]:
                row["seconds"] = round(time.perf_counter() - started, 1)
                rows.append(row)
                print(f"{row['fault']}: exit {row['exit']}, lost {row['lost']}", flush=True)
    lines = [
        "# Faults and bad inputs (issues 20 and 36)",
        "",
        f"`python bench/faults.py`, {run_date()}, {machine()}. Each fault provoked for real "
        "through the command line on a local web (127.0.0.1) and a fresh database (SQLite; "
        "a private PostgreSQL server for the password and restart rows). Issue 36's lock kept "
        "across a PostgreSQL restart and the pasted pipeline resume advice are tested, not "
        "timed here: `tests/crawler/test_lock_restart.py`, "
        "`tests/webometrics/test_pipeline_resume.py`.",
        "",
        "| fault | what happened | data lost | message | exit |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        cells = [r["fault"], r["happened"], r["lost"], r["message"], str(r["exit"])]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    if notes:
        lines += ["", "Not provoked here:", *[f"- {n}" for n in notes]]
    write_results(RESULTS / "faults", {"rows": rows, "notes": notes}, "\n".join(lines) + "\n")
    lost = [r["fault"] for r in rows if not str(r["lost"]).startswith("none")]
    print(f"{len(rows)} faults, data lost in {len(lost)}: {', '.join(lost) or 'none'}")


if __name__ == "__main__":
    main()
