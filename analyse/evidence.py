"""The category of a site from all its evidence: registries, known domains, host patterns,
name parts, keywords and the text model, pooled into one calibrated confidence.

Each source of evidence that speaks gives a distribution ``q_s`` over the taxonomy's K
categories:

* a **fact of the name** (a registry's organisation at the domain or a parent, a domain
  the taxonomy or the study lists, a host pattern such as ``*.ac.uk``, a part of the
  name) says its category with the source's reliability ``r`` (:class:`Reliability`) and
  spreads ``1 - r`` evenly over the others;
* the **taxonomy's keywords** in titles and texts give their share of the keyword scores,
  mixed half and half with the uniform distribution (they are weak, and they read the
  same text as the model);
* the **text model** (:mod:`analyse.text_model`) gives its calibrated probabilities for
  the categories it learnt, scaled to leave ``text_mute`` (0.05) to each category it has
  no text of (search engines, scientific communities): the text speaks little against
  them.

The pooled probability is their normalised product (a logarithmic opinion pool, naive
Bayes with a uniform prior), ``P(c) = Π_s q_s(c) / Σ_c' Π_s q_s(c')``: the category is
the most probable one, the *confidence* its probability, and ``decided_by`` the source
whose log-ratio ``log q_s(c) - log q_s(c₂)`` against the runner-up ``c₂`` is the largest
(``registry``, ``known_domain``, ``pattern``, ``name_part``, ``keywords`` or ``text``).
Without any source the site is :data:`core.choices.UNKNOWN` with confidence 0.

The reliabilities are set a priori from what each fact is (a registry of universities is
rarely wrong about a university; a name part often is) and the pooled confidence is
measured for calibration (Brier, expected calibration error) in ``bench/categories.py``,
cross-validated by site, never tuned on its folds.

Complexity: O(S·K) for S sources and K categories.

References
----------
G. E. Hinton (2002), *Training products of experts by minimizing contrastive divergence*
(products of experts); C. Genest, J. V. Zidek (1986), *Combining probability
distributions: a critique and an annotated bibliography* (logarithmic opinion pools).

Examples
--------
>>> keys = ("universities", "scientific_communities", "news_portals")
>>> r = combine_evidence(keys, facts=[NameFact("pattern", "universities", ["*.ac.uk"])])
>>> r.category, r.confidence, r.decided_by
('universities', 0.95, 'pattern')
>>> r = combine_evidence(keys, text=TextEvidence({"universities": 0.1, "news_portals": 0.9}))
>>> r.category, r.decided_by
('news_portals', 'text')
>>> combine_evidence(keys).category
'unknown'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from analyse.categories import Assignment, categorize_domain
from analyse.taxonomy import Taxonomy
from core.choices import UNKNOWN

if TYPE_CHECKING:
    from analyse.registries import Registry
    from analyse.text_model import TextCategoryModel

__all__ = [
    "Combined",
    "NameFact",
    "Reliability",
    "TextEvidence",
    "categorize_site",
    "combine_evidence",
    "name_facts",
    "text_evidence",
]

SOURCES: tuple[str, ...] = (
    "registry",
    "known_domain",
    "pattern",
    "name_part",
    "keywords",
    "text",
)
"""The sources of evidence, in the order of precedence of ``decided_by`` on a tie
(names of :data:`core.choices.CATEGORY_DECIDERS`)."""


@dataclass(frozen=True)
class Reliability:
    """How often a fact of the name is right about its category (a priori, 0..1).

    Attributes
    ----------
    registry_university : float, default 0.97
        Hipo's list of universities, or a key under a university's domain.
    registry_research : float, default 0.85
        A ROR record of a scientific community (its types mapped onto the categories:
        ``analyse.registries``); a registry's other organisation (a company, a ministry)
        weighs as a name part: it says little of the kind of site it runs.
    known_domain : float, default 0.95
        A domain the taxonomy lists, or one of the universities under study.
    pattern : float, default 0.95
        A host pattern of the taxonomy (``*.edu``, ``*.ac.*``).
    name_part : float, default 0.4
        A part of the domain's name (``univ``, ``news``): often wrong (``news`` in a
        company's name, ``tv`` in a word).
    keywords : float, default 0.2
        The weight of the taxonomy's keyword shares against the uniform distribution:
        low, as the keywords read the same text as the model and are right on about half
        to three quarters of the sites (``bench/results/categories.md``).
    text_mute : float, default 0.05
        The text model's probability of a category it has no text of (search engines,
        scientific communities): small, so that a confident text stays confident, yet a
        registry's or a listing's category wins over a text that reads like another.
    """

    registry_university: float = 0.97
    registry_research: float = 0.85
    known_domain: float = 0.95
    pattern: float = 0.95
    name_part: float = 0.4
    keywords: float = 0.2
    text_mute: float = 0.05


@dataclass(frozen=True)
class NameFact:
    """A fact of the domain's name: a source, the category it says, what matched.

    ``source`` is ``registry``, ``known_domain``, ``pattern`` or ``name_part``;
    ``reliability`` overrides the :class:`Reliability` of its source."""

    source: str
    category: str
    matched: Any = None
    reliability: float | None = None


@dataclass(frozen=True)
class TextEvidence:
    """The text model's calibrated probabilities of a site, and what it read.

    Attributes
    ----------
    probabilities : mapping of str to float
        Category -> probability, over the categories the model learnt.
    terms : sequence of str
        The terms of the text that weigh most for its most probable category.
    pages : int
        Pages read.
    """

    probabilities: Mapping[str, float]
    terms: Sequence[str] = ()
    pages: int = 0


@dataclass(frozen=True)
class Combined:
    """The pooled category: its confidence, the source that decided, the distribution."""

    category: str
    confidence: float
    decided_by: str
    probabilities: dict[str, float]
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)

    def evidence(self) -> dict[str, Any]:
        """The JSON-ready fields a stored category's evidence gains."""
        return {
            "decided_by": self.decided_by,
            "confidence": self.confidence,
            "sources": self.sources,
            "probabilities": {k: v for k, v in self.probabilities.items() if v >= 0.005},
        }


