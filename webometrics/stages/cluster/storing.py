"""Storing a clustering: its :class:`~store.models.Clustering` row, the
:class:`~store.models.Cluster` and :class:`~store.models.ClusterMember` rows of the final
clusters (level ``-1``) and of every level, and the run's statistics.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import Engine, insert, select
from tqdm import tqdm

from store.models import (
    Cluster,
    Clustering,
    ClusterMember,
)
from store.session import session_scope
from webometrics.stages import StageResult
from webometrics.stages.cluster.documents import Selection

__all__ = ["ClusteringResult", "store_clustering"]


MEMBER_BATCH = 20000
"""ClusterMember rows inserted at a time (and the most held as dicts)."""


def _write_level(
    s: Any, clustering_id: int, level: int, ids: Sequence[int], labels: np.ndarray
) -> None:
    """One Cluster row per label of a level and one ClusterMember row per document,
    inserted :data:`MEMBER_BATCH` at a time (memory: one batch of rows, not n)."""
    if len(ids) == 0:
        return
    sizes = np.bincount(labels)
    rows = [
        {"clustering_id": clustering_id, "level": level, "label": int(lab), "size": int(size)}
        for lab, size in enumerate(sizes.tolist())
    ]
    cluster_ids = np.asarray(
        s.scalars(insert(Cluster).returning(Cluster.id, sort_by_parameter_order=True), rows).all(),
        dtype=np.int64,
    )
    del rows
    for start in range(0, len(ids), MEMBER_BATCH):
        docs = np.asarray(ids[start : start + MEMBER_BATCH], dtype=np.int64).tolist()
        members = cluster_ids[labels[start : start + MEMBER_BATCH]].tolist()
        s.execute(
            insert(ClusterMember),
            [{"cluster_id": c, "document_id": d} for c, d in zip(members, docs, strict=True)],
        )


@dataclasses.dataclass(frozen=True)
class ClusteringResult(StageResult):
    """The statistics of one clustering (one university and direction).

    Attributes
    ----------
    clustering_id : int
        The stored :class:`~store.models.Clustering` row.
    unit : {"page", "domain"}
    linkage : {"single", "leiden"}
        ``leiden`` for the activity clustering.
    method : {"activity", "paper"}
    university : str or None
        The university whose environment was clustered; ``None``: every document.
    direction : {"outgoing", "citing", "both"}
    n_documents, n_excluded_duplicates : int
        Documents clustered, and non-canonical members of the dedup run left out.
    dedup_run_id : int or None
        The latest dedup run of the unit.
    n_clusters, n_multi, largest : int
        Final clusters, those of two or more documents, the size of the largest.
    n_levels : int
    signatures_written : int
        Signature rows inserted or refreshed (``0`` for the activity clustering).
    signature_store : str or None
        The signature store folder, if one was used.
    workers : int
        Threads signing the documents (``-1`` every core).
    seconds : float
    """

    clustering_id: int
    unit: str
    linkage: str
    method: str
    university: str | None
    direction: str
    n_documents: int
    n_excluded_duplicates: int
    dedup_run_id: int | None
    n_clusters: int
    n_multi: int
    largest: int
    n_levels: int
    signatures_written: int
    signature_store: str | None
    workers: int
    seconds: float


def store_clustering(
    engine: Engine,
    *,
    algorithm: str,
    linkage: str,
    method: str,
    selection: Selection,
    data: dict[str, Any],
    model: Any,
    parameters: dict[str, Any],
    started: float,
    progress: bool,
    evidence: dict[int, dict[str, Any]] | None = None,
) -> ClusteringResult:
    """Write the Clustering row, its final clusters (level -1) and every level's; return
    the run's statistics (no signatures written yet). ``model``: the fitted estimator
    (``labels_``, ``levels_``, ``n_jobs``); ``evidence``: a final cluster's label -> its
    category evidence."""
    sizes = np.bincount(model.labels_)
    with session_scope(engine) as s:
        row = Clustering(
            algorithm=algorithm,
            linkage=linkage,
            unit=selection.unit,
            parameters=parameters,
            filter=_filter(selection, data),
            n_documents=len(data["ids"]),
            n_excluded_duplicates=data["n_excluded"],
            n_clusters=int(sizes.shape[0]),
            seconds=round(time.perf_counter() - started, 3),
            levels=[{"level": k, **lvl.to_dict()} for k, lvl in enumerate(model.levels_)],
        )
        s.add(row)
        s.flush()
        _write_levels(s, row.id, data["ids"], model, progress)
        if evidence:
            s.flush()
            final = select(Cluster).where(Cluster.clustering_id == row.id, Cluster.level == -1)
            for cl in s.scalars(final):
                cl.category_evidence = evidence.get(int(cl.label), {})
        row.seconds = round(time.perf_counter() - started, 3)  # with the writes
        clustering_id = int(row.id)
    return ClusteringResult(
        clustering_id=clustering_id,
        unit=selection.unit,
        linkage=linkage,
        method=method,
        university=selection.university,
        direction=selection.direction,
        n_documents=len(data["ids"]),
        n_excluded_duplicates=data["n_excluded"],
        dedup_run_id=data["dedup_run_id"],
        n_clusters=int(sizes.shape[0]),
        n_multi=int((sizes >= 2).sum()),
        largest=int(sizes.max()),
        n_levels=len(model.levels_),
        signatures_written=0,
        signature_store=None,
        workers=int(model.n_jobs),
        seconds=round(time.perf_counter() - started, 3),
    )


def _filter(selection: Selection, data: dict[str, Any]) -> dict[str, Any]:
    """A clustering's ``filter``: the documents it read."""
    return {
        "run_id": data.get("run_id"),
        "university_id": data["university_id"],
        "university": selection.university,
        "direction": selection.direction,
        "keep_duplicates": selection.keep_duplicates,
        "dedup_run_id": data["dedup_run_id"],
    }


def _write_levels(
    s: Any, clustering_id: int, ids: Sequence[int], model: Any, progress: bool
) -> None:
    """The final clusters (level -1) and every level's."""
    levels = [(-1, model.labels_), *((k, lvl.labels) for k, lvl in enumerate(model.levels_))]
    bar = tqdm(levels, desc="store clusters", unit="level", disable=not progress or None)
    for level, labs in bar:
        _write_level(s, clustering_id, level, ids, labs)
