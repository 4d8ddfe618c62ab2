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

import ipaddress
import socket
from urllib.parse import urlsplit

SCHEMES = frozenset({"http", "https"})

#: Name suffixes that never name a public host (RFC 6761, RFC 6762, RFC 8375, common use).
INTERNAL_SUFFIXES = (
    ".localhost",
    ".local",
    ".internal",
    ".intranet",
    ".home.arpa",
    ".lan",
    ".corp",
    ".localdomain",
)


def ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address when ``host`` is an IP literal in any spelling a resolver accepts.

    ``inet_aton`` semantics are used for IPv4, so ``127.1``, ``0x7f000001`` and
    ``2130706433`` count as the loopback address they open a connection to.

    >>> str(ip_literal("0x7f.1"))
    '127.0.0.1'
    >>> ip_literal("example.org") is None
    True
    """
    h = host.strip("[]").rstrip(".").lower()
    if not h:
        return None
    try:
        return ipaddress.ip_address(h.split("%", 1)[0])
    except ValueError:
        pass
    if all(part and (part.isdigit() or part.startswith("0x")) for part in h.split(".")):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(h))
        except OSError:
            return None
    return None


def address_kind(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why an address must not be fetched (``'loopback'``, ``'private'``, ...), else None.

    >>> address_kind(ipaddress.ip_address("192.168.1.1"))
    'private'
    >>> address_kind(ipaddress.ip_address("93.184.216.34")) is None
    True
    """
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    if addr.is_loopback:
        return "loopback"
    if addr.is_link_local:
        return "link-local"
    if addr.is_unspecified:
        return "unspecified"
    if addr.is_multicast:
        return "multicast"
    if isinstance(addr, ipaddress.IPv4Address) and addr in ipaddress.ip_network("100.64.0.0/10"):
        return "shared"
    if addr.is_private:
        return "private"
    if addr.is_reserved:
        return "reserved"
    if not addr.is_global:
        return "non-global"
    return None


def internal_name(host: str) -> bool:
    """True for names that are internal by definition (``localhost``, ``*.internal``,
    single-label names)."""
    h = host.rstrip(".").lower()
    if h in ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"):
        return True
    if "." not in h:
        return True
    return h.endswith(INTERNAL_SUFFIXES)


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
