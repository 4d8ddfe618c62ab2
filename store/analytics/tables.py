"""The paper's Table 2 (site pages, external links and domains, citing pages and
domains per university) and Table 3 (domains per direction and language), and the Web
Impact Factor variants computed from Table 2 (definitions in :mod:`store.analytics`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, func, select

from core.choices import DIRECTIONS, UNKNOWN
from store.aggregates import ALL_SOURCES, TABLE2_SOURCE
from store.analytics.runs import resolve_run
from store.models import (
    AggregateDomainCount,
    AggregateState,
    University,
    UniversityDomain,
)


def _ratio(num: float | None, den: float | None) -> float | None:
    if num is None or not den:
        return None
    return round(float(num) / float(den), 6)


def _university_facts(engine: Engine) -> dict[int, tuple[str, str, int | None, tuple[str, ...]]]:
    with engine.connect() as conn:
        doms: dict[int, list[str]] = defaultdict(list)
        for uid, dom in conn.execute(
            select(UniversityDomain.university_id, UniversityDomain.domain).order_by(
                UniversityDomain.domain
            )
        ):
            doms[uid].append(dom)
        return {
            uid: (name, country, rank, tuple(doms.get(uid, ())))
            for uid, name, country, rank in conn.execute(
                select(University.id, University.name, University.country, University.rank)
            )
        }


def _uni_order(facts: dict[int, tuple[str, str, int | None, tuple[str, ...]]], uid: int) -> Any:
    name, _country, rank, _doms = facts[uid]
    return (rank is None, rank or 0, name)


# --- Table 2, Table 3 --------------------------------------------------------------------


@dataclass(frozen=True)
class Table2Row:
    """The paper's Table 2 for one university and run."""

    run_id: int | None
    university_id: int
    university: str
    country: str
    rank: int | None
    domains: tuple[str, ...]
    site_pages: int
    external_links: int
    external_domains: int
    citing_pages: int
    citing_domains: int


def table2(engine: Engine, *, run_id: int | None = None) -> list[Table2Row]:
    """Table 2 of the paper for every stored university (zeros without data), by rank.

    Parameters
    ----------
    engine : Engine
    run_id : int, optional
        The crawl run; the latest with data when ``None``.

    Returns
    -------
    list of Table2Row
    """
    run = resolve_run(engine, run_id)
    facts = _university_facts(engine)
    got: dict[int, Any] = {}
    if run is not None:
        v = TABLE2_SOURCE
        with engine.connect() as conn:
            for found in conn.execute(select(v).where(v.c.run_id == run)).mappings():
                got[int(found["university_id"])] = found
    rows = []
    for uid in sorted(facts, key=lambda u: _uni_order(facts, u)):
        name, country, rank, doms = facts[uid]
        r = got.get(uid)
        rows.append(
            Table2Row(
                run,
                uid,
                name,
                country,
                rank,
                doms,
                int(r["site_pages"]) if r else 0,
                int(r["external_links"]) if r else 0,
                int(r["external_domains"]) if r else 0,
                int(r["citing_pages"]) if r else 0,
                int(r["citing_domains"]) if r else 0,
            )
        )
    return rows


@dataclass(frozen=True)
class Table3Row:
    """The paper's Table 3: domains of one university, direction and language."""

    run_id: int | None
    university_id: int
    university: str
    country: str
    rank: int | None
    direction: str
    language: str
    domains: int


def table3(
    engine: Engine,
    *,
    run_id: int | None = None,
    languages: Sequence[str] | None = ("ru", "en"),
) -> list[Table3Row]:
    """External and citing domains per language for every university (the paper's Table 3).

    Parameters
    ----------
    engine : Engine
    run_id : int, optional
        The crawl run; the latest with data when ``None``.
    languages : sequence of str, optional
        The languages shown (the paper: Russian and English); every other language
        counts under ``"other"``, and domains without a fetched page in a known language
        under ``"unknown"`` (never under other). ``None``: every language as stored.

    Returns
    -------
    list of Table3Row
        One row per university x direction x language (zeros included), universities
        by rank, directions outgoing then citing, languages in the given order.
    """
    run = resolve_run(engine, run_id)
    facts = _university_facts(engine)
    counts: dict[tuple[int, str, str], int] = defaultdict(int)
    seen_langs: set[str] = set()
    if run is not None:
        dc = AggregateDomainCount.__table__
        stmt = (
            select(dc.c.university_id, dc.c.direction, dc.c.language, func.sum(dc.c.domains))
            .where(dc.c.run_id == run, dc.c.source == ALL_SOURCES)
            .group_by(dc.c.university_id, dc.c.direction, dc.c.language)
        )
        with engine.connect() as conn:
            for uid, direction, lang, n in conn.execute(stmt):
                lang = lang or UNKNOWN
                if languages is None or lang == UNKNOWN:
                    key = lang
                else:
                    key = lang if lang in languages else "other"
                seen_langs.add(key)
                counts[(int(uid), direction, key)] += int(n)
    if languages is None:
        langs = sorted(seen_langs)
    else:
        langs = [*languages, *(k for k in ("other", UNKNOWN) if k in seen_langs)]
    rows = []
    for uid in sorted(facts, key=lambda u: _uni_order(facts, u)):
        name, country, rank, _ = facts[uid]
        for direction in DIRECTIONS:
            for lang in langs:
                rows.append(
                    Table3Row(
                        run,
                        uid,
                        name,
                        country,
                        rank,
                        direction,
                        lang,
                        counts[(uid, direction, lang)],
                    )
                )
    return rows


@dataclass(frozen=True)
class WIFRow:
    """Web Impact Factor variants of one university and run (see :mod:`store.analytics`)."""

    run_id: int | None
    university_id: int
    university: str
    country: str
    rank: int | None
    site_pages: int
    external_links: int
    external_domains: int
    citing_pages: int
    citing_domains: int
    wif_pages: float | None
    wif_domains: float | None
    outlink_density: float | None
    in_out_ratio: float | None
    visibility_share: float | None


def web_impact_factors(engine: Engine, *, run_id: int | None = None) -> list[WIFRow]:
    """Web Impact Factor variants for every university (by rank)."""
    rows = table2(engine, run_id=run_id)
    run = rows[0].run_id if rows else None
    all_citing = 0
    if run is not None:
        stmt = select(AggregateState.citing_domains).where(AggregateState.run_id == run)
        with engine.connect() as conn:
            all_citing = int(conn.execute(stmt).scalar() or 0)
    return [
        WIFRow(
            r.run_id,
            r.university_id,
            r.university,
            r.country,
            r.rank,
            r.site_pages,
            r.external_links,
            r.external_domains,
            r.citing_pages,
            r.citing_domains,
            _ratio(r.citing_pages, r.site_pages),
            _ratio(r.citing_domains, r.site_pages),
            _ratio(r.external_links, r.site_pages),
            _ratio(r.citing_domains, r.external_domains),
            _ratio(r.citing_domains, all_citing),
        )
        for r in rows
    ]
