"""Editions of a ranking: imported from a table, kept side by side, one chosen per reading.

``webometrics universities import-ranks FILE --edition NAME`` reads a ranking table
(:mod:`core.rank_table`), matches its rows to the stored universities
(:mod:`analyse.rank_match`) and stores the matched rows as the edition ``NAME``
(:class:`store.models.RankEdition`, :class:`store.models.UniversityRank`); importing an
edition of the same name again replaces it. The ranks typed in the universities file are
the edition :data:`store.models.FILE_EDITION`, kept by :func:`record_file_ranks`.

The **newest** edition (by ``published`` date, else by import time; the universities
file's edition only while no other is stored) is the default: its
ranks are copied to ``university.rank`` and ``impact_rank`` (:func:`sync_current`), which
the SQL views and every reader without an edition read. A reader that picks an edition
(the Rank page, ``webometrics report --rank-edition``) reads :func:`edition_ranks`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import Engine, delete, func, select, update
from sqlalchemy.orm import Session, selectinload

from analyse.rank_match import MatchResult, StoredUniversity, match_rows
from core.exceptions import ParameterError
from store.models import FILE_EDITION, RankEdition, University, UniversityRank, utcnow
from store.session import session_scope

if TYPE_CHECKING:
    from analyse.registries import Registry
    from core.rank_table import RankTable
    from core.universities import UniversitySpec

__all__ = [
    "FILE_EDITION",
    "EditionImport",
    "EditionInfo",
    "apply_edition",
    "delete_edition",
    "edition_ranks",
    "file_edition_ranks",
    "import_edition",
    "list_editions",
    "newest_edition",
    "record_file_ranks",
    "stored_universities",
    "sync_current",
]


@dataclass(frozen=True)
class EditionInfo:
    """A stored edition: its name, source file, publication date, import time, the
    universities it ranks (``ranked``; ``impact``: with an impact rank), the table rows
    it left unmatched, and whether it is the newest (the default)."""

    name: str
    source: str | None
    published: dt.date | None
    imported_at: dt.datetime
    ranked: int
    impact: int
    unmatched_rows: int
    newest: bool


@dataclass(frozen=True)
class EditionImport:
    """What :func:`import_edition` did (or would do, ``dry_run``): the match, whether
    it replaced an edition of the same name (with how many ranks it held), and the
    edition that is now the newest."""

    edition: str
    match: MatchResult
    replaced: int | None
    dry_run: bool
    newest: str | None


def _order_key(e: RankEdition) -> tuple[bool, dt.date, dt.datetime, int]:
    """Oldest first: the universities file's edition before every imported one, then by
    publication date (else the import's date), import time and id."""
    at = e.imported_at if e.imported_at.tzinfo else e.imported_at.replace(tzinfo=dt.UTC)
    return (e.name != FILE_EDITION, e.published or at.date(), at, e.id)


def _newest(session: Session) -> RankEdition | None:
    editions = session.scalars(select(RankEdition)).all()
    return max(editions, key=_order_key) if editions else None


def sync_current(session: Session) -> str | None:
    """Copy the newest edition's ranks to ``university.rank`` and ``impact_rank`` (a
    university it does not rank gets none); without any edition nothing changes.

    Returns
    -------
    str or None
        The newest edition's name.
    """
    newest = _newest(session)
    if newest is None:
        return None
    session.flush()
    ranks = {
        r.university_id: (r.rank, r.impact_rank)
        for r in session.scalars(
            select(UniversityRank).where(UniversityRank.edition_id == newest.id)
        )
    }
    for uni in session.scalars(select(University)):
        uni.rank, uni.impact_rank = ranks.get(uni.id, (None, None))
    return newest.name


def newest_edition(engine: Engine) -> str | None:
    """The default edition's name (None when no edition is stored)."""
    with Session(engine) as s:
        e = _newest(s)
        return e.name if e is not None else None


def list_editions(engine: Engine) -> list[EditionInfo]:
    """Every stored edition, newest first."""
    with Session(engine) as s:
        editions = sorted(s.scalars(select(RankEdition)), key=_order_key, reverse=True)
        counts = {
            eid: (int(n), int(i))
            for eid, n, i in s.execute(
                select(
                    UniversityRank.edition_id,
                    func.count(UniversityRank.rank),
                    func.count(UniversityRank.impact_rank),
                ).group_by(UniversityRank.edition_id)
            )
        }
        return [
            EditionInfo(
                e.name,
                e.source,
                e.published,
                e.imported_at,
                *counts.get(e.id, (0, 0)),
                e.unmatched_rows,
                i == 0,
            )
            for i, e in enumerate(editions)
        ]


def edition_ranks(engine: Engine, edition: str) -> dict[int, tuple[int | None, int | None]]:
    """``{university_id: (rank, impact_rank)}`` of an edition.

    Raises
    ------
    ParameterError
        No edition of that name is stored (the message lists those that are).
    """
    with Session(engine) as s:
        e = s.scalar(select(RankEdition).where(RankEdition.name == edition))
        if e is None:
            names = [x.name for x in sorted(s.scalars(select(RankEdition)), key=_order_key)]
            raise ParameterError(
                f"no rank edition {edition!r} is stored"
                + (f" (stored: {', '.join(names)})" if names else "")
                + "; `webometrics universities ranks` lists them, `webometrics universities "
                "import-ranks FILE --edition NAME` imports one"
            )
        return {
            r.university_id: (r.rank, r.impact_rank)
            for r in s.scalars(select(UniversityRank).where(UniversityRank.edition_id == e.id))
        }


def apply_edition(
    ranks: Mapping[int, tuple[int | None, int | None]], university_id: int
) -> dict[str, int | None]:
    """The ``rank`` and ``impact_rank`` fields of a university under an edition's
    ``ranks`` (both None when the edition does not rank it)."""
    rank, impact = ranks.get(university_id, (None, None))
    return {"rank": rank, "impact_rank": impact}


def stored_universities(session: Session) -> list[StoredUniversity]:
    """The stored universities as the matching sees them."""
    unis = session.scalars(select(University).options(selectinload(University.domains)))
    return [StoredUniversity(u.id, u.name, tuple(d.domain for d in u.domains)) for u in unis]


def import_edition(
    engine: Engine,
    table: RankTable,
    edition: str,
    *,
    registry: Registry | None = None,
    published: dt.date | None = None,
    dry_run: bool = False,
) -> EditionImport:
    """Match a ranking table's rows to the stored universities and store the matched
    rows as ``edition`` (replacing a stored edition of that name), in one transaction;
    then copy the newest edition's ranks to ``university`` (:func:`sync_current`).

    Parameters
    ----------
    engine : Engine
    table : RankTable
    edition : str
        The edition's name (``"2015 July"``); not :data:`FILE_EDITION`.
    registry : Registry, optional
        Names and second domains for the matching (:func:`analyse.rank_match.match_rows`).
    published : date, optional
        The edition's publication date (orders the editions; else the import time).
    dry_run : bool
        Match and report only; nothing is stored.

    Raises
    ------
    ParameterError
        An empty edition name, the name of the universities file's edition, or no
        university is stored.
    """
    name = " ".join(edition.split())
    if not name:
        raise ParameterError("--edition needs a name, e.g. --edition '2015 July'")
    if name == FILE_EDITION:
        raise ParameterError(
            f"the edition name {FILE_EDITION!r} is kept for the ranks of the universities "
            "file (`webometrics universities import`); choose another name"
        )
    if len(name) > 100:
        raise ParameterError(f"--edition {name[:20]!r}...: at most 100 characters")
    with session_scope(engine) as s:
        unis = stored_universities(s)
        if not unis:
            raise ParameterError(
                "no universities are stored: import them first with `webometrics "
                "universities import FILE`, then their ranks"
            )
        match = match_rows(table.rows, unis, registry)
        old = s.scalar(select(RankEdition).where(RankEdition.name == name))
        replaced = len(old.ranks) if old is not None else None
        if dry_run:
            s.rollback()
            return EditionImport(name, match, replaced, True, newest_edition(engine))
        if old is not None:
            s.delete(old)
            s.flush()
        e = RankEdition(
            name=name,
            source=table.path[-500:],
            published=published,
            imported_at=utcnow(),
            unmatched_rows=len(match.unmatched) + len(match.ambiguous),
        )
        s.add(e)
        s.flush()
        s.add_all(
            UniversityRank(
                edition_id=e.id,
                university_id=m.university_id,
                rank=m.row.rank,
                impact_rank=m.row.impact_rank,
                name_given=m.row.name[:300] or None,
                domain_given=m.row.given[:500] or None,
                line=m.row.line,
                matched_by=m.how,
            )
            for m in match.matched
        )
        newest = sync_current(s)
    return EditionImport(name, match, replaced, False, newest)


def delete_edition(engine: Engine, edition: str) -> tuple[int, str | None]:
    """Delete an edition and its ranks; returns how many ranks it held and the newest
    edition after it (whose ranks ``university`` then holds).

    Raises
    ------
    ParameterError
        No edition of that name is stored.
    """
    edition_ranks(engine, edition)  # the error naming the stored editions
    with session_scope(engine) as s:
        e = s.scalars(select(RankEdition).where(RankEdition.name == edition)).one()
        n = len(e.ranks)
        s.delete(e)
        s.flush()
        newest = sync_current(s)
        if newest is None:  # no edition left: no rank
            s.execute(update(University).values(rank=None, impact_rank=None))
    return n, newest


def record_file_ranks(session: Session, specs: Iterable[UniversitySpec]) -> bool:
    """Keep the universities file's ranks as the edition :data:`FILE_EDITION`: each
    university of ``specs`` gets the file's ranks there (or none when the file gives
    none); the universities of other files keep theirs. The edition's import time
    changes only when a rank does. Then the newest edition is copied to ``university``
    (:func:`sync_current`).

    Returns
    -------
    bool
        Whether a rank of the edition changed.
    """
    specs = [s for s in specs]
    ids = dict(
        session.execute(
            select(University.name, University.id).where(
                University.name.in_([s.name for s in specs])
            )
        ).all()
    )
    e = session.scalar(select(RankEdition).where(RankEdition.name == FILE_EDITION))
    have: dict[int, UniversityRank] = {}
    if e is not None:
        have = {
            r.university_id: r
            for r in session.scalars(
                select(UniversityRank).where(UniversityRank.edition_id == e.id)
            )
        }
    changed = False
    for spec in specs:
        uid = ids.get(spec.name)
        if uid is None:
            continue
        row = have.get(uid)
        if spec.rank is None and spec.impact_rank is None:
            if row is not None:
                session.delete(row)
                changed = True
            continue
        if row is not None and (row.rank, row.impact_rank) == (spec.rank, spec.impact_rank):
            continue
        if e is None:
            e = RankEdition(name=FILE_EDITION, unmatched_rows=0, imported_at=utcnow())
            session.add(e)
            session.flush()
        if row is None:
            row = UniversityRank(
                edition_id=e.id, university_id=uid, name_given=spec.name, matched_by="file"
            )
            session.add(row)
        row.rank, row.impact_rank = spec.rank, spec.impact_rank
        changed = True
    if changed and e is not None:
        e.imported_at = utcnow()
        session.flush()
        left = session.scalar(
            select(func.count())
            .select_from(UniversityRank)
            .where(UniversityRank.edition_id == e.id)
        )
        if not left:
            session.execute(delete(RankEdition).where(RankEdition.id == e.id))
        session.flush()
    sync_current(session)
    return changed


def file_edition_ranks(session: Session) -> dict[int, tuple[int | None, int | None]]:
    """``{university_id: (rank, impact_rank)}`` of the universities file's edition."""
    return {
        uid: (r, i)
        for uid, r, i in session.execute(
            select(UniversityRank.university_id, UniversityRank.rank, UniversityRank.impact_rank)
            .join(RankEdition)
            .where(RankEdition.name == FILE_EDITION)
        )
    }
