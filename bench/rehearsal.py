"""A rehearsal at the paper's scale: the whole pipeline on a web the size of Korelin et al.'s.

What runs, each stage a command in a fresh process (``python -m webometrics ...``), on
one PostgreSQL database (a private server started here, ``fsync=off``; or ``--db-url``):

1. **build**: :func:`testbed.paper_scale.build_paper_web`: nine universities with Table
   3's external domains per university, direction and language (about 9,000 outgoing and
   87,000 citing at ``--scale 1``), Table 2's links per external domain, page bodies from
   the real corpora of the shared data, the citing pages in Majestic export files;
2. **serve** (not a stage of the pipeline): ``webometrics testbed serve`` in its own
   process with an answer latency drawn per answer (``--latency`` 0.1 to
   ``--latency-max`` 0.5 s, log-uniform: median 0.22 s, mean 0.25 s);
3. **setup**: ``db upgrade`` and ``universities import``;
4. **crawl**: ``webometrics crawl --direction both --backlinks citing/backlinks-majestic.csv
   --redis URL --processes N`` through the crawl farm (the Redis frontier, ``N`` crawler
   processes; a private redis-server or ``--redis-url``), the real politeness settings
   (``[crawl]`` defaults: 0.25 s download delay per host, AutoThrottle, 4 requests per
   host, robots.txt obeyed) and ``--concurrency`` requests per process; the outgoing and
   citing parts are timed apart from the test web's log (first to last request of each);
5. **extract**, **dedup**, **cluster**, **analyse** (defaults), **report** ``--out``.

Measured per stage: wall and CPU seconds (``os.wait4``: the command and its children),
peak RSS of the largest process (``ru_maxrss``) and of the command's whole process tree
(the sum, sampled every 0.5 s), the database's growth (``pg_database_size``) and the
files the stage wrote, and pages and domains after it (SQL counts). The machine, the load
averages and the test web's own peak RSS and answer times are recorded; figures for scale
1 are extrapolated linearly from the scale run (said so in the table).

Run: ``.venv/bin/python bench/rehearsal.py --scale 1`` (the paper's size: ~90,000 domains,
~190,000 pages; an hour or more on 2 shared cores); ``--scale 0.05`` for a look (about
5 minutes). Writes ``bench/results/rehearsal.json`` and ``rehearsal.md`` (``--no-save``:
print only; ``--out-stem`` elsewhere).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SMOKE_SKIP = (
    "runs every stage as a command on PostgreSQL and Redis through the crawl farm "
    "(tests/testbed/test_paper_scale.py runs it at scale 0.0005, about a minute)"
)
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, load_averages, machine, run_date, write_results  # noqa: E402

CITING_HOST = re.compile(r"-c(ru|en)-")
"""A citing site's host in the paper-scale web (``testbed.paper_scale``)."""


# ---------------------------------------------------------------------------- measuring


def folder_bytes(path: Path) -> int:
    """Bytes of the files under ``path`` (0 when missing)."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


class TreePeak:
    """Peak summed RSS of a process and its descendants, sampled every 0.5 s."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                root = psutil.Process(self.pid)
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                return
            total = 0
            for p in procs:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    continue
            self.peak = max(self.peak, total)
            self._stop.wait(0.5)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def run_command(args: list[str], env: dict[str, str], log: Path) -> dict[str, Any]:
    """Run ``python *args`` from the repository; wall, CPU, peak RSS (largest process and
    the tree), exit code. Fails with the log's tail when the command fails."""
    t0 = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        child = subprocess.Popen(
            [sys.executable, *args], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
        tree = TreePeak(child.pid)
        _pid, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    peak_tree = tree.stop()
    wall = time.perf_counter() - t0
    if child.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise SystemExit(f"{' '.join(args)} failed (exit {child.returncode}):\n{tail}")
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024.0, 1),
        "peak_tree_rss_mb": round(peak_tree / 2**20, 1),
    }


def database_bytes(url: str) -> int:
    from sqlalchemy import text

    from store import make_engine

    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "postgresql":
                return int(
                    conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
                )
            return folder_bytes(Path(engine.url.database or ""))
    finally:
        engine.dispose()


