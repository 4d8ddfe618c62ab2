"""The dedup stage: group fuzzy duplicates among stored documents, pick canonical ones.

Reads the :class:`~store.models.Document` rows of one unit, hands them to a near-duplicate
method of :mod:`dedup` and writes one :class:`~store.models.DedupRun` with its
:class:`~store.models.DuplicateGroup` and :class:`~store.models.DuplicateMember` rows.
``webometrics cluster`` then leaves out the non-canonical members of the latest run.

What a method reads:

``page`` documents
    the main text of their page (``Page.text``) and its language;
``domain`` documents
    the texts of the domain's pages (``Page.registered_domain``, extracted text, in page
    order, at most ``[domain] max_pages`` of them) joined by blank lines; a domain
    without page texts falls back to its stored shingles, which only shingle methods
    (``input = shingles`` in ``--list-methods``) can use.

The canonical document of a group is the longest (``Document.text_length``) or the
earliest fetched (``Document.fetched_at``), by ``[dedup] canonical``.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session
from tqdm import tqdm

from core.exceptions import NothingToDoError
from core.settings import DedupSettings, Settings
from store.models import DedupRun, Document, DuplicateGroup, DuplicateMember, Page
from store.session import session_scope
from webometrics.stages import StageResult, refreshes_figures

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DedupScope:
    """What one dedup run is asked beyond ``[dedup]``: the method's keyword parameters
    (e.g. ``{"threshold": 0.7}``; none = the method's defaults)."""

    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DedupResult(StageResult):
    """The stored :class:`~store.models.DedupRun`'s id and figures: the method, unit and
    grouping it ran with, the documents read, the duplicate pairs found, the groups, the
    documents left out of clustering (``n_duplicates``) and the seconds."""

    dedup_run_id: int
    method: str
    unit: str
    grouping: str
    n_documents: int
    n_pairs: int
    n_groups: int
    n_duplicates: int
    seconds: float


@dataclass(frozen=True)
class _Loaded:
    """The documents of one unit as a method reads them, in id order."""

    ids: list[int]
    texts: list[str]
    languages: list[str | None]
    shingles: list[np.ndarray | None]
    shingle_k: int | None
    lengths: np.ndarray
    times: np.ndarray


def _page_texts(s: Session, rows: Sequence[Any]) -> list[str]:
    """The main text of each page document's page (empty when it has none)."""
    page_ids = [r.page_id for r in rows if r.page_id is not None]
    by_page: dict[int, tuple[str | None, str | None]] = {}
    for start in range(0, len(page_ids), 500):
        chunk = page_ids[start : start + 500]
        for pid, text, lang in s.execute(
            select(Page.id, Page.text, Page.language).where(Page.id.in_(chunk))
        ):
            by_page[pid] = (text, lang)
    return [(by_page.get(r.page_id, (None, None))[0] or "") if r.page_id else "" for r in rows]


def _domain_texts(s: Session, rows: Sequence[Any], max_pages: int) -> list[str]:
    """The texts of each domain document's pages, in page order, at most ``max_pages``,
    joined by blank lines."""
    domains = sorted({r.domain for r in rows})
    pages: dict[str, list[str]] = defaultdict(list)
    for start in range(0, len(domains), 200):
        chunk = domains[start : start + 200]
        for dom, text in s.execute(
            select(Page.registered_domain, Page.text)
            .where(Page.registered_domain.in_(chunk), Page.text.is_not(None))
            .order_by(Page.id)
        ):
            if text and text.strip() and len(pages[dom]) < max_pages:
                pages[dom].append(text)
    return ["\n\n".join(pages.get(r.domain, [])) for r in rows]


def _load(engine: Engine, unit: str, max_pages: int) -> _Loaded:
    with session_scope(engine) as s:
        rows = s.execute(
            select(
                Document.id,
                Document.page_id,
                Document.domain,
                Document.language,
                Document.text_length,
                Document.shingles,
                Document.shingle_k,
                Document.fetched_at,
            )
            .where(Document.unit == unit)
            .order_by(Document.id)
        ).all()
        texts = _page_texts(s, rows) if unit == "page" else _domain_texts(s, rows, max_pages)
    ks = {r.shingle_k for r in rows if r.shingle_k}
    return _Loaded(
        ids=[r.id for r in rows],
        texts=texts,
        languages=[r.language for r in rows],
        shingles=[np.frombuffer(r.shingles, dtype="<u8") if r.shingles else None for r in rows],
        shingle_k=ks.pop() if len(ks) == 1 else None,
        lengths=np.array(
            [r.text_length or len(texts[k]) for k, r in enumerate(rows)], dtype=np.int64
        ),
        times=np.array(
            [r.fetched_at.timestamp() if r.fetched_at else np.nan for r in rows],
            dtype=np.float64,
        ),
    )


def _store(
    engine: Engine, row: DedupRun, groups: Sequence[Any], ids: list[int], progress: bool
) -> int:
    """Store the run ``row`` with its groups (member indices mapped to document ``ids``);
    return its id."""
    with session_scope(engine) as s:
        s.add(row)
        s.flush()
        for g in tqdm(groups, desc="dedup groups", unit="group", disable=not progress):
            group = DuplicateGroup(
                dedup_run_id=row.id,
                method=row.method,
                canonical_document_id=ids[g.canonical],
                size=len(g.members),
            )
            group.members = [DuplicateMember(document_id=ids[m]) for m in g.members]
            s.add(group)
        return row.id


def _group(algo: Any, cfg: DedupSettings, data: _Loaded) -> list[Any]:
    """Fit the method on the documents and group the duplicates by ``[dedup]``."""
    from dedup.base import Corpus

    corpus = Corpus(
        data.texts, languages=data.languages, shingles=data.shingles, shingle_k=data.shingle_k
    )
    algo.fit(corpus)
    return list(
        algo.groups(
            grouping=cfg.grouping,
            canonical=cfg.canonical,
            lengths=data.lengths,
            times=data.times,
            max_clique_size=cfg.max_clique_size,
            fpmax_max_docs=cfg.fpmax_max_docs,
        )
    )


def _record(
    engine: Engine,
    cfg: DedupSettings,
    unit: str,
    algo: Any,
    data: _Loaded,
    groups: list[Any],
    seconds: float,
    progress: bool,
) -> DedupResult:
    """Store the run and its groups; its result."""
    n_dup = sum(len(g.members) - 1 for g in groups)
    n_pairs = int(algo.pairs_.shape[0])
    parameters = {
        **algo.get_params(),
        "canonical": cfg.canonical,
        "n_pairs": n_pairs,
        "shingle_k": data.shingle_k,
    }
    row = DedupRun(
        method=cfg.method,
        grouping=cfg.grouping,
        unit=unit,
        parameters=parameters,
        n_documents=len(data.ids),
        n_groups=len(groups),
        n_duplicates=n_dup,
        seconds=seconds,
    )
    run_id = _store(engine, row, groups, data.ids, progress)
    log.info(
        "dedup run %d: %s over %d %s documents: %d groups, %d duplicates",
        run_id,
        cfg.method,
        len(data.ids),
        unit,
        len(groups),
        n_dup,
    )
    return DedupResult(
        dedup_run_id=run_id,
        method=cfg.method,
        unit=unit,
        grouping=cfg.grouping,
        n_documents=len(data.ids),
        n_pairs=n_pairs,
        n_groups=len(groups),
        n_duplicates=n_dup,
        seconds=seconds,
    )


@refreshes_figures
def run(
    engine: Engine,
    settings: Settings,
    scope: DedupScope | None = None,
    *,
    progress: bool = False,
) -> DedupResult:
    """Run one near-duplicate method over the stored documents of a unit.

    Parameters
    ----------
    engine : Engine
    settings : Settings
        ``[dedup]``: the ``method`` (a name of :data:`dedup.registry.METHODS`), the
        ``grouping``, the ``canonical`` rule and the ``unit`` (default ``[cluster]
        unit``), with the caps of the groupings.
    scope : DedupScope, optional
        The method's keyword parameters (default: none).
    progress : bool
        Show a progress bar while writing the groups.

    Returns
    -------
    DedupResult
        ``dedup_run_id``, ``method``, ``unit``, ``grouping``, ``n_documents``,
        ``n_pairs``, ``n_groups``, ``n_duplicates`` (documents left out of clustering),
        ``seconds``.

    Raises
    ------
    ParameterError
        Unknown method or parameter, or a text method on documents without text.
    NothingToDoError
        There are no documents of the unit (run the extract stage first).
    """
    from dedup.registry import get_method

    scope = scope if scope is not None else DedupScope()
    cfg = settings.dedup
    unit = cfg.unit or settings.cluster.unit
    algo = get_method(cfg.method, **scope.params)
    started = time.perf_counter()
    data = _load(engine, unit, settings.domain.max_pages)
    n = len(data.ids)
    if n == 0:
        raise NothingToDoError(
            f"no {unit} documents to de-duplicate: run `webometrics extract` first "
            f"(or choose --unit {'domain' if unit == 'page' else 'page'})"
        )
    groups = _group(algo, cfg, data)
    seconds = round(time.perf_counter() - started, 3)
    return _record(engine, cfg, unit, algo, data, groups, seconds, progress)
