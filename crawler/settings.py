"""Scrapy settings built from the typed ``[crawl]`` settings.

The project keeps one source of configuration (:mod:`core.settings`); this module
translates it for Scrapy. Politeness: robots.txt obeyed, AutoThrottle, per-domain
concurrency, a User-Agent naming the contact URL, a maximum response size (bounded by a
hard ceiling on the wire and decompressed, :mod:`crawler.limits`), timeouts and retries;
the telnet console and remote control are off; cookies are off (a research crawler keeps
no sessions). Redirects are followed by the spiders themselves, so every hop is recorded,
checked by the safety rules and robots.txt, and loops are reported.

Examples
--------
>>> from core.settings import CrawlSettings
>>> s = scrapy_settings(CrawlSettings(), frontier="/tmp/f.sqlite", db_url="sqlite://", run_id=1)
>>> s["USER_AGENT"]
'webometrics-crawler/0.1 (+https://example.org/webometrics-crawler)'
>>> s["TELNETCONSOLE_ENABLED"], s["ROBOTSTXT_OBEY"], s["DOWNLOAD_MAXSIZE"]
(False, True, 10485760)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from core.defaults import CRAWL_MAX_RESPONSE_BYTES_CEILING, CRAWL_WORKER_LEASE

if TYPE_CHECKING:
    from core.settings import CrawlSettings

DOWNLOADER_MIDDLEWARES = {
    "scrapy.downloadermiddlewares.offsite.OffsiteMiddleware": None,
    "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware": None,
    "scrapy.downloadermiddlewares.redirect.RedirectMiddleware": None,
    "scrapy.downloadermiddlewares.cookies.CookiesMiddleware": None,
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "crawler.middlewares.RobotsMiddleware": 100,
    "scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware": None,
    "crawler.limits.BoundedDecompressionMiddleware": 590,
    "crawler.middlewares.SafetyMiddleware": 10,
    "crawler.middlewares.ReplayMiddleware": 20,
    "crawler.outage.OutageWatch": 25,  # sees a final failure before the replay keeps it
    "crawler.middlewares.ProxyMiddleware": 740,
    "crawler.warc_writer.WarcMiddleware": 800,
    # Retry-After honoured and the host slowed (Scrapy's own retries ignore the header)
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "crawler.retry_after.RetryAfterMiddleware": 550,
}

#: the middleware that runs pages in a headless browser (``[crawl] render``): after the
#: retries in the answer's way (a 429 is not rendered), after the decompression
RENDER_MIDDLEWARE = ("crawler.render.RenderMiddleware", 540)

EXTENSIONS = {
    "scrapy.extensions.telnet.TelnetConsole": None,
    "scrapy.extensions.remote_control.RemoteControl": None,
    "scrapy.extensions.memdebug.MemoryDebugger": None,
    "crawler.progress.ProgressReporter": 500,
    "crawler.limits.BodySizeGuard": 510,
}


def robots_agent(user_agent: str) -> str:
    """The product token robots.txt groups are matched against (``webometrics-crawler``).

    >>> robots_agent("webometrics-crawler/0.1 (+https://example.org/)")
    'webometrics-crawler'
    """
    return user_agent.split("/", 1)[0].split(" ", 1)[0].strip() or user_agent


def scrapy_settings(
    crawl: CrawlSettings,
    *,
    frontier: str,
    db_url: str,
    run_id: int,
    proxy: str | None = None,
    log_file: str | None = None,
    progress_file: str | None = None,
    extract_settings: dict[str, Any] | None = None,
    redis: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The Scrapy settings of one crawl.

    Parameters
    ----------
    crawl : CrawlSettings
        The ``[crawl]`` section.
    frontier : str
        The frontier file (in the job directory).
    db_url : str
        Where the item pipeline stores pages and links.
    run_id : int
        The crawl run the pages belong to.
    proxy : str, optional
        An HTTP proxy for every request (overrides ``crawl.proxy``).
    log_file : str, optional
        Scrapy's log file (else standard error).
    progress_file : str, optional
        Where :class:`crawler.progress.ProgressReporter` writes its JSON lines (else
        standard output).
    extract_settings : dict, optional
        The ``[extract]`` section, used when ``crawl.extract_inline`` is on.
    redis : dict, optional
        A crawl farm's shared frontier: ``url``, ``prefix`` (the run's keys) and
        ``lease`` (seconds); the scheduler becomes
        :class:`crawler.redis_scheduler.RedisScheduler` and ``frontier`` is not used.

    Returns
    -------
    dict
        Settings for :class:`scrapy.crawler.CrawlerProcess`.
    """
    user_agent = crawl.user_agent.format(contact=crawl.contact_url)
    proxy = proxy or crawl.proxy
    delay = crawl.download_delay
    settings: dict[str, Any] = {
        "BOT_NAME": "webometrics",
        "USER_AGENT": user_agent,
        "ROBOTSTXT_OBEY": crawl.obey_robots,
        "ROBOTSTXT_USER_AGENT": robots_agent(user_agent),
        "CONCURRENT_REQUESTS": crawl.concurrent_requests,
        "CONCURRENT_REQUESTS_PER_DOMAIN": crawl.concurrent_per_domain,
        # outputs of one callback processed in parallel: Scrapy starts that many asyncio
        # worker tasks per response (100 by default: a third of the crawl's CPU time)
        "CONCURRENT_ITEMS": 8,
        "DOWNLOAD_DELAY": delay,
        "RANDOMIZE_DOWNLOAD_DELAY": delay > 0,
        "AUTOTHROTTLE_ENABLED": crawl.autothrottle,
        "AUTOTHROTTLE_START_DELAY": max(delay, 0.1),
        "AUTOTHROTTLE_MAX_DELAY": max(10 * crawl.download_timeout, 60.0),
        "AUTOTHROTTLE_TARGET_CONCURRENCY": float(crawl.concurrent_per_domain),
        "DOWNLOAD_TIMEOUT": crawl.download_timeout,
        "DNS_TIMEOUT": min(crawl.download_timeout, 60.0),
        # bounded by the hard ceiling even when the setting bypassed validation
        "DOWNLOAD_MAXSIZE": min(crawl.max_response_bytes, CRAWL_MAX_RESPONSE_BYTES_CEILING),
        "DOWNLOAD_WARNSIZE": 0,
        "RETRY_ENABLED": crawl.retry_times > 0,
        "RETRY_TIMES": crawl.retry_times,
        "REDIRECT_ENABLED": False,
        "METAREFRESH_ENABLED": False,
        "COOKIES_ENABLED": False,
        "HTTPERROR_ALLOW_ALL": True,
        "TELNETCONSOLE_ENABLED": False,
        "DEPTH_LIMIT": 0,
        "DEPTH_STATS_VERBOSE": False,
        "REFERER_ENABLED": True,
        "SCHEDULER": "crawler.scheduler.SQLiteScheduler",
        "TWISTED_DNS_RESOLVER": "crawler.middlewares.SafeResolver",
        "DOWNLOADER_MIDDLEWARES": dict(DOWNLOADER_MIDDLEWARES),
        "EXTENSIONS": dict(EXTENSIONS),
        "ITEM_PIPELINES": {"crawler.pipelines.StorePipeline": 300},
        "LOG_LEVEL": "INFO",
        "LOG_FILE": log_file,
        "LOGSTATS_INTERVAL": 60.0,
        "MEMUSAGE_ENABLED": False,
        # webometrics' own keys
        "WEBOMETRICS_FRONTIER": frontier,
        "WEBOMETRICS_DB_URL": db_url,
        "WEBOMETRICS_RUN_ID": run_id,
        "WEBOMETRICS_BATCH_SIZE": crawl.batch_size,
        "WEBOMETRICS_FLUSH_SECONDS": crawl.flush_seconds,
        "WEBOMETRICS_FIXED_BUDGETS": crawl.fixed_budgets,
        "WEBOMETRICS_ALLOW_PRIVATE_HOSTS": crawl.allow_private_hosts,
        "WEBOMETRICS_PROXY": proxy,
        "WEBOMETRICS_OUTAGE_FAILURES": crawl.outage_failures,
        "WEBOMETRICS_PROXY_HOST": urlsplit(proxy).hostname if proxy else None,
        "WEBOMETRICS_WARC_DIR": crawl.warc_dir,
        "WEBOMETRICS_PROGRESS_FILE": progress_file,
        "WEBOMETRICS_EXTRACT": dict(extract_settings or {}) if crawl.extract_inline else None,
        "WEBOMETRICS_RETRY_AFTER_MAX": crawl.retry_after_max,
        "WEBOMETRICS_RETRY_BACKOFF": crawl.retry_backoff,
        "WEBOMETRICS_RENDER": crawl.render,
        "WEBOMETRICS_RENDER_TIMEOUT": crawl.render_timeout,
        "WEBOMETRICS_RENDER_BROWSER": crawl.render_browser,
    }
    if crawl.render != "never":
        settings["DOWNLOADER_MIDDLEWARES"][RENDER_MIDDLEWARE[0]] = RENDER_MIDDLEWARE[1]
    if redis:
        settings.update(
            SCHEDULER="crawler.redis_scheduler.RedisScheduler",
            REDIS_URL=redis["url"],
            WEBOMETRICS_REDIS_PREFIX=redis["prefix"],
            WEBOMETRICS_REDIS_LEASE=float(redis.get("lease") or CRAWL_WORKER_LEASE),
        )
    if crawl.archive:  # an archived crawl: another way to fetch (docs/archives.md)
        from crawler.archive.handler import archive_settings

        settings.update(archive_settings(crawl))
    if crawl.http_cache_dir:
        settings.update(
            HTTPCACHE_ENABLED=True,
            HTTPCACHE_DIR=crawl.http_cache_dir,
            HTTPCACHE_POLICY="crawler.httpcache.RevalidatingPolicy",
            HTTPCACHE_STORAGE="scrapy.extensions.httpcache.FilesystemCacheStorage",
            HTTPCACHE_GZIP=True,
        )
    return settings
