"""Category shares under two definitions, side by side, and the part of each share that
rests on unreviewed low-confidence domains.

The paper (Korelin, Blekanov and Sergeev 2015, seed ``000_d819228b9213e10a.txt``) drew
Figures 2-3 from its clusters: every site of a cluster counted in the cluster's category.
The pipeline's default counts each domain in its own category. Both are read here:

``domain`` (:data:`DOMAIN`, the default)
    each external domain counted once in its own category (the analyst's override
    first, :class:`~store.models.DomainCategory`): the rows of ``v_category_share`` and
    ``v_country_category_share`` (:func:`store.analytics.category_shares`), unchanged.
``cluster`` (:data:`CLUSTER`, the paper's way)
    the member domains of each university's final clusters (its newest clustering of
    the run and direction, the default method first, as ``v_rank_factors`` reads it)
    counted in the **cluster's** category (the vote of its members, or the analyst's
    override of the cluster). A cluster whose vote has no majority, a
    ``category_support`` (the share of its voting members whose own category is the
    cluster's) of at most :data:`MAJORITY` (0.5), is counted as :data:`MIXED` unless an
    analyst set its category. Domains in no cluster (never fetched, no text) are not
    counted, as the paper's figures had only clustered sites. A domain in several
    clusters (page unit, or two universities of one country) counts once, in the
    category holding most of its member documents (ties: the first by name).

Both give ``share`` (over every domain counted) and ``known_share`` (over those whose
category is not ``unknown``: the figures' default). Low confidence: a domain is
*unreviewed* when it has no analyst override and *low-confidence* when its
``domain_category.score`` is below ``[analyse] low_confidence`` (a domain never
categorised has no score and counts as both); ``low_confidence`` counts such domains of a
share's category and ``low_confidence_share`` is the part of ``known_share`` they make
(over the same denominator), so ``known_share - low_confidence_share`` is what rests on
reviewed or confident domains.

Time: the domain definition reads the share views (or the aggregates) plus one grouped
query; the cluster definition one grouped query over the members of the chosen
clusterings, then O(members) in Python.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, and_, case, exists, func, or_, select

from core import defaults as D
from core.choices import UNKNOWN, check_direction
from core.exceptions import ParameterError
from store import aggregates
from store.analytics.environment import category_shares, country_category_shares
from store.analytics.runs import resolve_run
from store.analytics.views import UNCATEGORISED, V_CLUSTER, V_CLUSTER_MEMBER
from store.models import Clustering, DomainCategory, University

#: each domain in its own category (override first): the default
DOMAIN = "domain"
#: each cluster's member domains in the cluster's voted category: the paper's way
CLUSTER = "cluster"
DEFINITIONS: tuple[str, ...] = (DOMAIN, CLUSTER)
#: the category of a cluster whose vote has no majority
MIXED = "mixed"
#: a vote whose support is at most this has no majority
MAJORITY = 0.5
#: the categories that are no evidence of a kind (left out of the rank factors' shares)
NO_EVIDENCE: tuple[str, ...] = (UNKNOWN, UNCATEGORISED)


def check_definition(definition: str) -> None:
    """Raise :class:`ParameterError` unless ``definition`` is one of :data:`DEFINITIONS`."""
    if definition not in DEFINITIONS:
        raise ParameterError(
            f"unknown share definition {definition!r}: use one of {', '.join(DEFINITIONS)}"
        )


def cluster_category(category: str | None, support: float | None, overridden: bool) -> str:
    """The category a cluster's members are counted in under :data:`CLUSTER`.

    Examples
    --------
    >>> cluster_category("news_portals", 0.0, False)  # a vote none of its members has
    'mixed'
    >>> cluster_category("news_portals", 0.5, False), cluster_category("media", 0.51, False)
    ('mixed', 'media')
    >>> cluster_category("media", 0.2, True)  # the analyst decided
    'media'
    >>> cluster_category(None, None, False)
    'uncategorised'
    """
    if category is None:
        return UNCATEGORISED
    if not overridden and support is not None and support <= MAJORITY:
        return MIXED
    return category


@dataclass(frozen=True)
class ShareRow:
    """The share of one category among a university's external domains under one
    definition (``definition``), with the part resting on unreviewed low-confidence
    domains."""

    run_id: int
    university_id: int
    university: str
    country: str
    direction: str
    definition: str
    category: str
    domains: int
    share: float
    known_share: float | None
    low_confidence: int
    low_confidence_share: float | None


@dataclass(frozen=True)
class CountryShareRow:
    """As :class:`ShareRow` over the distinct domains of a country's universities."""

    run_id: int
    country: str
    direction: str
    definition: str
    category: str
    domains: int
    share: float
    known_share: float | None
    low_confidence: int
    low_confidence_share: float | None


