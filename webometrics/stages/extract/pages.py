"""Step 1 of the extract stage: every pending page extracted (in the worker processes or
in this one) and its columns written back in batches, one transaction each.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, func, select, update
from tqdm import tqdm

from core.settings import Settings
from store.models import Page
from store.session import session_scope
from webometrics.stages.extract.columns import WorkerConfig
from webometrics.stages.extract.pool import Task, run_pool, work_inline

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PagesResult:
    """What step 1 did: the pages extracted (``pages``, ``by_status``), with how many
    worker processes and pool restarts, in how many seconds."""

    pages: int
    by_status: dict[str, int]
    workers: int
    worker_restarts: int
    seconds: float
    pages_per_second: float


def _pending_tasks(engine: Engine, chunk: int, limit: int | None) -> Iterator[Task]:
    """The pending pages in id order, read ``chunk`` at a time, at most ``limit``."""
    last_id, given = 0, 0
    while limit is None or given < limit:
        size = chunk if limit is None else min(chunk, limit - given)
        with session_scope(engine) as s:
            rows = s.execute(
                select(
                    Page.id,
                    Page.url,
                    Page.body,
                    Page.content_type,
                    Page.charset,
                    Page.warc_file,
                    Page.warc_offset,
                )
                .where(Page.extraction_status == "pending", Page.id > last_id)
                .order_by(Page.id)
                .limit(size)
            ).all()
        if not rows:
            return
        for row in rows:
            yield tuple(row)  # type: ignore[misc]
        last_id = rows[-1].id
        given += len(rows)


def _pending_count(engine: Engine, limit: int | None) -> int:
    with session_scope(engine) as s:
        total = int(
            s.scalar(select(func.count(Page.id)).where(Page.extraction_status == "pending")) or 0
        )
    return total if limit is None else min(total, limit)


class _Batches:
    """The extracted pages' columns, written back ``batch_size`` pages per transaction."""

    def __init__(self, engine: Engine, batch_size: int, bar: Any) -> None:
        self.engine = engine
        self.batch_size = batch_size
        self.bar = bar
        self.statuses: Counter[str] = Counter()
        self.buffer: list[dict[str, Any]] = []

    def record(self, page_id: int, cols: dict[str, Any]) -> None:
        """Take one page's columns; write the batch when it is full."""
        self.statuses[cols["extraction_status"]] += 1
        self.buffer.append({"id": page_id, **cols})
        self.bar.update(1)
        if len(self.buffer) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        """Write the pages taken since the last batch, in one transaction."""
        if not self.buffer:
            return
        with session_scope(self.engine) as s:
            s.execute(update(Page), self.buffer)
        self.buffer.clear()


def _extract_all(tasks: Iterator[Task], config: WorkerConfig, n_workers: int, out: _Batches) -> int:
    """Extract every task into ``out`` (in this process when ``n_workers`` is 0); what is
    done is written even when the run stops (Ctrl-C, an error). Returns the pool
    restarts."""
    n_restarts = 0
    try:
        if n_workers == 0:
            for task in tasks:
                out.record(*work_inline(task, config))
        else:
            n_restarts = run_pool(tasks, config, n_workers, out.record)
        out.flush()
    except BaseException:
        try:
            out.flush()  # keep what is done; the rest stays pending
        except Exception as exc:  # the same cause as the error raised: one line, not a trace
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            log.warning(
                "the last %d extracted pages were not stored (they stay pending): %s",
                len(out.buffer),
                first[:300],
            )
            log.debug("storing the last extracted pages failed", exc_info=True)
        raise
    return n_restarts


def extract_pages(
    engine: Engine,
    settings: Settings,
    *,
    limit: int | None = None,
    progress: bool = False,
) -> PagesResult:
    """Extract every pending page (step 1 of the stage); return the statistics.

    Parameters
    ----------
    settings : Settings
        ``[extract] workers`` (worker processes; default one per core; ``0``: in this
        process, no pool, no watchdog, the soft time cap still holds) and ``batch_size``
        (pages per transaction); the extraction and shingle options.
    limit : int, optional
        Extract at most this many pages.
    progress : bool
        Show a tqdm progress bar.
    """
    config = WorkerConfig.from_settings(settings)
    workers, batch_size = settings.extract.workers, settings.extract.batch_size
    total = _pending_count(engine, limit)
    n_workers = (os.cpu_count() or 1) if workers is None else workers
    started = time.perf_counter()
    bar = tqdm(total=total, desc="extract", unit="page", disable=not progress)
    out = _Batches(engine, batch_size, bar)
    tasks = _pending_tasks(engine, chunk=max(batch_size, 4 * max(n_workers, 1)), limit=limit)
    try:
        n_restarts = _extract_all(tasks, config, n_workers, out)
    finally:
        bar.close()
    seconds = time.perf_counter() - started
    done = sum(out.statuses.values())
    return PagesResult(
        pages=done,
        by_status=dict(sorted(out.statuses.items())),
        workers=n_workers,
        worker_restarts=n_restarts,
        seconds=round(seconds, 3),
        pages_per_second=round(done / seconds, 2) if seconds > 0 and done else 0.0,
    )