COUNTS = {
    "page rows": "SELECT COUNT(*) FROM page",
    "pages fetched (200)": "SELECT COUNT(*) FROM page WHERE http_status = 200",
    "university pages": "SELECT COUNT(*) FROM page WHERE role = 'university'",
    "external pages (200)": (
        "SELECT COUNT(*) FROM page WHERE role = 'external' AND http_status = 200"
    ),
    "citing pages (200)": "SELECT COUNT(*) FROM page WHERE role = 'citing' AND http_status = 200",
    "outgoing domains": (
        "SELECT COUNT(DISTINCT domain) FROM environment WHERE direction = 'outgoing'"
    ),
    "citing domains": "SELECT COUNT(DISTINCT domain) FROM environment WHERE direction = 'citing'",
    "pages extracted (ok)": "SELECT COUNT(*) FROM page WHERE extraction_status = 'ok'",
    "page documents": "SELECT COUNT(*) FROM document WHERE unit = 'page'",
    "domain documents": "SELECT COUNT(*) FROM document WHERE unit = 'domain'",
    "duplicates": "SELECT COALESCE(SUM(n_duplicates), 0) FROM dedup_run",
    "clusterings": "SELECT COUNT(*) FROM clustering",
    "documents clustered": "SELECT COALESCE(SUM(n_documents), 0) FROM clustering",
    "clusters": "SELECT COALESCE(SUM(n_clusters), 0) FROM clustering",
    "domains categorised": "SELECT COUNT(*) FROM domain_category",
}


def counts(url: str) -> dict[str, int]:
    from sqlalchemy import text

    from store import make_engine

    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return {k: int(conn.execute(text(q)).scalar_one()) for k, q in COUNTS.items()}
    finally:
        engine.dispose()


# ---------------------------------------------------------------------------- the web


def build_web(folder: Path, args: argparse.Namespace, env: dict[str, str], logs: Path) -> dict:
    """The paper-scale web, built in a fresh process (measured like a stage)."""
    code = (
        "import json, sys; from testbed.paper_scale import PaperWebOptions, build_paper_web; "
        f"r = build_paper_web({str(folder)!r}, PaperWebOptions(scale={args.scale}, "
        f"seed={args.seed}, citing_pages={args.citing_pages})); print(json.dumps(r))"
    )
    run = run_command(["-c", code], env, logs / "build.log")
    made = json.loads((logs / "build.log").read_text(encoding="utf-8").strip().splitlines()[-1])
    return {**run, "disk_bytes": folder_bytes(folder), "web": made}


class Served:
    """``webometrics testbed serve`` of ``folder`` in its own process, with latency."""

    def __init__(self, folder: Path, args: argparse.Namespace, env: dict[str, str], log: Path):
        self.log_file = log.with_suffix(".jsonl")
        cmd = [sys.executable, "-m", "webometrics", "testbed", "serve", "--dir", str(folder),
               "--port", "0", "--log-file", str(self.log_file), "--latency", str(args.latency),
               "--latency-max", str(args.latency_max)]  # fmt: skip
        self.out = log.open("w", encoding="utf-8")
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                     stderr=self.out, text=True)  # fmt: skip
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        found = re.search(r"on (http://127\.0\.0\.1:\d+)", line)
        if not found:
            self.stop()
            raise SystemExit(f"the test web did not start: {line!r}")
        self.url = found.group(1)
        self.tree = TreePeak(self.proc.pid)

    def stop(self) -> int:
        peak = self.tree.stop() if hasattr(self, "tree") else 0
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        return peak


