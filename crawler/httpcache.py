"""The HTTP cache policy of second runs: RFC 2616, revalidating ``no-cache`` answers too.

Scrapy's :class:`~scrapy.extensions.httpcache.RFC2616Policy` serves fresh cached answers
and revalidates stale ones with ``If-None-Match`` / ``If-Modified-Since`` (a 304 answer
then serves the cached body). For an answer marked ``Cache-Control: no-cache`` it gives
up before setting the validators, so such pages (common on dynamic university sites)
were downloaded in full on every run. Here they are revalidated like any stale answer:
``no-cache`` means "check with the server before using", not "do not keep".
"""

from __future__ import annotations

from typing import Any

from scrapy.extensions.httpcache import RFC2616Policy


class RevalidatingPolicy(RFC2616Policy):
    """RFC 2616 caching; answers marked ``no-cache`` are revalidated, not refetched."""

    def is_cached_response_fresh(self, cachedresponse: Any, request: Any) -> bool:
        cc = self._parse_cachecontrol(cachedresponse)
        ccreq = self._parse_cachecontrol(request)
        if b"no-cache" in cc or b"no-cache" in ccreq:
            self._set_conditional_validators(request, cachedresponse)
            return False
        return super().is_cached_response_fresh(cachedresponse, request)
