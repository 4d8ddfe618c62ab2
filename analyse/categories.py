"""Activity categories of external sites from an editable taxonomy (TOML), with evidence.

The paper grouped the clusters of each university's external environment into
universities, scientific communities, search engines, social networks (with blogs and
forums), media, news portals and other organisations (seed 000_d819228b9213e10a.txt,
before its Figures 2 and 3), reading the clusters' most frequent shingles. This module
makes that step explicit and repeatable: a taxonomy file (``analyse/taxonomy.toml`` by
default, ``[analyse] taxonomy`` to use another) lists for every category its domains and
host patterns, parts of domain names, and English and Russian keywords, and a domain is
scored against every category:

``score(c) = known_domain·[domain listed] + domain_pattern·[a pattern matches]
+ name_part·w·[a name part occurs] + title_keyword·mean_t sat(k_t(c)) + text_keyword·mean_p
sat(k_p(c))``

where ``k_t(c)`` / ``k_p(c)`` are the weighted numbers of distinct keywords of ``c`` found
in title ``t`` / page ``p`` (a keyword or name part written ``"search results^4"`` weighs
4, others 1), and ``sat(k) = cap·(1 - exp(-k / cap))`` saturates, so that one long
page cannot outweigh the domain facts. The best category wins; its *score* is its share
of the sum over categories (``1.0``: no other category has any evidence; ``0.0``: no
evidence at all, the taxonomy's ``default`` is assigned). The *evidence* says what
matched. A cluster's category is the vote of its members (each member's normalised
scores, or a one-hot vote for an analyst's override; the votes are shares summing to 1)
plus ``cluster_theme · sat(k(c)) / cap`` for the keywords of ``c`` among its theme terms.

Complexity: compiling a taxonomy with K keywords and D domain entries is O(K + D); a
domain with W words in its pages and titles costs O(W · L) with L the longest word
(prefix look-ups), plus one regular-expression scan per multi-word keyword.

**Evidence and what decides.** Each source of evidence is an :class:`Evidence` (its
name and a score per category); :func:`combine` adds them and says which source decided
(``decided_by``: the one that gave the winning category most of its score; ``override``
for an analyst's category, ``none`` without evidence). The sources, weakest first:
``keywords`` (titles and texts), ``pattern`` (host patterns and parts of the domain's
name), ``registry`` and ``known_domain``:

* **registry** (:mod:`analyse.registries`, ``registry=``): the host or a parent domain
  is an organisation of Hipo's universities list or ROR. A university or scientific
  community (ROR types mapped by :func:`analyse.registries.category_of`) weighs
  :func:`registry_weight`, more than patterns, name parts and keywords of another
  category can ever add up to, so a registered university is a university whatever its
  pages say. Any other organisation (a company, hospital, ministry, library, charity)
  weighs as a name part for *other organisations* and rules universities out for the
  weaker evidence (scientific communities too for a ROR company, hospital, archive or
  government body): a ROR company is no university, but its pages may still show a
  media or news site (``nba.com``, ``paramount.com``).
  The evidence names the organisation, its country, kind and source.
* **known_domain**, the taxonomy's listed domains, outranks a registry match that is not
  more specific (``arxiv.org`` listed as a scientific community, a ``nonprofit`` in ROR;
  ``elsevier.com``, a company; ``bbc.com``, a government funder): a registry says what
  kind of *organisation* runs a site, the analyst's list what kind of *site* it is, which
  is what the paper's categories are. A university or scientific community the registry
  finds more specific than the listing (``research.example.com`` under a listed
  ``example.com``) wins; another organisation there weighs too little to. The registry's say is
  then kept in the evidence (``registry`` with ``outranked_by``) but weighs nothing.

A text model's probabilities would be one more :class:`Evidence` passed to
:func:`combine`.

The taxonomy file, its checks and its types (:class:`~analyse.taxonomy.Taxonomy`,
:func:`~analyse.taxonomy.load_taxonomy`) are :mod:`analyse.taxonomy`.

References
----------
V. N. Korelin, I. S. Blekanov, S. L. Sergeev (2015), seed 000_d819228b9213e10a.txt.

Examples
--------
>>> tax = load_taxonomy()
>>> tax.keys()[:3]
('universities', 'scientific_communities', 'search_engines')
>>> a = categorize_domain("ox.ac.uk", taxonomy=tax)
>>> a.category, a.evidence["patterns"]
('universities', ['*.ac.uk'])
>>> categorize_domain("vk.com", taxonomy=tax).category
'social_networks'
>>> categorize_domain("example-shop.com", texts=["Buy our products: order now, low price."],
...                   taxonomy=tax).category
'other_organisations'
>>> tax.resolve("news")
'news_portals'
>>> from analyse.registries import Registry
>>> reg = Registry.load()
>>> a = categorize_domain("lib.umn.edu", taxonomy=tax, registry=reg)
>>> a.category, a.evidence["decided_by"], a.evidence["registry"]["name"]
('universities', 'registry', 'University of Minnesota Libraries...')
>>> a = categorize_domain("arxiv.org", taxonomy=tax, registry=reg)
>>> a.category, a.evidence["decided_by"], a.evidence["registry"]["outranked_by"]
('scientific_communities', 'known_domain', 'known domain arxiv.org')
>>> a = categorize_domain("spbgu-regional.ac.ru", taxonomy=tax)
>>> a.category, a.evidence["decided_by"]
('scientific_communities', 'pattern')
"""

