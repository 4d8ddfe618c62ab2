"""The link-extraction rules of the manifest: what a crawler is expected to find.

Links are what ``scrapy.linkextractors.LinkExtractor(tags=("a", "area"), attrs=("href",),
deny_extensions=(), canonicalize=False, unique=False, strip=True)`` returns on the served
response (so ``<base href>``, the response encoding and Scrapy's URL escaping apply),
restricted to ``http``/``https`` URLs, with the fragment dropped. One link per distinct
target per page (the first one's anchor and ``rel=nofollow``).

Time: linear in the page size (one lxml parse per page).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from urllib.parse import urldefrag

#: The rules, as the manifest states them.
LINK_RULES = (
    'scrapy.linkextractors.LinkExtractor(tags=("a", "area"), attrs=("href",), '
    "deny_extensions=(), canonicalize=False, unique=False, strip=True) on the served "
    "response; http/https only; fragment dropped; first link per (source, target) wins; "
    "external = registered domain (core.domains.registered_domain) not one of the "
    "university's domains nor a subdomain of one; nofollow = rel contains 'nofollow'"
)


@dataclass(frozen=True)
class PageLink:
    """One link of a page."""

    target: str
    anchor: str
    nofollow: bool


@cache
def _extractor():
    from scrapy.linkextractors import LinkExtractor

    return LinkExtractor(
        tags=("a", "area"),
        attrs=("href",),
        deny_extensions=(),
        canonicalize=False,
        unique=False,
        strip=True,
    )


def is_html(headers: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> bool:
    """True when the ``Content-Type`` is HTML (or missing, as Scrapy then sniffs HTML)."""
    for name, value in headers:
        if name.lower() == "content-type":
            return value.split(";")[0].strip().lower() in ("text/html", "application/xhtml+xml")
    return True


def page_links(url: str, headers: list[tuple[str, str]], body: bytes) -> list[PageLink]:
    """The http(s) links of one HTML page, first per target, in document order."""
    from scrapy.http import HtmlResponse

    response = HtmlResponse(url=url, headers=dict(headers), body=body)
    seen: dict[str, PageLink] = {}
    for link in _extractor().extract_links(response):
        target = urldefrag(link.url)[0]
        if not target.startswith(("http://", "https://")) or target in seen:
            continue
        seen[target] = PageLink(target, " ".join(link.text.split()), bool(link.nofollow))
    return list(seen.values())
