"""The paper's finding: a university's groups against its rank (``v_rank_factors``,
``v_rank_factor_share`` of migration 0009) and their rank correlations.

Korelin, Blekanov and Sergeev (2015, seed ``000_d819228b9213e10a.txt``) ask how the
number and sizes of a university's groups bear on its webometric rating and conclude
that the larger the share of universities and scientific communities around it, the
higher its Webometrics Impact. :func:`rank_factors` reads the factors per run, direction
and university; :func:`rank_correlations` correlates each with the rank (and the impact
rank where the universities file gives one) through :func:`analyse.ranks.correlate`:
Spearman's ρ, Kendall's τ, n, p-value, an interval consistent with it, the p-values
adjusted over every test of the run (Holm; Benjamini-Hochberg) and a note. Rank 1 is the
best, so a **negative** coefficient means a higher factor goes with a better rank
(:data:`analyse.ranks.SIGN_NOTE`). The shares are either each domain's own category's
(``definition="domain"``, the default, the view) or the clusters' (``"cluster"``, the
paper's way, :mod:`store.analytics.shares`); :func:`rank_sensitivity` says whether each
sign holds under both and over every clustering setting stored for the run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
from sqlalchemy import Engine, case, column, func, select, table

from analyse.ranks import (
    FACTORS,
    HEADLINE,
    MIN_DEFINED,
    PAPER_CATEGORIES,
    STATISTICS,
    Correlation,
    adjust_p,
    correlate_factors,
    kendall_tau_b,
    spearman_rho,
)
from analyse.ranks import MIN_CONCLUSIVE as MIN_CONCLUSIVE  # for the dashboard
from core.choices import check_direction
from store.analytics.runs import resolve_run, typed_row
from store.analytics.shares import (
    CLUSTER,
    DEFINITIONS,
    DOMAIN,
    NO_EVIDENCE,
    check_definition,
    chosen_clusterings,
    cluster_counts,
    stored_clusterings,
)
from store.analytics.views import V_CLUSTER
from store.rank_editions import apply_edition, edition_ranks

#: the ranks a factor is correlated with
TARGETS: tuple[str, ...] = ("rank", "impact_rank")


@dataclass(frozen=True)
class _RankedUniversity:
    """The first columns of both views: a university of a run and direction, its ranks."""

    run_id: int
    direction: str
    university_id: int
    university: str
    country: str
    rank: int | None
    impact_rank: int | None


@dataclass(frozen=True)
class RankFactorRow(_RankedUniversity):
    """One university's factors in a run and direction (``v_rank_factors``).

    The cluster columns are those of the university's newest ``activity`` clustering of
    the run and direction (the default method; the newest of another method where it has
    none, migration 0015), ``None`` when it has no clustering of them; the shares are over
    the domains with evidence (``None`` when none has).
    """

    clustering_id: int | None
    unit: str | None
    n_clusters: int | None
    clustered_size: int | None
    singletons: int | None
    domains: int
    evidence_domains: int
    unknown: int
    uncategorised: int
    share_universities: float | None
    share_scientific_communities: float | None
    share_search_engines: float | None
    share_social_networks: float | None
    share_media: float | None
    share_news_portals: float | None
    share_other_organisations: float | None
    share_academic: float | None


@dataclass(frozen=True)
class RankFactorShareRow(_RankedUniversity):
    """The share of one category among a university's domains with evidence
    (``v_rank_factor_share``)."""

    category: str
    domains: int
    share: float


@dataclass(frozen=True)
class RankCorrelationRow(Correlation):
    """A :class:`analyse.ranks.Correlation` of one run and direction: ``estimate`` is ρ
    (``statistic='spearman'``) or τ-b (``'kendall'``) of ``factor`` with ``target``
    (``rank`` or ``impact_rank``); negative: a higher factor goes with a better rank
    (``reading`` says it in words); ``low``, ``high``: the interval consistent with the
    test (:mod:`analyse.ranks`); ``p_holm``, ``q_bh``: ``p_value`` adjusted over the
    ``tests`` defined tests of the family (every factor x statistic x direction x target
    correlated in one call of :func:`correlations_of`) by Holm's method and by
    Benjamini-Hochberg's; ``definition``: the shares' definition; ``note``: why it is
    undefined (NaN) or ``n`` too small to conclude."""

    run_id: int
    direction: str
    p_holm: float
    q_bh: float
    tests: int
    definition: str


#: the share columns of ``v_rank_factors``, the headline (:data:`analyse.ranks.HEADLINE`) first
SHARE_COLUMNS: tuple[str, ...] = (
    HEADLINE,
    *(f.name for f in fields(RankFactorRow) if f.name.startswith("share_") and f.name != HEADLINE),
)
V_RANK_FACTORS = table("v_rank_factors", *(column(f.name) for f in fields(RankFactorRow)))
V_RANK_FACTOR_SHARE = table(
    "v_rank_factor_share", *(column(f.name) for f in fields(RankFactorShareRow))
)
# the same over the aggregates (revision 0010, store.aggregates): what the readers read
AGG_RANK_FACTORS = table("agg_v_rank_factors", *(column(c.name) for c in V_RANK_FACTORS.c))
AGG_RANK_FACTOR_SHARE = table(
    "agg_v_rank_factor_share", *(column(c.name) for c in V_RANK_FACTOR_SHARE.c)
)


def _select(
    engine: Engine,
    v: Any,
    row_type: type,
    run_id: int | None,
    direction: str | None,
) -> list[Any]:
    """The rows of ``v`` (a view over the aggregates) for one run."""
    check_direction(direction)
    run = resolve_run(engine, run_id)
    if run is None:
        return []
    stmt = select(v).where(v.c.run_id == run)
    if direction is not None:
        stmt = stmt.where(v.c.direction == direction)
    order = [v.c.direction.desc(), v.c.rank.is_(None), v.c.rank, v.c.university]
    if "category" in v.c:
        order.append(v.c.category)
    with engine.connect() as conn:
        return [typed_row(row_type, r) for r in conn.execute(stmt.order_by(*order)).mappings()]


def with_edition(engine: Engine, rows: Sequence[Any], edition: str | None) -> list[Any]:
    """``rows`` (:class:`RankFactorRow` or :class:`RankFactorShareRow`) with the ranks of
    ``edition`` (:mod:`store.rank_editions`; a university it does not rank has none), in
    the readers' order: outgoing first, then by rank (unranked last) and name. ``None``:
    the rows as they are (the newest edition's ranks, which ``university`` holds).

    Raises
    ------
    ParameterError
        No edition of that name is stored.
    """
    if edition is None:
        return list(rows)
    ranks = edition_ranks(engine, edition)
    out = [replace(r, **apply_edition(ranks, r.university_id)) for r in rows]

    def key(r: Any) -> tuple[Any, ...]:
        return (
            r.direction != "outgoing",
            r.rank is None,
            r.rank or 0,
            r.university,
            getattr(r, "category", ""),
        )

    return sorted(out, key=key)


def rank_factors(
    engine: Engine,
    *,
    run_id: int | None = None,
    direction: str | None = None,
    definition: str = DOMAIN,
    clusterings: Mapping[tuple[int, str], int] | None = None,
    edition: str | None = None,
) -> list[RankFactorRow]:
    """The factors of every university of a run (``v_rank_factors``).

    Parameters
    ----------
    engine : Engine
    run_id : int, optional
        The crawl run; the latest with environment data when ``None``.
    direction : str, optional
        ``outgoing`` or ``citing``; both when ``None``.
    definition : {"domain", "cluster"}
        The shares' definition (:mod:`store.analytics.shares`): ``domain``, the view's
        shares over the domains with evidence; ``cluster``, over the members of the
        university's clusters counted in their cluster's category (``mixed`` clusters
        count in no category's share but in the denominator); ``None`` without a
        clustering.
    clusterings : mapping, optional
        ``{(university_id, direction): clustering_id}``: the cluster columns (and the
        cluster shares) of these clusterings instead of the view's choice (the newest
        of the default method); a university missing here has none.
    edition : str, optional
        The ranks of this rank edition (:mod:`store.rank_editions`); the newest when
        ``None`` (``university.rank``).

    Returns
    -------
    list of RankFactorRow
        Outgoing first, then by rank (unranked last) and name.

    Raises
    ------
    ParameterError
        The run has no environment data, or the direction is unknown.
    """
    check_definition(definition)
    rows = _select(engine, AGG_RANK_FACTORS, RankFactorRow, run_id, direction)
    rows = with_edition(engine, rows, edition)
    if not rows or (definition == DOMAIN and clusterings is None):
        return rows
    run = rows[0].run_id
    chosen = chosen_clusterings(engine, run) if clusterings is None else dict(clusterings)
    if clusterings is not None:
        rows = _cluster_columns(engine, rows, chosen)
    if definition == CLUSTER:
        rows = _cluster_shares(engine, rows, chosen)
    return rows


def _cluster_columns(
    engine: Engine, rows: Sequence[RankFactorRow], chosen: Mapping[tuple[int, str], int]
) -> list[RankFactorRow]:
    """``rows`` with the cluster columns of the ``chosen`` clusterings."""
    c = V_CLUSTER.c
    big = c.size >= 2
    stmt = (
        select(
            c.clustering_id,
            c.unit,
            func.sum(case((big, 1), else_=0)),
            func.sum(case((big, c.size), else_=0)),
            func.sum(case((big, 0), else_=1)),
        )
        .where(c.clustering_id.in_(list(chosen.values())))
        .group_by(c.clustering_id, c.unit)
    )
    with engine.connect() as conn:
        sizes = {int(i): (u, int(n), int(m), int(s1)) for i, u, n, m, s1 in conn.execute(stmt)}
    out = []
    for r in rows:
        cid = chosen.get((r.university_id, r.direction))
        unit, n, size, single = sizes.get(cid, (None, None, None, None)) if cid else (None,) * 4
        out.append(
            replace(
                r,
                clustering_id=cid if unit is not None else None,
                unit=unit,
                n_clusters=n,
                clustered_size=size,
                singletons=single,
            )
        )
    return out


def _cluster_shares(
    engine: Engine, rows: Sequence[RankFactorRow], chosen: Mapping[tuple[int, str], int]
) -> list[RankFactorRow]:
    """``rows`` with the share columns counted over the ``chosen`` clusterings' members in
    their cluster's category (over the members whose cluster has evidence: not unknown
    or uncategorised; ``mixed`` in the denominator only)."""
    counts = cluster_counts(engine, rows[0].run_id, chosen)
    out = []
    for r in rows:
        per_cat = counts.get((r.direction, r.university_id))
        evidence = (
            sum(n for cat, (n, _) in per_cat.items() if cat not in NO_EVIDENCE) if per_cat else 0
        )
        values: dict[str, Any] = {}
        for cat in PAPER_CATEGORIES:
            n = per_cat.get(cat, [0, 0])[0] if per_cat else 0
            values[f"share_{cat}"] = n / evidence if evidence else None
        academic = [values["share_universities"], values["share_scientific_communities"]]
        values[HEADLINE] = None if academic[0] is None else sum(v or 0.0 for v in academic)
        out.append(replace(r, **values))
    return out


def rank_factor_shares(
    engine: Engine,
    *,
    run_id: int | None = None,
    direction: str | None = None,
    edition: str | None = None,
) -> list[RankFactorShareRow]:
    """The category shares over the domains with evidence, long form
    (``v_rank_factor_share``); ordered as :func:`rank_factors`, then by category; the
    ranks of ``edition`` (the newest when ``None``)."""
    rows = _select(engine, AGG_RANK_FACTOR_SHARE, RankFactorShareRow, run_id, direction)
    return with_edition(engine, rows, edition)


def correlations_of(
    rows: Sequence[RankFactorRow],
    *,
    factors: Sequence[str] = FACTORS,
    n_resamples: int = 9999,
    seed: int = 0,
    definition: str = DOMAIN,
) -> list[RankCorrelationRow]:
    """The rank correlations of the factors of :func:`rank_factors` rows, per run and
    direction: with ``rank`` always, with ``impact_rank`` when a university has one; the
    p-values adjusted over every defined test of them all (``p_holm``, ``q_bh``).

    A university without the factor (no clustering, no domain with evidence) or without
    the rank is left out of that correlation (``n`` counts the others). ``definition``
    names the shares' definition of ``rows`` in the results.
    """
    groups: dict[tuple[int, str], list[RankFactorRow]] = {}
    for r in rows:
        groups.setdefault((r.run_id, r.direction), []).append(r)
    found: list[tuple[Correlation, int, str]] = []
    for (run, direction), unis in groups.items():
        values = {f: [getattr(u, f) for u in unis] for f in factors}
        for target in TARGETS:
            ranks = [getattr(u, target) for u in unis]
            if target != "rank" and all(r is None for r in ranks):
                continue
            for c in correlate_factors(
                values, ranks, target=target, n_resamples=n_resamples, seed=seed
            ):
                found.append((c, run, direction))
    p = [c.p_value for c, _run, _d in found]
    holm, bh = adjust_p(p, "holm"), adjust_p(p, "bh")
    tests = sum(not math.isnan(v) for v in p)
    return [
        RankCorrelationRow(
            **asdict(c),
            run_id=run,
            direction=direction,
            p_holm=h,
            q_bh=q,
            tests=tests,
            definition=definition,
        )
        for (c, run, direction), h, q in zip(found, holm, bh, strict=True)
    ]


def rank_correlations(
    engine: Engine,
    *,
    run_id: int | None = None,
    direction: str | None = None,
    n_resamples: int = 9999,
    seed: int = 0,
    definition: str = DOMAIN,
    edition: str | None = None,
) -> list[RankCorrelationRow]:
    """Spearman's ρ and Kendall's τ of every factor with the rank, per direction of a run
    (:func:`rank_factors` then :func:`correlations_of`; adjusted over the directions
    read: pass no ``direction`` to adjust over both, as the report and the Rank page do),
    with the ranks of ``edition`` (the newest when ``None``).

    Returns
    -------
    list of RankCorrelationRow
        Outgoing first; per direction the rank, then the impact rank; per target the
        factors in the order of :data:`analyse.ranks.FACTORS` (the headline share first),
        Spearman before Kendall.

    Examples
    --------
    A row reads, e.g.: ``share_academic spearman n=4 ρ=-0.80 p=0.33 "n = 4 < 10: too
    few universities to conclude ..."`` (no interval below 10); ``math.isnan(row.estimate)``
    when undefined.
    """
    return correlations_of(
        rank_factors(
            engine, run_id=run_id, direction=direction, definition=definition, edition=edition
        ),
        n_resamples=n_resamples,
        seed=seed,
        definition=definition,
    )


def headline_low_confidence(
    engine: Engine,
    *,
    run_id: int | None = None,
    definition: str = DOMAIN,
    low_confidence: float = 0.5,
) -> dict[tuple[str, int], float | None]:
    """``{(direction, university_id): part}``: the part of the headline share
    (:data:`HEADLINE`, over the domains with evidence as :func:`rank_factors` counts it)
    resting on unreviewed domains scored below ``low_confidence``
    (:mod:`store.analytics.shares`); ``None`` where the share is undefined."""
    from store.analytics.shares import university_shares

    rows = university_shares(
        engine, definition=definition, run_id=run_id, low_confidence=low_confidence
    )
    evidence: dict[tuple[str, int], int] = {}
    low: dict[tuple[str, int], int] = {}
    for r in rows:
        key = (r.direction, r.university_id)
        if r.category not in NO_EVIDENCE:
            evidence[key] = evidence.get(key, 0) + r.domains
        if r.category in ("universities", "scientific_communities"):
            low[key] = low.get(key, 0) + r.low_confidence
    return {key: (low.get(key, 0) / n if n else None) for key, n in evidence.items()}


# --- does each sign hold? ------------------------------------------------------------------


@dataclass(frozen=True)
class ClusteringSetting:
    """A clustering setting stored for a run: its label (``setting 1`` is the setting of
    the clusterings the view reads), the setting and how many university x direction
    pairs have a clustering of it."""

    label: str
    setting: str
    clusterings: int


@dataclass(frozen=True)
class SensitivityRow:
    """Whether the sign of one factor x statistic x direction x target holds under both
    share definitions and every stored clustering setting: ``signs`` lists each variant's
    sign (``definition · setting: −, +, 0`` or ``undefined``), ``holds`` is ``holds`` (every
    defined variant has the same non-zero sign, at least two defined), ``flips`` or
    ``undefined`` (fewer than two variants defined), ``line`` says it in words."""

    run_id: int
    direction: str
    target: str
    factor: str
    statistic: str
    variants: int
    signs: str
    holds: str
    line: str


def clustering_settings(engine: Engine, run_id: int | None = None) -> list[ClusteringSetting]:
    """The clustering settings stored for a run (``setting 1``: the one the view reads
    most, then by how many clusterings)."""
    run = resolve_run(engine, run_id)
    if run is None:
        return []
    stored = stored_clusterings(engine, run)
    chosen = set(chosen_clusterings(engine, run).values())
    count: dict[str, list[int]] = {}
    for s in stored:
        got = count.setdefault(s.setting, [0, 0])
        got[0] += s.clustering_id in chosen
        got[1] += 1
    order = sorted(count, key=lambda k: (-count[k][0], -count[k][1], k))
    return [ClusteringSetting(f"setting {i}", k, count[k][1]) for i, k in enumerate(order, start=1)]


def _sign(statistic: str, xs: Sequence[Any], ys: Sequence[Any]) -> int | None:
    pairs = [
        (float(x), float(y))
        for x, y in zip(xs, ys, strict=True)
        if x is not None and y is not None and not math.isnan(float(x))
    ]
    if len(pairs) < MIN_DEFINED:
        return None
    x, y = (np.array(v) for v in zip(*pairs, strict=True))
    if np.all(x == x[0]) or np.all(y == y[0]):
        return None
    func_ = spearman_rho if statistic == "spearman" else kendall_tau_b
    value = float(func_(x, y))
    return 0 if abs(value) < 1e-12 else (1 if value > 0 else -1)


def rank_sensitivity(
    engine: Engine,
    *,
    run_id: int | None = None,
    factors: Sequence[str] = FACTORS,
    edition: str | None = None,
) -> list[SensitivityRow]:
    """Does the sign of each correlation hold under both share definitions
    (:data:`store.analytics.shares.DEFINITIONS`) and over every clustering setting stored
    for the run (:func:`clustering_settings`; per university and direction the newest
    clustering of the setting)? The ranks are those of ``edition`` (the newest when
    ``None``).

    Returns
    -------
    list of SensitivityRow
        Outgoing first, then by target, factor (in the order of ``factors``), statistic.
    """
    run = resolve_run(engine, run_id)
    if run is None:
        return []
    stored = stored_clusterings(engine, run)  # newest first
    variants: list[tuple[str, list[RankFactorRow]]] = []
    settings = clustering_settings(engine, run) or [ClusteringSetting("no clustering", "", 0)]
    for s in settings:
        chosen: dict[tuple[int, str], int] = {}
        for c in stored:
            if c.setting == s.setting:
                chosen.setdefault((c.university_id, c.direction), c.clustering_id)
        for definition in DEFINITIONS:
            rows = rank_factors(
                engine, run_id=run, definition=definition, clusterings=chosen, edition=edition
            )
            variants.append((f"{definition} · {s.label}", rows))
    out = []
    directions = list(dict.fromkeys(r.direction for _name, rows in variants for r in rows))
    for direction in directions:
        for target in TARGETS:
            for factor in factors:
                for statistic in STATISTICS:
                    signs = []
                    for name, rows in variants:
                        mine = [r for r in rows if r.direction == direction]
                        sign = _sign(
                            statistic,
                            [getattr(r, factor) for r in mine],
                            [getattr(r, target) for r in mine],
                        )
                        signs.append((name, sign))
                    if target != "rank" and all(sg is None for _n, sg in signs):
                        continue
                    out.append(sensitivity_row(run, direction, target, factor, statistic, signs))
    return out


def sensitivity_row(
    run: int,
    direction: str,
    target: str,
    factor: str,
    statistic: str,
    signs: Sequence[tuple[str, int | None]],
) -> SensitivityRow:
    """The :class:`SensitivityRow` of the ``(variant, sign)`` pairs of one correlation
    (sign -1, 0, 1, or ``None`` where undefined)."""
    symbol = {None: "undefined", -1: "−", 0: "0", 1: "+"}
    defined = [sg for _n, sg in signs if sg is not None]
    if len(defined) < 2:
        holds, line = "undefined", f"defined under {len(defined)} of {len(signs)} variants only"
    elif len(set(defined)) == 1 and defined[0] != 0:
        word = "negative" if defined[0] < 0 else "positive"
        holds = "holds"
        line = f"{word} under all {len(defined)} defined variants"
        if len(defined) < len(signs):
            line += f" ({len(signs) - len(defined)} undefined)"
    else:
        holds = "flips"
        line = "the sign changes: " + ", ".join(
            f"{n} {symbol[sg]}" for n, sg in signs if sg is not None
        )
    text = "; ".join(f"{n}: {symbol[sg]}" for n, sg in signs)
    return SensitivityRow(run, direction, target, factor, statistic, len(signs), text, holds, line)
