"""Common Crawl as a citing source.

- the web graph: :mod:`~crawler.commoncrawl.dumps` (the published files, names, integrity
  check) and :mod:`~crawler.commoncrawl.graph` (reading them with DuckDB);
- the URL index: :mod:`~crawler.commoncrawl.index` (CDXJ, ``cluster.idx``, Parquet),
  :mod:`~crawler.commoncrawl.captures` (which captures) and
  :mod:`~crawler.commoncrawl.fetch` (WARC records by byte range).
"""