@dataclass(frozen=True)
class ShareComparisonRow:
    """One category of a university (or a country: ``university`` is ``None``) under both
    definitions: ``known_share`` of each, ``difference`` = cluster - domain (``None`` where
    the university has no clustering of the run and direction), and the parts resting on
    unreviewed low-confidence domains."""

    run_id: int
    direction: str
    country: str
    university: str | None
    category: str
    domain_share: float | None
    cluster_share: float | None
    difference: float | None
    domain_low_confidence_share: float | None
    cluster_low_confidence_share: float | None


@dataclass(frozen=True)
class StoredClustering:
    """A final clustering of one university and direction in a run, and its setting
    (algorithm, unit and the scalar parameters, the results in its parameters left out)."""

    clustering_id: int
    university_id: int
    direction: str
    algorithm: str
    created_at: str
    setting: str


def _low(score: Any, override: Any, threshold: float) -> bool:
    return override is None and (score is None or float(score) < threshold)


def _low_condition(threshold: float) -> Any:
    dc = DomainCategory.__table__.c
    return and_(dc.override_category.is_(None), or_(dc.score.is_(None), dc.score < threshold))


# --- which clusterings ---------------------------------------------------------------------


def stored_clusterings(engine: Engine, run: int) -> list[StoredClustering]:
    """Every clustering of one university and direction whose filter names ``run``, newest
    first."""
    c = V_CLUSTER.c
    stmt = (
        select(c.clustering_id, c.university_id, c.direction, c.algorithm, c.created_at)
        .where(c.run_id == run, c.university_id.is_not(None), c.direction.is_not(None))
        .distinct()
    )
    with engine.connect() as conn:
        found = conn.execute(stmt).all()
        ids = [int(r[0]) for r in found]
        params = {
            int(i): (str(unit), p)
            for i, unit, p in conn.execute(
                select(Clustering.id, Clustering.unit, Clustering.parameters).where(
                    Clustering.id.in_(ids)
                )
            )
        }
    out = [
        StoredClustering(
            int(cid), int(uni), str(d), str(alg), str(created), _setting(alg, *params[int(cid)])
        )
        for cid, uni, d, alg, created in found
    ]
    out.sort(key=lambda s: (s.created_at, s.clustering_id), reverse=True)
    return out


def _setting(algorithm: str, unit: str, parameters: Any) -> str:
    """A clustering's setting as text: algorithm, unit and the parameters that are not
    results (those whose values are tables: the graph's sizes, the weights, the times).

    Examples
    --------
    >>> _setting("activity", "domain", {"seed": 1, "resolution": [2.0, 1.0], "graph": {"n": 3}})
    'activity domain resolution=[2.0, 1.0] seed=1'
    """
    if isinstance(parameters, str):
        parameters = json.loads(parameters)
    kept = sorted((k, v) for k, v in (parameters or {}).items() if not isinstance(v, dict))
    return " ".join([algorithm, unit, *(f"{k}={json.dumps(v)}" for k, v in kept)])


def chosen_clusterings(engine: Engine, run: int) -> dict[tuple[int, str], int]:
    """``{(university_id, direction): clustering_id}``: per university and direction the
    newest clustering of the run of the default method (``[cluster] method``), else the
    newest of another, as ``v_rank_factors`` chooses."""
    best: dict[tuple[int, str], tuple[bool, str, int]] = {}
    for s in stored_clusterings(engine, run):
        key = (s.university_id, s.direction)
        this = (s.algorithm == D.CLUSTER_METHOD, s.created_at, s.clustering_id)
        best[key] = max(best.get(key, this), this)
    return {key: v[2] for key, v in best.items()}


