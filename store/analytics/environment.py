"""A university's environment in a run (``v_environment``: one row per external
domain, direction and source) and its category shares, per university (Figures 2-3) and
per country (``v_category_share``, ``v_country_category_share``; analyst overrides
applied); the environment's domains over every university (the Network page).

Each reads the aggregates of :mod:`store.aggregates` (the rows of these views as of the
last refresh), whatever their freshness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, case, func, select
from sqlalchemy.sql.expression import ColumnElement, Subquery

from analyse.networks import Overlap as OverlapRow
from core.choices import DIRECTIONS, UNKNOWN, check_direction
from store import aggregates
from store.analytics.runs import resolve_run, view_rows
from store.analytics.views import AGG_COUNTRY_SHARE, AGG_SHARE, UNCATEGORISED
from store.models import AggregateDomainCount


@dataclass(frozen=True)
class EnvironmentRow:
    """One external domain of a university's environment in a run and direction."""

    run_id: int
    university_id: int
    university: str
    country: str
    direction: str
    source: str
    domain: str
    links: int
    pages: int
    language: str
    category: str | None


def environment(
    engine: Engine,
    *,
    run_id: int | None = None,
    direction: str | None = None,
    university_id: int | None = None,
    domains: Sequence[str] | None = None,
) -> list[EnvironmentRow]:
    """The environment rows of a run (by university, direction, most links first, domain);
    ``domains``: only the rows of these domains (e.g. those :func:`network_domains`
    chose)."""
    return view_rows(
        engine,
        aggregates.ENVIRONMENT_SOURCE,
        EnvironmentRow,
        ("university", "links", "domain"),
        run_id=run_id,
        direction=direction,
        university_id=university_id,
        domains=domains,
    )


@dataclass(frozen=True)
class CategoryShareRow:
    """Share of one category among a university's external domains (Figures 2-3)."""

    run_id: int
    university_id: int
    university: str
    country: str
    direction: str
    category: str
    domains: int
    share: float
    known_share: float | None


def category_shares(
    engine: Engine,
    *,
    run_id: int | None = None,
    direction: str | None = None,
    university_id: int | None = None,
    sources: Sequence[str] | None = None,
) -> list[CategoryShareRow]:
    """Category shares per university and direction (analyst overrides applied).

    ``sources``: over the distinct domains of the environment rows of these sources only
    (``None``: every source, as ``v_category_share``).

    Returns
    -------
    list of CategoryShareRow
        By university, direction (outgoing first), largest share first, then category.
        Categories a university has no domain of are absent (share 0).
    """
    if sources is not None:
        rows = _shares_of_sources(engine, run_id, direction, sources, by_country=False)
        return [
            CategoryShareRow(run, int(uid), uni, country, d, cat, n, share, known)
            for (run, d, uid, uni, country), cat, n, share, known in rows
            if university_id is None or uid == university_id
        ]
    return view_rows(
        engine,
        AGG_SHARE,
        CategoryShareRow,
        ("university", "share", "category"),
        run_id=run_id,
        direction=direction,
        university_id=university_id,
    )


@dataclass(frozen=True)
class CountryCategoryShareRow:
    """Share of one category among the distinct external domains of a country's
    universities."""

    run_id: int
    country: str
    direction: str
    category: str
    domains: int
    share: float
    known_share: float | None


def country_category_shares(
    engine: Engine,
    *,
    run_id: int | None = None,
    direction: str | None = None,
    sources: Sequence[str] | None = None,
) -> list[CountryCategoryShareRow]:
    """Category shares per country and direction (analyst overrides applied);
    ``sources`` as in :func:`category_shares`."""
    if sources is not None:
        rows = _shares_of_sources(engine, run_id, direction, sources, by_country=True)
        return [
            CountryCategoryShareRow(run, country, d, cat, n, share, known)
            for (run, d, country), cat, n, share, known in rows
        ]
    return view_rows(
        engine,
        AGG_COUNTRY_SHARE,
        CountryCategoryShareRow,
        ("country", "share", "category"),
        run_id=run_id,
        direction=direction,
    )


def _shares_of_sources(
    engine: Engine,
    run_id: int | None,
    direction: str | None,
    sources: Sequence[str],
    *,
    by_country: bool,
) -> list[tuple[tuple[Any, ...], str, int, float, float | None]]:
    """``(group, category, domains, share, known_share)`` over the distinct domains of
    the environment rows of ``sources``, per run x direction x university (or country),
    counted in SQL; ordered as the share views (group, outgoing first, largest share,
    category). ``known_share`` leaves the unknown domains out (``None`` for them)."""
    check_direction(direction)
    run = resolve_run(engine, run_id)
    if run is None:
        return []
    v = aggregates.ENVIRONMENT_SOURCE
    group = [v.c.country] if by_country else [v.c.university_id, v.c.university, v.c.country]
    category = func.coalesce(v.c.category, UNCATEGORISED)
    stmt = (
        select(v.c.direction, *group, category, func.count(func.distinct(v.c.domain)))
        .where(*_environment_filter(v, run, direction, None, sources))
        .group_by(v.c.direction, *group, category)
    )
    with engine.connect() as conn:
        counts = [((run, d, *key), cat, int(n)) for d, *key, cat, n in conn.execute(stmt)]
    total: dict[tuple[Any, ...], int] = {}
    known: dict[tuple[Any, ...], int] = {}
    for key, cat, n in counts:
        total[key] = total.get(key, 0) + n
        known[key] = known.get(key, 0) + (n if cat != UNKNOWN else 0)
    out = [
        (
            key,
            cat,
            n,
            n / total[key],
            n / known[key] if cat != UNKNOWN and known[key] else None,
        )
        for key, cat, n in counts
    ]
    # as the views: by group (name), outgoing first, largest share first, then category
    name = (lambda k: k[2]) if by_country else (lambda k: k[3])
    out.sort(key=lambda r: (name(r[0]), r[0][1] != "outgoing", -r[3], r[1]))
    return out


