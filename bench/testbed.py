"""The local test web: build time and the proxy server's throughput.

* **build**: ``webometrics testbed build`` with the default options into a temporary
  folder (WebKB read and link extraction, text pools, 300 generated sites, citing sites,
  resolution of every target, writing), three runs, wall seconds; the output's size and
  counts.
* **serve**: ``webometrics testbed serve`` in its own process; clients in this process
  fetch a seeded sample of 3,000 university pages (the 1997 HTML, 11 KB on average)
  through it as an HTTP proxy, over keep-alive connections, with 1, 4 and 16 concurrent
  clients; then 500 ``https://`` pages through ``CONNECT`` tunnels (TLS terminated by the
  server). Pages per second = pages / wall time; the server's CPU seconds come from
  ``/proc``. Clients and server share the 2 cores, so the figure is a floor of what a
  crawler sees.

The crawl benchmark (``bench/crawl.py``) needs >= 150 pages/s end to end; the server
must not be what limits it.

Run: ``.venv/bin/python bench/testbed.py`` (about 2 minutes); writes
``bench/results/testbed.json`` and ``bench/results/testbed.md``.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, machine_info, write_results  # noqa: E402
from testbed.build import BuildOptions, build  # noqa: E402
from testbed.manifest import load_manifest  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _run_clients(port: int, urls: list[str], clients: int, https: bool = False) -> float:
    errors: list[str] = []
    context = ssl._create_unverified_context()

    def client(part: list[str]) -> None:
        conns: dict[str, http.client.HTTPConnection] = {}
        for url in part:
            if https:
                host = url.split("/")[2]
                conn = conns.get(host)
                if conn is None:
                    conn = http.client.HTTPSConnection(
                        "127.0.0.1", port, timeout=60, context=context
                    )
                    conn.set_tunnel(host, 443)
                    conns[host] = conn
                conn.request("GET", "/" + url.split("/", 3)[3])
            else:
                conn = conns.setdefault(
                    "", http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                )
                conn.request("GET", url)
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                errors.append(f"{url}: {r.status}")
        for conn in conns.values():
            conn.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(urls[i::clients],)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    if errors:
        raise SystemExit(f"{len(errors)} errors, e.g. {errors[:3]}")
    return seconds


SMOKE_SKIP = "builds the local test web three times (about 2 minutes)"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0]).parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-testbed-"))
    results: dict = {"machine": machine_info("python", "cpus")}
    try:
        times = []
        stats = {}
        for i in range(3):
            out = tmp / f"web{i}"
            t = time.perf_counter()
            stats = build(out, BuildOptions())
            times.append(time.perf_counter() - t)
            print(f"build {i + 1}: {times[-1]:.1f} s")
        size = sum(p.stat().st_size for p in (tmp / "web0").rglob("*") if p.is_file())
        results["build"] = {
            "seconds": [round(x, 2) for x in times],
            "median_seconds": round(sorted(times)[1], 2),
            "output_mb": round(size / 1e6, 1),
            **{k: v for k, v in stats.items() if k != "seconds"},
        }
        folder = tmp / "web0"
        manifest = load_manifest(folder)
        pages = [
            p["url"]
            for u in manifest.universities
            for p in u["pages"]
            if p["status"] == 200 and "/testbed/" not in p["url"]
        ]
        sample = random.Random(1).sample(pages, 3000)
        https_pages = [
            p["url"]
            for s in manifest.data["sites"].values()
            for p in s["pages"]
            if p["url"].startswith("https://")
        ]
        https_sample = random.Random(2).sample(https_pages, min(500, len(https_pages)))
        port = _free_port()
        proc = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "webometrics"), "testbed", "serve",
             "--dir", str(folder), "--port", str(port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    time.sleep(0.1)
            rows = []
            for clients in (1, 4, 16):
                cpu0 = _cpu_seconds(proc.pid)
                seconds = _run_clients(port, sample, clients)
                cpu = _cpu_seconds(proc.pid) - cpu0
                rows.append({"scheme": "http", "clients": clients, "pages": len(sample),
                             "seconds": round(seconds, 2),
                             "pages_per_s": round(len(sample) / seconds),
                             "server_cpu_s": round(cpu, 2)})  # fmt: skip
                print(rows[-1])
            cpu0 = _cpu_seconds(proc.pid)
            seconds = _run_clients(port, https_sample, 4, https=True)
            cpu = _cpu_seconds(proc.pid) - cpu0
            rows.append({"scheme": "https (CONNECT)", "clients": 4, "pages": len(https_sample),
                         "seconds": round(seconds, 2),
                         "pages_per_s": round(len(https_sample) / seconds),
                         "server_cpu_s": round(cpu, 2)})  # fmt: skip
            print(rows[-1])
            results["serve"] = rows
        finally:
            proc.terminate()
            proc.wait(10)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    b = results["build"]
    md = [
        "# Test web: build and proxy throughput",
        "",
        f"Build (default options, 3 runs): median **{b['median_seconds']} s** "
        f"({', '.join(str(s) for s in b['seconds'])}); output {b['output_mb']} MB; "
        f"{b['served_urls']} served URLs, {b['university_pages']} university pages, "
        f"{b['external_links']} external links to {b['targets']} targets "
        f"({b['reachable_targets']} reachable).",
        "",
        "| scheme | clients | pages | seconds | pages/s | server CPU s |",
        "|---|---|---|---|---|---|",
    ]
    for r in results["serve"]:
        md.append(
            f"| {r['scheme']} | {r['clients']} | {r['pages']} | {r['seconds']} | "
            f"{r['pages_per_s']} | {r['server_cpu_s']} |"
        )
    md += ["", f"Python {results['machine']['python']}, {results['machine']['cpus']} CPUs "
           "shared with the clients (and other work on the machine)."]  # fmt: skip
    write_results(RESULTS / "testbed", results, "\n".join(md) + "\n", indent=2, newline=True)
    print("\n".join(md))


if __name__ == "__main__":
    main()
