"""The links of a fetched page, and the sitemap URLs of a sitemap.

Links are what ``scrapy.linkextractors.LinkExtractor(tags=("a", "area"),
attrs=("href",), deny_extensions=(), canonicalize=False, unique=False, strip=True)``
returns on the response (so ``<base href>`` and the response's encoding apply), kept
when ``http``/``https``, fragment dropped, the first one per target in document order
(its anchor text, whitespace-collapsed, and ``rel=nofollow``). These are the rules the
test web's manifest states, so a crawl can be compared with it link for link.

Time: one lxml parse per page, linear in its size.
"""

from __future__ import annotations

import functools
from urllib.parse import urldefrag

from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor

from core.choices import HTML_MEDIA_TYPES
from core.session_ids import strip_session_ids
from crawler.items import LinkRecord

_MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # the sitemaps.org limit, uncompressed


@functools.cache
def _extractor() -> LinkExtractor:
    return LinkExtractor(
        tags=("a", "area"),
        attrs=("href",),
        deny_extensions=(),
        canonicalize=False,
        unique=False,
        strip=True,
    )


def content_type(response: Response) -> str | None:
    """The media type of a response, lower case without parameters (None when absent)."""
    raw = response.headers.get(b"Content-Type")
    if not raw:
        return None
    return raw.decode("latin-1").split(";", 1)[0].strip().lower() or None


def is_html(response: Response) -> bool:
    """True for an HTML answer (declared, or sniffed by Scrapy when undeclared)."""
    if not isinstance(response, TextResponse):
        return False
    ctype = content_type(response)
    return ctype is None or ctype in HTML_MEDIA_TYPES


#: the request meta key of the links of a page's rendered DOM (:mod:`crawler.render`)
RENDERED = "wm_rendered"


def page_links(response: Response, *, speculative: bool = False) -> list[LinkRecord]:
    """The http(s) links of an HTML response, first per target, in document order.

    ``external`` is left True; the spider decides it against the university's domains.
    With ``speculative`` the URL literals of the page's scripts and JSON blocks follow
    (:func:`crawler.script_links.script_links`; a script or JSON answer gives only
    those), and the links of the page's rendered DOM (``response.meta["wm_rendered"]``,
    set by :class:`crawler.render.RenderMiddleware`) come last in any case; each marked by
    its ``found_in`` and kept only when no link before it has its target.
    """
    seen: dict[str, LinkRecord] = {}
    if is_html(response) and isinstance(response, TextResponse):
        for link in _extractor().extract_links(response):
            target = strip_session_ids(urldefrag(link.url)[0])  # one page, one URL
            if not target.startswith(("http://", "https://")) or target in seen:
                continue
            seen[target] = LinkRecord(target, " ".join(link.text.split()), bool(link.nofollow))
    if speculative:
        from crawler.script_links import script_links

        for target, found_in in script_links(response):
            target = strip_session_ids(target)
            seen.setdefault(target, LinkRecord(target, "", False, found_in=found_in))
    request = response.request  # None for a response built outside a crawl (WARC import)
    for target, anchor in (request.meta.get(RENDERED) if request is not None else None) or ():
        target = strip_session_ids(target)
        seen.setdefault(target, LinkRecord(target, anchor, False, found_in="rendered"))
    return list(seen.values())


def sitemap_urls(response: Response) -> tuple[list[str], list[str]]:
    """(page URLs, nested sitemap URLs) of a sitemap or sitemap index (gzip accepted).

    Malformed sitemaps give two empty lists.
    """
    from scrapy.utils.gz import gunzip
    from scrapy.utils.sitemap import Sitemap

    body = response.body
    if body[:2] == b"\x1f\x8b":
        try:
            body = gunzip(body, max_size=_MAX_SITEMAP_BYTES)
        except (OSError, ValueError):  # not gzip after all, or a decompression bomb
            return [], []
    try:
        sitemap = Sitemap(body)
    except Exception:  # lxml raises several kinds on junk
        return [], []
    locs = [entry["loc"] for entry in sitemap if entry.get("loc")]
    if sitemap.type == "sitemapindex":
        return [], locs
    return locs, []