# --- the counts ----------------------------------------------------------------------------

# (direction, university_id or country) -> category -> [domains, low-confidence domains]
Counts = dict[tuple[str, Any], dict[str, list[int]]]


def cluster_counts(
    engine: Engine,
    run: int,
    clusterings: Mapping[tuple[int, str], int],
    *,
    direction: str | None = None,
    sources: Sequence[str] | None = None,
    low_confidence: float = D.ANALYSE_LOW_CONFIDENCE,
    by_country: bool = False,
) -> Counts:
    """The member domains of ``clusterings`` per direction x university (or country) x
    category under :data:`CLUSTER`, with how many of them are unreviewed low-confidence
    domains (see the module)."""
    ids = [cid for (_uni, d), cid in clusterings.items() if direction in (None, d)]
    if not ids:
        return {}
    m, c = V_CLUSTER_MEMBER.c, V_CLUSTER.c
    dc = DomainCategory.__table__.c
    stmt = (
        select(
            m.university_id,
            m.direction,
            m.domain,
            c.category,
            c.category_support,
            c.overridden,
            func.count(),
            dc.override_category,
            dc.score,
        )
        .select_from(V_CLUSTER_MEMBER)
        .join(V_CLUSTER, c.cluster_id == m.cluster_id)
        .outerjoin(DomainCategory, dc.domain == m.domain)
        .where(m.clustering_id.in_(ids))
        .group_by(
            m.university_id,
            m.direction,
            m.domain,
            c.category,
            c.category_support,
            c.overridden,
            dc.override_category,
            dc.score,
        )
    )
    if sources is not None:
        v = aggregates.ENVIRONMENT_SOURCE
        stmt = stmt.where(
            exists().where(
                v.c.run_id == run,
                v.c.university_id == m.university_id,
                v.c.direction == m.direction,
                v.c.domain == m.domain,
                v.c.source.in_(list(sources)),
            )
        )
    country_of: dict[int, str] = {}
    with engine.connect() as conn:
        rows = conn.execute(stmt).all()
        if by_country:
            country_of = {
                int(i): str(k) for i, k in conn.execute(select(University.id, University.country))
            }
    votes: dict[tuple[str, Any, str], Counter[str]] = {}
    low: dict[str, bool] = {}
    for uni, d, domain, category, support, overridden, docs, override, score in rows:
        scope = country_of.get(int(uni), "") if by_country else int(uni)
        counted = cluster_category(
            category, None if support is None else float(support), bool(overridden)
        )
        votes.setdefault((str(d), scope, domain), Counter())[counted] += int(docs)
        low[domain] = _low(score, override, low_confidence)
    out: Counts = {}
    for (d, scope, domain), counter in votes.items():
        top = max(counter.values())
        category = min(k for k, n in counter.items() if n == top)
        got = out.setdefault((d, scope), {}).setdefault(category, [0, 0])
        got[0] += 1
        got[1] += int(low[domain])
    return out


def _domain_low_counts(
    engine: Engine,
    run: int,
    direction: str | None,
    sources: Sequence[str] | None,
    low_confidence: float,
    *,
    by_country: bool,
) -> dict[tuple[str, Any, str], int]:
    """``(direction, university_id or country, category) -> unreviewed low-confidence
    domains`` of the environment (each domain once), as the share views count."""
    v = aggregates.ENVIRONMENT_SOURCE
    dc = DomainCategory.__table__.c
    scope = v.c.country if by_country else v.c.university_id
    category = func.coalesce(v.c.category, UNCATEGORISED)
    low = func.count(func.distinct(case((_low_condition(low_confidence), v.c.domain))))
    stmt = (
        select(v.c.direction, scope, category, low)
        .select_from(v)
        .outerjoin(DomainCategory, dc.domain == v.c.domain)
        .where(v.c.run_id == run)
        .group_by(v.c.direction, scope, category)
    )
    if direction is not None:
        stmt = stmt.where(v.c.direction == direction)
    if sources is not None:
        stmt = stmt.where(v.c.source.in_(list(sources)))
    with engine.connect() as conn:
        return {
            (str(d), s if by_country else int(s), str(cat)): int(n)
            for d, s, cat, n in conn.execute(stmt)
        }