# --- the environment's domains over every university (the Network page) -----------------


@dataclass(frozen=True)
class NetworkDomainRow:
    """One external domain of a run and direction over every university: the
    universities it is linked with, links and pages summed over them and the sources,
    ``weight`` (links outgoing, pages citing), language and category."""

    run_id: int
    direction: str
    domain: str
    universities: int
    links: int
    pages: int
    weight: int
    language: str
    category: str | None


def _domain_rows(
    run: int,
    direction: str,
    categories: Sequence[str] | None,
    sources: Sequence[str] | None,
) -> Subquery:
    """One row per domain of a run and direction (universities, links, pages, language,
    category) over the environment rows of ``sources`` and ``categories`` (``None``:
    all): the saved ``agg_network_domain`` when every source is wanted, else the rows of
    ``agg_environment`` grouped per domain."""
    if sources is None:
        c = aggregates.NETWORK_DOMAIN_SOURCE.c
        stmt = select(c.domain, c.universities, c.links, c.pages, c.language, c.category).where(
            c.run_id == run, c.direction == direction
        )
        if categories is not None:
            stmt = stmt.where(func.coalesce(c.category, UNCATEGORISED).in_(list(categories)))
        return stmt.subquery("network_domain")
    v = aggregates.ENVIRONMENT_SOURCE
    stmt = (
        select(
            v.c.domain,
            func.count(func.distinct(v.c.university_id)).label("universities"),
            func.sum(v.c.links).label("links"),
            func.sum(v.c.pages).label("pages"),
            func.min(v.c.language).label("language"),
            func.min(v.c.category).label("category"),
        )
        .where(*_environment_filter(v, run, direction, categories, sources))
        .group_by(v.c.domain)
    )
    return stmt.subquery("network_domain")


def _environment_filter(
    v: Any,
    run: int,
    direction: str | None,
    categories: Sequence[str] | None,
    sources: Sequence[str] | None,
) -> list[Any]:
    """The conditions on environment rows (``v_environment``'s columns) of a run,
    direction, categories and sources (``None``: all)."""
    where = [v.c.run_id == run]
    if direction is not None:
        where.append(v.c.direction == direction)
    if categories is not None:
        where.append(func.coalesce(v.c.category, UNCATEGORISED).in_(list(categories)))
    if sources is not None:
        where.append(v.c.source.in_(list(sources)))
    return where


def network_domains(
    engine: Engine,
    *,
    direction: str,
    run_id: int | None = None,
    min_universities: int = 1,
    categories: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
    limit: int | None = None,
) -> list[NetworkDomainRow]:
    """The domains of a run's environment in ``direction``, those shared by most
    universities first, then largest ``weight``, then by name.

    Parameters
    ----------
    engine : Engine
    direction : {"outgoing", "citing"}
    run_id : int, optional
        The crawl run; the latest with data when ``None``.
    min_universities : int
        Keep the domains linked with at least this many universities.
    categories : sequence of str, optional
        Keep the domains of these categories (``"uncategorised"``: no category stored).
    sources : sequence of str, optional
        Count only the environment rows of these sources (``crawl``, ``backlinks``,
        ``commoncrawl``); a domain's universities, links and pages are then those the
        sources found.
    limit : int, optional
        At most this many domains (the Network page asks for one more than it draws, to
        know whether it left some out).

    Returns
    -------
    list of NetworkDomainRow
    """
    check_direction(direction)
    run = resolve_run(engine, run_id)
    if run is None:
        return []
    c = _domain_rows(run, direction, categories, sources).c
    weight = c.links if direction == "outgoing" else c.pages
    stmt = (
        select(c.domain, c.universities, c.links, c.pages, weight, c.language, c.category)
        .where(c.universities >= min_universities)
        .order_by(c.universities.desc(), weight.desc(), c.domain)
    )
    if limit is not None:
        stmt = stmt.limit(limit)
    with engine.connect() as conn:
        return [
            NetworkDomainRow(
                run, direction, dom, int(n), int(li), int(pg), int(w), lang or "unknown", cat
            )
            for dom, n, li, pg, w, lang, cat in conn.execute(stmt)
        ]


