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
from typing import Any

import numpy as np
from sqlalchemy import Engine, select
from tqdm import tqdm

from core.exceptions import StageError
from core.settings import Settings
from store.models import DedupRun, Document, DuplicateGroup, DuplicateMember, Page
from store.session import session_scope

log = logging.getLogger(__name__)


def _load(engine: Engine, unit: str, max_pages: int) -> dict[str, Any]:
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
        texts: list[str] = [""] * len(rows)
        if unit == "page":
            page_ids = [r.page_id for r in rows if r.page_id is not None]
            by_page: dict[int, tuple[str | None, str | None]] = {}
            for start in range(0, len(page_ids), 500):
                chunk = page_ids[start : start + 500]
                for pid, text, lang in s.execute(
                    select(Page.id, Page.text, Page.language).where(Page.id.in_(chunk))
                ):
                    by_page[pid] = (text, lang)
            for k, r in enumerate(rows):
                texts[k] = (by_page.get(r.page_id, (None, None))[0] or "") if r.page_id else ""
        else:
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
            for k, r in enumerate(rows):
                texts[k] = "\n\n".join(pages.get(r.domain, []))
    shingles = [np.frombuffer(r.shingles, dtype="<u8") if r.shingles else None for r in rows]
    lengths = np.array([r.text_length or len(texts[k]) for k, r in enumerate(rows)], dtype=np.int64)
    times = np.array(
        [r.fetched_at.timestamp() if r.fetched_at else np.nan for r in rows], dtype=np.float64
    )
    ks = {r.shingle_k for r in rows if r.shingle_k}
    return {
        "ids": [r.id for r in rows],
        "texts": texts,
        "languages": [r.language for r in rows],
        "shingles": shingles,
        "shingle_k": ks.pop() if len(ks) == 1 else None,
        "lengths": lengths,
        "times": times,
    }


def run(
    engine: Engine,
    settings: Settings,
    *,
    method: str | None = None,
    grouping: str | None = None,
    unit: str | None = None,
    canonical: str | None = None,
    params: dict[str, Any] | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Run one near-duplicate method over the stored documents of a unit.

    Parameters
    ----------
    engine : Engine
    settings : Settings
        ``[dedup]`` gives the defaults of every option; the unit defaults to
        ``[dedup] unit``, else ``[cluster] unit``.
    method : str, optional
        A name of :data:`dedup.registry.METHODS`.
    grouping : {"components", "cliques", "fpmax"}, optional
    unit : {"page", "domain"}, optional
    canonical : {"longest", "earliest"}, optional
    params : dict, optional
        Keyword parameters of the method (e.g. ``{"threshold": 0.7}``).
    progress : bool
        Show a progress bar while writing the groups.

    Returns
    -------
    dict
        ``dedup_run_id``, ``method``, ``unit``, ``grouping``, ``n_documents``,
        ``n_groups``, ``n_duplicates`` (documents left out of clustering), ``seconds``.

    Raises
    ------
    ParameterError
        Unknown method or parameter, or a text method on documents without text.
    StageError
        There are no documents of the unit (run the extract stage first).
    """
    from dedup.base import Corpus
    from dedup.registry import get_method

    cfg = settings.dedup
    name = method or cfg.method
    unit = unit or cfg.unit or settings.cluster.unit
    grouping = grouping or cfg.grouping
    canonical = canonical or cfg.canonical
    algo = get_method(name, **(params or {}))
    started = time.perf_counter()
    data = _load(engine, unit, settings.domain.max_pages)
    n = len(data["ids"])
    if n == 0:
        raise StageError(
            f"no {unit} documents to de-duplicate: run `webometrics extract` first "
            f"(or choose --unit {'domain' if unit == 'page' else 'page'})"
        )
    corpus = Corpus(
        data["texts"],
        languages=data["languages"],
        shingles=data["shingles"],
        shingle_k=data["shingle_k"],
    )
    algo.fit(corpus)
    groups = algo.groups(
        grouping=grouping,
        canonical=canonical,
        lengths=data["lengths"],
        times=data["times"],
        max_clique_size=cfg.max_clique_size,
        fpmax_max_docs=cfg.fpmax_max_docs,
    )
    ids = data["ids"]
    n_dup = sum(len(g.members) - 1 for g in groups)
    seconds = time.perf_counter() - started
    parameters = {
        **algo.get_params(),
        "canonical": canonical,
        "n_pairs": int(algo.pairs_.shape[0]),
        "shingle_k": data["shingle_k"],
    }
    with session_scope(engine) as s:
        row = DedupRun(
            method=name,
            grouping=grouping,
            unit=unit,
            parameters=parameters,
            n_documents=n,
            n_groups=len(groups),
            n_duplicates=n_dup,
            seconds=round(seconds, 3),
        )
        s.add(row)
        s.flush()
        for g in tqdm(groups, desc="dedup groups", unit="group", disable=not progress):
            group = DuplicateGroup(
                dedup_run_id=row.id,
                method=name,
                canonical_document_id=ids[g.canonical],
                size=len(g.members),
            )
            group.members = [DuplicateMember(document_id=ids[m]) for m in g.members]
            s.add(group)
        run_id = row.id
    log.info(
        "dedup run %d: %s over %d %s documents: %d groups, %d duplicates",
        run_id,
        name,
        n,
        unit,
        len(groups),
        n_dup,
    )
    return {
        "dedup_run_id": run_id,
        "method": name,
        "unit": unit,
        "grouping": grouping,
        "n_documents": n,
        "n_pairs": int(algo.pairs_.shape[0]),
        "n_groups": len(groups),
        "n_duplicates": n_dup,
        "seconds": round(seconds, 3),
    }
