"""The worker processes of the extract stage: a process pool rebuilt after a worker
died, a watchdog that ends a worker stuck beyond its hard cap, and the quarantine that
retries the pages in flight one at a time, so that a page that kills its worker twice is
marked ``error`` instead of blocking the run.
"""

from __future__ import annotations

import contextlib
import faulthandler
import logging
import multiprocessing
import os
import signal
import threading
import time
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from extract.page import extract_page
from webometrics.stages.extract.columns import (
    WorkerConfig,
    _error_columns,
    _raw_body,
    page_columns,
)

log = logging.getLogger(__name__)

_Task = tuple[int, str, bytes | None, str | None, str | None, str | None, int | None]


def _watch_parent(parent: int) -> None:
    """End this worker when its parent is gone (``kill -9`` of the run)."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(1)


def _worker_init() -> None:
    # Ctrl-C goes to the whole process group: the parent decides, workers carry on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    # load trafilatura, htmldate and the language model now, outside the time caps
    extract_page(
        "<html><head><title>t</title></head><body><article><p>"
        + "Warm-up text of the worker process, written once. " * 5
        + "</p></article></body></html>"
    )


def _work(task: _Task, config: WorkerConfig) -> tuple[int, dict[str, Any]]:
    """Extract one page in a worker process (under the watchdog)."""
    page_id, url, body, content_type, charset, warc_file, warc_offset = task
    hard = config.hard_seconds
    if hard is not None:
        faulthandler.dump_traceback_later(hard, exit=True)
    try:
        try:
            raw = _raw_body(body, warc_file, warc_offset)
        except (OSError, zlib.error, ValueError) as exc:
            return page_id, _error_columns(f"cannot read the stored body: {exc}")
        return page_id, page_columns(url, raw, content_type, charset, config)
    finally:
        if hard is not None:
            faulthandler.cancel_dump_traceback_later()


class _Pool:
    """A process pool that can be rebuilt after a worker died."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.executor: ProcessPoolExecutor | None = None
        self.start()

    def start(self) -> None:
        self.executor = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_init,
        )

    def restart(self) -> None:
        self.close(kill=True)
        self.start()

    def submit(self, task: _Task, config: WorkerConfig) -> Future[tuple[int, dict[str, Any]]]:
        assert self.executor is not None
        return self.executor.submit(_work, task, config)

    def close(self, *, kill: bool = False) -> None:
        ex, self.executor = self.executor, None
        if ex is None:
            return
        if kill:
            for proc in list(getattr(ex, "_processes", {}).values()):
                with contextlib.suppress(Exception):
                    proc.kill()
        ex.shutdown(wait=not kill, cancel_futures=True)


def _work_inline(task: _Task, config: WorkerConfig) -> tuple[int, dict[str, Any]]:
    """Extract one page in this process (no watchdog: it would end this process)."""
    page_id, url, body, content_type, charset, warc_file, warc_offset = task
    try:
        raw = _raw_body(body, warc_file, warc_offset)
    except (OSError, zlib.error, ValueError) as exc:
        return page_id, _error_columns(f"cannot read the stored body: {exc}")
    return page_id, page_columns(url, raw, content_type, charset, config)


def _run_pool(
    tasks: Iterator[_Task],
    config: WorkerConfig,
    n_workers: int,
    record: Callable[[int, dict[str, Any]], None],
) -> int:
    """Feed the tasks to the pool; isolate the pages that kill a worker. Returns the
    number of pool restarts."""
    pool = _Pool(n_workers)
    inflight: dict[Future[tuple[int, dict[str, Any]]], _Task] = {}
    suspects: deque[_Task] = deque()
    crashes: Counter[int] = Counter()
    restarts = 0
    exhausted = False
    try:
        while True:
            # quarantine: after a crash, the pages that were in flight go one at a time
            limit = 1 if suspects else 2 * n_workers
            while len(inflight) < limit:
                if suspects:
                    if inflight:
                        break
                    task = suspects.popleft()
                elif not exhausted:
                    try:
                        task = next(tasks)
                    except StopIteration:
                        exhausted = True
                        break
                else:
                    break
                inflight[pool.submit(task, config)] = task
            if not inflight:
                break
            done, _ = wait(inflight, return_when=FIRST_COMPLETED)
            broken = False
            for future in done:
                task = inflight.pop(future)
                try:
                    page_id, cols = future.result()
                except BrokenProcessPool:
                    broken = True
                    inflight[future] = task  # handled with the rest below
                    continue
                record(page_id, cols)
            if broken:
                restarts += 1
                log.warning(
                    "a worker died; restarting the pool (%d pages in flight)", len(inflight)
                )
                for task in inflight.values():
                    crashes[task[0]] += 1
                    if crashes[task[0]] >= 2:
                        hard = config.hard_seconds
                        record(
                            task[0],
                            _error_columns(
                                "the worker process died twice while extracting this page "
                                f"(watchdog after {hard:g} s, or out of memory)"
                                if hard
                                else "the worker process died twice while extracting this page"
                            ),
                        )
                    else:
                        suspects.append(task)
                inflight.clear()
                pool.restart()
    finally:
        pool.close(kill=True)
    return restarts
