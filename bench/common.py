"""What the benchmarks share: the machine they ran on, timing, peak memory, fresh-process
jobs and writing the results pair (``bench/results/NAME.json`` and ``NAME.md``).

The benchmarks run as scripts (``.venv/bin/python bench/NAME.py``); each puts the
repository on ``sys.path`` and imports these helpers as ``from bench.common import ...``.
This module measures and writes; it runs nothing itself.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


# --- the machine --------------------------------------------------------------------------------


def machine(cores: str = "CPUs") -> str:
    """The machine line of a report: architecture, CPUs (``cores`` names them), Python."""
    return f"{platform.machine()}, {os.cpu_count()} {cores}, Python {platform.python_version()}"


_MACHINE = {
    "python": platform.python_version,
    "platform": platform.platform,
    "cpus": os.cpu_count,
    "node": platform.machine,
}


def machine_info(*keys: str) -> dict[str, Any]:
    """The machine as a record of ``keys`` in that order (python, platform, cpus, node)."""
    return {key: _MACHINE[key]() for key in keys}


def run_date() -> str:
    """When a benchmark ran (local time, to the minute)."""
    return time.strftime("%Y-%m-%d %H:%M")


def load_averages() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# --- timing ------------------------------------------------------------------------------------


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (all processes), from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_script(args: list[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run ``python *args`` in a fresh interpreter from the repository's folder.

    Returns the finished process and the cores other processes kept busy meanwhile (the
    machine's busy CPU time less the job's, over its wall time).
    """
    busy0, wall0 = busy_seconds(), time.perf_counter()
    usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter() - wall0
    mine = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
    return out, max(0.0, (busy_seconds() - busy0 - mine) / wall)


# --- peak memory -------------------------------------------------------------------------------


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (``ru_maxrss``), in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class AnonPeak:
    """Peak ``RssAnon`` of this process, sampled by a thread every 5 ms."""

    def __enter__(self) -> AnonPeak:
        self.base_kb = status_kb("RssAnon")
        self.peak_kb = self.base_kb
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(0.005):
            self.peak_kb = max(self.peak_kb, status_kb("RssAnon"))

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_kb = max(self.peak_kb, status_kb("RssAnon"))


# --- results -----------------------------------------------------------------------------------


def write_results(
    stem: Path, result: Any, md: str, *, indent: int = 1, newline: bool = False, **dumps: Any
) -> None:
    """Write ``stem.json`` (``result``; ``dumps`` go to :func:`json.dumps`, ``newline`` ends
    it with one) and ``stem.md`` (``md``), creating the folder."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result, indent=indent, **dumps) + ("\n" if newline else "")
    stem.with_suffix(".json").write_text(text, encoding="utf-8")
    stem.with_suffix(".md").write_text(md, encoding="utf-8")
