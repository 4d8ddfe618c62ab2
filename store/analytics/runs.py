"""Which crawl run a query reads: the runs with computed figures (the aggregates of
:mod:`store.aggregates`), the latest one, a requested run checked against them; and the
reading of one run of a per-run figure (environment, category shares) into row
dataclasses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Engine, select

from core.choices import check_direction
from core.exceptions import ParameterError
from store import aggregates
from store.aggregates import data_run_ids

if TYPE_CHECKING:
    from sqlalchemy.sql.expression import FromClause


# --- runs -------------------------------------------------------------------------------


def run_ids(engine: Engine) -> list[int]:
    """The crawl runs whose figures are computed (:func:`store.aggregates.refresh`),
    ascending: every run with environment data (links, verified citations or a web
    graph's citing domains) as of the last refresh. :func:`unrefreshed_run_ids` names the
    runs with data stored since."""
    return aggregates.built_run_ids(engine)


def unrefreshed_run_ids(engine: Engine) -> list[int]:
    """The crawl runs with environment data whose figures are not computed yet (a crawl
    still running, rows written since the last refresh), ascending."""
    built = set(aggregates.built_run_ids(engine))
    return [r for r in data_run_ids(engine) if r not in built]


def latest_run_id(engine: Engine) -> int | None:
    """The newest crawl run that has environment data, ``None`` when there is none."""
    ids = run_ids(engine)
    return ids[-1] if ids else None


def resolve_run(engine: Engine, run_id: int | None) -> int | None:
    """``run_id`` checked against the runs with computed figures, or the latest one when
    ``None``.

    Raises
    ------
    ParameterError
        ``run_id`` has no computed figures; the message says whether it has data still to
        compute (then: ``webometrics refresh``) and lists the runs that have figures.
    """
    ids = run_ids(engine)
    if run_id is None:
        return ids[-1] if ids else None
    if run_id not in ids:
        have = ", ".join(map(str, ids)) or "none"
        if run_id in data_run_ids(engine):
            raise ParameterError(
                f"crawl run {run_id}'s figures are not computed yet: run `webometrics "
                f"refresh` (or press Refresh figures on the dashboard); runs with figures: "
                f"{have}"
            )
        if not ids:
            have = "none (crawl first: `webometrics crawl`)"
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
    source: FromClause,
    row_type: type[_Row],
    order: tuple[str, str, str],
    *,
    run_id: int | None,
    direction: str | None,
    university_id: int | None = None,
    domains: Sequence[str] | None = None,
) -> list[_Row]:
    """The rows of a per-run figure for one run, as ``row_type`` dataclasses.

    ``source`` is the aggregates' stand-in of a view (:mod:`store.aggregates`: the same
    columns). The run is ``run_id`` (default the latest); ``direction``,
    ``university_id`` and ``domains``, when given, keep only those rows. Ordered by
    ``order[0]``, direction (outgoing first), ``order[1]`` largest first, then
    ``order[2]``. No run: ``[]``. Every field of ``row_type`` is the column of that name,
    made ``int`` or ``float`` where the field is (the database may give ``Decimal``).
    """
    check_direction(direction)
    run = resolve_run(engine, run_id)
    if run is None:
        return []
    v = source
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