def split_log(path: Path) -> dict[str, Any]:
    """The test web's log per direction: requests, window (first to last), answer times."""
    times: dict[str, list[float]] = {"outgoing": [], "citing": []}
    waits: list[float] = []
    for line in path.open(encoding="utf-8"):
        e = json.loads(line)
        host = e["url"].split("/")[2] if "://" in e["url"] else ""
        times["citing" if CITING_HOST.search(host) else "outgoing"].append(e["time"])
        if e.get("seconds") is not None:
            waits.append(e["seconds"])
    out: dict[str, Any] = {}
    for direction, ts in times.items():
        if ts:
            window = max(ts) - min(ts)
            out[direction] = {
                "requests": len(ts),
                "window_s": round(window, 1),
                "requests_per_s": round(len(ts) / window, 1) if window else None,
            }
    if waits:
        waits.sort()
        out["answer_s"] = {
            "median": round(waits[len(waits) // 2], 3),
            "mean": round(sum(waits) / len(waits), 3),
            "p95": round(waits[int(len(waits) * 0.95)], 3),
        }
    return out


# ---------------------------------------------------------------------------- the pipeline


def rehearse(args: argparse.Namespace, work: Path, out: dict[str, Any]) -> None:
    """Build, serve and run every stage, adding ``web`` and ``stages`` to ``out``; the
    partial results are saved after each stage (a run cut short keeps what it measured)."""
    web, logs, report_dir, jobdir = work / "web", work / "logs", work / "report", work / "job"
    logs.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    from core.shared_data import data_dir

    env["WEBOMETRICS_DATA"] = str(data_dir())
    stages: list[dict[str, Any]] = []
    out["stages"] = stages

    def note(stage: dict[str, Any]) -> None:
        stages.append(stage)
        shown = {k: v for k, v in stage.items() if k not in ("web", "counts")}
        print(f"{stage['stage']}: {json.dumps(shown)}", flush=True)
        if not args.no_save:
            write_results(args.out_stem, out, markdown(out), indent=1, newline=True)

    built = build_web(web, args, env, logs)
    out["web"] = built["web"]
    note({"stage": "build", **{k: v for k, v in built.items() if k != "web"}})

    servers: list[Any] = []
    db_url, redis_url = args.db_url, args.redis_url
    if db_url is None or redis_url is None:
        from tests.conftest import PostgresServer, RedisServer
    if db_url is None:
        pg = PostgresServer()
        pg.start()
        servers.append(pg)
        db_url = pg.create_database()
    if redis_url is None:
        redis = RedisServer()
        redis.start()
        servers.append(redis)
        redis_url = redis.url
    env["WEBOMETRICS_DB_URL"] = db_url
    env.update(
        {
            "WEBOMETRICS_CRAWL__CONCURRENT_REQUESTS": str(args.concurrency),
            "WEBOMETRICS_CRAWL__REDIS_URL": redis_url,
            "WEBOMETRICS_CRAWL__PROCESSES": str(args.processes),
        }
    )
    wm = ["-m", "webometrics", "-q"]
    served = None
    try:
        before = database_bytes(db_url)
        run = run_command([*wm, "db", "upgrade"], env, logs / "setup-db.log")
        run2 = run_command(
            [*wm, "universities", "import", str(web / "universities.toml")],
            env, logs / "setup-universities.log",
        )  # fmt: skip
        after = database_bytes(db_url)
        note({"stage": "setup", **{k: round(run[k] + run2[k], 2) for k in ("wall_s", "cpu_s")},
              "peak_rss_mb": max(run["peak_rss_mb"], run2["peak_rss_mb"]),
              "peak_tree_rss_mb": max(run["peak_tree_rss_mb"], run2["peak_tree_rss_mb"]),
              "db_bytes": after, "db_growth_bytes": after - before, "files_bytes": 0})  # fmt: skip
        served = Served(web, args, env, logs / "testweb.log")
        commands = {
            "crawl": [*wm, "crawl", "--direction", "both", "--proxy", served.url,
                      "--backlinks", str(web / "citing" / "backlinks-majestic.csv"),
                      "--jobdir", str(jobdir), "--redis", redis_url,
                      "--processes", str(args.processes), "--no-progress"],
            "extract": [*wm, "extract"],
            "dedup": [*wm, "dedup"],
            "cluster": [*wm, "cluster"],
            "analyse": [*wm, "analyse"],
            "report": [*wm, "report", "--out", str(report_dir)],
        }  # fmt: skip
        files = {"crawl": jobdir, "report": report_dir}
        for name, cmd in commands.items():
            before = database_bytes(db_url)
            load = load_averages()
            run = run_command(cmd, env, logs / f"{name}.log")
            stage: dict[str, Any] = {"stage": name, **run, "load_before": load}
            if name == "crawl" and served is not None:
                stage["testweb_peak_rss_mb"] = round(served.stop() / 2**20, 1)
                served = None
                stage["directions"] = split_log(logs / "testweb.jsonl")
            after = database_bytes(db_url)
            stage.update(
                db_bytes=after,
                db_growth_bytes=after - before,
                files_bytes=folder_bytes(files[name]) if name in files else 0,
                counts=counts(db_url),
            )
            note(stage)
    finally:
        if served is not None:
            served.stop()
        for server in reversed(servers):
            server.stop()


# ---------------------------------------------------------------------------- the report


def _mb(n: float) -> str:
    return f"{n / 2**20:,.1f}"


def markdown(out: dict[str, Any]) -> str:
    s = out["scale"]
    web = out["web"]
    pages = web["pages"]
    unis = web["universities"].values()
    n_out = sum(u["outgoing_ru"] + u["outgoing_en"] for u in unis)
    n_cite = sum(u["citing_ru"] + u["citing_en"] for u in unis)
    lines = [
        f"# Rehearsal at the paper's scale (scale {s:g})",
        "",
        f"`{out['command']}`, {out['date']}; machine: {out['machine']} (shared: load "
        f"averages {out['load_start']} at the start, {out.get('load_end', '—')} at the end). "
        f"The generated web (`testbed/paper_scale.py`): nine universities, Table 3's domain "
        f"counts × {s:g}: {n_out:,} outgoing and {n_cite:,} citing domains; "
        f"{pages.get('university', 0):,} university pages, "
        f"{pages.get('outgoing', 0):,} outgoing-site pages, {pages.get('citing', 0):,} citing "
        f"pages ({web['urls']:,} URLs, {_mb(sum(web['bytes'].values()))} MB of bodies). "
        f"Served in its own process with {out['latency']:g}-{out['latency_max']:g} s per "
        f"answer (log-uniform); crawled through the crawl farm: Redis frontier, "
        f"{out['processes']} crawler processes, {out['concurrency']} requests in flight per "
        "process, the real politeness defaults (0.25 s per host, AutoThrottle, 4 per host, "
        "robots.txt); PostgreSQL (fsync off) on the same machine.",
        "",
        "| stage | wall s | CPU s | peak RSS MB (largest process) | peak RSS MB (process tree) "
        "| database MB after (growth) | files MB | pages and domains after it |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for st in out["stages"]:
        c = st.get("counts", {})
        shown = {
            "build": f"{web['urls']:,} URLs served",
            "setup": "9 universities",
            "crawl": f"{c.get('page rows', 0):,} page rows ({c.get('pages fetched (200)', 0):,} "
            f"fetched: {c.get('university pages', 0):,} university, "
            f"{c.get('external pages (200)', 0):,} external, {c.get('citing pages (200)', 0):,} "
            f"citing); {c.get('outgoing domains', 0):,} outgoing and "
            f"{c.get('citing domains', 0):,} citing domains",
            "extract": f"{c.get('pages extracted (ok)', 0):,} pages extracted; "
            f"{c.get('page documents', 0):,} page and {c.get('domain documents', 0):,} domain "
            "documents",
            "dedup": f"{c.get('duplicates', 0):,} duplicates",
            "cluster": f"{c.get('clusterings', 0):,} clusterings of "
            f"{c.get('documents clustered', 0):,} documents: {c.get('clusters', 0):,} clusters",
            "analyse": f"{c.get('domains categorised', 0):,} domains categorised",
            "report": "report folder",
        }[st["stage"]]
        db = f"{_mb(st['db_bytes'])} (+{_mb(st['db_growth_bytes'])})" if "db_bytes" in st else "—"
        files = st.get("disk_bytes", st.get("files_bytes", 0))
        lines.append(
            f"| {st['stage']} | {st['wall_s']:,.1f} | {st['cpu_s']:,.1f} | "
            f"{st['peak_rss_mb']:,.0f} | {st['peak_tree_rss_mb']:,.0f} | {db} | "
            f"{_mb(files)} | {shown} |"
        )
    crawl = next((st for st in out["stages"] if st["stage"] == "crawl"), None)
    if crawl:
        d = crawl["directions"]
        lines += [
            "",
            "The crawl by direction (from the test web's log, first to last request; "
            "robots.txt requests included):",
            "",
            "| direction | requests | window s | requests/s |",
            "|---|---:|---:|---:|",
        ]
        for direction in ("outgoing", "citing"):
            if direction in d:
                r = d[direction]
                lines.append(
                    f"| {direction} | {r['requests']:,} | {r['window_s']:,.1f} | "
                    f"{r['requests_per_s']} |"
                )
        if "answer_s" in d:
            a = d["answer_s"]
            lines += ["", f"Answer times served: median {a['median']} s, mean {a['mean']} s, "
                      f"95th percentile {a['p95']} s; the test web's peak RSS "
                      f"{crawl['testweb_peak_rss_mb']:,.0f} MB."]  # fmt: skip
    if s != 1:
        total = sum(st["wall_s"] for st in out["stages"])
        lines += [
            "",
            f"Linear extrapolation to scale 1 (× {1 / s:g}; not measured): "
            + ", ".join(
                f"{st['stage']} {st['wall_s'] / s / 60:,.0f} min"
                for st in out["stages"]
                if st["stage"] != "setup"
            )
            + f"; all stages {total / s / 3600:,.1f} h. Database "
            f"{_mb(out['stages'][-1].get('db_bytes', 0) / s)} MB.",
        ]
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="share of the paper's domain counts (default 1: its size)",
    )
    parser.add_argument("--seed", type=int, default=2015, help="the web's seed (2015)")
    parser.add_argument(
        "--citing-pages",
        type=float,
        default=1.5,
        help="mean citing pages per citing domain, 1-4 (default 1.5)",
    )
    parser.add_argument(
        "--latency", type=float, default=0.1, help="shortest answer time in seconds (default 0.1)"
    )
    parser.add_argument(
        "--latency-max",
        type=float,
        default=0.5,
        help="longest answer time in seconds (default 0.5)",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=3,
        help="crawler processes on the Redis frontier (default 3)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=32,
        help="requests in flight per crawler process (default 32)",
    )
    parser.add_argument(
        "--db-url", help="a PostgreSQL database to use (default: a private server started here)"
    )
    parser.add_argument("--redis-url", help="a Redis to use (default: a private one)")
    parser.add_argument(
        "--workdir",
        type=Path,
        help="keep the web, logs and report here (default: a temporary folder)",
    )
    parser.add_argument(
        "--out-stem",
        type=Path,
        default=RESULTS / "rehearsal",
        help="write STEM.json and STEM.md (default bench/results/rehearsal)",
    )
    parser.add_argument("--no-save", action="store_true", help="print only")
    args = parser.parse_args(argv)  # fmt: skip
    if not 0 < args.scale <= 10:
        parser.error("--scale must be in (0, 10]")
    if not 0 <= args.latency <= args.latency_max:
        parser.error("need 0 <= --latency <= --latency-max")
    if args.processes < 1 or args.concurrency < 1:
        parser.error("--processes and --concurrency must be at least 1")

    work = args.workdir or Path(tempfile.mkdtemp(prefix="webometrics-rehearsal-"))
    work.mkdir(parents=True, exist_ok=True)
    given = argv if argv is not None else sys.argv[1:]
    out: dict[str, Any] = {
        "command": " ".join(["python bench/rehearsal.py", *given]),
        "date": run_date(),
        "machine": machine(),
        "load_start": load_averages(),
        "scale": args.scale,
        "latency": args.latency,
        "latency_max": args.latency_max,
        "processes": args.processes,
        "concurrency": args.concurrency,
    }  # fmt: skip
    try:
        rehearse(args, work, out)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    out["load_end"] = load_averages()
    md = markdown(out)
    print(md)
    if not args.no_save:
        write_results(args.out_stem, out, md, indent=1, newline=True)
        print(f"wrote {args.out_stem}.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
