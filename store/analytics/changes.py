"""Change between two crawl runs: the domains that appeared in or disappeared from
each university's environment per direction, and a summary of kept, appeared and
disappeared domains.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import Engine, select

from core.choices import check_direction
from core.exceptions import ParameterError
from store.aggregates import ENVIRONMENT_SOURCE
from store.analytics.runs import run_ids


@dataclass(frozen=True)
class ChangeRow:
    """A domain that appeared in or disappeared from a university's environment."""

    university_id: int
    university: str
    direction: str
    domain: str
    change: str  # appeared | disappeared
    run_before: int
    run_after: int
    links_before: int
    links_after: int
    category: str | None


@dataclass(frozen=True)
class ChangeSummaryRow:
    """How a university's environment in one direction changed between two runs.

    ``comparable`` is false when one of the runs has no data for this university and
    direction (e.g. a citing-only crawl): its domains are then not listed as changes.
    """

    university_id: int
    university: str
    direction: str
    run_before: int
    run_after: int
    before: int
    after: int
    kept: int
    appeared: int
    disappeared: int
    comparable: bool


def _two_runs(engine: Engine, before: int | None, after: int | None) -> tuple[int, int] | None:
    ids = run_ids(engine)
    if after is None:
        after = ids[-1] if ids else None
    elif after not in ids:
        raise ParameterError(f"crawl run {after} has no environment data; runs with data: {ids}")
    if after is None:
        return None
    if before is None:
        earlier = [i for i in ids if i < after]
        if not earlier:
            return None
        before = earlier[-1]
    elif before not in ids:
        raise ParameterError(f"crawl run {before} has no environment data; runs with data: {ids}")
    if before == after:
        raise ParameterError(f"compare two different runs (both are {before})")
    return before, after


def _changes(
    engine: Engine,
    before: int | None,
    after: int | None,
    university_id: int | None,
    direction: str | None,
) -> tuple[list[ChangeRow], list[ChangeSummaryRow]]:
    check_direction(direction)
    pair = _two_runs(engine, before, after)
    if pair is None:
        return [], []
    b, a = pair
    v = ENVIRONMENT_SOURCE
    stmt = select(
        v.c.run_id,
        v.c.university_id,
        v.c.university,
        v.c.direction,
        v.c.domain,
        v.c.links,
        v.c.category,
    ).where(v.c.run_id.in_([b, a]))
    if university_id is not None:
        stmt = stmt.where(v.c.university_id == university_id)
    if direction is not None:
        stmt = stmt.where(v.c.direction == direction)
    data: dict[tuple[int, str], dict[int, dict[str, tuple[int, str | None]]]] = defaultdict(
        lambda: {b: {}, a: {}}
    )
    names: dict[int, str] = {}
    with engine.connect() as conn:
        for run, uid, uni, dirn, dom, links, cat in conn.execute(stmt):
            seen = data[(int(uid), dirn)][int(run)]  # a domain has one row per source
            seen[dom] = (seen.get(dom, (0, cat))[0] + int(links), cat)
            names[int(uid)] = uni
    changes: list[ChangeRow] = []
    summary: list[ChangeSummaryRow] = []
    for (uid, dirn), runs in sorted(data.items(), key=lambda kv: (names[kv[0][0]], kv[0][1])):
        old, new = runs[b], runs[a]
        comparable = bool(old) and bool(new)
        appeared = sorted(set(new) - set(old)) if comparable else []
        gone = sorted(set(old) - set(new)) if comparable else []
        for dom in appeared:
            changes.append(
                ChangeRow(uid, names[uid], dirn, dom, "appeared", b, a, 0, new[dom][0], new[dom][1])
            )
        for dom in gone:
            changes.append(
                ChangeRow(
                    uid, names[uid], dirn, dom, "disappeared", b, a, old[dom][0], 0, old[dom][1]
                )
            )
        summary.append(
            ChangeSummaryRow(
                uid,
                names[uid],
                dirn,
                b,
                a,
                len(old),
                len(new),
                len(set(old) & set(new)),
                len(appeared),
                len(gone),
                comparable,
            )
        )
    return changes, summary


def environment_changes(
    engine: Engine,
    *,
    before: int | None = None,
    after: int | None = None,
    university_id: int | None = None,
    direction: str | None = None,
) -> list[ChangeRow]:
    """Domains that appeared and disappeared per university and direction between runs.

    Parameters
    ----------
    engine : Engine
    before, after : int, optional
        The runs compared; by default the latest run with data and the one before it.
    university_id : int, optional
    direction : {"outgoing", "citing"}, optional

    Returns
    -------
    list of ChangeRow
        By university, direction, change (appeared first), domain. Empty when fewer
        than two runs have data. A university and direction with no data in one of the
        runs is not compared (see :func:`change_summary`).

    Raises
    ------
    ParameterError
        A run has no data, or both runs are the same.
    """
    return _changes(engine, before, after, university_id, direction)[0]


def change_summary(
    engine: Engine,
    *,
    before: int | None = None,
    after: int | None = None,
    university_id: int | None = None,
    direction: str | None = None,
) -> list[ChangeSummaryRow]:
    """Counts of kept, appeared and disappeared domains per university and direction."""
    return _changes(engine, before, after, university_id, direction)[1]
