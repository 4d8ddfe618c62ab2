"""Storing a clustering: its :class:`~store.models.Clustering` row, the
:class:`~store.models.Cluster` and :class:`~store.models.ClusterMember` rows of the final
clusters (level ``-1``) and of every level, and the run's statistics.
"""

from __future__ import annotations

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


def _write_level(
    s: Any, clustering_id: int, level: int, ids: Sequence[int], labels: np.ndarray
) -> None:
    """One Cluster row per label of a level and one ClusterMember row per document."""
    if len(ids) == 0:
        return
    sizes = np.bincount(labels)
    rows = [
        {"clustering_id": clustering_id, "level": level, "label": int(lab), "size": int(size)}
        for lab, size in enumerate(sizes.tolist())
    ]
    cluster_ids = s.scalars(
        insert(Cluster).returning(Cluster.id, sort_by_parameter_order=True), rows
    ).all()
    members = [
        {"cluster_id": int(cluster_ids[lab]), "document_id": int(doc)}
        for doc, lab in zip(ids, labels.tolist(), strict=True)
    ]
    for start in range(0, len(members), 20000):
        s.execute(insert(ClusterMember), members[start : start + 20000])


def _store_clustering(
    engine: Engine,
    *,
    algorithm: str,
    linkage: str,
    unit: str,
    parameters: dict[str, Any],
    selection: tuple[str | None, str, bool],
    data: dict[str, Any],
    model: Any,
    started: float,
    progress: bool,
    evidence: dict[int, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Write the Clustering row, its final clusters (level -1) and every level's; return
    the run's statistics. ``evidence``: a final cluster's label -> its category evidence."""
    university, direction, keep_duplicates = selection
    ids, labels = data["ids"], model.labels_
    sizes = np.bincount(labels)
    flt = {
        "run_id": data.get("run_id"),
        "university_id": data["university_id"],
        "university": university,
        "direction": direction,
        "keep_duplicates": keep_duplicates,
        "dedup_run_id": data["dedup_run_id"],
    }
    with session_scope(engine) as s:
        row = Clustering(
            algorithm=algorithm,
            linkage=linkage,
            unit=unit,
            parameters=parameters,
            filter=flt,
            n_documents=len(ids),
            n_excluded_duplicates=data["n_excluded"],
            n_clusters=int(sizes.shape[0]),
            seconds=round(time.perf_counter() - started, 3),
            levels=[{"level": k, **lvl.to_dict()} for k, lvl in enumerate(model.levels_)],
        )
        s.add(row)
        s.flush()
        levels = [(-1, labels), *((k, lvl.labels) for k, lvl in enumerate(model.levels_))]
        for level, labs in tqdm(
            levels, desc="store clusters", unit="level", disable=not progress or None
        ):
            _write_level(s, row.id, level, ids, labs)
        if evidence:
            s.flush()
            final = select(Cluster).where(Cluster.clustering_id == row.id, Cluster.level == -1)
            for cl in s.scalars(final):
                cl.category_evidence = evidence.get(int(cl.label), {})
        clustering_id = int(row.id)
    return {
        "clustering_id": clustering_id,
        "unit": unit,
        "linkage": linkage,
        "university": university,
        "direction": direction,
        "n_documents": len(ids),
        "n_excluded_duplicates": data["n_excluded"],
        "dedup_run_id": data["dedup_run_id"],
        "n_clusters": int(sizes.shape[0]),
        "n_multi": int((sizes >= 2).sum()),
        "largest": int(sizes.max()),
        "n_levels": len(model.levels_),
        "signatures_written": 0,
        "signature_store": None,
        "seconds": round(time.perf_counter() - started, 3),
    }