from __future__ import annotations

import fnmatch
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analyse.registries import Registry, RegistryMatch
from analyse.taxonomy import Taxonomy, load_taxonomy
from analyse.themes import words
from core.choices import UNKNOWN
from core.domains import registered_domain

# Taxonomy and load_taxonomy (analyse.taxonomy) are used here and imported from here too
__all__ = [
    "PRECEDENCE",
    "Assignment",
    "Evidence",
    "Taxonomy",
    "categorize_cluster",
    "categorize_domain",
    "combine",
    "load_taxonomy",
    "registry_weight",
]

#: the sources :func:`combine` weighs, strongest first: a stronger source's exclusions
#: bind the weaker ones, and it decides a tie (names of :data:`core.choices.CATEGORY_DECIDERS`)
PRECEDENCE: tuple[str, ...] = (
    "override",
    "known_domain",
    "registry",
    "pattern",
    "keywords",
    "none",
)


@dataclass(frozen=True)
class Assignment:
    """A category with its score (share of the evidence, 0..1), raw scores and evidence."""

    category: str
    score: float
    scores: dict[str, float]
    evidence: dict[str, Any]

    def distribution(self) -> dict[str, float]:
        """The raw scores normalised to sum 1 (one-hot on ``category`` without evidence)."""
        total = sum(self.scores.values())
        if total <= 0:
            return {self.category: 1.0}
        return {k: v / total for k, v in self.scores.items() if v > 0}


@dataclass(frozen=True)
class Evidence:
    """What one source says of a domain's category.

    Attributes
    ----------
    source : str
        Its name, as ``decided_by`` gives it (``registry``, ``known_domain``,
        ``pattern``, ``keywords``; a text model would add ``text_model``).
    scores : mapping of str to float
        A non-negative weight per category key (missing: 0).
    excludes : frozenset of str
        Categories this source rules out: the weaker sources (after it in
        :data:`PRECEDENCE`) cannot give them any score (a registered company is no
        university, whatever its pages say).
    """

    source: str
    scores: Mapping[str, float]
    excludes: frozenset[str] = frozenset()


def _rank(source: str) -> int:
    """A source's place in :data:`PRECEDENCE` (an unlisted one, e.g. a text model, ranks
    with the keywords)."""
    return PRECEDENCE.index(source) if source in PRECEDENCE else PRECEDENCE.index("keywords")


