"""A university's environment in a run (``v_environment``: one row per external
domain and direction) and its category shares, per university (Figures 2-3) and per
country (``v_category_share``, ``v_country_category_share``; analyst overrides applied).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from store.analytics.runs import _view_rows
from store.analytics.views import V_COUNTRY_SHARE, V_ENVIRONMENT, V_SHARE


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
) -> list[EnvironmentRow]:
    """The environment rows of a run (by university, direction, most links first, domain)."""
    return _view_rows(
        engine,
        V_ENVIRONMENT,
        EnvironmentRow,
        ("university", "links", "domain"),
        run_id=run_id,
        direction=direction,
        university_id=university_id,
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
    )