def _fractions(
    counts: Mapping[str, list[int]],
) -> dict[str, tuple[float, float | None, float | None]]:
    """``category -> (share, known_share, low_confidence_share)`` of one scope's counts."""
    total = sum(n for n, _ in counts.values())
    known = sum(n for cat, (n, _) in counts.items() if cat != UNKNOWN)
    out: dict[str, tuple[float, float | None, float | None]] = {}
    for cat, (n, low) in counts.items():
        if cat == UNKNOWN or not known:
            out[cat] = (n / total if total else 0.0, None, None)
        else:
            out[cat] = (n / total, n / known, low / known)
    return out


# --- the shares ----------------------------------------------------------------------------


def university_shares(
    engine: Engine,
    *,
    definition: str = DOMAIN,
    run_id: int | None = None,
    direction: str | None = None,
    sources: Sequence[str] | None = None,
    low_confidence: float = D.ANALYSE_LOW_CONFIDENCE,
) -> list[ShareRow]:
    """Category shares per university and direction under ``definition``.

    Parameters
    ----------
    engine : Engine
    definition : {"domain", "cluster"}
        See the module.
    run_id : int, optional
        The crawl run; the latest with data when ``None``.
    direction : {"outgoing", "citing"}, optional
    sources : sequence of str, optional
        Only the domains the environment rows of these sources hold.
    low_confidence : float
        A domain without an override whose score is below this is low-confidence.

    Returns
    -------
    list of ShareRow
        By university, outgoing first, largest share first, then category. A university
        without a clustering of the run and direction has no ``cluster`` rows.

    Raises
    ------
    ParameterError
        An unknown definition or direction, or a run without data.
    """
    check_definition(definition)
    check_direction(direction)
    run = resolve_run(engine, run_id)
    if run is None:
        return []
    if definition == DOMAIN:
        lows = _domain_low_counts(engine, run, direction, sources, low_confidence, by_country=False)
        rows = category_shares(engine, run_id=run, direction=direction, sources=sources)
        out = []
        for r in rows:
            low = lows.get((r.direction, r.university_id, r.category), 0)
            known_total = r.domains / r.known_share if r.known_share else None
            out.append(
                ShareRow(
                    r.run_id, r.university_id, r.university, r.country, r.direction, DOMAIN,
                    r.category, r.domains, r.share, r.known_share, low,
                    low / known_total if known_total else None,
                )
            )  # fmt: skip
        return out
    counts = cluster_counts(
        engine,
        run,
        chosen_clusterings(engine, run),
        direction=direction,
        sources=sources,
        low_confidence=low_confidence,
    )
    with engine.connect() as conn:
        names = {
            int(i): (str(n), str(c))
            for i, n, c in conn.execute(select(University.id, University.name, University.country))
        }
    out = []
    for (d, uni), per_cat in counts.items():
        name, country = names[uni]
        for cat, (share, known, low_share) in _fractions(per_cat).items():
            n, low = per_cat[cat]
            out.append(
                ShareRow(run, uni, name, country, d, CLUSTER, cat, n, share, known, low, low_share)
            )
    out.sort(key=lambda r: (r.university, r.direction != "outgoing", -r.share, r.category))
    return out


