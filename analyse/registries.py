"""Registries of real organisations as evidence of a site's category.

Two public registries say what an organisation is and where it is on the web:

* **Hipo's world universities list** (``world_universities_and_domains.json``, MIT):
  universities and colleges with their domains and country; every record's *kind* is
  ``university``.
* **ROR**, the Research Organization Registry (data dump, CC0): research organisations
  with their websites, country and *types* (``education``, ``facility``, ``company``,
  ``nonprofit``, ``funder``, ``government``, ``healthcare``, ``archive``, ``other``).

A :class:`Registry` is made once per run from a snapshot file (the one shipped in
``analyse/registry_data/``, or a newer one written by ``webometrics registries update``)
and answers :meth:`Registry.lookup`: the host (or URL, or site key such as
``sites.google.com/site/x``) *or any parent domain* of it found in a registry is evidence
(``www.cs.ox.ac.uk`` -> ``ox.ac.uk``), returned as a :class:`RegistryMatch` with the
organisation's name, country, kind, source and id and the paper's category
(:func:`category_of`).

**Keys.** Every domain or website of a record becomes a *key*: its host without a leading
``www``, plus its path when it has one (``uni-x.de/institute``). A website on a hosting
platform or social network (:data:`PLATFORMS`: ``sites.google.com/...``,
``facebook.com/...``, ``vk.com/...``, ``t.me/...``) is keyed by host and path only, and a
user's host on a platform (``x.wordpress.com``, ``x.blogspot.com``) by that host: the
platform itself (``google.com``, ``facebook.com``, ``wordpress.com``) never becomes an
organisation, nor does a public suffix (``ac.uk``; the Public Suffix List's private
section included: ``github.io``). A website with a path on an ordinary host
(``nlwkn.de/fsk``) also keys its host when no other record holds or shares that host;
a host shared by the paths of several records (``inria.fr/...`` of 150 teams) is
nobody's. Several records on one key are resolved by :func:`_resolve` (Hipo first, then
the active records' majority category).

**Mapping ROR types onto the paper's categories** (:func:`category_of`, measured in
``bench/results/registries.md``): ``education`` -> universities (whatever else it is);
``facility`` -> scientific communities (research institutes, laboratories, observatories;
a government or company facility too); ``company``, ``healthcare`` and ``archive`` ->
other organisations (a company is not a scientific community, whatever its name);
``government`` -> scientific communities only when its name says it is a research body
and not an administration (a national research institute, a geological survey, a
science foundation; a ministry, department, office or agency is not:
:data:`ADMINISTRATION_WORDS`), else other organisations; ``nonprofit``, ``funder`` and
``other`` -> scientific communities when the name says it is a learned or research body
(:data:`RESEARCH_WORDS`: society, academy, institute, research, ...), else other
organisations.

Complexity: building from R records with W websites is O(R + W) time and memory (one
dictionary of about 60,000 keys for the shipped snapshot, ~25 MB); a lookup of a host of L
labels and a path of P segments is O(L + P) dictionary probes.

References
----------
Hipo, university-domains-list, https://github.com/Hipo/university-domains-list.
Research Organization Registry, https://ror.org (data dump: https://doi.org/10.5281/zenodo.6347574).

Examples
--------
>>> reg = Registry.load()
>>> m = reg.lookup("www.cs.ox.ac.uk")
>>> m.matched_domain, m.category, m.country
('ox.ac.uk', 'universities', 'GB')
>>> reg.lookup("google.com") is None, reg.lookup("facebook.com") is None
(True, True)
>>> category_of("ror", ("company", "facility"), "IBM Research")
'scientific_communities'
>>> category_of("ror", ("funder", "government"), "National Science Foundation")
'scientific_communities'
>>> category_of("ror", ("government",), "Ministry of Science and Higher Education")
'other_organisations'
>>> site_keys("https://sites.google.com/site/somelab/home")
('sites.google.com/site/somelab',)
>>> site_keys("http://www.nlwkn.de/FSK/")
('nlwkn.de/fsk',)
"""

from __future__ import annotations

import ast
import csv
import gzip
import hashlib
import io
import json
import os
import re
import tempfile
import textwrap
import zipfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import tldextract

from core.exceptions import ConfigError

__all__ = [
    "ADMINISTRATION_WORDS",
    "HOSTING_PLATFORMS",
    "PLATFORMS",
    "RESEARCH_WORDS",
    "ROR_TYPES",
    "SNAPSHOT_NAME",
    "DumpInput",
    "Provenance",
    "Registry",
    "RegistryMatch",
    "RegistryRecord",
    "category_of",
    "detect_source",
    "key_rules",
    "merged_snapshot",
    "packaged_snapshot",
    "read_dump",
    "read_hipo",
    "read_ror",
    "read_snapshot",
    "record_keys",
    "site_keys",
    "write_snapshot",
]

Source = Literal["hipo", "ror"]

#: the snapshot's file name, in the package's ``analyse/registry_data/`` and in a user's
#: registry folder (which takes precedence when it holds one)
SNAPSHOT_NAME = "registry.tsv.gz"
_FORMAT = "webometrics-registry 1"

#: the types of ROR records (schema v2; v1's capitalised names are read as these)
ROR_TYPES = (
    "education",
    "facility",
    "company",
    "nonprofit",
    "funder",
    "government",
    "healthcare",
    "archive",
    "other",
)

