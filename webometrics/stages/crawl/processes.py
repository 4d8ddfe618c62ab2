"""Running one phase's crawler processes (:mod:`crawler.run`): starting them, showing
their progress from the JSON lines they print, stopping them on Ctrl-C, and summing their
Scrapy statistics.
"""

from __future__ import annotations

import contextlib
import json
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from webometrics.stages.crawl.job import child_environment, private_opener

#: lines read from the processes' standard output: (process number, line or None at its end)
Lines = queue.Queue[tuple[int, str | None]]


def run_children(
    job_file: Path,
    phase: str,
    progress: bool,
    processes: int = 1,
    *,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run one phase's crawler process(es), showing their progress; return the outcome.

    Each process prints JSON progress records; they are appended to
    ``<phase>.progress.jsonl`` (with the process number) and each process's standard
    error goes to ``<phase>.stderr`` (``<phase>.<n>.stderr`` for several processes) in
    the job folder. The outcome holds the summed Scrapy statistics of the processes'
    last records (``stats``), the first failing ``returncode`` (else 0) and the failing
    processes' standard error (``stderr``). ``env`` is the processes' environment
    (:func:`~webometrics.stages.crawl.job.child_environment`: the secrets reach them
    there, never in a file); those files are the owner's only.
    """
    from tqdm import tqdm

    desc = f"crawl {phase}" + (f" ({processes} processes)" if processes > 1 else "")
    bar = tqdm(desc=desc, unit="page", disable=not progress, dynamic_ncols=True)
    err_paths = [
        job_file.with_suffix(".stderr" if processes == 1 else f".{n}.stderr")
        for n in range(processes)
    ]
    lines: Lines = queue.Queue()
    procs: list[subprocess.Popen[str]] = []
    last: list[dict[str, Any]] = [{} for _ in range(processes)]
    progress_file = job_file.with_suffix(".progress.jsonl")
    with open(progress_file, "a", encoding="utf-8", opener=private_opener) as records:
        try:
            _start(job_file, env, err_paths, lines, procs)
            _follow(lines, processes, records, bar, last)
            codes = [proc.wait() for proc in procs]
        except BaseException:
            _stop(procs)
            raise
        finally:
            bar.close()
    return _outcome(last, codes, err_paths)


def _start(
    job_file: Path,
    env: dict[str, str] | None,
    err_paths: list[Path],
    lines: Lines,
    procs: list[subprocess.Popen[str]],
) -> None:
    """Start one crawler process per standard error file, each appended to ``procs`` as
    it starts, with a thread putting its output lines on ``lines``."""
    cmd = [sys.executable, "-m", "crawler.run", str(job_file)]
    env = env if env is not None else child_environment(None)

    def pump(n: int, stream: IO[str]) -> None:
        for line in stream:
            lines.put((n, line))
        lines.put((n, None))

    for n, err_path in enumerate(err_paths):
        with open(err_path, "w", encoding="utf-8", opener=private_opener) as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        procs.append(proc)
        threading.Thread(target=pump, args=(n, proc.stdout), daemon=True).start()


def _follow(
    lines: Lines, processes: int, records: IO[str], bar: Any, last: list[dict[str, Any]]
) -> None:
    """Read the processes' progress records until every output ends: each is appended to
    ``records`` (with its process number when there are several), the last one of each
    process kept in ``last``, and the bar shows their sum."""
    open_streams = processes
    waiting = False
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
        if bool(record.get("store_waiting")) != waiting:  # say it: no silent waits
            waiting = not waiting
            bar.write(
                f"webometrics: note: the database does not answer (since "
                f"{record['store_waiting']}); the crawl keeps its pages and retries "
                "([crawl] store_retry_seconds)"
                if waiting
                else "webometrics: note: the database answers again; the crawl goes on",
                file=sys.stderr,
            )
        stored = sum(int(r.get("stored") or 0) for r in last)
        if stored > bar.n:
            bar.update(stored - bar.n)
        bar.set_postfix(
            queued=record.get("queued", 0),
            held=record.get("held", 0),
            errors=sum(int(r.get("error_pages") or 0) for r in last),
            refresh=False,
        )


def _stop(procs: list[subprocess.Popen[str]]) -> None:
    """Stop the processes gracefully: Ctrl-C reaches them too (same process group); let
    them store what they hold (a minute each), then kill those still running."""
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGINT)
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(60)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _outcome(last: list[dict[str, Any]], codes: list[int], err_paths: list[Path]) -> dict[str, Any]:
    """The phase's outcome from each process's last record, exit code and standard error."""
    stats: dict[str, Any] = {}
    for record in last:
        stats = merge_scrapy_stats(stats, record.get("stats") or {})
    failing = [n for n, code in enumerate(codes) if code != 0]
    outcome = dict(last[0]) if len(last) == 1 else {}
    outcome["stats"] = stats
    outcome["returncode"] = codes[failing[0]] if failing else 0
    outcome["stderr"] = "\n".join(
        err_paths[n].read_text(encoding="utf-8", errors="replace")[-4000:] for n in (failing or [0])
    )
    return outcome


def merge_scrapy_stats(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``old`` with the numbers of ``new`` added (Scrapy statistics of several processes
    or of a resumed phase)."""
    out = dict(old)
    for key, value in new.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = out.get(key, 0) + value
    return out