def country_shares(
    engine: Engine,
    *,
    definition: str = DOMAIN,
    run_id: int | None = None,
    direction: str | None = None,
    sources: Sequence[str] | None = None,
    low_confidence: float = D.ANALYSE_LOW_CONFIDENCE,
) -> list[CountryShareRow]:
    """Category shares per country and direction (each domain of the country's
    universities once) under ``definition``; parameters as :func:`university_shares`."""
    check_definition(definition)
    check_direction(direction)
    run = resolve_run(engine, run_id)
    if run is None:
        return []
    if definition == DOMAIN:
        lows = _domain_low_counts(engine, run, direction, sources, low_confidence, by_country=True)
        rows = country_category_shares(engine, run_id=run, direction=direction, sources=sources)
        out = []
        for r in rows:
            low = lows.get((r.direction, r.country, r.category), 0)
            known_total = r.domains / r.known_share if r.known_share else None
            out.append(
                CountryShareRow(
                    r.run_id, r.country, r.direction, DOMAIN, r.category, r.domains, r.share,
                    r.known_share, low, low / known_total if known_total else None,
                )
            )  # fmt: skip
        return out
    counts = cluster_counts(
        engine,
        run,
        chosen_clusterings(engine, run),
        direction=direction,
        sources=sources,
        low_confidence=low_confidence,
        by_country=True,
    )
    out = []
    for (d, country), per_cat in counts.items():
        for cat, (share, known, low_share) in _fractions(per_cat).items():
            n, low = per_cat[cat]
            out.append(
                CountryShareRow(run, country, d, CLUSTER, cat, n, share, known, low, low_share)
            )
    out.sort(key=lambda r: (r.country, r.direction != "outgoing", -r.share, r.category))
    return out


def compare(
    domain_rows: Sequence[ShareRow | CountryShareRow],
    cluster_rows: Sequence[ShareRow | CountryShareRow],
) -> list[ShareComparisonRow]:
    """The two definitions' ``known_share`` side by side, per university (or country) x
    direction x category (categories of either; a category absent under one definition
    has share 0 there, unless the scope has no row at all under it: ``None``).

    Returns
    -------
    list of ShareComparisonRow
        By country, university, outgoing first, the largest absolute difference first.
    """

    def scope(r: Any) -> tuple[str, str, str | None]:
        return (r.direction, r.country, getattr(r, "university", None))

    run = next((r.run_id for r in [*domain_rows, *cluster_rows]), 0)
    by: dict[str, dict[tuple[Any, ...], Any]] = {DOMAIN: {}, CLUSTER: {}}
    r: Any
    scopes: dict[str, set[tuple[Any, ...]]] = {DOMAIN: set(), CLUSTER: set()}
    for name, rows in ((DOMAIN, domain_rows), (CLUSTER, cluster_rows)):
        for r in rows:
            scopes[name].add(scope(r))
            if r.category != UNKNOWN:
                by[name][(*scope(r), r.category)] = r
    out = []
    for key in sorted(set(by[DOMAIN]) | set(by[CLUSTER]), key=str):
        values = []
        for name in DEFINITIONS:
            r = by[name].get(key)
            if r is not None:
                values.append((r.known_share or 0.0, r.low_confidence_share or 0.0))
            elif key[:3] in scopes[name]:
                values.append((0.0, 0.0))
            else:
                values.append((None, None))
        (dom, dom_low), (clu, clu_low) = values
        diff = None if dom is None or clu is None else clu - dom
        d, country, uni, cat = key
        out.append(ShareComparisonRow(run, d, country, uni, cat, dom, clu, diff, dom_low, clu_low))
    out.sort(
        key=lambda r: (
            r.country,
            r.university or "",
            r.direction != "outgoing",
            -abs(r.difference or 0.0),
            r.category,
        )
    )
    return out


def share_comparison(
    engine: Engine,
    *,
    run_id: int | None = None,
    direction: str | None = None,
    sources: Sequence[str] | None = None,
    low_confidence: float = D.ANALYSE_LOW_CONFIDENCE,
    by_country: bool = False,
) -> list[ShareComparisonRow]:
    """Both definitions per university (or per country) side by side (:func:`compare`)."""
    read = country_shares if by_country else university_shares
    args: dict[str, Any] = {
        "run_id": run_id,
        "direction": direction,
        "sources": sources,
        "low_confidence": low_confidence,
    }
    return compare(
        read(engine, definition=DOMAIN, **args), read(engine, definition=CLUSTER, **args)
    )