#: site-hosting platforms whose subdomains are their users' sites (``x.livejournal.com``,
#: ``x.github.io``): a user's host is a site, the platform's own domain is no one's
# fmt: off
HOSTING_PLATFORMS = frozenset(
    {
        "wordpress.com", "blogspot.com", "livejournal.com", "github.io", "gitlab.io",
        "narod.ru", "narod2.ru", "ucoz.ru", "ucoz.net", "ucoz.com", "ucoz.org", "ucoz.ua",
        "at.ua", "3dn.ru", "moy.su", "my1.ru", "do.am", "wixsite.com", "weebly.com",
        "jimdo.com", "jimdofree.com", "webnode.com", "webnode.page", "squarespace.com",
        "site123.me", "strikingly.com", "tilda.ws", "tilda.cc", "yolasite.com",
        "over-blog.com", "blog.com", "typepad.com", "wikidot.com", "netlify.app",
        "herokuapp.com", "vercel.app", "pages.dev", "web.app", "firebaseapp.com",
        "azurewebsites.net", "tumblr.com", "medium.com", "substack.com", "academia.edu",
        "free.fr", "business.site", "homestead.com", "webs.com", "notion.site",
        "canva.site", "sharepoint.com",
    }
)
# fmt: on

#: hosting platforms and social networks: a website there is keyed by host and path
#: (``facebook.com/x``, ``sites.google.com/site/x``, ``t.me/x``), or by a user's own host
#: on a :data:`HOSTING_PLATFORMS` one, never by the platform's domain. A platform written
#: ``google.*`` stands for every suffix (google.co.uk, google.ru ...).
# fmt: off
PLATFORMS = HOSTING_PLATFORMS | frozenset(
    {
        "facebook.com", "fb.com", "twitter.com", "x.com", "instagram.com", "linkedin.com",
        "youtube.com", "youtu.be", "vk.com", "vkontakte.ru", "ok.ru", "t.me",
        "telegram.me", "telegram.org", "tiktok.com", "pinterest.com", "flickr.com",
        "reddit.com", "weibo.com", "weixin.qq.com", "qq.com", "dzen.ru", "zen.yandex.ru",
        "my.mail.ru", "mail.ru", "yandex.*", "google.*", "goo.gl", "bit.ly",
        "tinyurl.com", "linktr.ee", "wa.me", "whatsapp.com", "researchgate.net",
        "orcid.org", "ror.org", "doi.org", "wikipedia.org", "wikidata.org", "archive.org",
        "github.com", "gitlab.com", "bitbucket.org", "slideshare.net", "scribd.com",
        "issuu.com", "about.me", "blogger.com", "wix.com", "cloudfront.net",
        "amazonaws.com", "geocities.com", "tripod.com", "angelfire.com", "t-online.de",
    }
)
# fmt: on

#: words of a learned or research body in an organisation's name (lower case, prefixes):
#: a ROR ``nonprofit``, ``funder`` or ``other`` record so named is a scientific community
# fmt: off
RESEARCH_WORDS = (
    "research", "science", "scien", "society", "societ", "academ", "akadem", "institut",
    "laborator", "observator", "forschung", "wissenschaft", "recherche", "investigaci",
    "pesquisa", "ricerca", "onderzoek", "study", "studies", "scholar", "learned",
    "association for", "association of", "federation of", "congress", "conference",
    "journal", "museum of natural history", "botanic", "herbarium", "survey", "geolog",
    "meteorolog", "научн", "наук", "исследоват", "институт", "академи", "обществ",
)
# fmt: on

#: words of an administration in a government body's name: not a scientific community
#: even when its name holds a research word ("Ministry of Science")
# fmt: off
ADMINISTRATION_WORDS = (
    "ministry", "minister", "ministère", "ministerio", "ministério", "ministero",
    "ministerium", "department", "departamento", "office", "secretar", "agency",
    "agencia", "agence", "administration", "government", "gouvernement", "gobierno",
    "governo", "regierung", "municipal", "council of", "commission", "министерств",
    "агентств", "правительств", "администрац", "департамент",
)
# fmt: on

# fmt: off
_GENERIC_PATHS = frozenset(
    {
        "index.html", "index.htm", "index.php", "index.asp", "index.aspx",
        "default.aspx", "default.asp", "home", "home.html", "main", "en", "eng",
        "english", "ru", "de", "fr", "es", "it", "pt", "ja", "zh", "web", "portal",
        "site", "inicio", "accueil", "start",
    }
)
# fmt: on
_WWW = re.compile(r"^www\d*\.")
_PATH_SEGMENTS = 4  # a website's path is kept to its first segments
_MAX_ALSO = 5


def _platform_of(host: str) -> str | None:
    """The platform ``host`` belongs to (``"google.*"`` for google.co.uk), or None."""
    labels = host.split(".")
    for i in range(len(labels) - 1):
        if ".".join(labels[i:]) in PLATFORMS:
            return ".".join(labels[i:])
        if f"{labels[i]}.*" in PLATFORMS and _is_suffix(".".join(labels[i + 1 :])):
            return f"{labels[i]}.*"
    return None