def combine(
    taxonomy: Taxonomy,
    evidence: Sequence[Evidence],
    details: dict[str, Any],
    *,
    override: str | None = None,
) -> Assignment:
    """The category of a domain from every source's evidence: the sum of their scores.

    Parameters
    ----------
    taxonomy : Taxonomy
    evidence : sequence of Evidence
        Every source's scores; their sum per category decides (the taxonomy's order
        breaks ties), less what a stronger source excludes.
    details : dict
        What matched (stored as the assignment's evidence; ``decided_by`` is added).
    override : str, optional
        An analyst's category: it decides (score 1), the sources' scores stay beside it.

    Returns
    -------
    Assignment
        ``evidence["decided_by"]``: ``override``; else the source that gave the winning
        category the largest part of its score; ``none`` without any evidence (the
        taxonomy's default category, score 0).

    Examples
    --------
    >>> tax = load_taxonomy()
    >>> a = combine(tax, [Evidence("keywords", {"media": 2.0, "news_portals": 1.0}),
    ...                   Evidence("registry", {"universities": 14.0})], {})
    >>> a.category, a.score, a.evidence["decided_by"]
    ('universities', 0.8235, 'registry')
    >>> combine(tax, [], {}).evidence["decided_by"]
    'none'
    """
    scores = {c.key: 0.0 for c in taxonomy.categories}
    ruled_out = [(_rank(ev.source), ev.excludes) for ev in evidence if ev.excludes]
    kept = []
    for ev in evidence:
        out = {k for rank, ex in ruled_out if rank < _rank(ev.source) for k in ex}
        kept.append(Evidence(ev.source, {k: v for k, v in ev.scores.items() if k not in out}))
        for key, value in kept[-1].scores.items():
            if value > 0 and key in scores:
                scores[key] += value
    if override is not None:
        key = taxonomy.resolve(override)
        details["decided_by"] = "override"
        rounded = {k: round(v, 4) for k, v in scores.items() if v > 0}
        return Assignment(key, 1.0, rounded, details)
    result = _decide(taxonomy, scores, details)
    if result.score <= 0:
        details["decided_by"] = "none"
        return result
    share = {ev.source: 0.0 for ev in kept}
    for ev in kept:
        share[ev.source] += max(ev.scores.get(result.category, 0.0), 0.0)
    order = {name: i for i, name in enumerate(PRECEDENCE)}
    details["decided_by"] = min(share, key=lambda n: (-share[n], order.get(n, len(order))))
    return result


def registry_weight(taxonomy: Taxonomy) -> float:
    """The weight of a registry match: one more than a domain pattern, the heaviest name
    part and saturated title and text keywords of another category can add up to, so
    that only a listed domain (or an override) outweighs it.

    Examples
    --------
    >>> registry_weight(load_taxonomy())
    14.0
    """
    sc = taxonomy.scoring
    heaviest_part = max(
        (w for c in taxonomy.categories for _p, w in c.weighted_name_parts), default=0.0
    )
    keywords = (sc.title_keyword + sc.text_keyword) * sc.cap
    return sc.domain_pattern + sc.name_part * heaviest_part + keywords + 1.0


#: registry categories that decide (registry_weight); another (other organisations) weighs
#: as a name part and rules universities out for the weaker evidence, and scientific
#: communities too for the ROR types of _NOT_RESEARCH
_REGISTRY_STRONG = frozenset({"universities", "scientific_communities"})
_NOT_RESEARCH = frozenset({"company", "healthcare", "archive", "government"})


def _specificity(key: str) -> int:
    """Labels of a host plus segments of a path: ``cs.ox.ac.uk`` 4, ``vk.com/x`` 3."""
    host, _, path = key.partition("/")
    return host.count(".") + 1 + (path.count("/") + 1 if path else 0)


