"""The analyse stage's stored results that readers show as they are: the taxonomy's
category labels, co-link overlaps, shared domains and the GEXF graph of each run.

The analyse stage computes them (:mod:`analyse.networks`, :mod:`analyse.categories`) and
replaces them here; the dashboard and SQL read them. One run and direction is replaced
in one transaction, so a reader sees the old rows or the new ones, never half.

Examples
--------
>>> from store import make_engine, schema
>>> engine = make_engine("sqlite://")
>>> schema.upgrade(engine)
>>> replace_category_labels(engine, {"en": {"news": "News", "blogs": "Blogs"}})
2
>>> category_labels(engine)
{'news': 'News', 'blogs': 'Blogs'}
>>> category_labels(engine, "ru")
{}
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping

from sqlalchemy import Engine, delete, select
from sqlalchemy.orm import aliased

from analyse.networks import Overlap as OverlapRow
from analyse.networks import SharedDomainSummary, colink_overlap, domain_owners, owner
from core.choices import check_direction
from core.exceptions import ParameterError
from store.models import (
    CategoryLabel,
    ColinkOverlap,
    NetworkFile,
    SharedDomain,
    University,
    utcnow,
)
from store.session import session_scope

__all__ = [
    "OverlapRow",
    "SharedDomainSummary",
    "category_colors",
    "category_labels",
    "colink_overlap",
    "colink_overlaps",
    "domain_owners",
    "network_file",
    "network_runs",
    "owner",
    "replace_category_labels",
    "replace_network",
    "shared_domains",
]


def replace_category_labels(
    engine: Engine,
    labels: Mapping[str, Mapping[str, str]],
    colors: Mapping[str, str] | None = None,
) -> int:
    """Store ``{language: {category: label}}`` (categories in the taxonomy's order) and
    each category's colour ``{category: "#rrggbb"}`` in place of every stored label;
    returns how many rows were written."""
    colors = colors or {}
    rows = [
        CategoryLabel(category=key, language=lang, label=label, position=i, color=colors.get(key))
        for lang, by_key in labels.items()
        for i, (key, label) in enumerate(by_key.items())
    ]
    with session_scope(engine) as s:
        s.execute(delete(CategoryLabel))
        s.add_all(rows)
    return len(rows)


def category_labels(engine: Engine, language: str = "en") -> dict[str, str]:
    """``{category: label}`` in the taxonomy's order; empty before the first analyse."""
    with session_scope(engine) as s:
        return dict(
            s.execute(
                select(CategoryLabel.category, CategoryLabel.label)
                .where(CategoryLabel.language == language)
                .order_by(CategoryLabel.position, CategoryLabel.category)
            ).all()
        )


def category_colors(engine: Engine) -> dict[str, str]:
    """``{category: "#rrggbb"}`` in the taxonomy's order (``unknown`` grey included): one
    fixed colour per category for every chart; empty before the first analyse."""
    with session_scope(engine) as s:
        rows = s.execute(
            select(CategoryLabel.category, CategoryLabel.color)
            .where(CategoryLabel.color.is_not(None))
            .order_by(CategoryLabel.position, CategoryLabel.category)
        ).all()
    return {key: color for key, color in rows if color}


def replace_network(
    engine: Engine,
    run_id: int,
    direction: str,
    *,
    overlaps: Iterable[OverlapRow],
    shared: Iterable[SharedDomainSummary],
    files: Mapping[str, bytes],
) -> None:
    """Replace the overlaps, shared domains and graph files (``{format: bytes}``) of one
    run and direction, in one transaction.

    Raises
    ------
    ParameterError
        An unknown direction, or an overlap naming a university that is not stored.
    """
    check_direction(direction)
    overlaps, shared = list(overlaps), list(shared)
    with session_scope(engine) as s:
        ids = dict(s.execute(select(University.name, University.id)).all())
        for table in (ColinkOverlap, SharedDomain, NetworkFile):
            s.execute(delete(table).where(table.run_id == run_id, table.direction == direction))
        for o in overlaps:
            if o.a not in ids or o.b not in ids:
                raise ParameterError(f"overlap of {o.a!r} and {o.b!r}: not a stored university")
            s.add(
                ColinkOverlap(
                    run_id=run_id,
                    direction=direction,
                    university_a_id=ids[o.a],
                    university_b_id=ids[o.b],
                    shared=o.shared,
                    jaccard=o.jaccard,
                    only_a=o.only_a,
                    only_b=o.only_b,
                )
            )
        s.add_all(
            SharedDomain(
                run_id=run_id,
                direction=direction,
                domain=r.domain,
                n_universities=r.n_universities,
                universities=list(r.universities),
                weight=r.weight,
            )
            for r in shared
        )
        built = utcnow()
        s.add_all(
            NetworkFile(
                run_id=run_id,
                direction=direction,
                format=fmt,
                content=zlib.compress(blob, 6),
                built_at=built,
            )
            for fmt, blob in files.items()
        )


def network_runs(engine: Engine) -> list[tuple[int, str]]:
    """The (run, direction) pairs whose network results are stored."""
    with session_scope(engine) as s:
        return [
            (r, d)
            for r, d in s.execute(
                select(NetworkFile.run_id, NetworkFile.direction)
                .distinct()
                .order_by(NetworkFile.run_id, NetworkFile.direction)
            )
        ]


def colink_overlaps(engine: Engine, run_id: int, direction: str) -> list[OverlapRow]:
    """Every pair of universities of a run and direction: most shared domains first, then
    by Jaccard, then by names (empty when the analyse stage has not seen the run)."""
    check_direction(direction)
    ua, ub = aliased(University), aliased(University)
    with session_scope(engine) as s:
        rows = [
            OverlapRow(a, b, shared, jaccard, only_a, only_b)
            for a, b, shared, jaccard, only_a, only_b in s.execute(
                select(
                    ua.name,
                    ub.name,
                    ColinkOverlap.shared,
                    ColinkOverlap.jaccard,
                    ColinkOverlap.only_a,
                    ColinkOverlap.only_b,
                )
                .join(ua, ua.id == ColinkOverlap.university_a_id)
                .join(ub, ub.id == ColinkOverlap.university_b_id)
                .where(ColinkOverlap.run_id == run_id, ColinkOverlap.direction == direction)
            )
        ]
    rows.sort(key=lambda o: (-o.shared, -o.jaccard, o.a, o.b))
    return rows


def shared_domains(
    engine: Engine, run_id: int, direction: str, *, min_universities: int = 2
) -> list[SharedDomainSummary]:
    """The domains linked with at least ``min_universities`` universities (2 or more), most
    shared first, then by weight, then by name."""
    check_direction(direction)
    if min_universities < 2:
        raise ParameterError(f"min_universities must be 2 or more, not {min_universities}")
    with session_scope(engine) as s:
        rows = [
            SharedDomainSummary(r.domain, r.n_universities, tuple(r.universities), r.weight)
            for r in s.scalars(
                select(SharedDomain).where(
                    SharedDomain.run_id == run_id,
                    SharedDomain.direction == direction,
                    SharedDomain.n_universities >= min_universities,
                )
            )
        ]
    rows.sort(key=lambda r: (-r.n_universities, -r.weight, r.domain))
    return rows


def network_file(engine: Engine, run_id: int, direction: str, fmt: str = "gexf") -> bytes | None:
    """The stored graph file of a run and direction, or ``None`` before the analyse stage
    has seen the run."""
    check_direction(direction)
    with session_scope(engine) as s:
        blob = s.scalar(
            select(NetworkFile.content).where(
                NetworkFile.run_id == run_id,
                NetworkFile.direction == direction,
                NetworkFile.format == fmt,
            )
        )
    return None if blob is None else zlib.decompress(blob)
