"""The paper's path of the cluster stage: LSH single link or Leiden on the shingles.

:func:`run_paper` is :func:`webometrics.stages.cluster.cluster_one` with
``[cluster] method = "paper"``: :class:`cluster.LSHLink` (``[cluster] linkage = "single"``)
or :class:`cluster.LSHLeiden` (``"leiden"``) over the documents' MinHash signatures (in
memory, or streamed into a :class:`cluster.sigstore.SignatureStore` with ``[cluster]
signature_store``), then the signatures and the clustering are stored.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from tqdm import tqdm

from core.exceptions import ParameterError, StageError
from core.settings import ClusterSettings, Settings
from webometrics.stages.cluster.documents import DatabaseShingles, Selection, check_terms, load
from webometrics.stages.cluster.signatures import sign_into_store, store_signatures
from webometrics.stages.cluster.storing import ClusteringResult, store_clustering

__all__ = ["WEIGHTED_ALONE", "paper_model", "run_paper"]

log = logging.getLogger(__name__)

#: the refusal of the weighted similarity beside a signature store or the Leiden linkage
WEIGHTED_ALONE = (
    "--similarity weighted runs the paper's single link on the stored term counts; "
    "it takes neither --signature-store nor --linkage leiden"
)


def paper_model(settings: Settings) -> Any:
    """The paper's estimator of the settings, its parameters checked:
    :class:`cluster.LSHLeiden` when ``[cluster] linkage`` is ``leiden``, else
    :class:`cluster.LSHLink` (``[cluster]`` and ``[minhash]``).

    Raises
    ------
    ParameterError
        A parameter is outside what is allowed (e.g. ``r0`` above ``num_perm``).
    """
    from cluster.lsh_leiden import LSHLeiden
    from cluster.lsh_link import LSHLink

    if settings.cluster.linkage == "leiden":
        leiden = LSHLeiden.from_settings(settings)
        leiden.resolutions()  # validates the parameters before any work
        return leiden
    single = LSHLink.from_settings(settings)
    single.rows_per_level()
    return single


def run_paper(
    engine: Engine, settings: Settings, selection: Selection, *, progress: bool = False
) -> ClusteringResult:
    """One clustering of the paper's methods: MinHash signatures of the shingles (or, with
    ``[cluster] similarity = "weighted"``, of the term counts), then
    :class:`cluster.LSHLink` or :class:`cluster.LSHLeiden`; the signatures and the
    clustering are stored.

    Raises
    ------
    ParameterError
        A parameter is outside what is allowed, the university is unknown, or the
        signature store folder holds a store of other MinHash parameters.
    NothingToDoError
        No document in the selection.
    StageError
        Documents shingled with different k, or without stored term counts (weighted).
    """
    from extract.shingles import HASH_NAME

    model = paper_model(settings)
    store_dir = settings.cluster.signature_store
    started = time.perf_counter()
    weighted = getattr(model, "similarity", None) == "weighted"
    if weighted and store_dir is not None:
        raise ParameterError(WEIGHTED_ALONE)
    with_shingles = store_dir is None and not weighted
    data = load(engine, selection, with_shingles=with_shingles, with_terms=weighted)
    if len(data["shingle_k"]) > 1:
        raise StageError(
            f"the {selection.unit} documents were shingled with different k "
            f"{data['shingle_k']}: run `webometrics extract` again so that all use [shingle] k"
        )
    log.info(
        "clustering %d %s documents%s (%d duplicates left out)",
        len(data["ids"]), selection.unit, selection.of(), data["n_excluded"],
    )  # fmt: skip
    _fit(engine, model, data, selection, settings.cluster, progress)
    hash_name = f"{HASH_NAME}|{model.signatures_.hash_func}"
    written = store_signatures(engine, data["ids"], model.signatures_, hash_name)
    leiden = settings.cluster.linkage == "leiden"
    stats = store_clustering(
        engine,
        algorithm="lsh-leiden" if leiden else "lsh-link",
        linkage=settings.cluster.linkage,
        method="paper",
        selection=selection,
        data=data,
        model=model,
        parameters=_parameters(model, leiden, hash_name, data["shingle_k"]),
        started=started,
        progress=progress,
    )
    stats = dataclasses.replace(
        stats, signatures_written=written, signature_store=store_dir,
        seconds=round(time.perf_counter() - started, 3),
    )  # fmt: skip
    log.info("clustering %d: %s", stats.clustering_id, stats)
    return stats


def _fit(
    engine: Engine,
    model: Any,
    data: dict[str, Any],
    selection: Selection,
    cfg: ClusterSettings,
    progress: bool,
) -> None:
    """Fit the model on the loaded shingles (or term counts), or on the documents signed
    into the signature store ``[cluster] signature_store``; a progress bar over its levels."""
    ids, store_dir, leiden = data["ids"], cfg.signature_store, cfg.linkage == "leiden"
    if store_dir is not None:
        signatures, lengths = sign_into_store(
            engine, ids, Path(store_dir), model, model.n_jobs, progress
        )
    bar = tqdm(
        total=len(model.resolutions() if leiden else model.rows_per_level()),
        desc=f"{'Leiden' if leiden else 'LSH'} levels ({len(ids)} {selection.unit}s)",
        unit="level",
        disable=not progress or None,
    )

    def on_level(level: Any) -> None:
        if leiden:
            bar.set_postfix(resolution=level.resolution, clusters=level.n_clusters)
        else:
            bar.set_postfix(r=level.r, clusters=level.n_clusters)
        bar.update(1)

    try:
        if store_dir is None:
            weighted = model.similarity == "weighted"
            if weighted:
                check_terms(data["terms"], selection)
            model.fit(data["terms"] if weighted else data["shingles"], progress=on_level)
        else:
            jaccard = model.similarity == "jaccard"
            source = DatabaseShingles(engine, ids, lengths) if jaccard else None
            model.fit(source, signatures=signatures, progress=on_level)
    finally:
        bar.close()


def _parameters(model: Any, leiden: bool, hash_name: str, shingle_k: list[int]) -> dict[str, Any]:
    """The stored parameters of a fitted model: those the clusters depend on (not
    ``max_pairs``, ``n_jobs`` and ``band_memory_mb``), the hash function, the shingle
    size and the levels (Leiden: resolutions and the candidate graph's figures)."""
    parameters = {
        **model.result_params(),
        "hash_func": hash_name,
        "shingle_k": shingle_k[0] if shingle_k else None,
    }
    if leiden:
        parameters["resolution"] = model.resolutions()
        parameters["graph"] = model.graph_stats_
    else:
        parameters["levels_r"] = model.rows_per_level()
    return parameters