def _registry_evidence(
    taxonomy: Taxonomy,
    match: RegistryMatch,
    listed: Mapping[str, Sequence[str]],
    listed_scores: Mapping[str, float],
) -> tuple[Evidence, dict[str, Any]]:
    """The registry's evidence for ``match``: a university or scientific community at
    :func:`registry_weight` (plus the score of a less specific listing of another
    category: ``fpi.gov.ru`` under a listed ``gov.ru``); another organisation at the
    weight of a name part, ruling universities out for patterns and keywords (and
    scientific communities for a company, hospital, archive or government body); nothing
    when a listed domain at least as specific says another category."""
    detail = match.as_evidence()
    category = match.category if match.category in taxonomy else None
    if category is None:
        detail["outranked_by"] = f"the taxonomy has no category {match.category!r}"
        return Evidence("registry", {}), detail
    outranking = [
        d
        for key, doms in listed.items()
        if key != category
        for d in doms
        if "*" not in d and _specificity(d) >= _specificity(match.matched_domain)
    ]
    if outranking:
        detail["outranked_by"] = f"known domain {outranking[0]}"
        return Evidence("registry", {}), detail
    if category in _REGISTRY_STRONG:
        # more specific than any listing of another category: it outweighs those too
        rival = max((v for k, v in listed_scores.items() if k != category), default=0.0)
        return Evidence("registry", {category: registry_weight(taxonomy) + rival}), detail
    # another organisation: no university by its pages or name; no scientific community
    # either when its types say so (a company, hospital, archive, government body), but
    # what kind of site it runs (a media company's, a sports league's) its pages tell
    # better than "other", which it weighs as a part of a name does
    types = set(match.kind.split(";"))
    ruled = {"universities"} | ({"scientific_communities"} if types & _NOT_RESEARCH else set())
    ruled_out = frozenset(ruled & set(taxonomy.keys()))
    return Evidence("registry", {category: taxonomy.scoring.name_part}, ruled_out), detail


# --- scoring ----------------------------------------------------------------------------


def _host_forms(domain: str, hosts: Iterable[str]) -> set[str]:
    forms = {domain.strip(".").lower()}
    for h in hosts:
        h = (h or "").strip(".").lower()
        if h:
            forms.add(h)
            if h.startswith("www."):
                forms.add(h[4:])
    return {f for f in forms if f}


def _domain_matches(entry: str, forms: set[str]) -> bool:
    """True when a host form matches a listed domain (itself or a subdomain) or a pattern;
    a pattern ``*.edu.*`` only where ``edu.<suffix>`` is a public suffix (``unsw.edu.au``,
    not the registered domain ``edu.homes``).

    Examples
    --------
    >>> _domain_matches("*.edu.*", {"www.unsw.edu.au"})
    True
    >>> _domain_matches("*.edu.*", {"www.edu.homes"})
    False
    """
    if "*" not in entry:
        return any(f == entry or f.endswith("." + entry) for f in forms)
    if entry.startswith("*.") and entry.endswith(".*") and "*" not in entry[2:-2]:
        return any(
            fnmatch.fnmatchcase(f, entry)
            and registered_domain(f).partition(".")[2].startswith(entry[2:-1])
            for f in forms
        )
    return any(fnmatch.fnmatchcase(f, entry) for f in forms)


def _keyword_evidence(
    taxonomy: Taxonomy, texts: Iterable[str], max_words: int
) -> tuple[dict[str, float], dict[str, Counter[str]]]:
    """Mean saturated count of distinct keywords per text, and the keywords' text counts."""
    sat = {c.key: 0.0 for c in taxonomy.categories}
    hits: dict[str, Counter[str]] = {c.key: Counter() for c in taxonomy.categories}
    n = 0
    for text in texts:
        toks = words(text or "")[:max_words]
        if not toks:
            continue
        n += 1
        distinct, joined = set(toks), " ".join(toks)
        for c in taxonomy.categories:
            found = c._keywords.find(distinct, joined)
            if found:
                sat[c.key] += taxonomy.scoring.saturate(c._keywords.weight(found))
                hits[c.key].update(found)
    if n:
        sat = {k: v / n for k, v in sat.items()}
    return sat, hits


def _top(counter: Counter[str], n: int = 8) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:n])


def _decide(taxonomy: Taxonomy, scores: dict[str, float], evidence: dict[str, Any]) -> Assignment:
    total = sum(scores.values())
    order = {k: i for i, k in enumerate(taxonomy.keys())}
    rounded = {k: round(v, 4) for k, v in scores.items() if v > 0}
    if total <= 0:
        evidence["reason"] = f"no evidence: the default category {taxonomy.default!r}"
        return Assignment(taxonomy.default, 0.0, rounded, evidence)
    best = min(scores, key=lambda k: (-scores[k], order[k]))
    return Assignment(best, round(scores[best] / total, 4), rounded, evidence)


