"""The paper's finding: a university's groups against its rank (``v_rank_factors``,
``v_rank_factor_share`` of migration 0009) and their rank correlations.

Korelin, Blekanov and Sergeev (2015, seed ``000_d819228b9213e10a.txt``) ask how the
number and sizes of a university's groups bear on its webometric rating and conclude
that the larger the share of universities and scientific communities around it, the
higher its Webometrics Impact. :func:`rank_factors` reads the factors per run, direction
and university; :func:`rank_correlations` correlates each with the rank (and the impact
rank where the universities file gives one) through :func:`analyse.ranks.correlate`:
Spearman's ρ, Kendall's τ, n, p-value, a bootstrap 95 % interval and a note. Rank 1 is
the best, so a **negative** coefficient means a higher factor goes with a better rank
(:data:`analyse.ranks.SIGN_NOTE`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from sqlalchemy import Engine, column, select, table

from analyse.ranks import FACTORS, HEADLINE, Correlation, correlate_factors
from core.choices import check_direction
from store.analytics.runs import resolve_run_fresh, typed_row

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
    (``reading`` says it in words); ``low``, ``high``: the bootstrap interval; ``note``:
    why it is undefined (NaN) or ``n`` too small to conclude."""

    run_id: int
    direction: str


#: the share columns of ``v_rank_factors``, the headline (:data:`analyse.ranks.HEADLINE`) first
SHARE_COLUMNS: tuple[str, ...] = (
    HEADLINE,
    *(f.name for f in fields(RankFactorRow) if f.name.startswith("share_") and f.name != HEADLINE),
)
V_RANK_FACTORS = table("v_rank_factors", *(column(f.name) for f in fields(RankFactorRow)))
V_RANK_FACTOR_SHARE = table(
    "v_rank_factor_share", *(column(f.name) for f in fields(RankFactorShareRow))
)
# the same over the aggregates (revision 0010, store.aggregates), read while they are fresh
AGG_RANK_FACTORS = table("agg_v_rank_factors", *(column(c.name) for c in V_RANK_FACTORS.c))
AGG_RANK_FACTOR_SHARE = table(
    "agg_v_rank_factor_share", *(column(c.name) for c in V_RANK_FACTOR_SHARE.c)
)


def _select(
    engine: Engine,
    views: tuple[Any, Any],
    row_type: type,
    run_id: int | None,
    direction: str | None,
) -> list[Any]:
    """The rows of ``views[0]`` (or of ``views[1]``, the same over the aggregates, while
    they are fresh) for one run."""
    check_direction(direction)
    run, fresh = resolve_run_fresh(engine, run_id)
    if run is None:
        return []
    v = views[1] if fresh else views[0]
    stmt = select(v).where(v.c.run_id == run)
    if direction is not None:
        stmt = stmt.where(v.c.direction == direction)
    order = [v.c.direction.desc(), v.c.rank.is_(None), v.c.rank, v.c.university]
    if "category" in v.c:
        order.append(v.c.category)
    with engine.connect() as conn:
        return [typed_row(row_type, r) for r in conn.execute(stmt.order_by(*order)).mappings()]


def rank_factors(
    engine: Engine, *, run_id: int | None = None, direction: str | None = None
) -> list[RankFactorRow]:
    """The factors of every university of a run (``v_rank_factors``).

    Parameters
    ----------
    engine : Engine
    run_id : int, optional
        The crawl run; the latest with environment data when ``None``.
    direction : str, optional
        ``outgoing`` or ``citing``; both when ``None``.

    Returns
    -------
    list of RankFactorRow
        Outgoing first, then by rank (unranked last) and name.

    Raises
    ------
    ParameterError
        The run has no environment data, or the direction is unknown.
    """
    return _select(engine, (V_RANK_FACTORS, AGG_RANK_FACTORS), RankFactorRow, run_id, direction)


def rank_factor_shares(
    engine: Engine, *, run_id: int | None = None, direction: str | None = None
) -> list[RankFactorShareRow]:
    """The category shares over the domains with evidence, long form
    (``v_rank_factor_share``); ordered as :func:`rank_factors`, then by category."""
    views = (V_RANK_FACTOR_SHARE, AGG_RANK_FACTOR_SHARE)
    return _select(engine, views, RankFactorShareRow, run_id, direction)


def correlations_of(
    rows: Sequence[RankFactorRow],
    *,
    factors: Sequence[str] = FACTORS,
    n_resamples: int = 9999,
    seed: int = 0,
) -> list[RankCorrelationRow]:
    """The rank correlations of the factors of :func:`rank_factors` rows, per run and
    direction: with ``rank`` always, with ``impact_rank`` when a university has one.

    A university without the factor (no clustering, no domain with evidence) or without
    the rank is left out of that correlation (``n`` counts the others).
    """
    groups: dict[tuple[int, str], list[RankFactorRow]] = {}
    for r in rows:
        groups.setdefault((r.run_id, r.direction), []).append(r)
    out: list[RankCorrelationRow] = []
    for (run, direction), unis in groups.items():
        values = {f: [getattr(u, f) for u in unis] for f in factors}
        for target in TARGETS:
            ranks = [getattr(u, target) for u in unis]
            if target != "rank" and all(r is None for r in ranks):
                continue
            for c in correlate_factors(
                values, ranks, target=target, n_resamples=n_resamples, seed=seed
            ):
                out.append(RankCorrelationRow(**asdict(c), run_id=run, direction=direction))
    return out


def rank_correlations(
    engine: Engine,
    *,
    run_id: int | None = None,
    direction: str | None = None,
    n_resamples: int = 9999,
    seed: int = 0,
) -> list[RankCorrelationRow]:
    """Spearman's ρ and Kendall's τ of every factor with the rank, per direction of a run
    (:func:`rank_factors` then :func:`correlations_of`).

    Returns
    -------
    list of RankCorrelationRow
        Outgoing first; per direction the rank, then the impact rank; per target the
        factors in the order of :data:`analyse.ranks.FACTORS` (the headline share first),
        Spearman before Kendall.

    Examples
    --------
    A row reads, e.g.: ``share_academic spearman n=4 ρ=-0.80 [-1.00, 1.00] "n = 4 is too
    small to conclude ..."``; ``math.isnan(row.estimate)`` when undefined.
    """
    return correlations_of(
        rank_factors(engine, run_id=run_id, direction=direction),
        n_resamples=n_resamples,
        seed=seed,
    )
