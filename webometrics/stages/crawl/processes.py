"""Running one phase's crawler processes (:mod:`crawler.run`): starting them, showing
their progress from the JSON lines they print, stopping them on Ctrl-C, and summing their
Scrapy statistics.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any


def _run_children(
    job_file: Path, phase: str, progress: bool, processes: int = 1, *, db_url: str | None = None
) -> dict[str, Any]:
    """Run one phase's crawler process(es), showing their progress; return the outcome.

    Each process prints JSON progress records; they are appended to
    ``<phase>.progress.jsonl`` (with the process number) and each process's standard
    error goes to ``<phase>.stderr`` (``<phase>.<n>.stderr`` for several processes) in
    the job folder. The outcome holds the summed Scrapy statistics of the processes'
    last records (``stats``), the first failing ``returncode`` (else 0) and the failing
    processes' standard error (``stderr``). ``db_url`` (password included) reaches the
    processes in their environment, never in a file; those files are the owner's only.
    """
    import queue
    import threading

    from tqdm import tqdm

    cmd = [sys.executable, "-m", "crawler.run", str(job_file)]
    from webometrics.stages.crawl.job import child_environment, private_opener

    env = child_environment(db_url) if db_url else {**os.environ, "PYTHONUNBUFFERED": "1"}
    desc = f"crawl {phase}" + (f" ({processes} processes)" if processes > 1 else "")
    bar = tqdm(desc=desc, unit="page", disable=not progress, dynamic_ncols=True)
    err_paths = [
        job_file.with_suffix(".stderr" if processes == 1 else f".{n}.stderr")
        for n in range(processes)
    ]
    lines: queue.Queue[tuple[int, str | None]] = queue.Queue()
    procs: list[subprocess.Popen[str]] = []
    last: list[dict[str, Any]] = [{} for _ in range(processes)]

    def pump(n: int, stream: Any) -> None:
        for line in stream:
            lines.put((n, line))
        lines.put((n, None))

    progress_file = job_file.with_suffix(".progress.jsonl")
    with open(progress_file, "a", encoding="utf-8", opener=private_opener) as records:
        try:
            for n in range(processes):
                with open(err_paths[n], "w", encoding="utf-8", opener=private_opener) as err:
                    proc = subprocess.Popen(
                        cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env
                    )
                procs.append(proc)
                threading.Thread(target=pump, args=(n, proc.stdout), daemon=True).start()
            open_streams = processes
            while open_streams:
                n, line = lines.get()
                if line is None:
                    open_streams -= 1
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if processes > 1:
                    record["process"] = n
                records.write(json.dumps(record, default=str) + "\n")
                last[n] = record
                stored = sum(int(r.get("stored") or 0) for r in last)
                if stored > bar.n:
                    bar.update(stored - bar.n)
                bar.set_postfix(
                    queued=record.get("queued", 0),
                    errors=sum(int(r.get("error_pages") or 0) for r in last),
                    refresh=False,
                )
            codes = [proc.wait() for proc in procs]
        except BaseException:
            # Ctrl-C reaches the children too (same process group); let them store what
            # they hold
            for proc in procs:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGINT)
            for proc in procs:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(60)
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            raise
        finally:
            bar.close()
    stats: dict[str, Any] = {}
    for record in last:
        stats = _merge_scrapy_stats(stats, record.get("stats") or {})
    failing = [n for n, code in enumerate(codes) if code != 0]
    outcome = dict(last[0]) if processes == 1 else {}
    outcome["stats"] = stats
    outcome["returncode"] = codes[failing[0]] if failing else 0
    outcome["stderr"] = "\n".join(
        err_paths[n].read_text(encoding="utf-8", errors="replace")[-4000:] for n in (failing or [0])
    )
    return outcome


def _merge_scrapy_stats(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    out = dict(old)
    for key, value in new.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = out.get(key, 0) + value
    return out