def categorize_domain(
    domain: str,
    *,
    taxonomy: Taxonomy,
    hosts: Sequence[str] = (),
    titles: Sequence[str] = (),
    texts: Sequence[str] = (),
    known: Mapping[str, str] | None = None,
    max_words: int = 5000,
    registry: Registry | None = None,
    override: str | None = None,
) -> Assignment:
    """The category of one site from its name, hosts, page titles and texts, and the
    registries.

    Parameters
    ----------
    domain : str
        The site's key: a registered domain (``"ox.ac.uk"``), a host
        (``"user.livejournal.com"``) or a host and path (``"vk.com/spbu"``).
    taxonomy : Taxonomy
    hosts : sequence of str
        Host names of its pages (``"www.cs.ox.ac.uk"``): host patterns match them too.
    titles, texts : sequence of str
        Titles and main texts of its fetched pages.
    known : mapping of str to str, optional
        More listed domains, ``{domain: category key}``, weighed as the taxonomy's own
        (e.g. the registered domains of the universities under study).
    max_words : int
        Words read from each text.
    registry : Registry, optional
        The registries (:class:`analyse.registries.Registry`, made once per run): the
        organisation at the domain or a parent domain is evidence.
    override : str, optional
        An analyst's category: it decides (``decided_by`` ``override``); what the other
        evidence says stays in the evidence.

    Returns
    -------
    Assignment
        ``evidence`` holds ``decided_by`` (:data:`PRECEDENCE`), ``known`` (listed domains
        that matched), ``patterns``, ``name_parts``, ``title_keywords`` and
        ``text_keywords`` (keyword -> number of titles/pages, for the winning category),
        ``pages`` and ``titles`` (counts), and ``registry`` (the organisation found:
        ``name``, ``country``, ``kind``, ``category``, ``source``, ``source_id``,
        ``matched_domain``; ``outranked_by`` when a listed domain outranked it) when the
        registries know the domain.
    """
    sc = taxonomy.scoring
    forms = _host_forms(domain.split("/", 1)[0], hosts)
    label = domain.strip(".").lower().split(".")[0]
    listed_scores = {c.key: 0.0 for c in taxonomy.categories}
    pattern_scores = dict(listed_scores)
    listed: dict[str, list[str]] = {}
    patterns: dict[str, list[str]] = {}
    parts: dict[str, list[str]] = {}
    extra: dict[str, list[str]] = defaultdict(list)
    for d, key in (known or {}).items():
        extra[taxonomy.resolve(key)].append(d.lower())
    for c in taxonomy.categories:
        k = [d for d in (*c.exact_domains, *extra[c.key]) if _domain_matches(d, forms)]
        p = [d for d in c.patterns if _domain_matches(d, forms)]
        n = [x for x, _w in c.weighted_name_parts if x in label]
        if k:
            # the most specific listing wins: a longer listed domain adds its length share
            listed_scores[c.key] += sc.known_domain + 0.01 * max(len(d) for d in k)
            listed[c.key] = k
        if p:
            pattern_scores[c.key] += sc.domain_pattern
            patterns[c.key] = p
        if n:
            weights = dict(c.weighted_name_parts)
            pattern_scores[c.key] += sc.name_part * max(weights[x] for x in n)
            parts[c.key] = n
    title_sat, title_hits = _keyword_evidence(taxonomy, titles, max_words)
    text_sat, text_hits = _keyword_evidence(taxonomy, texts, max_words)
    keyword_scores = {
        key: sc.title_keyword * title_sat[key] + sc.text_keyword * text_sat[key]
        for key in listed_scores
    }
    evidence: dict[str, Any] = {"pages": len(texts), "titles": len(titles)}
    sources = [
        Evidence("known_domain", listed_scores),
        Evidence("pattern", pattern_scores),
        Evidence("keywords", keyword_scores),
    ]
    match = registry.lookup(domain) if registry is not None else None
    if match is not None:
        found, evidence["registry"] = _registry_evidence(taxonomy, match, listed, listed_scores)
        sources.append(found)
    nothing = not any(v for ev in sources for v in ev.scores.values())
    if nothing and override is None and not any(titles) and not any(texts):
        # nothing to read and nothing in the name: unknown, not the default category
        evidence["reason"] = "no evidence: no fetched page with text or title, no listing"
        evidence["decided_by"] = "none"
        return Assignment(UNKNOWN, 0.0, {}, evidence)
    result = combine(taxonomy, sources, evidence, override=override)
    best = result.category
    evidence.update(
        known=listed.get(best, []),
        patterns=patterns.get(best, []),
        name_parts=parts.get(best, []),
        title_keywords=_top(title_hits[best]),
        text_keywords=_top(text_hits[best]),
    )
    return result


