"""Crawl farm throughput: pages per second with 1 and 3 crawler processes.

What runs: ``webometrics.stages.crawl.run`` (the code of ``webometrics crawl``) on the four
WebKB universities of the local test web, outgoing direction, to depth 3 (``--depth``),
politeness delays off (robots.txt obeyed), 16 concurrent requests per process (8 per
host), storing into a private PostgreSQL server (started here, ``fsync=off``) -- the
team-server set-up. Configurations:

* **1 process** -- the one-process crawl (its SQLite frontier in the job folder);
* **1 process + Redis** -- the same on the shared Redis frontier (what the farm costs);
* **3 processes + Redis** -- ``--redis URL --processes 3``: the crawl farm.

Two kinds of web: the test web as is (answers in well under a millisecond, so the crawl is
bound by the CPU), and the test web with ``--latency`` (default 0.1 s) added before every
answer, as the round trip to distant sites would (the crawl is then bound by the requests
one process keeps in flight). The server, PostgreSQL, Redis and the crawler processes share
this machine's cores; the 1-minute load average before each run is recorded.

Reported: page rows stored (every URL asked for: answers, errors, refusals) per second of
the crawl's wall time (from the first to the last request the test web served: process
start-up and the final statistics excluded), the same over the whole stage call, the
crawl processes' CPU seconds, and the speed-up of 3 processes over 1. Each configuration
runs ``--repeat`` times; the best is shown, all are listed.

Run: ``.venv/bin/python bench/scale.py`` (about 10 minutes; ``--depth 2`` for a quick
look); writes ``bench/results/scale.json`` and ``bench/results/scale.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, children_cpu, machine_info, write_results  # noqa: E402

CONFIGS = (
    ("1 process", 1, False),
    ("1 process + Redis", 1, True),
    ("3 processes + Redis", 3, True),
)


def _settings(depth: int) -> Any:
    from core.settings import Settings

    return Settings().replace(
        crawl={
            "depth": depth,
            "download_delay": 0.0,
            "autothrottle": False,
            "concurrent_requests": 16,
            "concurrent_per_domain": 8,
            "retry_times": 0,
            "flush_seconds": 1.0,
        }
    )


def run_once(
    testbed_dir: Path,
    pg: Any,
    redis_url: str,
    depth: int,
    processes: int,
    use_redis: bool,
    latency: float,
) -> dict[str, Any]:
    from store import make_engine, schema
    from testbed.server import TestbedServer
    from webometrics.stages import crawl

    engine = make_engine(pg.create_database())
    schema.upgrade(engine)
    load = os.getloadavg()[0]
    with (
        tempfile.TemporaryDirectory(prefix="bench-scale-") as work,
        TestbedServer(testbed_dir, latency=latency) as server,
    ):
        cpu0 = children_cpu()
        started = time.perf_counter()
        settings = _settings(depth).replace(
            crawl={
                "proxy": server.proxy_url,
                "jobdir": str(Path(work) / "job"),
                "redis_url": redis_url if use_redis else None,
                "processes": processes,
            }
        )
        stats = crawl.run(
            engine,
            settings,
            crawl.CrawlScope(
                universities_file=str(ROOT / "testbed" / "universities.toml"),
                direction="outgoing",
            ),
        )
        wall = time.perf_counter() - started
        cpu = children_cpu() - cpu0
        log = server.requests
    engine.dispose()
    times = [e["time"] for e in log]
    window = max(times) - min(times) if times else wall
    rows = stats.pages_recorded
    return {
        "processes": processes,
        "redis": use_redis,
        "latency": latency,
        "depth": depth,
        "rows": rows,
        "answers": stats.pages,
        "requests_served": len(log),
        "links": stats.links,
        "crawl_seconds": round(window, 2),
        "wall_seconds": round(wall, 2),
        "rows_per_s": round(rows / window, 1),
        "rows_per_s_wall": round(rows / wall, 1),
        "cpu_seconds": round(cpu, 1),
        "load_1min_before": round(load, 2),
    }


SMOKE_SKIP = "crawls the local test web at several depths (about 10 minutes)"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=3, help="crawl depth (default 3)")
    parser.add_argument("--repeat", type=int, default=2, help="runs per configuration")
    parser.add_argument(
        "--latency",
        type=float,
        default=0.1,
        help="seconds added before every answer in the second series (default 0.1)",
    )
    args = parser.parse_args(argv)

    from core.shared_data import data_dir
    from testbed.build import shared_build
    from tests.conftest import PostgresServer, RedisServer

    testbed_dir = shared_build(data_dir=data_dir())
    pg, redis = PostgresServer(), RedisServer()
    pg.start()
    redis.start()
    results: list[dict[str, Any]] = []
    try:
        for latency in (0.0, args.latency):
            for name, processes, use_redis in CONFIGS:
                runs = []
                for _ in range(args.repeat):
                    r = run_once(
                        testbed_dir, pg, redis.url, args.depth, processes, use_redis, latency
                    )
                    print(
                        f"latency {latency:g} s, {name}: {r['rows']} rows in "
                        f"{r['crawl_seconds']} s = {r['rows_per_s']} rows/s "
                        f"(load {r['load_1min_before']})",
                        flush=True,
                    )
                    runs.append(r)
                best = max(runs, key=lambda r: r["rows_per_s"])
                results.append({"config": name, "latency": latency, "best": best, "runs": runs})
    finally:
        redis.stop()
        pg.stop()
    out = {
        "machine": machine_info("cpus", "python", "platform"),
        "depth": args.depth,
        "repeat": args.repeat,
        "results": results,
    }
    md = _markdown(out)
    write_results(RESULTS / "scale", out, md)
    print(md)
    return 0


def _markdown(out: dict[str, Any]) -> str:
    lines = [
        "# Crawl farm throughput (1 and 3 crawler processes)",
        "",
        f"Four WebKB universities of the local test web, outgoing, depth {out['depth']}, "
        "politeness delays off (robots.txt obeyed), 16 concurrent requests per process "
        "(8 per host), PostgreSQL (fsync off) on the same machine; "
        f"{out['machine']['cpus']} CPUs shared by the test web's server, PostgreSQL, Redis "
        "and the crawler processes. Best of "
        f"{out['repeat']} runs.",
        "",
        "| web | configuration | rows | crawl s | **rows/s** | rows/s (whole stage) "
        "| CPU s | speed-up vs 1 process | runs: rows/s (load before) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    base: dict[float, float] = {}
    for res in out["results"]:
        b = res["best"]
        web = "no latency" if not res["latency"] else f"{res['latency'] * 1000:g} ms per answer"
        if res["config"] == "1 process":
            base[res["latency"]] = b["rows_per_s"]
        speed = b["rows_per_s"] / base[res["latency"]] if base.get(res["latency"]) else None
        runs = ", ".join(f"{r['rows_per_s']} ({r['load_1min_before']})" for r in res["runs"])
        lines.append(
            f"| {web} | {res['config']} | {b['rows']} | {b['crawl_seconds']} | "
            f"**{b['rows_per_s']}** | {b['rows_per_s_wall']} | {b['cpu_seconds']} | "
            f"{'' if speed is None else f'{speed:.2f}x'} | {runs} |"
        )
    lines += [
        "",
        "rows = page rows stored (every URL asked for: answers, errors, robots.txt and "
        "safety refusals); crawl s = from the first to the last request the test web "
        "served; rows/s (whole stage) includes starting the processes and the run's final "
        "statistics; CPU s = the crawl processes' user + system time. Budgets are the "
        "defaults (2,000 requests per university, 3 extra pages per external domain, "
        "`[crawl] fixed_budgets`: shared out when their level starts), so every "
        "configuration fetches the same pages whatever order answers arrive in "
        "(`tests/crawler/test_farm.py` checks the pages and links with budgets that bind).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