def _fact_reliability(fact: NameFact, rel: Reliability) -> float:
    if fact.reliability is not None:
        return fact.reliability
    if fact.source == "registry":
        return rel.registry_university if fact.category == "universities" else rel.registry_research
    return float(getattr(rel, fact.source))


def _one_hot(keys: Sequence[str], category: str, r: float) -> dict[str, float]:
    rest = (1.0 - r) / max(len(keys) - 1, 1)
    return {k: (r if k == category else rest) for k in keys}


def combine_evidence(
    keys: Sequence[str],
    *,
    facts: Sequence[NameFact] = (),
    keywords: Mapping[str, float] | None = None,
    text: TextEvidence | None = None,
    reliability: Reliability | None = None,
) -> Combined:
    """Pool the evidence of one site (see the module docstring).

    Parameters
    ----------
    keys : sequence of str
        The taxonomy's category keys.
    facts : sequence of NameFact
        Facts of the name; of several of one source only the first counts.
    keywords : mapping of str to float, optional
        The taxonomy's keyword scores (any scale; none, or all zero: no evidence).
    text : TextEvidence, optional
        The text model's probabilities (None: no model, or nothing it could read).
    reliability : Reliability, optional

    Returns
    -------
    Combined
        ``sources``: what each source said (``category``, ``p`` its own probability of
        it, and what matched or the terms read).
    """
    rel = reliability or Reliability()
    keys = tuple(keys)
    k = len(keys)
    pool: dict[str, dict[str, float]] = {}
    said: dict[str, dict[str, Any]] = {}
    for fact in facts:
        if fact.source in pool or fact.category not in keys:
            continue
        r = _fact_reliability(fact, rel)
        pool[fact.source] = _one_hot(keys, fact.category, r)
        said[fact.source] = {"category": fact.category, "p": round(r, 4), "matched": fact.matched}
    total_kw = sum(v for c, v in (keywords or {}).items() if c in keys and v > 0)
    if total_kw > 0:
        w = rel.keywords
        q = {c: w * max((keywords or {}).get(c, 0.0), 0.0) / total_kw + (1 - w) / k for c in keys}
        pool["keywords"] = q
        best = max(keys, key=lambda c: q[c])
        said["keywords"] = {"category": best, "p": round(q[best], 4)}
    if text is not None and text.probabilities:
        modelled = [c for c in keys if c in text.probabilities]
        mute = len(keys) - len(modelled)
        mass = sum(text.probabilities[c] for c in modelled) or 1.0
        left = 1 - mute * rel.text_mute
        q = {
            c: (text.probabilities[c] / mass * left if c in modelled else rel.text_mute)
            for c in keys
        }
        pool["text"] = {c: max(v, 1e-6) for c, v in q.items()}
        best = max(modelled, key=lambda c: text.probabilities[c])
        said["text"] = {
            "category": best,
            "p": round(text.probabilities[best] / mass, 4),
            "terms": list(text.terms),
            "pages": text.pages,
        }
    if not pool:
        return Combined(UNKNOWN, 0.0, "none", {}, {})
    log_p = {c: sum(math.log(q[c]) for q in pool.values()) for c in keys}
    top = max(log_p.values())
    unnorm = {c: math.exp(v - top) for c, v in log_p.items()}
    z = sum(unnorm.values())
    probs = {c: unnorm[c] / z for c in keys}
    order = sorted(keys, key=lambda c: (-probs[c], keys.index(c)))
    best, second = order[0], order[1] if len(order) > 1 else order[0]
    margin = {s: math.log(q[best]) - math.log(q[second]) for s, q in pool.items()}
    decided = max(pool, key=lambda s: (margin[s], -SOURCES.index(s)))
    return Combined(
        best,
        round(probs[best], 4),
        decided,
        {c: round(probs[c], 4) for c in order},
        said,
    )