def categorize_cluster(
    members: Sequence[Assignment | str],
    *,
    taxonomy: Taxonomy,
    theme_terms: Sequence[str] = (),
) -> Assignment:
    """The category of a cluster from its members' categories and its theme terms.

    Only members with evidence vote: a member whose category is
    :data:`core.choices.UNKNOWN` (nothing fetched, no text, no listing) does not. Without
    any voter, the theme keywords decide; without those either, the cluster is unknown.

    Parameters
    ----------
    members : sequence of Assignment or str
        One entry per member domain: its :class:`Assignment` (votes with its normalised
        scores) or a category key (an analyst's override: a one-hot vote). An assignment
        made under another taxonomy (``[analyse] taxonomy`` edited since) votes only if
        its category is still in ``taxonomy``, and only for the categories still there.
    taxonomy : Taxonomy
    theme_terms : sequence of str
        The cluster's terms and shingles: a category's keywords among them add at most
        ``cluster_theme`` (0.25) to its share of the members' votes, which only tips
        near ties (and decides for a cluster without categorised members).

    Returns
    -------
    Assignment
        ``evidence``: ``members`` (category -> number of voting members), ``voters``
        (members with evidence), ``unknown`` (members without), ``support`` (share of the
        voters whose own category is the cluster's; ``None`` without voters), ``votes``
        (category -> share of the votes), ``theme_keywords``.

    Examples
    --------
    >>> tax = load_taxonomy()
    >>> a = categorize_cluster(["media", "media", "news_portals", "unknown"], taxonomy=tax)
    >>> a.category, a.score, a.evidence["members"], a.evidence["support"]
    ('media', 0.6667, {'media': 2, 'news_portals': 1}, 0.6667)
    >>> categorize_cluster(["unknown"], taxonomy=tax).category
    'unknown'
    """
    votes = {c.key: 0.0 for c in taxonomy.categories}
    counts: Counter[str] = Counter()
    unknown = 0
    for m in members:
        if (m if isinstance(m, str) else m.category) == UNKNOWN:
            unknown += 1
        elif not isinstance(m, str) and m.category not in votes:
            unknown += 1  # categorised under another taxonomy: no vote until analysed again
        elif isinstance(m, str):
            key = taxonomy.resolve(m)
            votes[key] += 1.0
            counts[key] += 1
        else:
            for key, share in m.distribution().items():
                if key in votes:  # a share of a category the taxonomy has no more: none
                    votes[key] += share
            counts[m.category] += 1
    voters = sum(counts.values())
    theme_sat, theme_hits = _keyword_evidence(taxonomy, [" . ".join(theme_terms)], 10_000)
    sc = taxonomy.scoring
    total_votes = sum(votes.values()) or 1.0
    scores = {
        k: v / total_votes + sc.cluster_theme * theme_sat[k] / sc.cap for k, v in votes.items()
    }
    evidence: dict[str, Any] = {
        "members": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "voters": voters,
        "unknown": unknown,
        "votes": {k: round(v / total_votes, 4) for k, v in votes.items() if v > 0},
    }
    if not any(scores.values()):
        evidence.update(
            reason="no evidence: no member with evidence, no theme keyword",
            support=None,
            theme_keywords={},
        )
        return Assignment(UNKNOWN, 0.0, {}, evidence)
    result = _decide(taxonomy, scores, evidence)
    evidence["support"] = round(counts[result.category] / voters, 4) if voters else None
    evidence["theme_keywords"] = _top(theme_hits[result.category])
    return result
