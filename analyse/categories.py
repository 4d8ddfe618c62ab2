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
"""

from __future__ import annotations

import fnmatch
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analyse.taxonomy import Taxonomy, load_taxonomy
from analyse.themes import words
from core.choices import UNKNOWN

# Taxonomy and load_taxonomy (analyse.taxonomy) are used here and imported from here too
__all__ = [
    "Assignment",
    "Taxonomy",
    "categorize_cluster",
    "categorize_domain",
    "load_taxonomy",
]


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
    if "*" not in entry:
        return any(f == entry or f.endswith("." + entry) for f in forms)
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
) -> Assignment:
    """The category of one registered domain from its name, hosts, page titles and texts.

    Parameters
    ----------
    domain : str
        The registered domain (``"ox.ac.uk"``).
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

    Returns
    -------
    Assignment
        ``evidence`` holds ``known`` (listed domains that matched), ``patterns``,
        ``name_parts``, ``title_keywords`` and ``text_keywords`` (keyword -> number of
        titles/pages, for the winning category), ``pages`` and ``titles`` (counts).
    """
    sc = taxonomy.scoring
    forms = _host_forms(domain, hosts)
    label = domain.strip(".").lower().split(".")[0]
    scores = {c.key: 0.0 for c in taxonomy.categories}
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
            scores[c.key] += sc.known_domain + 0.01 * max(len(d) for d in k)
            listed[c.key] = k
        if p:
            scores[c.key] += sc.domain_pattern
            patterns[c.key] = p
        if n:
            weights = dict(c.weighted_name_parts)
            scores[c.key] += sc.name_part * max(weights[x] for x in n)
            parts[c.key] = n
    title_sat, title_hits = _keyword_evidence(taxonomy, titles, max_words)
    text_sat, text_hits = _keyword_evidence(taxonomy, texts, max_words)
    for key in scores:
        scores[key] += sc.title_keyword * title_sat[key] + sc.text_keyword * text_sat[key]
    evidence: dict[str, Any] = {"pages": len(texts), "titles": len(titles)}
    if not any(scores.values()) and not any(titles) and not any(texts):
        # nothing to read and nothing in the name: unknown, not the default category
        evidence["reason"] = "no evidence: no fetched page with text or title, no listing"
        return Assignment(UNKNOWN, 0.0, {}, evidence)
    result = _decide(taxonomy, scores, evidence)
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
