"""The closed vocabularies that several stages share, stated once.

``UNKNOWN``
    the language and the category of an external domain without evidence: none of its
    pages was fetched, or none gave text in a known language (kept apart from the
    taxonomy's ``other_organisations`` and from the language ``other``, which are
    findings about fetched text).
``ENVIRONMENT_SOURCES``
    where a row of the environment comes from: ``crawl`` (the university's own pages and
    verified citations found by a crawl or a URL list), ``backlinks`` (verified citations
    of a Majestic or Ahrefs export), ``commoncrawl`` (a Common Crawl web graph's citing
    domains and citations verified in Common Crawl captures).
``GRAPH_RUN_KIND``
    the crawl run kind of ``webometrics citing commoncrawl-graph``.
"""

from __future__ import annotations

UNKNOWN = "unknown"
ENVIRONMENT_SOURCES: tuple[str, ...] = ("crawl", "backlinks", "commoncrawl")
GRAPH_RUN_KIND = "commoncrawl-graph"