def network_domain_count(
    engine: Engine,
    *,
    direction: str,
    run_id: int | None = None,
    min_universities: int = 1,
    categories: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
) -> int:
    """How many domains :func:`network_domains` gives without a ``limit``."""
    check_direction(direction)
    run = resolve_run(engine, run_id)
    if run is None:
        return 0
    c = _domain_rows(run, direction, categories, sources).c
    with engine.connect() as conn:
        n = conn.execute(select(func.count()).where(c.universities >= min_universities)).scalar()
    return int(n or 0)


@dataclass(frozen=True)
class EnvironmentSummaryRow:
    """The size of a run's environment in one direction: universities, distinct
    domains, rows (university x domain x source), university-domain pairs (the graph's
    edges: a domain two sources found counts once), the most universities one domain is
    linked with, and the categories present (``"uncategorised"``: no category stored)."""

    run_id: int
    direction: str
    universities: int
    domains: int
    edges: int
    pairs: int
    max_universities: int
    categories: tuple[str, ...]


def environment_summary(
    engine: Engine,
    *,
    run_id: int | None = None,
    direction: str | None = None,
    categories: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
) -> list[EnvironmentSummaryRow]:
    """One :class:`EnvironmentSummaryRow` per direction (outgoing first) with data in
    the run (the latest with data when ``run_id`` is ``None``), over the environment
    rows of ``categories`` and ``sources`` (``None``: all; the categories present are
    those of the chosen sources, whatever ``categories``)."""
    check_direction(direction)
    run = resolve_run(engine, run_id)
    if run is None:
        return []
    wanted = [d for d in DIRECTIONS if direction in (None, d)]
    out = []
    with engine.connect() as conn:
        for d in wanted:
            row = _summary(conn, run, d, categories, sources)
            if row is not None:
                out.append(row)
    return out


def _summary(
    conn: Connection,
    run: int,
    direction: str,
    categories: Sequence[str] | None,
    sources: Sequence[str] | None,
) -> EnvironmentSummaryRow | None:
    execute = conn.execute
    per_domain = _domain_rows(run, direction, categories, sources).c
    domains, pairs, top = execute(
        select(func.count(), func.sum(per_domain.universities), func.max(per_domain.universities))
    ).one()
    # the saved counts: per source (and once over every source), category
    dc = AggregateDomainCount.__table__.c
    where = [dc.run_id == run, dc.direction == direction]
    edges_of: ColumnElement[Any]
    if sources is None:
        edges_of = case((dc.source == aggregates.ALL_SOURCES, 0), else_=dc.domains)
        where_source = dc.source != aggregates.ALL_SOURCES
    else:
        edges_of = dc.domains
        where_source = dc.source.in_(list(sources))
    present = set(execute(select(dc.category).where(*where, where_source).distinct()).scalars())
    if categories is not None:
        where.append(dc.category.in_(list(categories)))
    unis, edges = execute(
        select(func.count(func.distinct(dc.university_id)), func.sum(edges_of)).where(
            *where, *([] if sources is None else [where_source])
        )
    ).one()
    if not edges:
        return None
    return EnvironmentSummaryRow(
        run,
        direction,
        int(unis),
        int(domains or 0),
        int(edges),
        int(pairs or 0),
        int(top or 0),
        tuple(sorted(present)),
    )


def colink_overlaps(
    engine: Engine,
    *,
    direction: str,
    run_id: int | None = None,
    categories: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
) -> list[OverlapRow]:
    """Every pair of universities of a run and direction over the environment rows of
    ``categories`` and ``sources`` (the analyse stage stores the unfiltered ones:
    :func:`store.networks.colink_overlaps`), counted in SQL; most shared first, then
    by Jaccard, then by names."""
    check_direction(direction)
    run = resolve_run(engine, run_id)
    if run is None:
        return []
    v = aggregates.ENVIRONMENT_SOURCE
    pairs = (
        select(v.c.university, v.c.domain)
        .where(*_environment_filter(v, run, direction, categories, sources))
        .distinct()
        .subquery("pairs")
    )
    a, b = pairs.alias("a"), pairs.alias("b")
    with engine.connect() as conn:
        size: dict[str, int] = dict(
            conn.execute(
                select(pairs.c.university, func.count()).group_by(pairs.c.university)
            ).all()
        )
        shared = {
            (x, y): int(n)
            for x, y, n in conn.execute(
                select(a.c.university, b.c.university, func.count())
                .join(b, (a.c.domain == b.c.domain) & (a.c.university < b.c.university))
                .group_by(a.c.university, b.c.university)
            )
        }
    rows = []
    names = sorted(size)
    for i, x in enumerate(names):
        for y in names[i + 1 :]:
            n = shared.get((x, y), 0)
            union = size[x] + size[y] - n
            rows.append(
                OverlapRow(x, y, n, round(n / union, 4) if union else 0.0, size[x] - n, size[y] - n)
            )
    rows.sort(key=lambda o: (-o.shared, -o.jaccard, o.a, o.b))
    return rows
