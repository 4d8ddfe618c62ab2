"""Sites as web entities: where an external site begins and ends.

Everything the pipeline says about a university's web environment counts *sites*: the
environment rows, the documents of unit ``domain``, the categories, the clusters. A site
is a **web entity** in Hyphe's sense (Jacomy et al. 2016): a set of URLs named by a key.
:meth:`SiteRules.entity` gives the key of a URL or host, deciding in this order:

1. **An analyst's split** (stored in the database, :mod:`store.entities`): a host
   (``user.livejournal.com``: the host and its subdomains) or a URL prefix
   (``vk.com/spbu``: that host or its ``www.`` form, paths ``/spbu`` and below) is its own
   site; the longest matching prefix wins.
2. **A platform's path rule** (the shipped :file:`core/site_rules.toml`): on
   ``sites.google.com`` the site is ``sites.google.com/site/x``; on GeoCities
   ``geocities.com/athens/acropolis/1234``; on a 1990s provider ``best.com/~name``.
3. **A platform's subdomain rule** (the same file): a name directly below
   ``livejournal.com``, ``narod.ru``, ``ucoz.ru``, ``wordpress.com``... is a site.
4. **The registrable domain with the Public Suffix List's private section** (tldextract's
   bundled snapshot, no network): ``x.blogspot.com``, ``name.github.io``,
   ``x.appspot.com`` are sites of their own; ``www.`` directly below a private suffix is
   the suffix's own site (``www.ras.ru`` -> ``ras.ru``). IP literals and names without a
   public suffix are their own site.
5. **An analyst's merge** (stored): the keys it names are one site, named by its first.

Keys are lower case: a domain name (``spbu.ru``), or a host and a path prefix without a
trailing slash (``sites.google.com/site/x``), at most 253 characters (the key columns).
:func:`core.domains.registered_domain` keeps its meaning (eTLD+1 without the private
section); university membership (:func:`core.domains.in_domains`) does not use entities.

Time: one lookup is O(labels of the host + path rules of the host + analyst rules); the
rules are indexed by host, so the number of rules hardly matters. Memory: the rules.

References
----------
Jacomy, M., Girard, P., Ooghe-Tabanou, B., Venturini, T. (2016). Hyphe, a curation-oriented
approach to web crawling for the social sciences. ICWSM.
https://publicsuffix.org/ (the Public Suffix List and its private section).

Examples
--------
>>> rules = SiteRules.default()
>>> rules.key("http://user.livejournal.com/123.html")
'user.livejournal.com'
>>> rules.key("https://x.blogspot.com/2010/01/a.html"), rules.key("www.cs.ox.ac.uk")
('x.blogspot.com', 'ox.ac.uk')
>>> rules.key("https://sites.google.com/site/labX/home")
'sites.google.com/site/labx'
>>> rules.entity("http://www.geocities.com/Athens/Acropolis/1234/index.html")
Entity(key='geocities.com/athens/acropolis/1234', rule='platform path geocities.com')
>>> custom = rules.with_analyst(splits=["vk.com/spbu"], merges=[("msu.ru", "msu.su")])
>>> custom.key("https://vk.com/spbu/photos"), custom.key("https://vk.com/id1")
('vk.com/spbu', 'vk.com')
>>> custom.key("http://www.msu.su/"), custom.entity("http://www.msu.su/").rule
('msu.ru', 'merge msu.ru')
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import tldextract

from core.domains import ip_literal, is_valid_domain
from core.exceptions import ConfigError, ParameterError

__all__ = [
    "DEFAULT_RULES_FILE",
    "KEY_MAX_LENGTH",
    "Entity",
    "PathRule",
    "SiteRules",
    "normalise_merge",
    "normalise_prefix",
    "private_extractor",
    "site_of",
    "split_url",
]

#: the shipped hosting-platform rules
DEFAULT_RULES_FILE = Path(__file__).with_name("site_rules.toml")
#: the length of the key columns (``page.registered_domain``, ``environment.domain`` ...)
KEY_MAX_LENGTH = 253


@functools.cache
def private_extractor() -> tldextract.TLDExtract:
    """tldextract with the PSL's private section, on its bundled snapshot (no network)."""
    # suffix_list_urls=() -> the snapshot bundled with tldextract; no network, no cache dir
    return tldextract.TLDExtract(
        suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True
    )


