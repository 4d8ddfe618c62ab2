"""One crawl phase in its own process: ``python -m crawler.run JOB.json``.

Twisted's reactor cannot be restarted, so every crawl (each direction of each
``webometrics crawl``) runs in a fresh process started by :mod:`webometrics.stages.crawl`.
The job file holds everything the process needs (database URL, run id, the ``[crawl]``
settings, the universities, the frontier file, citing candidates). Progress goes to
standard output as JSON lines (:mod:`crawler.progress`); Scrapy's log to the job's log
file. On Linux the process dies with its parent (``PR_SET_PDEATHSIG``), so killing
``webometrics crawl`` kills the crawl too.

Exit codes: 0 the spider finished, 1 it closed for another reason (e.g. storage failed),
2 the job file is unusable, 69 the fetches stopped answering (the proxy or network went
away: :data:`EXIT_CONNECTION_LOST`, :mod:`crawler.outage`), 75 the database stayed
unreachable past ``[crawl] store_retry_seconds`` (:data:`EXIT_STORE_UNAVAILABLE`; the
frontier keeps what was not stored, the crawl resumes from its job folder), 130
interrupted (SIGINT/SIGTERM: Scrapy closes gracefully and the pipeline stores what it
holds).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

#: exit code of a crawl stopped because the database stayed unreachable (EX_TEMPFAIL)
EXIT_STORE_UNAVAILABLE = 75
#: exit code of a crawl stopped because its fetches stopped answering: the proxy or the
#: network went away (EX_UNAVAILABLE; :mod:`crawler.outage`)
EXIT_CONNECTION_LOST = 69


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() == 1:  # the parent is already gone
        os._exit(1)


def run_job(job: dict[str, Any]) -> str:
    """Run the job's spider to the end; return Scrapy's close reason."""
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    from core.settings import CrawlSettings
    from crawler.settings import scrapy_settings
    from crawler.spiders.citing import CitingSpider
    from crawler.spiders.outgoing import OutgoingSpider

    crawl = CrawlSettings.model_validate(job["crawl"])
    settings = scrapy_settings(
        crawl,
        frontier=job["frontier"],
        db_url=job["db_url"],
        run_id=int(job["run_id"]),
        proxy=job.get("proxy"),
        log_file=job.get("log_file"),
        progress_file=job.get("progress_file"),
        extract_settings=job.get("extract"),
        redis=job.get("redis"),
    )
    if job.get("redis"):
        # the engine looks at its scheduler on events and on a 5 s heartbeat; a crawl farm
        # process whose queue is empty must look again soon (others add requests)
        from scrapy.core.engine import ExecutionEngine

        from crawler.redis_scheduler import POLL_SECONDS

        ExecutionEngine._SLOT_HEARTBEAT_INTERVAL = POLL_SECONDS
    settings["WEBOMETRICS_STORE_RETRY_SECONDS"] = crawl.store_retry_seconds
    spider_cls = OutgoingSpider if job["direction"] == "outgoing" else CitingSpider
    process = CrawlerProcess(settings, install_root_handler=True)
    crawler = process.create_crawler(spider_cls)
    outcome: dict[str, str] = {"reason": "not started"}

    def closed(reason: str) -> None:
        outcome["reason"] = reason

    crawler.signals.connect(closed, signal=signals.spider_closed)
    process.crawl(crawler, job=job)
    process.start()
    from crawler.pipelines import STORE_UNAVAILABLE

    unavailable = (
        crawler.stats.get_value("webometrics/store_unavailable") if crawler.stats else None
    )
    if unavailable:
        # the spider may have been closing already (finished) when the writes gave up
        print(f"crawler.run: {STORE_UNAVAILABLE}: {unavailable}", file=sys.stderr)
        return STORE_UNAVAILABLE
    from crawler.outage import CONNECTION_LOST

    failed = crawler.stats.get_value("webometrics/store_failed") if crawler.stats else None
    if failed:  # the cause of a "store_failed" close, the last line the parent reads
        print(f"crawler.run: storing pages failed: {failed}", file=sys.stderr)
        return "store_failed"
    lost = crawler.stats.get_value(f"webometrics/{CONNECTION_LOST}") if crawler.stats else None
    if lost:
        print(f"crawler.run: {CONNECTION_LOST}: {lost}", file=sys.stderr)
        return CONNECTION_LOST
    return outcome["reason"]


def _take_secrets(job: dict[str, Any], environ: Any) -> None:
    """Put the real URLs (passwords included) into ``job``: the job file holds the
    database, proxy and Redis URLs masked, the parent gives the real ones in the
    environment (:func:`webometrics.stages.crawl.job.child_environment`)."""
    db_url = environ.get("WEBOMETRICS_DB_URL")
    if db_url:
        job["db_url"] = db_url
    proxy = environ.get("WEBOMETRICS_CRAWL__PROXY")
    if proxy and job.get("proxy"):
        job["proxy"] = proxy
        job["crawl"]["proxy"] = proxy
    redis_url = environ.get("WEBOMETRICS_CRAWL__REDIS_URL")
    if redis_url and job.get("redis"):
        job["redis"]["url"] = redis_url
        job["crawl"]["redis_url"] = redis_url


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    _die_with_parent()
    if len(argv) != 1:
        print("usage: python -m crawler.run JOB.json", file=sys.stderr)
        return 2
    try:
        job = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"crawler.run: cannot read job file {argv[0]}: {exc}", file=sys.stderr)
        return 2
    _take_secrets(job, os.environ)
    reason = run_job(job)
    if reason == "finished":
        return 0
    if reason == "shutdown":
        return 130
    from crawler.pipelines import STORE_UNAVAILABLE

    if reason == STORE_UNAVAILABLE:
        return EXIT_STORE_UNAVAILABLE
    from crawler.outage import CONNECTION_LOST

    if reason == CONNECTION_LOST:
        return EXIT_CONNECTION_LOST
    if reason != "store_failed":  # else run_job printed the cause
        print(f"crawler.run: spider closed: {reason}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
