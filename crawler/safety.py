"""Which URLs the crawler may fetch: http(s) only, never internal addresses.

A page can link to an internal admin panel (``http://10.0.0.1/admin``), a router
(``http://192.168.1.1/``) or a cloud metadata service (``http://169.254.169.254/``); a
redirect can point there too. The crawler refuses, before any connection:

* any scheme but ``http`` and ``https``;
* a host that is an IP literal of a loopback, private, link-local, shared, multicast,
  reserved or unspecified address, in any spelling the C resolver accepts (``10.0.0.1``,
  ``[::1]``, ``2130706433``, ``0x7f.1``, ``127.1``); public IP literals are fetched
  (old pages often link to servers by address);
* names that are internal by definition (``localhost`` and ``*.localhost``, ``*.local``,
  ``*.internal``, ``*.home.arpa``, ``*.lan``, single-label names such as ``intranet``);

and, when it resolves a name itself (no proxy), any name whose address is loopback,
private, link-local, shared (CGNAT), multicast, reserved or unspecified
(:class:`crawler.middlewares.SafeResolver`). ``[crawl] allow_private_hosts = true`` lifts
the address rules for a local test web; the scheme rule always holds.

Every check is O(length of the URL); no DNS lookup happens here.

Examples
--------
>>> unsafe_reason("https://www.spbu.ru/")
>>> unsafe_reason("ftp://ftp.example.org/file")
"scheme 'ftp' is not http or https"
>>> unsafe_reason("http://169.254.169.254/latest/meta-data/")
'host 169.254.169.254 is an IP address (link-local)'
>>> unsafe_reason("http://2130706433/")
'host 2130706433 is an IP address (loopback)'
>>> unsafe_reason("http://metadata.google.internal/")
'host metadata.google.internal is an internal name'
>>> unsafe_reason("http://132.236.125.30/")
>>> unsafe_reason("http://10.0.0.1/admin", allow_private=True)
"""

from __future__ import annotations

from urllib.parse import urlsplit

from core.domains import address_kind, internal_name, ip_literal

SCHEMES = frozenset({"http", "https"})


def unsafe_reason(url: str, *, allow_private: bool = False) -> str | None:
    """Why ``url`` must not be fetched, or None when it may be.

    Parameters
    ----------
    url : str
        An absolute URL.
    allow_private : bool
        Allow IP literals and internal names (a local test web only).

    Returns
    -------
    str or None
        A one-line reason (stored as the page's ``fetch_error``), or None.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError as exc:
        return f"malformed URL: {exc}"
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        return f"scheme {scheme!r} is not http or https"
    if not host:
        return "URL has no host"
    if allow_private:
        return None
    addr = ip_literal(host)
    if addr is not None:
        kind = address_kind(addr)
        return None if kind is None else f"host {host} is an IP address ({kind})"
    if internal_name(host):
        return f"host {host} is an internal name"
    return None
