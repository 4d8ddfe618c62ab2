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
import re
from urllib.parse import urlsplit

import tldextract
from w3lib.url import canonicalize_url

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


def normalize_url(url: str) -> str:
    """A canonical form of ``url`` for de-duplication and storage: lower-case scheme and
    host, default port and fragment dropped, dot segments resolved, query sorted."""
    url = url.strip()
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
