"""Which crawl run a query reads: the runs with environment data, the latest one, a
requested run checked against them; and the reading of one run of a per-run view
(environment, category shares) into row dataclasses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Engine, select

from core.choices import GRAPH_RUN_KIND, check_direction
from core.exceptions import ParameterError
from store import aggregates
from store.models import Citation, CrawlRun, Environment, Link, Page, UniversityDomain

if TYPE_CHECKING:
    from sqlalchemy.sql.expression import FromClause


# --- runs -------------------------------------------------------------------------------


def run_ids(engine: Engine) -> list[int]:
    """The crawl runs that have environment data (links, verified citations or a web
    graph's citing domains), ascending.

    The same runs as ``SELECT DISTINCT run_id FROM v_environment``: those of the fresh
    aggregates (:mod:`store.aggregates`), else read from the tables (the view also joins
    languages and categories, which costs seconds on large crawls).
    """
    fresh = aggregates.fresh_run_ids(engine)
    if fresh is not None:
        return fresh
    return _run_ids_of_tables(engine)


def _run_ids_of_tables(engine: Engine) -> list[int]:
    outgoing = (
        select(Link.run_id)
        .join(Page, Page.id == Link.source_page_id)
        .outerjoin(
            UniversityDomain,
            (UniversityDomain.domain == Link.target_domain)
            & (UniversityDomain.university_id == Page.university_id),
        )
        .where(
            Link.external.is_(True),
            Link.run_id.is_not(None),
            Page.university_id.is_not(None),
            UniversityDomain.id.is_(None),
        )
        .distinct()
    )
    citing = (
        select(Citation.run_id)
        .where(Citation.status == "verified", Citation.run_id.is_not(None))
        .distinct()
    )
    graph = (
        select(Environment.run_id)
        .join(CrawlRun, CrawlRun.id == Environment.run_id)
        .where(CrawlRun.kind == GRAPH_RUN_KIND)
        .distinct()
    )
    with engine.connect() as conn:
        ids = {int(r) for (r,) in conn.execute(outgoing.union(citing, graph)) if r is not None}
    return sorted(ids)


def latest_run_id(engine: Engine) -> int | None:
    """The newest crawl run that has environment data, ``None`` when there is none."""
    ids = run_ids(engine)
    return ids[-1] if ids else None


def resolve_run(engine: Engine, run_id: int | None) -> int | None:
    """``run_id`` checked against the runs with data, or the latest one when ``None``.

    Raises
    ------
    ParameterError
        ``run_id`` has no environment data; the message lists the runs that have.
    """
    return resolve_run_fresh(engine, run_id)[0]


def resolve_run_fresh(engine: Engine, run_id: int | None) -> tuple[int | None, bool]:
    """:func:`resolve_run` and whether the run's aggregates are fresh (one check).

    Returns
    -------
    run : int or None
    fresh : bool
        ``True``: read the aggregates of :mod:`store.aggregates`; ``False``: the views.

    Raises
    ------
    ParameterError
        As :func:`resolve_run`.
    """
    fresh = aggregates.fresh_run_ids(engine)
    ids = fresh if fresh is not None else _run_ids_of_tables(engine)
    run = _checked_run(ids, run_id)
    return run, fresh is not None and run in fresh


def _checked_run(ids: list[int], run_id: int | None) -> int | None:
    if run_id is None:
        return ids[-1] if ids else None
    if run_id not in ids:
        have = ", ".join(map(str, ids)) or "none (crawl first: `webometrics crawl`)"
        raise ParameterError(f"crawl run {run_id} has no environment data; runs with data: {have}")
    return run_id


_Row = TypeVar("_Row")


def typed_row(row_type: type[_Row], record: Any) -> _Row:
    """``row_type`` (a dataclass) of a view row, each field the column of its name:
    ``int`` and ``float`` fields converted (PostgreSQL may give ``Decimal``), ``None``
    kept."""
    values = []
    for f in fields(row_type):  # type: ignore[arg-type]
        v = record[f.name]
        kind = str(f.type)
        if v is not None and kind.startswith("int"):
            v = int(v)
        elif v is not None and kind.startswith("float"):
            v = float(v)
        values.append(v)
    return row_type(*values)


def view_rows(
    engine: Engine,
    view: FromClause,
    row_type: type[_Row],
    order: tuple[str, str, str],
    *,
    run_id: int | None,
    direction: str | None,
    university_id: int | None = None,
    domains: Sequence[str] | None = None,
    aggregate: FromClause | None = None,
) -> list[_Row]:
    """The rows of a per-run view for one run, as ``row_type`` dataclasses.

    The run is ``run_id`` (default the latest); ``direction``, ``university_id`` and
    ``domains``, when given, keep only those rows. Ordered by ``order[0]``, direction
    (outgoing first), ``order[1]`` largest first, then ``order[2]``. No run: ``[]``. Every field of
    ``row_type`` is the view's column of that name, made ``int`` or ``float`` where the
    field is (the database may give ``Decimal``). ``aggregate``: the same columns from
    the aggregates (:mod:`store.aggregates`), read instead while they are fresh.
    """
    check_direction(direction)
    run, fresh = resolve_run_fresh(engine, run_id)
    if run is None:
        return []
    v = aggregate if fresh and aggregate is not None else view
    stmt = select(v).where(v.c.run_id == run)
    if direction is not None:
        stmt = stmt.where(v.c.direction == direction)
    if university_id is not None:
        stmt = stmt.where(v.c.university_id == university_id)
    if domains is not None:
        stmt = stmt.where(v.c.domain.in_(list(domains)))
    first, largest, then = (v.c[name] for name in order)
    stmt = stmt.order_by(first, v.c.direction.desc(), largest.desc(), then)
    with engine.connect() as conn:
        return [typed_row(row_type, r) for r in conn.execute(stmt).mappings()]