# the Public Suffix List with its private section, bundled with tldextract (no network);
# one immutable extractor for every Registry
_EXTRACT = tldextract.TLDExtract(
    suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True
)


def _is_suffix(host: str) -> bool:
    """True when ``host`` is a public suffix (``ac.uk``, ``github.io``), or has none."""
    ext = _EXTRACT(host)
    return not ext.domain or not ext.suffix


def _split(value: str) -> tuple[str, list[str]]:
    """The lower-case host without ``www`` and port, and the path's segments."""
    text = value.strip()
    if "//" not in text:
        text = "http://" + text
    try:
        parts = urlsplit(text)
        host = (parts.hostname or "").strip(".").lower()
    except ValueError:
        return "", []
    host = _WWW.sub("", host)
    segments = [s for s in parts.path.lower().split("/") if s]
    while segments and segments[-1] in _GENERIC_PATHS:
        segments.pop()
    return host, segments[:_PATH_SEGMENTS]


def _path_keys(host: str, segments: Sequence[str]) -> list[str]:
    """``host/seg1/.../segk`` for k = len(segments) .. 1, longest first."""
    return [host + "/" + "/".join(segments[:k]) for k in range(len(segments), 0, -1)]


def site_keys(website: str) -> tuple[str, ...]:
    """The keys a record's domain or website is found by (none for a platform itself).

    Parameters
    ----------
    website : str
        A domain (``"ox.ac.uk"``) or a URL (``"https://www.inria.fr/team/x/"``).

    Returns
    -------
    tuple of str
        The host without ``www`` (``"ox.ac.uk"``), or host and path when the website has
        a path (``"inria.fr/team/x"``); on a platform (:data:`PLATFORMS`) only host and
        path, or a user's own host (``"lab.wordpress.com"``); ``()`` for the platform
        itself, a public suffix or an IP address.

    Examples
    --------
    >>> site_keys("https://www.facebook.com/"), site_keys("https://t.me/somechannel")
    ((), ('t.me/somechannel',))
    >>> site_keys("https://lab.wordpress.com/"), site_keys("ac.uk")
    (('lab.wordpress.com',), ())
    """
    host, segments = _split(website)
    if not host or "." not in host or host.replace(".", "").isdigit() or _is_suffix(host):
        return ()
    platform = _platform_of(host)
    if platform is not None:
        own = _platform_user_host(host, platform)
        if own is None:
            return tuple(_path_keys(host, segments[:_PATH_SEGMENTS])[:1])
        return (own + "/" + "/".join(segments),) if segments else (own,)
    if segments:
        return (host + "/" + "/".join(segments),)
    return (host,)


def _platform_user_host(host: str, platform: str) -> str | None:
    """A user's own host on a site-hosting platform (``x.wordpress.com``), else None:
    the platform's own hosts (``sites.google.com``, ``m.facebook.com``) are no one's."""
    if platform.endswith(".*"):
        return None  # google.*, yandex.*: services, never a user's host
    if host == platform or _SERVICE_HOST.match(host[: -len(platform) - 1] + "."):
        return None
    if platform in HOSTING_PLATFORMS:
        return host
    return None


_SERVICE_HOST = re.compile(
    r"^(?:www\d*|m|mobile|web|api|app|apps|blog|blogs|help|support|docs|sites|pages|"
    r"about|news|static|cdn|mail|login|accounts|store|shop|en|ru|de|fr)\.$"
)


def record_keys(record: RegistryRecord) -> tuple[str, ...]:
    """The keys of every domain and website of a record (:func:`site_keys`), in order."""
    return tuple(dict.fromkeys(k for w in record.websites for k in site_keys(w)))


def key_rules() -> str:
    """A fingerprint of the rules that make keys (:func:`site_keys` and its lists): a
    snapshot's stored keys are used only when it was written under the same rules."""
    import inspect

    parts = [repr(sorted(PLATFORMS)), repr(sorted(HOSTING_PLATFORMS)), repr(sorted(_GENERIC_PATHS)),
             _WWW.pattern, _SERVICE_HOST.pattern, str(_PATH_SEGMENTS)]  # fmt: skip
    for fn in (site_keys, _split, _path_keys, _platform_of, _platform_user_host, _is_suffix):
        try:  # the code's syntax tree: a change of layout or comment is no change
            parts.append(ast.dump(ast.parse(textwrap.dedent(inspect.getsource(fn)))))
        except (OSError, TypeError, SyntaxError):  # no source: keys made afresh
            parts.append(repr(fn.__code__.co_code))
    parts.append(tldextract.__version__)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


# --- records, categories ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RegistryRecord:
    """One organisation of a registry.

    Attributes
    ----------
    source : {'hipo', 'ror'}
    id : str
        The source's id (ROR id ``"052gg0110"``; Hipo: the first domain).
    name : str
    kind : tuple of str
        ``("university",)`` for Hipo, the ROR types (``("education", "funder")``).
    country : str
        ISO 3166-1 alpha-2 code (``""`` when unknown).
    websites : tuple of str
        Domains (Hipo) or website URLs (ROR).
    status : str
        ``active``, ``inactive`` (ROR: the organisation ceased) or ``withdrawn``.
    """

    source: Source
    id: str
    name: str
    kind: tuple[str, ...]
    country: str
    websites: tuple[str, ...]
    status: str = "active"


