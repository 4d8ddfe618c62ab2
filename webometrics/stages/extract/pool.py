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

from crawler.warc import BodyTooLargeError
from extract.page import extract_page
from webometrics.stages.extract.columns import (
    WorkerConfig,
    error_columns,
    page_columns,
    raw_body,
)

log = logging.getLogger(__name__)

#: One pending page as the workers get it: id, URL, zlib body, content type, charset, WARC
#: file and offset.
Task = tuple[int, str, bytes | None, str | None, str | None, str | None, int | None]
#: ``record(page_id, columns)``: what the run does with each page extracted.
Record = Callable[[int, dict[str, Any]], None]
_Future = Future[tuple[int, dict[str, Any]]]


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


def _work(task: Task, config: WorkerConfig) -> tuple[int, dict[str, Any]]:
    """Extract one page in a worker process (under the watchdog)."""
    page_id = task[0]
    hard = config.hard_seconds
    if hard is not None:
        faulthandler.dump_traceback_later(hard, exit=True)
    try:
        return page_id, _columns(task, config)
    finally:
        if hard is not None:
            faulthandler.cancel_dump_traceback_later()


def _columns(task: Task, config: WorkerConfig) -> dict[str, Any]:
    """The extraction columns of one task's page; its body is read up to ``[extract]
    max_html_bytes`` (a larger one is ``too-large``, never inflated whole)."""
    _page_id, url, body, content_type, charset, warc_file, warc_offset = task
    try:
        raw = raw_body(body, warc_file, warc_offset, config.options.max_html_bytes)
    except BodyTooLargeError as exc:
        return error_columns(str(exc), "too-large")
    except (OSError, zlib.error, ValueError) as exc:
        return error_columns(f"cannot read the stored body: {exc}")
    return page_columns(url, raw, content_type, charset, config)


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

    def submit(self, task: Task, config: WorkerConfig) -> _Future:
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


def work_inline(task: Task, config: WorkerConfig) -> tuple[int, dict[str, Any]]:
    """Extract one page in this process (no watchdog: it would end this process)."""
    return task[0], _columns(task, config)


class _Feed:
    """The tasks still to submit: the quarantined pages first (after a crash, the pages
    that were in flight go one at a time), then the rest of the stream."""

    def __init__(self, tasks: Iterator[Task]) -> None:
        self.tasks = tasks
        self.suspects: deque[Task] = deque()
        self.exhausted = False

    def next(self, busy: bool) -> Task | None:
        """The next task to submit; None when there is none now (a suspect waits until
        nothing else is in flight)."""
        if self.suspects:
            return None if busy else self.suspects.popleft()
        if self.exhausted:
            return None
        try:
            return next(self.tasks)
        except StopIteration:
            self.exhausted = True
            return None


def _collect(inflight: dict[_Future, Task], record: Record) -> bool:
    """Wait for the first pages done and record them; True when the pool broke (the pages
    that were in flight then stay in ``inflight``)."""
    done, _ = wait(inflight, return_when=FIRST_COMPLETED)
    broken = False
    for future in done:
        task = inflight.pop(future)
        try:
            page_id, cols = future.result()
        except BrokenProcessPool:
            broken = True
            inflight[future] = task  # handled with the rest by _quarantine
            continue
        record(page_id, cols)
    return broken


def _quarantine(
    inflight: dict[_Future, Task],
    feed: _Feed,
    crashes: Counter[int],
    config: WorkerConfig,
    record: Record,
) -> None:
    """After a crash: a page in flight for the second time is marked ``error``, the others
    are retried one at a time."""
    for task in inflight.values():
        crashes[task[0]] += 1
        if crashes[task[0]] >= 2:
            hard = config.hard_seconds
            record(
                task[0],
                error_columns(
                    "the worker process died twice while extracting this page "
                    f"(watchdog after {hard:g} s, or out of memory)"
                    if hard
                    else "the worker process died twice while extracting this page"
                ),
            )
        else:
            feed.suspects.append(task)
    inflight.clear()


def run_pool(
    tasks: Iterator[Task],
    config: WorkerConfig,
    n_workers: int,
    record: Record,
) -> int:
    """Feed the tasks to a pool of ``n_workers`` processes and ``record(page_id, columns)``
    each page done; isolate the pages that kill a worker. Returns the number of pool
    restarts."""
    pool = _Pool(n_workers)
    feed = _Feed(tasks)
    inflight: dict[_Future, Task] = {}
    crashes: Counter[int] = Counter()
    restarts = 0
    try:
        while True:
            limit = 1 if feed.suspects else 2 * n_workers
            while len(inflight) < limit and (task := feed.next(bool(inflight))) is not None:
                inflight[pool.submit(task, config)] = task
            if not inflight:
                break
            if _collect(inflight, record):
                restarts += 1
                log.warning(
                    "a worker died; restarting the pool (%d pages in flight)", len(inflight)
                )
                _quarantine(inflight, feed, crashes, config, record)
                pool.restart()
    finally:
        pool.close(kill=True)
    return restarts
