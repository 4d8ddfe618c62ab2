"""The Scrapy project that gathers each university's external web environment.

Layout, following one request from start to storage:

========================  ==================================================================
``spiders/outgoing.py``   a university's site (start pages, sitemaps) within its domains,
                          every external link, each external target, extra domain pages
``spiders/citing.py``     the pages said to link to a university (``sources.py``)
``scheduler.py``          Scrapy's scheduler on ``frontier.py``: crash-safe SQLite queue,
                          seen set and budgets; level-synchronous, politeness-aware order
``middlewares.py``        safety (``safety.py``), robots.txt, replay after a restart, proxy
``warc_writer.py``        WARC output of every answer
``warc.py``               ``webometrics import warc``: WARC/ARC records as pages
``commoncrawl/``          Common Crawl as a citing source: the web graph, the URL index
``links.py``              the links of a page (the test web manifest's rules)
``pipelines.py``          batched storage off the reactor thread (``storage/``: pages,
                          citations, runs), optional inline extraction (``extraction.py``)
``wiring.py``             how those components reach each other: the running crawl's
                          frontier (``frontier_of``) and the typed request meta (``WmMeta``)
``settings.py``           Scrapy settings from the typed ``[crawl]`` settings
``run.py``                one crawl phase in its own process (``python -m crawler.run``)
========================  ==================================================================

The command line is ``webometrics crawl`` (:mod:`webometrics.stages.crawl`).
"""
