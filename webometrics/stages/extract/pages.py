"""Step 1 of the extract stage: every pending page extracted (in the worker processes or
in this one) and its columns written back in batches, one transaction each.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

from sqlalchemy import Engine, func, select, update
from tqdm import tqdm

from core.exceptions import ParameterError
from core.settings import Settings
from store.models import Page
from store.session import session_scope
from webometrics.stages.extract.columns import WorkerConfig
from webometrics.stages.extract.pool import _run_pool, _Task, _work_inline

log = logging.getLogger(__name__)


def _pending_tasks(engine: Engine, chunk: int, limit: int | None) -> Iterator[_Task]:
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


def _flush(engine: Engine, buffer: list[dict[str, Any]]) -> None:
    if not buffer:
        return
    with session_scope(engine) as s:
        s.execute(update(Page), buffer)
    buffer.clear()


def extract_pages(
    engine: Engine,
    settings: Settings,
    *,
    workers: int | None = None,
    batch_size: int = 100,
    limit: int | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Extract every pending page (step 1 of the stage); return the statistics.

    Parameters
    ----------
    workers : int, optional
        Worker processes; default one per core. ``0``: in this process (no pool, no
        watchdog; the soft time cap still holds).
    batch_size : int
        Pages per transaction.
    limit : int, optional
        Extract at most this many pages.
    progress : bool
        Show a tqdm progress bar.
    """
    if batch_size < 1:
        raise ParameterError(f"batch_size={batch_size}: must be >= 1")
    config = WorkerConfig.from_settings(settings)
    with session_scope(engine) as s:
        total = int(
            s.scalar(select(func.count(Page.id)).where(Page.extraction_status == "pending")) or 0
        )
    if limit is not None:
        total = min(total, limit)
    n_workers = (os.cpu_count() or 1) if workers is None else workers
    statuses: Counter[str] = Counter()
    started = time.perf_counter()
    buffer: list[dict[str, Any]] = []
    bar = tqdm(total=total, desc="extract", unit="page", disable=not progress)

    def record(page_id: int, cols: dict[str, Any]) -> None:
        statuses[cols["extraction_status"]] += 1
        buffer.append({"id": page_id, **cols})
        bar.update(1)
        if len(buffer) >= batch_size:
            _flush(engine, buffer)

    tasks = _pending_tasks(engine, chunk=max(batch_size, 4 * max(n_workers, 1)), limit=limit)
    n_restarts = 0
    try:
        if n_workers == 0:
            for task in tasks:
                page_id, cols = _work_inline(task, config)
                record(page_id, cols)
        else:
            n_restarts = _run_pool(tasks, config, n_workers, record)
        _flush(engine, buffer)
    except BaseException:
        try:
            _flush(engine, buffer)  # keep what is done; the rest stays pending
        except Exception:
            log.exception("could not store the last %d extracted pages", len(buffer))
        raise
    finally:
        bar.close()
    seconds = time.perf_counter() - started
    done = sum(statuses.values())
    return {
        "pages": done,
        "by_status": dict(sorted(statuses.items())),
        "workers": n_workers,
        "worker_restarts": n_restarts,
        "seconds": round(seconds, 3),
        "pages_per_second": round(done / seconds, 2) if seconds > 0 and done else 0.0,
    }
