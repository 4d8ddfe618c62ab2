"""Why a request failed, as stored in ``Page.fetch_error``: ``"<kind>: <detail>"``.

Kinds: ``http_<status>`` (4xx/5xx answers, set by the spiders), ``robots`` (disallowed by
robots.txt, or its robots.txt answered 5xx, which RFC 9309 reads as "disallow all"; not
fetched), ``unsafe`` (scheme, internal IP literal, internal name or address; not
fetched), ``dns``, ``timeout``, ``connection_refused``, ``connection``, ``too_large`` (over
``[crawl] max_response_bytes`` or its hard ceiling, on the wire, chunked or decompressed:
:mod:`crawler.limits`), ``data_loss``, ``proxy``, ``bad_url`` (a URL the HTTP
client cannot send, e.g. markup inside its host), ``redirect_loop``,
``too_many_redirects``, ``bad_redirect`` (3xx without Location, set by the spiders),
``ignored``, ``cancelled``, ``error`` (other).

Examples
--------
>>> from twisted.python.failure import Failure
>>> classify_failure(Failure(UnsafeURLError("unsafe: host 10.0.0.1 is an IP address")))
'unsafe: host 10.0.0.1 is an IP address'
>>> classify_failure(Failure(ReplayedFailure("timeout: took longer than 20 s")))
'timeout: took longer than 20 s'
"""

from __future__ import annotations

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from twisted.internet import error as txerror
from twisted.python.failure import Failure

from crawler.limits import ResponseTooLarge


class UnsafeURLError(IgnoreRequest):
    """A URL the crawler must not fetch (scheme, internal IP literal, internal name)."""


class UnsafeAddressError(txerror.DNSLookupError):
    """A name that resolves to a loopback, private, link-local or other internal address."""


class ReplayedFailure(IgnoreRequest):
    """The failure a request met before a restart, replayed from the frontier (its
    classified text) instead of trying the request again."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def classify_failure(failure: Failure) -> str:
    """``"<kind>: <detail>"`` for a failed request (see the module docstring)."""
    exc = failure.value
    cause = exc.__cause__
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, ReplayedFailure):
        return exc.text
    if isinstance(exc, ResponseTooLarge):
        return exc.text
    if isinstance(exc, UnsafeURLError):
        return text if text.startswith("unsafe:") else f"unsafe: {text}"
    if isinstance(exc, UnsafeAddressError) or isinstance(cause, UnsafeAddressError):
        return f"unsafe: {cause or exc}".replace("unsafe: unsafe address: ", "unsafe: ")
    if isinstance(exc, IgnoreRequest):
        if text.startswith("robots.txt unreachable"):
            return f"robots: {text}; RFC 9309: the host is disallowed"
        if "robots.txt" in text:
            return "robots: disallowed by robots.txt"
        return f"ignored: {text}"
    if isinstance(exc, CannotResolveHostError | txerror.DNSLookupError):
        return f"dns: {text}"
    if isinstance(exc, DownloadTimeoutError | txerror.TimeoutError | TimeoutError):
        return f"timeout: {text}"
    if isinstance(exc, DownloadConnectionRefusedError | txerror.ConnectionRefusedError):
        return f"connection_refused: {text}"
    if isinstance(exc, DownloadCancelledError):
        if "max size" in text or "maxsize" in text or "larger than" in text:
            return f"too_large: {text}"
        return f"cancelled: {text}"
    if isinstance(exc, ResponseDataLossError):
        return f"data_loss: {text}"
    if type(exc).__name__ == "TunnelError":
        return f"proxy: {text}"
    if isinstance(exc, DownloadFailedError | txerror.ConnectionLost | txerror.ConnectError):
        return f"connection: {text}"
    if type(exc).__name__ == "ArchiveUnavailableError":  # crawler.archive.handler
        return f"archive: {text}"
    if isinstance(exc, ValueError) and "Invalid URI" in text:
        return f"bad_url: {text}"  # e.g. a space or markup inside the host of an old link
    return f"error: {type(exc).__name__}: {text}"
