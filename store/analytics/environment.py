"""A university's environment in a run (``v_environment``: one row per external
domain, direction and source) and its category shares, per university (Figures 2-3) and
per country (``v_category_share``, ``v_country_category_share``; analyst overrides
applied); the environment's domains over every university (the Network page).

Each reads the aggregates of :mod:`store.aggregates` while they are fresh, the views
otherwise: the same rows either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, case, func, select
from sqlalchemy.sql.expression import Subquery

from store import aggregates
from store.analytics.runs import _check_direction, _view_rows, resolve_run_fresh
from store.analytics.views import (
    AGG_COUNTRY_SHARE,
    AGG_SHARE,
    UNCATEGORISED,
    V_COUNTRY_SHARE,
    V_ENVIRONMENT,
    V_SHARE,
)
from store.models import DIRECTIONS, AggregateDomainCount, AggregateState


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
    return _view_rows(
        engine,
        V_ENVIRONMENT,
        EnvironmentRow,
        ("university", "links", "domain"),
        run_id=run_id,
        direction=direction,
        university_id=university_id,
        domains=domains,
        aggregate=aggregates.ENVIRONMENT_SOURCE,
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
) -> list[CategoryShareRow]:
    """Category shares per university and direction (analyst overrides applied).

    Returns
    -------
    list of CategoryShareRow
        By university, direction (outgoing first), largest share first, then category.
        Categories a university has no domain of are absent (share 0).
    """
    return _view_rows(
        engine,
        V_SHARE,
        CategoryShareRow,
        ("university", "share", "category"),
        run_id=run_id,
        direction=direction,
        university_id=university_id,
        aggregate=AGG_SHARE,
    )


@dataclass(frozen=True)
class CountryShareRow:
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
    engine: Engine, *, run_id: int | None = None, direction: str | None = None
) -> list[CountryShareRow]:
    """Category shares per country and direction (analyst overrides applied)."""
    return _view_rows(
        engine,
        V_COUNTRY_SHARE,
        CountryShareRow,
        ("country", "share", "category"),
        run_id=run_id,
        direction=direction,
        aggregate=AGG_COUNTRY_SHARE,
    )


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


def _network_view() -> Subquery:
    v = V_ENVIRONMENT
    return (
        select(
            v.c.run_id,
            v.c.direction,
            v.c.domain,
            func.count(func.distinct(v.c.university_id)).label("universities"),
            func.sum(v.c.links).label("links"),
            func.sum(v.c.pages).label("pages"),
            func.min(v.c.language).label("language"),
            func.min(v.c.category).label("category"),
        )
        .group_by(v.c.run_id, v.c.direction, v.c.domain)
        .subquery("v_network_domain")
    )


def network_domains(
    engine: Engine,
    *,
    direction: str,
    run_id: int | None = None,
    min_universities: int = 1,
    categories: Sequence[str] | None = None,
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
    limit : int, optional
        At most this many domains (the Network page asks for one more than it draws, to
        know whether it left some out).

    Returns
    -------
    list of NetworkDomainRow
    """
    _check_direction(direction)
    run, fresh = resolve_run_fresh(engine, run_id)
    if run is None:
        return []
    v = aggregates.NETWORK_DOMAIN_SOURCE if fresh else _network_view()
    c = v.c
    weight = c.links if direction == "outgoing" else c.pages
    stmt = select(
        c.run_id,
        c.direction,
        c.domain,
        c.universities,
        c.links,
        c.pages,
        weight,
        c.language,
        c.category,
    ).where(c.run_id == run, c.direction == direction, c.universities >= min_universities)
    if categories is not None:
        stmt = stmt.where(func.coalesce(c.category, UNCATEGORISED).in_(list(categories)))
    stmt = stmt.order_by(c.universities.desc(), weight.desc(), c.domain)
    if limit is not None:
        stmt = stmt.limit(limit)
    with engine.connect() as conn:
        return [
            NetworkDomainRow(
                int(r), d, dom, int(n), int(li), int(pg), int(w), lang or "unknown", cat
            )
            for r, d, dom, n, li, pg, w, lang, cat in conn.execute(stmt)
        ]


@dataclass(frozen=True)
class EnvironmentSummaryRow:
    """The size of a run's environment in one direction: universities, distinct
    domains, rows (university x domain x source: the graph's edges), the most
    universities one domain is linked with, and the categories present
    (``"uncategorised"``: no category stored)."""

    run_id: int
    direction: str
    universities: int
    domains: int
    edges: int
    max_universities: int
    categories: tuple[str, ...]


def environment_summary(
    engine: Engine, *, run_id: int | None = None, direction: str | None = None
) -> list[EnvironmentSummaryRow]:
    """One :class:`EnvironmentSummaryRow` per direction (outgoing first) with data in
    the run (the latest with data when ``run_id`` is ``None``)."""
    _check_direction(direction)
    run, fresh = resolve_run_fresh(engine, run_id)
    if run is None:
        return []
    wanted = [d for d in DIRECTIONS if direction in (None, d)]
    out = []
    with engine.connect() as conn:
        for d in wanted:
            row = _summary(conn, run, d, fresh)
            if row is not None:
                out.append(row)
    return out


def _summary(
    conn: Connection, run: int, direction: str, fresh: bool
) -> EnvironmentSummaryRow | None:
    execute = conn.execute
    if fresh:
        dc = AggregateDomainCount.__table__
        where = (dc.c.run_id == run, dc.c.direction == direction)
        unis, edges = execute(
            select(
                func.count(func.distinct(dc.c.university_id)),
                func.sum(case((dc.c.source == aggregates.ALL_SOURCES, 0), else_=dc.c.domains)),
            ).where(*where)
        ).one()
        cats = execute(select(dc.c.category).where(*where).distinct()).scalars().all()
        column = "outgoing_domains" if direction == "outgoing" else "citing_domains"
        domains = execute(
            select(getattr(AggregateState, column)).where(AggregateState.run_id == run)
        ).scalar()
        nd = aggregates.NETWORK_DOMAIN_SOURCE.c
        top = execute(
            select(func.max(nd.universities)).where(nd.run_id == run, nd.direction == direction)
        ).scalar()
    else:
        v = V_ENVIRONMENT
        where = (v.c.run_id == run, v.c.direction == direction)
        unis, domains, edges = execute(
            select(
                func.count(func.distinct(v.c.university_id)),
                func.count(func.distinct(v.c.domain)),
                func.count(),
            ).where(*where)
        ).one()
        category = func.coalesce(v.c.category, UNCATEGORISED)
        cats = execute(select(category).where(*where).distinct()).scalars().all()
        per_domain = (
            select(func.count(func.distinct(v.c.university_id)).label("n"))
            .where(*where)
            .group_by(v.c.domain)
            .subquery()
        )
        top = execute(select(func.max(per_domain.c.n))).scalar()
    if not edges:
        return None
    return EnvironmentSummaryRow(
        run,
        direction,
        int(unis),
        int(domains or 0),
        int(edges),
        int(top or 0),
        tuple(sorted(cats)),
    )