def _named_research(name: str) -> bool:
    low = name.lower()
    return any(w in low for w in RESEARCH_WORDS)


def category_of(source: str, kind: Sequence[str], name: str = "") -> str:
    """The paper's category of a registry record.

    Parameters
    ----------
    source : {'hipo', 'ror'}
    kind : sequence of str
        ROR types (ignored for Hipo: every record is a university).
    name : str
        The organisation's name: decides a ROR ``government``, ``nonprofit``, ``funder``
        or ``other`` record (a learned or research body is a scientific community, others
        are other organisations; :data:`RESEARCH_WORDS`, :data:`ADMINISTRATION_WORDS`).

    Returns
    -------
    str
        ``universities``, ``scientific_communities`` or ``other_organisations``.

    Examples
    --------
    >>> category_of("hipo", ("university",))
    'universities'
    >>> category_of("ror", ("education", "healthcare"))
    'universities'
    >>> category_of("ror", ("facility", "government"), "Argonne National Laboratory")
    'scientific_communities'
    >>> category_of("ror", ("government",), "Ministry of Health")
    'other_organisations'
    >>> category_of("ror", ("nonprofit",), "American Mathematical Society")
    'scientific_communities'
    >>> category_of("ror", ("funder", "nonprofit"), "Bill & Melinda Gates Foundation")
    'other_organisations'
    """
    types = set(kind)
    if source == "hipo" or "education" in types:
        return "universities"
    if "facility" in types:
        return "scientific_communities"
    if types & {"company", "healthcare", "archive"}:
        return "other_organisations"
    low = name.lower()
    if "government" in types and any(w in low for w in ADMINISTRATION_WORDS):
        return "other_organisations"
    if _named_research(name):
        return "scientific_communities"
    return "other_organisations"


@dataclass(frozen=True)
class RegistryMatch:
    """What a registry says about a host: the organisation found at it or a parent.

    Attributes
    ----------
    query : str
        The host, URL or site key looked up (normalised: lower case, no ``www``).
    matched_domain : str
        The key found: the host itself, a parent domain (``ox.ac.uk`` for
        ``www.cs.ox.ac.uk``) or a host and path (``sites.google.com/site/x``).
    name, country : str
        The organisation's name and ISO alpha-2 country code.
    kind : str
        The source's kind: ``university`` (Hipo) or the ROR types joined by ``;``.
    category : str
        The paper's category (:func:`category_of`).
    source : {'hipo', 'ror'}
    source_id : str
        The ROR id, or Hipo's first domain of the university.
    status : str
        ``active``, ``inactive`` or ``withdrawn`` (ROR).
    records : int
        Records holding ``matched_domain`` (several: the majority decided, see ``also``).
    also : tuple of str
        Up to five other records there, ``"source:id name (category)"``.
    part_of : str
        For a key under a university's domain or site (``lib.umn.edu``): that
        university, ``"umn.edu University of Minnesota (hipo:umn.edu)"``; the category is
        then ``universities`` whatever the record's own kind (a library, a hospital).
    """

    query: str
    matched_domain: str
    name: str
    country: str
    kind: str
    category: str
    source: Source
    source_id: str
    status: str = "active"
    records: int = 1
    also: tuple[str, ...] = ()
    part_of: str = ""

    def as_evidence(self) -> dict[str, Any]:
        """The match as a JSON-ready dict (stored in a category's evidence)."""
        out = asdict(self)
        out["also"] = list(self.also)
        return out


_CATEGORY_ORDER = ("universities", "scientific_communities", "other_organisations")
_STATUS_ORDER = {"active": 0, "inactive": 1}


def _resolve(
    records: Sequence[RegistryRecord], category: Mapping[int, str]
) -> tuple[RegistryRecord, int]:
    """The record that speaks for a key, and how many records hold it.

    Hipo's universities first (the list is of universities and their domains); then the
    active ROR records' majority category (ties: universities, scientific communities,
    other organisations), inactive records only when no active one is there; within the
    category the first record by id.
    """
    hipo = sorted((r for r in records if r.source == "hipo"), key=lambda r: r.id)
    if hipo:
        return hipo[0], len(records)
    best_status = min(_STATUS_ORDER.get(r.status, 2) for r in records)
    pool = [r for r in records if _STATUS_ORDER.get(r.status, 2) == best_status]
    votes = Counter(category[id(r)] for r in pool)
    top = min(votes, key=lambda c: (-votes[c], _CATEGORY_ORDER.index(c)))
    chosen = min((r for r in pool if category[id(r)] == top), key=lambda r: r.id)
    return chosen, len(records)


# --- the registry -----------------------------------------------------------------------


@dataclass(frozen=True)
class Provenance:
    """Where a snapshot's records come from: one entry per source (``hipo``, ``ror``)
    with its ``source`` (file or URL), ``sha256``, ``retrieved`` (UTC date and time),
    ``records``, and what the source says of its version (``version``, ``note``)."""

    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    written: str = ""


