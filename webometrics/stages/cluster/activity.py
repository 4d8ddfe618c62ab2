"""The activity path of the cluster stage: :class:`cluster.ActivityClusterer` on the
stored term counts.

:func:`run_activity` is :func:`webometrics.stages.cluster.cluster_one` with
``[cluster] method = "activity"``: tf-idf of the term counts, a k-nearest-neighbour graph
and Leiden levels (:class:`cluster.ActivityClusterer` of ``[activity]``); each final
cluster's weighted terms are stored as its category evidence.

Memory: the term counts are streamed from the database in batches into one count matrix
(:func:`~webometrics.stages.cluster.documents.load_term_counts`), so the stage holds
O(N + n·k) for N (document, term) entries and k neighbours, plus one batch of mappings,
never every document's mappings or texts (``bench/million.py``: 1,000,000 documents).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from sqlalchemy import Engine
from tqdm import tqdm

from core.settings import Settings
from webometrics.stages.cluster.documents import Selection, load, load_term_counts
from webometrics.stages.cluster.storing import ClusteringResult, store_clustering

__all__ = ["run_activity"]

log = logging.getLogger(__name__)


def run_activity(
    engine: Engine, settings: Settings, selection: Selection, *, progress: bool = False
) -> ClusteringResult:
    """One activity clustering: tf-idf of the stored term counts (streamed into a count
    matrix), a k-nearest-neighbour graph and Leiden levels
    (:class:`cluster.ActivityClusterer` of ``[activity]``, its threads ``[minhash]
    workers``), stored with each final cluster's weighted terms. The stored
    ``parameters["graph"]["seconds"]`` add ``load`` (reading the counts) and
    ``evidence`` (the weighted terms) to the clusterer's steps.

    Raises
    ------
    ParameterError
        A parameter of ``[activity]`` is outside what is allowed, or the university is
        unknown.
    NothingToDoError
        No document in the selection.
    StageError
        A document has no stored term counts.
    """
    from cluster.activity import ActivityClusterer

    model = ActivityClusterer.from_settings(settings)
    model.check_params()
    started = time.perf_counter()
    data = load(engine, selection, with_shingles=False)
    counts = load_term_counts(engine, data["ids"], selection)
    loaded = time.perf_counter() - started
    log.info(
        "activity clustering of %d %s documents%s (%d duplicates left out)",
        len(data["ids"]), selection.unit, selection.of(), data["n_excluded"],
    )  # fmt: skip
    _fit(model, counts, f"activity levels ({len(data['ids'])} {selection.unit}s)", progress)
    del counts
    t0 = time.perf_counter()
    evidence = _evidence(model, settings)
    seconds = model.graph_stats_["seconds"]
    seconds.update(load=round(loaded, 4), evidence=round(time.perf_counter() - t0, 4))
    stats = store_clustering(
        engine,
        algorithm="activity",
        linkage="leiden",
        method="activity",
        selection=selection,
        data=data,
        model=model,
        parameters=_parameters(model, bool(data["ids"])),
        started=started,
        progress=progress,
        evidence=evidence,
    )
    log.info("clustering %d: %s", stats.clustering_id, stats)
    return stats


def _fit(model: Any, terms: Any, desc: str, progress: bool) -> None:
    """Fit the clusterer, a progress bar over its levels."""
    bar = tqdm(total=model.n_levels(), desc=desc, unit="level", disable=not progress or None)

    def on_level(level: Any) -> None:
        bar.set_postfix(resolution=level.resolution, clusters=level.n_clusters)
        bar.update(1)

    try:
        model.fit(terms, progress=on_level)
    finally:
        bar.close()


def _parameters(model: Any, any_document: bool) -> dict[str, Any]:
    """The stored parameters of a fitted clusterer: its own, its levels, graph and weights."""
    return {
        **model.result_params(),
        "resolution": model.resolutions(),
        "graph": model.graph_stats_,
        "weights": {"tf": "1+ln(tf)", "idf": "ln((1+n)/(1+df))+1", "norm": "l2",
                    "dropped": model.weighting_.n_dropped_ if any_document else {}},
    }  # fmt: skip


def _evidence(model: Any, settings: Settings) -> dict[int, dict[str, Any]]:
    """Each final cluster's category evidence: its weighted terms."""
    from cluster.activity import weighted_terms

    terms = weighted_terms(
        model.matrix_, model.vocabulary_, model.labels_, top=max(20, settings.analyse.theme_terms)
    )
    return {c: {"weighted_terms": t} for c, t in terms.items()}