@dataclass(frozen=True)
class Entity:
    """The site of a URL: its ``key`` and the ``rule`` that decided it (``split P``,
    ``platform path H``, ``platform subdomain D``, ``public suffix list``, ``host``,
    ``merge K``)."""

    key: str
    rule: str


@dataclass(frozen=True)
class PathRule:
    """On ``host`` (or ``www.`` + host), the start of the path ``site`` matches names the
    site: key ``host`` + the match, lower case."""

    host: str
    site: re.Pattern[str]


def split_url(url_or_host: str) -> tuple[str, str]:
    """(host, path) of a URL, of ``host/path`` without a scheme, or of a bare host; the
    host lower case without port and trailing dot, the path ``''`` when none.

    >>> split_url("HTTP://WWW.Example.com:8080/A/b?x=1")
    ('www.example.com', '/A/b')
    >>> split_url("vk.com/spbu"), split_url("Spbu.RU.")
    (('vk.com', '/spbu'), ('spbu.ru', ''))
    """
    text = (url_or_host or "").strip()
    if not text:
        return "", ""
    if "://" not in text:
        text = "http://" + text
    try:
        parts = urlsplit(text)
        host = parts.hostname or ""
    except ValueError:
        return "", ""
    return host.rstrip(".").lower(), parts.path


def _path_prefix(path: str) -> str:
    """A path prefix as keys hold it: lower case, no trailing slash ('' for the root)."""
    return path.rstrip("/").lower()