class Registry:
    """The organisations of the registries, keyed by host (and path), for look-ups.

    Make one per run (:meth:`load`) and pass it down; it is not changed after it is made.

    Parameters
    ----------
    records : iterable of RegistryRecord
        Withdrawn records are left out.
    provenance : Provenance, optional
    path : Path, optional
        The snapshot file it was read from.
    keys : sequence of tuple of str, optional
        Each record's keys as :func:`record_keys` makes them (read from a snapshot made
        under the same rules; made here otherwise).

    Attributes
    ----------
    records : tuple of RegistryRecord
    provenance : Provenance
    path : Path or None

    Examples
    --------
    >>> reg = Registry([RegistryRecord("hipo", "uni-x.ac.uk", "Example University",
    ...                                ("university",), "GB", ("uni-x.ac.uk",))])
    >>> reg.lookup("https://www.cs.uni-x.ac.uk/people").name
    'Example University'
    >>> len(reg), reg.lookup("ac.uk") is None
    (1, True)
    """

    def __init__(
        self,
        records: Iterable[RegistryRecord],
        provenance: Provenance | None = None,
        *,
        path: Path | None = None,
        keys: Sequence[tuple[str, ...]] | None = None,
    ) -> None:
        recs = list(records)
        if keys is None or len(keys) != len(recs):
            keys = [record_keys(r) for r in recs]
        kept = [i for i, r in enumerate(recs) if r.status != "withdrawn"]
        self.records = tuple(recs[i] for i in kept)
        self.provenance = provenance or Provenance()
        self.path = path
        self._index = self._build(self.records, [keys[i] for i in kept])

    @staticmethod
    def _build(
        records: Sequence[RegistryRecord], keys: Sequence[tuple[str, ...]]
    ) -> dict[str, RegistryMatch]:
        category = {id(r): category_of(r.source, r.kind, r.name) for r in records}
        on_key: dict[str, list[RegistryRecord]] = defaultdict(list)
        path_hosts: dict[str, set[int]] = defaultdict(set)
        for i, (rec, rec_keys) in enumerate(zip(records, keys, strict=True)):
            for key in rec_keys:
                if not on_key[key] or on_key[key][-1] is not rec:
                    on_key[key].append(rec)
                if "/" in key:
                    path_hosts[key.split("/", 1)[0]].add(i)
        # a website with a path on an ordinary host keys the host too, when that host is
        # nobody else's: no record holds it and no other record has a path there
        for host, owners in path_hosts.items():
            if host not in on_key and len(owners) == 1 and site_keys(host) == (host,):
                on_key[host].append(records[next(iter(owners))])
        index: dict[str, RegistryMatch] = {}
        for key, recs in on_key.items():
            rec, n = _resolve(recs, category)
            others = (
                sorted((r for r in recs if r is not rec), key=lambda r: (r.source, r.id))
                if n > 1
                else ()
            )
            index[key] = RegistryMatch(
                query=key,
                matched_domain=key,
                name=rec.name,
                country=rec.country,
                kind=";".join(rec.kind),
                category=category[id(rec)],
                source=rec.source,
                source_id=rec.id,
                status=rec.status,
                records=n,
                also=tuple(f"{r.source}:{r.id} {r.name} ({category[id(r)]})" for r in others)[
                    :_MAX_ALSO
                ],
            )
        return _within_universities(index)

    def __len__(self) -> int:
        return len(self.records)

    def matches(self) -> Iterator[tuple[str, RegistryMatch]]:
        """Every key with the organisation that speaks for it."""
        return iter(self._index.items())

    @property
    def keys(self) -> int:
        """The number of keys (hosts and host paths) the registry answers for."""
        return len(self._index)

    def lookup(self, domain_or_host: str) -> RegistryMatch | None:
        """The organisation at a host, URL or site key, or at its nearest parent.

        Parameters
        ----------
        domain_or_host : str
            ``"www.cs.ox.ac.uk"``, ``"https://www.cs.ox.ac.uk/people/"``, or a site key
            with a path (``"sites.google.com/site/x"``, ``"vk.com/spbu"``).

        Returns
        -------
        RegistryMatch or None
            The most specific key found: host and path prefixes (longest first), then the
            host, then its parent domains (``cs.ox.ac.uk``, ``ox.ac.uk``); None when
            nothing is found (a platform such as ``google.com`` is never found).
        """
        host, segments = _split(domain_or_host)
        if not host:
            return None
        query = host + ("/" + "/".join(segments) if segments else "")
        candidates = _path_keys(host, segments)
        labels = host.split(".")
        candidates += [".".join(labels[i:]) for i in range(len(labels) - 1)]
        for key in candidates:
            found = self._index.get(key)
            if found is not None:
                return _with_query(found, query)
        return None

    def stats(self, top: int = 10) -> dict[str, Any]:
        """Counts for ``webometrics registries info``: records and keys by source, ROR
        records by kind and by category, the ``top`` countries."""
        by_source = Counter(r.source for r in self.records)
        kinds = Counter(k for r in self.records if r.source == "ror" for k in r.kind)
        cats = Counter((r.source, category_of(r.source, r.kind, r.name)) for r in self.records)
        countries = Counter(r.country for r in self.records if r.country)
        keys = Counter(m.source for m in self._index.values())
        return {
            "records": dict(sorted(by_source.items())),
            "keys": dict(sorted(keys.items())),
            "ror_types": dict(kinds.most_common()),
            "categories": {f"{s}:{c}": n for (s, c), n in sorted(cats.items())},
            "top_countries": dict(countries.most_common(top)),
        }

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Registry:
        """The registry of a snapshot file (:func:`write_snapshot`)."""
        records, provenance, keys = read_snapshot(path)
        return cls(records, provenance, path=Path(path), keys=keys)

    @classmethod
    def load(cls, folder: str | os.PathLike[str] | None = None) -> Registry:
        """The registry of ``folder``'s snapshot when it holds one, else the packaged one.

        Parameters
        ----------
        folder : path, optional
            A user's registry folder (where ``webometrics registries update`` writes).
        """
        if folder is not None:
            user = Path(folder) / SNAPSHOT_NAME
            if user.is_file():
                return cls.from_file(user)
        return cls.from_file(packaged_snapshot())