def name_facts(names: Assignment, reliability: Reliability | None = None) -> list[NameFact]:
    """The facts of a name behind the category of ``names``
    (:func:`analyse.categories.categorize_domain` of the name alone, with the registries):
    its registry match (unless a listed domain outranked it), listed domains, host
    patterns and name parts, strongest first."""
    if names.category == UNKNOWN:
        return []
    ev = names.evidence
    facts: list[NameFact] = []
    reg = ev.get("registry")
    if reg and not reg.get("outranked_by") and reg.get("category") == names.category:
        # a university or research body decides; another organisation (a company, a
        # ministry) says little of the kind of site it runs: a name part's reliability
        weak = names.category not in ("universities", "scientific_communities")
        facts.append(
            NameFact(
                "registry",
                names.category,
                f"{reg['name']} ({reg['country']}, {reg['source']}:{reg['source_id']})",
                reliability=(reliability or Reliability()).name_part if weak else None,
            )
        )
    for source, key in (
        ("known_domain", "known"),
        ("pattern", "patterns"),
        ("name_part", "name_parts"),
    ):
        if ev.get(key):
            facts.append(NameFact(source, names.category, list(ev[key])))
    return facts


def text_evidence(
    model: TextCategoryModel, terms: Mapping[str, int], *, pages: int
) -> TextEvidence | None:
    """The text model's evidence of a site's term counts (None: it knows none of them)."""
    if model.known_terms(terms) == 0:
        return None
    proba = model.predict_proba([terms])[0]
    probs = {c: float(p) for c, p in zip(model.classes_, proba, strict=True)}
    best = max(probs, key=probs.__getitem__)
    return TextEvidence(probs, model.top_terms(terms, best), pages)


def categorize_site(
    domain: str,
    *,
    taxonomy: Taxonomy,
    hosts: Sequence[str] = (),
    titles: Sequence[str] = (),
    texts: Sequence[str] = (),
    known: Mapping[str, str] | None = None,
    registry: Registry | None = None,
    text: TextEvidence | None = None,
    max_words: int = 5000,
    reliability: Reliability | None = None,
) -> Assignment:
    """The category of a site from all its evidence: the one function the analyse stage,
    ``webometrics category classify`` and the benchmark call.

    Parameters
    ----------
    domain : str
        The site (registered domain).
    taxonomy : Taxonomy
    hosts, titles, texts, known, max_words
        As :func:`analyse.categories.categorize_domain`.
    registry : Registry, optional
        Looked up for ``domain`` (and its parents) by
        :func:`~analyse.categories.categorize_domain`, whose rule of a listed domain
        outranking a less specific registry match holds.
    text : TextEvidence, optional
        The text model's evidence (:func:`text_evidence`); None: no model or no text.
    reliability : Reliability, optional

    Returns
    -------
    Assignment
        ``score`` is the pooled confidence (0..1), ``scores`` the pooled distribution;
        ``evidence`` holds the taxonomy's (``known``, ``patterns``, ``name_parts``,
        ``title_keywords``, ``text_keywords`` of the chosen category, ``pages``,
        ``titles``), ``registry`` (the match or None), ``decided_by``, ``confidence``,
        ``sources`` and ``probabilities`` (:meth:`Combined.evidence`).

    Examples
    --------
    >>> from analyse.taxonomy import load_taxonomy
    >>> a = categorize_site("ox.ac.uk", taxonomy=load_taxonomy())
    >>> a.category, a.evidence["decided_by"]
    ('universities', 'pattern')
    >>> categorize_site("nothing-here.example", taxonomy=load_taxonomy()).category
    'unknown'
    """
    names = categorize_domain(
        domain, taxonomy=taxonomy, hosts=hosts, known=known, registry=registry
    )
    words = categorize_domain(
        "", taxonomy=taxonomy, titles=titles, texts=texts, max_words=max_words
    )
    keys = taxonomy.keys()
    combined = combine_evidence(
        keys,
        facts=name_facts(names, reliability),
        keywords=words.scores if words.category != UNKNOWN else None,
        text=text,
        reliability=reliability,
    )
    evidence: dict[str, Any] = {"pages": len(texts), "titles": len(titles)}
    if combined.category == UNKNOWN:
        evidence["reason"] = "no evidence: no registry, listing or pattern, no text it can read"
    for key in ("known", "patterns", "name_parts"):
        evidence[key] = names.evidence.get(key, []) if names.category == combined.category else []
    for key in ("title_keywords", "text_keywords"):
        evidence[key] = words.evidence.get(key, {}) if words.category == combined.category else {}
    if (registry_match := names.evidence.get("registry")) is not None:
        evidence["registry"] = registry_match  # a site no registry holds has no such key
    evidence.update(combined.evidence())
    return Assignment(
        combined.category,
        combined.confidence,
        {k: v for k, v in combined.probabilities.items() if v > 0},
        evidence,
    )
