"""Reading a web archive instead of the live web: ``webometrics crawl --archive``.

An archived crawl is a live crawl with another way to fetch (docs/archives.md): the same
spiders, frontier, budgets, link rules and storage; only Scrapy's download handler is
:class:`~crawler.archive.handler.ArchiveDownloadHandler`, which answers each request for
an original URL with the archive's capture of it nearest the middle of the period:

- :mod:`~crawler.archive.cdx`: the CDX indexes (the Wayback Machine's CDX server, Common
  Crawl's index server) and the choice of a capture;
- :mod:`~crawler.archive.handler`: the download handler (index lookup, Wayback's raw
  ``id_`` replay or Common Crawl's WARC record by byte range, politeness and retries);
- :mod:`~crawler.archive.facts`: the capture facts an answer carries to the spiders
  and the page item (archive, capture time, original URL, memento URL, no capture).
"""