def _parents(key: str) -> Iterator[str]:
    """The keys above ``key``: its shorter paths, its host, the host's parent domains."""
    host, _, path = key.partition("/")
    segments = path.split("/") if path else []
    yield from _path_keys(host, segments[:-1])
    if segments:
        yield host
    labels = host.split(".")
    yield from (".".join(labels[i:]) for i in range(1, len(labels) - 1))


def _within_universities(index: dict[str, RegistryMatch]) -> dict[str, RegistryMatch]:
    """A key under a university's (``lib.umn.edu`` under ``umn.edu``, ``uc.pt/en/cia``
    under ``uc.pt``) is a site of that university, whatever its own record is (a
    library, a hospital, an institute): its category becomes ``universities`` and
    ``part_of`` names the university."""
    out = dict(index)
    for key, match in index.items():
        if match.category == "universities":
            continue
        for parent in _parents(key):
            up = index.get(parent)
            if up is not None and up.category == "universities":
                out[key] = replace(
                    match,
                    category="universities",
                    part_of=f"{up.matched_domain} {up.name} ({up.source}:{up.source_id})",
                )
                break
    return out


def _with_query(match: RegistryMatch, query: str) -> RegistryMatch:
    return replace(match, query=query)


def packaged_snapshot() -> Path:
    """The snapshot shipped in the package (``analyse/registry_data/registry.tsv.gz``)."""
    return Path(__file__).resolve().parent / "registry_data" / SNAPSHOT_NAME


# --- the snapshot file ------------------------------------------------------------------

_COLUMNS = ("source", "id", "kind", "country", "status", "name", "websites", "keys")


