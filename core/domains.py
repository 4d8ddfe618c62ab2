"""Host names, registered domains and URL normalisation.

Registered domains come from :mod:`tldextract` with its bundled Public Suffix List
snapshot: nothing is fetched at run time.

Examples
--------
>>> registered_domain("www.cs.ox.ac.uk")
'ox.ac.uk'
>>> registered_domain("spbu.ru")
'spbu.ru'
>>> is_valid_domain("ox.ac.uk"), is_valid_domain("bad_domain..ru")
(True, False)
>>> normalize_url("HTTP://WWW.Example.COM:80/a/../b/?b=2&a=1#frag")
'http://www.example.com/b/?a=1&b=2'
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket
from urllib.parse import urlsplit

import tldextract
from w3lib.url import canonicalize_url

from core.session_ids import strip_session_ids

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


@functools.cache
def _extractor() -> tldextract.TLDExtract:
    # suffix_list_urls=() -> the snapshot bundled with tldextract; no network, no cache dir
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def host_of(url: str) -> str:
    """The lower-case host of a URL without port or trailing dot ('' when none)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.rstrip(".").lower()


def registered_domain(host_or_url: str) -> str:
    """The registered domain (eTLD+1) of a host or URL; the host itself for IPs and
    names without a public suffix (``localhost``)."""
    host = host_of(host_or_url) if "/" in host_or_url else host_or_url.rstrip(".").lower()
    if not host:
        return ""
    ext = _extractor()(host)
    return ext.top_domain_under_public_suffix or host


def is_valid_domain(domain: str) -> bool:
    """True for a syntactically valid DNS name with at least two labels and a public
    suffix (``mit.edu``, ``ox.ac.uk``)."""
    d = domain.strip().lower()
    if not d or len(d) > 253 or (d != domain.strip() and d != domain.strip().lower()):
        return False
    labels = d.split(".")
    if len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        return False
    return bool(_extractor()(d).suffix)


def in_domains(host: str, domains: frozenset[str] | set[str]) -> bool:
    """True when ``host`` is one of ``domains`` or a subdomain of one."""
    host = host.lower().rstrip(".")
    while host:
        if host in domains:
            return True
        if "." not in host:
            return False
        host = host.split(".", 1)[1]
    return False


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


def is_public_host(host: str) -> bool:
    """True for a host of the public web: not an IP literal of a loopback, private,
    link-local, shared, multicast, reserved or unspecified address (in any spelling,
    :func:`ip_literal`), nor an internal name (:func:`internal_name`). Links to other
    hosts (``http://intranet/``, ``http://10.0.0.1/``) reach no site of a university's
    web environment.

    >>> is_public_host("www.cs.cornell.edu"), is_public_host("132.236.125.30")
    (True, True)
    >>> is_public_host("2130706433"), is_public_host("intranet"), is_public_host("[::1]")
    (False, False, False)
    >>> is_public_host(""), is_public_host("999.1.1.1")
    (False, False)
    """
    addr = ip_literal(host)
    if addr is not None:
        return address_kind(addr) is None
    h = host.strip("[]").rstrip(".").lower()
    if all(part and (part.isdigit() or part.startswith("0x")) for part in h.split(".")):
        return False  # numbers no resolver takes for an address: not a name either
    return not internal_name(h)


def normalize_url(url: str) -> str:
    """A canonical form of ``url`` for de-duplication and storage: lower-case scheme and
    host, default port and fragment dropped, dot segments resolved, query sorted, session
    ids removed (:func:`core.session_ids.strip_session_ids`)."""
    url = strip_session_ids(url.strip())
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    netloc = parts.netloc.lower()
    if (scheme == "http" and netloc.endswith(":80")) or (
        scheme == "https" and netloc.endswith(":443")
    ):
        netloc = netloc.rsplit(":", 1)[0]
    path = parts.path or "/"
    rebuilt = f"{scheme}://{netloc}{path}" + (f"?{parts.query}" if parts.query else "")
    return canonicalize_url(rebuilt, keep_fragments=False)
