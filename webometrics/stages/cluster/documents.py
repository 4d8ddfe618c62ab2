"""The documents the cluster stage reads: which ones (a unit, a university's
environment, a direction, without the latest dedup run's duplicates) and their shingles
or term counts, loaded at once or streamed from the database in chunks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Engine, func, select

from core.choices import GRAPH_RUN_KIND
from core.exceptions import NothingToDoError, ParameterError, StageError
from store.models import (
    CrawlRun,
    DedupRun,
    Document,
    DuplicateGroup,
    DuplicateMember,
    Environment,
    University,
)
from store.session import session_scope

if TYPE_CHECKING:
    from cluster.weighting import TermCountMatrix

__all__ = [
    "ID_BATCH",
    "TERMS_BATCH",
    "DatabaseShingles",
    "Selection",
    "check_terms",
    "load",
    "load_term_counts",
    "stream_shingles",
    "stream_terms",
]


@dataclasses.dataclass(frozen=True)
class Selection:
    """Which documents one clustering reads.

    Parameters
    ----------
    unit : {"page", "domain"}
    university : str, optional
        Only the documents of this university's environment (its name); ``None``: all.
    direction : {"outgoing", "citing", "both"}
        Only the domains the university links to, that link to it, or both.
    keep_duplicates : bool
        Keep the non-canonical members of the latest dedup run's groups.
    """

    unit: str
    university: str | None = None
    direction: str = "both"
    keep_duplicates: bool = False

    def of(self) -> str:
        """`` of <university>``, or nothing without a university (for messages)."""
        return f" of {self.university}" if self.university else ""


def _university_id(s: Any, name: str) -> int:
    uid = s.scalar(select(University.id).where(University.name == name))
    if uid is None:
        known = s.scalars(select(University.name).order_by(University.name).limit(8)).all()
        hint = f" (stored: {', '.join(known)}{' ...' if len(known) == 8 else ''})" if known else ""
        raise ParameterError(
            f"no university named {name!r}{hint}: see `webometrics universities list`"
        )
    return int(uid)


def _environment_run(s: Any, uid: int | None, direction: str) -> tuple[int | None, int | None]:
    """The crawl run whose environment a clustering reads, and the newest web graph run.

    The run is the newest one (not a web graph's) with environment rows for the
    university (any when ``uid`` is ``None``) and direction; without one, the newest web
    graph run. The graph's citing domains join every crawl run's, as in ``v_environment``.
    """
    graph = s.scalar(
        select(func.max(Environment.run_id))
        .join(CrawlRun, CrawlRun.id == Environment.run_id)
        .where(CrawlRun.kind == GRAPH_RUN_KIND)
    )
    stmt = (
        select(func.max(Environment.run_id))
        .join(CrawlRun, CrawlRun.id == Environment.run_id)
        .where(CrawlRun.kind != GRAPH_RUN_KIND)
    )
    if uid is not None:
        stmt = stmt.where(Environment.university_id == uid)
    if direction != "both":
        stmt = stmt.where(Environment.direction == direction)
    run = s.scalar(stmt)
    return (int(run) if run is not None else graph), graph


def _duplicates(s: Any, unit: str, keep_duplicates: bool) -> tuple[int | None, set[int]]:
    """The latest dedup run of the unit and its non-canonical members (none when they
    are kept)."""
    dedup_run_id = s.scalar(
        select(DedupRun.id)
        .where(DedupRun.unit == unit)
        .order_by(DedupRun.created_at.desc(), DedupRun.id.desc())
        .limit(1)
    )
    if dedup_run_id is None or keep_duplicates:
        return dedup_run_id, set()
    duplicates = s.scalars(
        select(DuplicateMember.document_id)
        .join(DuplicateGroup, DuplicateMember.group_id == DuplicateGroup.id)
        .where(
            DuplicateGroup.dedup_run_id == dedup_run_id,
            DuplicateMember.document_id != DuplicateGroup.canonical_document_id,
        )
    )
    return dedup_run_id, set(duplicates)


def load(
    engine: Engine, selection: Selection, *, with_shingles: bool = True, with_terms: bool = False
) -> dict[str, Any]:
    """Ids, domains and shingles (or term counts) of the documents to cluster, and what
    was left out.

    Without shingles (``with_shingles=False``: they are streamed later by
    :func:`stream_shingles`), ``shingles`` is ``None``. With ``with_terms``, ``terms``
    holds each document's stored term counts (``None`` where not stored yet).

    Raises
    ------
    NothingToDoError
        No document is left (a run over several selections skips this one).
    ParameterError
        The university is unknown.
    """
    unit, university, direction = selection.unit, selection.university, selection.direction
    with session_scope(engine) as s:
        uid = _university_id(s, university) if university else None
        shingles_col = Document.shingles if with_shingles else Document.n_shingles
        cols = [Document.id, Document.domain, shingles_col, Document.shingle_k]
        if with_terms:
            cols.append(Document.terms)
        stmt = select(*cols).where(Document.unit == unit)
        run_id, graph_run = _environment_run(s, uid, direction)
        if run_id is not None or uid is not None or direction != "both":
            # the environment of the run (none without one: nothing to cluster)
            runs = {r for r in (run_id, graph_run) if r is not None}
            env = select(Environment.domain).where(Environment.run_id.in_(runs)).distinct()
            if uid is not None:
                env = env.where(Environment.university_id == uid)
            if direction != "both":
                env = env.where(Environment.direction == direction)
            stmt = stmt.where(Document.domain.in_(env.scalar_subquery()))
        rows = s.execute(stmt.order_by(Document.id)).all()
        dedup_run_id, duplicates = _duplicates(s, unit, selection.keep_duplicates)
    kept = [r for r in rows if r.id not in duplicates]
    if not kept:
        raise NothingToDoError(
            f"no {unit} documents{selection.of()} to cluster (direction {direction}, "
            f"{len(rows)} left out as duplicates): run `webometrics extract` first, "
            f"or choose another --unit/--university/--direction"
        )
    ks = sorted({r.shingle_k for r in kept if r.shingle_k})
    return {
        "university_id": uid,
        "run_id": run_id,
        "dedup_run_id": dedup_run_id,
        "n_excluded": len(rows) - len(kept),
        "ids": [int(r.id) for r in kept],
        "domains": [r.domain for r in kept],
        "shingles": [_shingles(r.shingles) for r in kept] if with_shingles else None,
        "terms": [r.terms for r in kept] if with_terms else None,
        "shingle_k": ks,
    }


def _shingles(blob: bytes | None) -> np.ndarray:
    """A stored shingle column as uint64 hashes."""
    if not blob:
        return np.empty(0, dtype=np.uint64)
    return np.frombuffer(blob, dtype="<u8").astype(np.uint64)


ID_BATCH = 500  # ids per IN (...) query: far below any database's parameter limit


def _fetch(engine: Engine, ids: Sequence[int], column: Any, convert: Any) -> list[Any]:
    """``convert`` of the stored ``column`` of the documents ``ids``, in that order."""
    got: dict[int, Any] = {}
    with engine.connect() as conn:
        for start in range(0, len(ids), ID_BATCH):
            batch = [int(i) for i in ids[start : start + ID_BATCH]]
            rows = conn.execute(select(Document.id, column).where(Document.id.in_(batch)))
            got.update((int(i), convert(value)) for i, value in rows)
    missing = [int(i) for i in ids if int(i) not in got]
    if missing:
        raise StageError(
            f"{len(missing)} documents (ids {missing[:5]}) were deleted while clustering: "
            "run `webometrics cluster` again"
        )
    return [got[int(i)] for i in ids]


def _fetch_shingles(engine: Engine, ids: Sequence[int]) -> list[np.ndarray]:
    """The shingles of the documents ``ids``, in that order."""
    return _fetch(engine, ids, Document.shingles, _shingles)


def stream_shingles(
    engine: Engine, ids: Sequence[int], chunk: int = 2000
) -> Iterator[list[np.ndarray]]:
    """The shingles of the documents ``ids`` in order, ``chunk`` documents at a time."""
    for start in range(0, len(ids), chunk):
        yield _fetch_shingles(engine, ids[start : start + chunk])


TERMS_BATCH = 5000
"""Documents whose term counts :func:`stream_terms` reads at a time."""


def stream_terms(
    engine: Engine, ids: Sequence[int], chunk: int = TERMS_BATCH
) -> Iterator[list[dict[str, int] | None]]:
    """The stored term counts of the documents ``ids`` in order (``None`` where not
    stored), ``chunk`` documents at a time: the activity clustering appends each batch to
    its count matrix (:class:`cluster.weighting.CountsBuilder`) and holds the mappings of
    one batch only.

    Raises
    ------
    StageError
        A document was deleted meanwhile.
    """
    for start in range(0, len(ids), chunk):
        yield _fetch(engine, ids[start : start + chunk], Document.terms, _same)


def _same(value: Any) -> Any:
    return value


class DatabaseShingles:
    """A :class:`cluster.sigstore.ShingleSource` over stored documents: the shingles of
    the candidate pairs are read from the database when their Jaccard is computed."""

    def __init__(self, engine: Engine, ids: Sequence[int], lengths: np.ndarray) -> None:
        self._engine = engine
        self._ids = np.asarray(ids, dtype=np.int64)
        self.lengths = lengths

    def __len__(self) -> int:
        return int(self._ids.shape[0])

    def fetch(self, index: np.ndarray) -> list[np.ndarray]:
        """The shingles of documents ``index`` (positions in the clustered documents)."""
        return _fetch_shingles(self._engine, self._ids[np.asarray(index)].tolist())


def check_terms(terms: Sequence[Any], selection: Selection) -> None:
    """Raise a :class:`StageError` unless every document has stored term counts."""
    _check_missing(sum(t is None for t in terms), len(terms), selection)


def load_term_counts(
    engine: Engine, ids: Sequence[int], selection: Selection, *, chunk: int = TERMS_BATCH
) -> TermCountMatrix:
    """The stored term counts of the documents ``ids`` as one count matrix (rows in the
    order of ``ids``), streamed from the database ``chunk`` documents at a time into a
    :class:`cluster.weighting.CountsBuilder`: memory O(N + V) for N (document, term)
    entries and V terms, plus one batch of mappings, never every document's.

    Raises
    ------
    StageError
        A document has no stored term counts, or was deleted meanwhile.
    """
    from cluster.weighting import CountsBuilder

    builder = CountsBuilder()
    missing = 0
    for batch in stream_terms(engine, ids, chunk):
        missing += sum(t is None for t in batch)
        if not missing:
            builder.add(batch)  # type: ignore[arg-type]
    _check_missing(missing, len(ids), selection)
    return builder.build()


def _check_missing(missing: int, total: int, selection: Selection) -> None:
    if missing:
        raise StageError(
            f"{missing} of the {total} {selection.unit} documents{selection.of()} have "
            "no stored term counts (extracted before they were kept): run "
            "`webometrics extract --rebuild-documents`"
        )