def write_snapshot(
    records: Iterable[RegistryRecord], provenance: Provenance, path: str | os.PathLike[str]
) -> Path:
    """Write a snapshot file atomically (a temporary file beside it, then renamed).

    The file is gzip'd UTF-8 text: a first line ``#webometrics-registry 1`` and the
    provenance as JSON, a header, then one tab-separated line per record (``source``,
    ``id``, ``kind`` and ``websites`` joined by ``;``/space, ``country``, ``status``,
    ``name``, and the keys :func:`record_keys` makes, with the rules' fingerprint
    :func:`key_rules` in the first line). Its ``mtime`` in the gzip header is 0.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    head = {**asdict(provenance), "key_rules": key_rules()}
    buf.write(f"#{_FORMAT}\t{json.dumps(head, sort_keys=True)}\n")
    buf.write("\t".join(_COLUMNS) + "\n")
    for r in sorted(records, key=lambda r: (r.source, r.id)):
        cells = (r.source, r.id, ";".join(r.kind), r.country, r.status, r.name,
                 " ".join(r.websites), " ".join(record_keys(r)))  # fmt: skip
        buf.write("\t".join(_clean(c) for c in cells) + "\n")
    fd, tmp = tempfile.mkstemp(prefix=".registry-", suffix=".tmp", dir=path.parent)
    try:
        with (
            os.fdopen(fd, "wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz,
        ):
            gz.write(buf.getvalue().encode("utf-8"))
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide it from the other users
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _clean(text: str) -> str:
    return " ".join(str(text).split())


def read_snapshot(
    path: str | os.PathLike[str],
) -> tuple[list[RegistryRecord], Provenance, list[tuple[str, ...]] | None]:
    """The records, provenance and keys of a snapshot file (keys None: written under
    other key rules, to be made again).

    Raises
    ------
    ConfigError
        The file is not a registry snapshot (says what to do).
    """
    path = Path(path)
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            first = fh.readline()
            if not first.startswith(f"#{_FORMAT}\t"):
                raise ConfigError(
                    f"{path}: not a registry snapshot of this version; run `webometrics "
                    "registries update` to write one"
                )
            prov = json.loads(first.split("\t", 1)[1])
            header = fh.readline().rstrip("\n").split("\t")
            if tuple(header) != _COLUMNS:
                raise ConfigError(f"{path}: unexpected columns {header}; expected {_COLUMNS}")
            records = []
            keys: list[tuple[str, ...]] = []
            for line in fh:
                src, rid, kind, country, status, name, websites, rkeys = line.rstrip("\n").split(
                    "\t"
                )
                keys.append(tuple(rkeys.split()))
                records.append(
                    RegistryRecord(
                        source=src,  # type: ignore[arg-type]
                        id=rid,
                        name=name,
                        kind=tuple(k for k in kind.split(";") if k),
                        country=country,
                        websites=tuple(websites.split()),
                        status=status,
                    )
                )
    except (OSError, EOFError, ValueError, json.JSONDecodeError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise ConfigError(
                f"{path}: no registry snapshot there; run `webometrics registries update` "
                "or reinstall the package"
            ) from exc
        raise ConfigError(
            f"{path}: unreadable registry snapshot ({exc}); run `webometrics registries "
            "update` to write a new one"
        ) from exc
    same_rules = prov.get("key_rules") == key_rules()
    provenance = Provenance(sources=prov.get("sources", {}), written=prov.get("written", ""))
    return records, provenance, keys if same_rules else None


# --- the official dumps -----------------------------------------------------------------


def read_hipo(data: bytes, *, origin: str = "input") -> list[RegistryRecord]:
    """The universities of Hipo's ``world_universities_and_domains.json``.

    Raises
    ------
    ConfigError
        Not that file's layout (a JSON list of objects with ``name`` and ``domains``).
    """
    try:
        items = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{origin}: not JSON ({exc}); give Hipo's JSON list") from exc
    if not isinstance(items, list) or not items:
        raise ConfigError(f"{origin}: expected a JSON list of universities (Hipo's format)")
    out: list[RegistryRecord] = []
    seen: Counter[str] = Counter()
    for n, it in enumerate(items):
        if not isinstance(it, dict) or not isinstance(it.get("name"), str):
            raise ConfigError(f"{origin}: item {n} has no 'name': not Hipo's universities list")
        domains = it.get("domains")
        if not isinstance(domains, list) or not all(isinstance(d, str) for d in domains):
            raise ConfigError(f"{origin}: item {n} ({it['name']!r}) has no list of 'domains'")
        domains = [d.strip().lower() for d in domains if d.strip()]
        if not domains:
            continue
        rid = domains[0]
        seen[rid] += 1
        if seen[rid] > 1:  # two universities under one first domain: keep both
            rid = f"{rid}#{seen[rid]}"
        out.append(
            RegistryRecord(
                "hipo",
                rid,
                _clean(it["name"]),
                ("university",),
                str(it.get("alpha_two_code") or "").upper(),
                tuple(domains),
            )
        )
    return out


def _ror_id(value: str) -> str:
    return value.rstrip("/").rsplit("/", 1)[-1]


def _ror_v2(it: Mapping[str, Any]) -> RegistryRecord:
    names = it.get("names") or []
    display = next((n["value"] for n in names if "ror_display" in (n.get("types") or [])), None)
    name = display or (names[0]["value"] if names else "")
    websites = [ln["value"] for ln in it.get("links") or [] if ln.get("type") == "website"]
    websites += [d for d in it.get("domains") or [] if d]
    locs = it.get("locations") or [{}]
    country = ((locs[0] or {}).get("geonames_details") or {}).get("country_code") or ""
    return RegistryRecord(
        "ror",
        _ror_id(it["id"]),
        _clean(name),
        tuple(t.lower() for t in it.get("types") or []),
        country.upper(),
        tuple(dict.fromkeys(websites)),
        str(it.get("status") or "active"),
    )


def _ror_v1(it: Mapping[str, Any]) -> RegistryRecord:
    country = (it.get("country") or {}).get("country_code") or ""
    return RegistryRecord(
        "ror",
        _ror_id(it["id"]),
        _clean(it.get("name") or ""),
        tuple(t.lower() for t in it.get("types") or []),
        country.upper(),
        tuple(dict.fromkeys([*(it.get("links") or []), *(it.get("domains") or [])])),
        str(it.get("status") or "active"),
    )


def _ror_json(data: bytes, origin: str) -> list[RegistryRecord]:
    try:
        items = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{origin}: not JSON ({exc})") from exc
    if not isinstance(items, list) or not items or not isinstance(items[0], dict):
        raise ConfigError(f"{origin}: expected a JSON list of ROR records")
    out = []
    for n, it in enumerate(items):
        if not isinstance(it, dict) or not str(it.get("id", "")).startswith("https://ror.org/"):
            raise ConfigError(f"{origin}: record {n} has no ROR id (https://ror.org/...)")
        try:
            out.append(_ror_v2(it) if "names" in it else _ror_v1(it))
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            raise ConfigError(f"{origin}: record {n} ({it['id']}) is malformed: {exc}") from exc
    return out


def _ror_csv(text: str, origin: str) -> list[RegistryRecord]:
    """This project's reduced CSV (``ror_id,name,types,websites,country_code,status``)."""
    rows = csv.DictReader(io.StringIO(text))
    need = {"ror_id", "name", "types", "websites", "country_code", "status"}
    if not rows.fieldnames or not need <= set(rows.fieldnames):
        raise ConfigError(
            f"{origin}: CSV columns {rows.fieldnames} lack {sorted(need)}; give a ROR data "
            "dump zip or a CSV with those columns"
        )
    out = []
    for n, row in enumerate(rows, start=2):
        if not row["ror_id"] or not row["name"]:
            raise ConfigError(f"{origin}: line {n} has no ror_id or name")
        out.append(
            RegistryRecord(
                "ror",
                _ror_id(row["ror_id"]),
                _clean(row["name"]),
                tuple(t for t in row["types"].lower().split(";") if t),
                row["country_code"].upper(),
                tuple(w for w in row["websites"].split(";") if w),
                row["status"] or "active",
            )
        )
    return out