@dataclass(frozen=True)
class SiteRules:
    """The rules that decide the site (web entity) of a URL; see the module docstring.

    Parameters
    ----------
    subdomain_platforms : iterable of str
        Domains each of whose direct subdomains is a site.
    platform_labels : iterable of str
        Labels directly below a subdomain platform that are the platform itself (``www``).
    path_rules : sequence of PathRule
        Hosts whose path's start names the site.
    splits : iterable of str
        Analysts' split prefixes (:func:`normalise_prefix` forms).
    merges : iterable of (str, ...)
        Analysts' merges: the entity's key first, then the keys merged into it.
    """

    subdomain_platforms: frozenset[str] = frozenset()
    platform_labels: frozenset[str] = frozenset({"www"})
    path_rules: tuple[PathRule, ...] = ()
    splits: frozenset[str] = frozenset()
    merges: tuple[tuple[str, ...], ...] = ()
    _by_host: dict[str, tuple[PathRule, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _split_hosts: dict[str, tuple[str, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _merged: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_host: dict[str, list[PathRule]] = {}
        for rule in self.path_rules:
            by_host.setdefault(rule.host, []).append(rule)
        self._by_host.update({h: tuple(r) for h, r in by_host.items()})
        split_hosts: dict[str, list[str]] = {}
        for prefix in self.splits:
            split_hosts.setdefault(prefix.split("/", 1)[0], []).append(prefix)
        # the longest prefix of a host first
        self._split_hosts.update(
            {h: tuple(sorted(p, key=len, reverse=True)) for h, p in split_hosts.items()}
        )
        for merge in self.merges:
            for member in merge:  # the entity's own key too: its rule is the merge
                self._merged[member] = merge[0]

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def default(cls, path: str | Path | None = None) -> SiteRules:
        """The shipped platform rules (:data:`DEFAULT_RULES_FILE`), or those of ``path``.

        Raises
        ------
        ConfigError
            The file is missing or not a valid rules file (what is wrong and where).
        """
        return _load_rules(str(path or DEFAULT_RULES_FILE))

    def with_analyst(
        self, *, splits: Iterable[str] = (), merges: Iterable[Sequence[str]] = ()
    ) -> SiteRules:
        """These platform rules with the analysts' ``splits`` and ``merges`` (validated and
        normalised by :func:`normalise_prefix` and :func:`normalise_merge`)."""
        return SiteRules(
            subdomain_platforms=self.subdomain_platforms,
            platform_labels=self.platform_labels,
            path_rules=self.path_rules,
            splits=frozenset(normalise_prefix(s) for s in splits),
            merges=tuple(normalise_merge(m) for m in merges),
        )

    def analyst_spec(self) -> dict[str, list[Any]]:
        """The analysts' rules as plain values (``splits``, ``merges``): what a crawl's job
        file carries to its processes, given back to :meth:`with_analyst`."""
        return {"splits": sorted(self.splits), "merges": [list(m) for m in self.merges]}

    # -- lookup ------------------------------------------------------------------------------
    def key(self, url_or_host: str) -> str:
        """The key of the site of ``url_or_host`` ('' for no host)."""
        return self.entity(url_or_host).key

    def entity(self, url_or_host: str) -> Entity:
        """The site of ``url_or_host`` and the rule that decided it."""
        host, path = split_url(url_or_host)
        found = self._unmerged(host, path)
        merged = self._merged.get(found.key)
        return found if merged is None else Entity(merged, f"merge {merged}")

    def _unmerged(self, host: str, path: str) -> Entity:
        if not host:
            return Entity("", "host")
        split = self._split(host, path)
        if split is not None:
            return Entity(split, f"split {split}")
        bare = host[4:] if host.startswith("www.") else host
        for rule in self._by_host.get(bare, ()):
            m = rule.site.match(path or "/")
            if m:
                key = (rule.host + _path_prefix(m.group(0)))[:KEY_MAX_LENGTH]
                return Entity(key, f"platform path {rule.host}")
        labels = host.split(".")
        for i in range(1, len(labels) - 1):
            platform = ".".join(labels[i:])
            if platform in self.subdomain_platforms:
                below = labels[:i]
                if below[0] == "www" and len(below) > 1:
                    below = below[1:]
                if len(below) == 1 and below[0] in self.platform_labels:
                    return Entity(platform, f"platform subdomain {platform}")
                return Entity(f"{below[-1]}.{platform}", f"platform subdomain {platform}")
        if host in self.subdomain_platforms:
            return Entity(host, f"platform subdomain {host}")
        if ip_literal(host) is not None:
            return Entity(host[:KEY_MAX_LENGTH], "host")
        ext = private_extractor()(host)
        key = ext.top_domain_under_public_suffix
        if not key:
            return Entity(host[:KEY_MAX_LENGTH], "host")
        if ext.is_private and ext.domain in self.platform_labels:
            return Entity(ext.suffix, "public suffix list")  # www.ras.ru: ras.ru
        return Entity(key, "public suffix list")

    def _split(self, host: str, path: str) -> str | None:
        labels = host.split(".")
        lowered = _path_prefix(path)
        for i in range(len(labels) - 1):
            candidate = ".".join(labels[i:])
            for prefix in self._split_hosts.get(candidate, ()):
                if "/" not in prefix:
                    return prefix  # a host split covers its subdomains
                if i > 0 and not (i == 1 and labels[0] == "www"):
                    continue  # a path split covers the host and its www. form
                p = prefix[len(candidate) :]
                if lowered == p or lowered.startswith(p + "/"):
                    return prefix
        return None

    def fingerprint(self) -> str:
        """A short digest of every rule: equal digests, equal keys."""
        spec = {
            "subdomain": sorted(self.subdomain_platforms),
            "labels": sorted(self.platform_labels),
            "path": [(r.host, r.site.pattern) for r in self.path_rules],
            "splits": sorted(self.splits),
            "merges": sorted(self.merges),
        }
        return hashlib.sha256(json.dumps(spec).encode()).hexdigest()[:16]


def site_of(url_or_host: str, rules: SiteRules | None = None) -> str:
    """The key of the site (web entity) of a URL or host under ``rules`` (the shipped
    default when ``None``).

    >>> site_of("https://name.github.io/x"), site_of("http://x.narod.ru/")
    ('name.github.io', 'x.narod.ru')
    """
    return (rules or SiteRules.default()).key(url_or_host)


def _valid_host(host: str, what: str) -> None:
    if ip_literal(host) is not None:
        return
    if not is_valid_domain(host):
        raise ParameterError(
            f"{what}: {host!r} is not a host name with a public suffix (such as "
            "'vk.com' or 'user.livejournal.com')"
        )


def normalise_prefix(prefix: str) -> str:
    """A split prefix as stored: ``host`` or ``host/path``, lower case, no scheme, no
    ``www.``, no query, no trailing slash.

    Raises
    ------
    ParameterError
        No valid host, a query or fragment, or longer than :data:`KEY_MAX_LENGTH`.

    >>> normalise_prefix("https://www.VK.com/spbu/"), normalise_prefix("user.livejournal.com")
    ('vk.com/spbu', 'user.livejournal.com')
    """
    raw = (prefix or "").strip()
    if any(c in raw for c in "?#") or any(c.isspace() for c in raw):
        raise ParameterError(
            f"split prefix {prefix!r}: give a host or a URL prefix without query, fragment "
            "or spaces (such as 'vk.com/spbu')"
        )
    host, path = split_url(raw)
    if host.startswith("www."):
        host = host[4:]
    _valid_host(host, f"split prefix {prefix!r}")
    key = host + _path_prefix(path)
    if len(key) > KEY_MAX_LENGTH:
        raise ParameterError(
            f"split prefix {prefix[:40]!r}... is {len(key)} characters; give at most "
            f"{KEY_MAX_LENGTH}"
        )
    return key


def normalise_merge(keys: Sequence[str]) -> tuple[str, ...]:
    """A merge as stored: its site keys, the entity's key first, without repeats.

    Raises
    ------
    ParameterError
        Fewer than two distinct keys, or a key with no valid host.

    >>> normalise_merge(["MSU.ru", "msu.su", "msu.ru"])
    ('msu.ru', 'msu.su')
    """
    out: list[str] = []
    for key in keys:
        norm = normalise_prefix(key)
        if norm not in out:
            out.append(norm)
    if len(out) < 2:
        raise ParameterError(
            f"merge {' '.join(keys)!r}: give at least two different sites (such as 'msu.ru msu.su')"
        )
    return tuple(out)


@functools.cache
def _load_rules(path: str) -> SiteRules:
    """The platform rules of a TOML file (cached per path: the file is read once)."""
    file = Path(path)
    try:
        data: dict[str, Any] = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"site rules file {file}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"site rules file {file}: not valid TOML ({exc})") from exc
    sub = data.get("subdomain", {})
    platforms = sub.get("platforms", [])
    labels = sub.get("platform_labels", ["www"])
    if not all(isinstance(p, str) and is_valid_domain(p) for p in platforms):
        bad = [p for p in platforms if not (isinstance(p, str) and is_valid_domain(p))]
        raise ConfigError(f"site rules file {file}: [subdomain] platforms: bad domains {bad}")
    rules: list[PathRule] = []
    for n, entry in enumerate(data.get("path", []), 1):
        hosts, site = entry.get("hosts"), entry.get("site")
        if not isinstance(hosts, list) or not isinstance(site, str) or not hosts:
            raise ConfigError(
                f"site rules file {file}: [[path]] number {n} needs hosts = [...] and site"
            )
        try:
            pattern = re.compile(site, re.IGNORECASE)
        except re.error as exc:
            raise ConfigError(
                f"site rules file {file}: [[path]] number {n}: bad expression {site!r} ({exc})"
            ) from exc
        for host in hosts:
            if not isinstance(host, str) or not is_valid_domain(host):
                raise ConfigError(f"site rules file {file}: [[path]] number {n}: bad host {host!r}")
            rules.append(PathRule(host.lower(), pattern))
    return SiteRules(
        subdomain_platforms=frozenset(p.lower() for p in platforms),
        platform_labels=frozenset(str(x).lower() for x in labels),
        path_rules=tuple(rules),
    )