def _zip_json(data: bytes, origin: str) -> tuple[str, bytes]:
    """The records file of a ROR data-dump zip: the schema v2 JSON when there is one."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ConfigError(f"{origin}: not a zip file ({exc})") from exc
    names = [n for n in zf.namelist() if n.lower().endswith(".json")]
    if not names:
        raise ConfigError(f"{origin}: the zip holds no JSON file: not a ROR data dump")
    names.sort(key=lambda n: ("schema_v2" not in n, n))
    return names[0], zf.read(names[0])


def read_ror(data: bytes, *, origin: str = "input") -> tuple[list[RegistryRecord], str]:
    """The records of a ROR dump: the data-dump zip (its schema v2 JSON, or v1), a JSON
    list of records, or this project's reduced CSV (gzip'd or not).

    Returns
    -------
    records : list of RegistryRecord
    version : str
        The dump's file name without extension (``v1.50-2024-07-29-ror-data_schema_v2``)
        or ``""``.

    Raises
    ------
    ConfigError
        None of those layouts.
    """
    version = ""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ConfigError(f"{origin}: broken gzip file ({exc})") from exc
    if data[:4] == b"PK\x03\x04":
        member, data = _zip_json(data, origin)
        version = Path(member).stem
        return _ror_json(data, f"{origin}:{member}"), version
    head = data.lstrip()[:1]
    if head == b"[":
        return _ror_json(data, origin), version
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{origin}: neither a zip, JSON nor a UTF-8 CSV") from exc
    return _ror_csv(text, origin), version


def detect_source(data: bytes) -> Source | None:
    """``"hipo"`` or ``"ror"`` from a dump's first bytes (None: neither layout)."""
    raw = data
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            return None
    if raw[:4] == b"PK\x03\x04":
        return "ror"
    head = raw.lstrip()[:4096].decode("utf-8", "replace")
    if head.startswith("["):
        if '"ror.org/' in head or "https://ror.org" in head:
            return "ror"
        if '"domains"' in head or '"alpha_two_code"' in head:
            return "hipo"
        return None
    if head.startswith(("ror_id,", "\ufeffror_id,")):
        return "ror"
    return None


def source_entry(data: bytes, origin: str, records: int, version: str = "") -> dict[str, Any]:
    """A provenance entry: origin, sha256, UTC time, record count, version."""
    return {
        "source": origin,
        "sha256": hashlib.sha256(data).hexdigest(),
        "retrieved": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "records": records,
        "version": version,
    }


def iter_sources(records: Sequence[RegistryRecord], source: Source) -> Iterator[RegistryRecord]:
    """The records of one source."""
    return (r for r in records if r.source == source)


@dataclass(frozen=True)
class DumpInput:
    """One dump to read: its bytes, where it came from (a path or URL) and an optional
    note for the provenance (``"commit bb07faf (2026-06-20)"``)."""

    data: bytes
    origin: str
    note: str = ""


def read_dump(dump: DumpInput) -> tuple[Source, list[RegistryRecord], dict[str, Any]]:
    """The source, records and provenance entry of one dump (Hipo's JSON or ROR's).

    Raises
    ------
    ConfigError
        Neither layout, or a malformed one (nothing is read).
    """
    source = detect_source(dump.data)
    if source is None:
        raise ConfigError(
            f"{dump.origin}: neither Hipo's world_universities_and_domains.json nor a ROR "
            "dump (the data-dump zip, its JSON, or a ror_id,name,types,websites,"
            "country_code,status CSV)"
        )
    version = ""
    if source == "hipo":
        records = read_hipo(dump.data, origin=dump.origin)
    else:
        records, version = read_ror(dump.data, origin=dump.origin)
    if not records:
        raise ConfigError(f"{dump.origin}: no records in it; nothing replaced")
    entry = source_entry(dump.data, dump.origin, len(records), version)
    if dump.note:
        entry["note"] = dump.note
    return source, records, entry


def merged_snapshot(
    dumps: Sequence[DumpInput], current: Registry | None = None
) -> tuple[list[RegistryRecord], Provenance]:
    """The records and provenance of a new snapshot: the sources of ``dumps`` replaced,
    the other sources kept from ``current``.

    Raises
    ------
    ConfigError
        A dump cannot be read, or two dumps of one source are given.
    """
    fresh: dict[str, tuple[list[RegistryRecord], dict[str, Any]]] = {}
    for dump in dumps:
        source, got, entry = read_dump(dump)
        if source in fresh:
            raise ConfigError(
                f"{dump.origin}: a second {source} dump (the first: "
                f"{fresh[source][1]['source']}); give one per source"
            )
        fresh[source] = (got, entry)
    records: list[RegistryRecord] = []
    sources: dict[str, dict[str, Any]] = {}
    for src in ("hipo", "ror"):
        if src in fresh:
            records += fresh[src][0]
            sources[src] = fresh[src][1]
        elif current is not None:
            records += list(iter_sources(current.records, src))  # type: ignore[arg-type]
            if src in current.provenance.sources:
                sources[src] = current.provenance.sources[src]
    written = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return records, Provenance(sources=sources, written=written)
