"""The paper's path of the cluster stage: LSH single link or Leiden on the shingles.

:func:`_run_paper` is :func:`webometrics.stages.cluster.run` with ``method="paper"``:
:class:`cluster.LSHLink` (``linkage="single"``) or :class:`cluster.LSHLeiden`
(``linkage="leiden"``) over the documents' MinHash signatures (in memory, or streamed into
a :class:`cluster.sigstore.SignatureStore`), then the signatures and the clustering are
stored.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from tqdm import tqdm

from core.choices import LINKAGES
from core.exceptions import ParameterError, StageError
from core.settings import Settings
from webometrics.stages.cluster.documents import _check_terms, _DatabaseShingles, _load
from webometrics.stages.cluster.signatures import _sign_into_store, _store_signatures
from webometrics.stages.cluster.storing import _store_clustering

log = logging.getLogger(__name__)

def _run_paper(
    engine: Engine,
    settings: Settings,
    *,
    unit: str,
    university: str | None,
    direction: str,
    threshold: float | None,
    r0: int | None,
    r_min: int | None,
    step: int | None,
    num_perm: int | None,
    seed: int | None,
    similarity: str | None,
    keep_duplicates: bool,
    progress: bool,
    linkage: str | None,
    resolution: float | Sequence[float] | None,
    quality: str | None,
    workers: int | None,
    signature_store: str | Path | None,
) -> dict[str, Any]:
    """:func:`~webometrics.stages.cluster.run` with ``method="paper"``: MinHash signatures
    of the shingles, then :class:`cluster.LSHLink` or :class:`cluster.LSHLeiden`."""
    from cluster.lsh_leiden import LSHLeiden
    from cluster.lsh_link import LSHLink
    from extract.shingles import HASH_NAME

    cfg = settings.cluster
    linkage = linkage or cfg.linkage
    if linkage not in LINKAGES:
        raise ParameterError(f"linkage must be one of {', '.join(LINKAGES)}, got {linkage!r}")
    store_dir = signature_store if signature_store is not None else cfg.signature_store
    # the run's options; None: the setting's value
    given: dict[str, Any] = {
        "threshold": threshold, "num_perm": num_perm, "seed": seed, "similarity": similarity,
        "n_jobs": workers,
    }  # fmt: skip
    model: Any
    if linkage == "leiden":
        levels = [k for k, v in (("r0", r0), ("r_min", r_min), ("step", step)) if v is not None]
        if levels:
            raise ParameterError(
                f"{', '.join(levels)} set the levels of --linkage single; leiden bands with "
                "[cluster] leiden_rows and leiden_bands and takes --resolution levels"
            )
        given.update(resolution=resolution, quality=quality)
        estimator: Any = LSHLeiden
    else:
        if resolution is not None or quality is not None:
            raise ParameterError("--resolution and --quality apply to --linkage leiden")
        given.update(r0=r0, r_min=r_min, step=step)
        estimator = LSHLink
    model = estimator.from_settings(settings, **{k: v for k, v in given.items() if v is not None})
    # validates the parameters before any work
    n_levels = len(model.resolutions() if linkage == "leiden" else model.rows_per_level())
    workers = model.n_jobs
    started = time.perf_counter()
    weighted = getattr(model, "similarity", None) == "weighted"
    if weighted and (store_dir is not None or linkage == "leiden"):
        raise ParameterError(
            "--similarity weighted runs the paper's single link on the stored term counts; "
            "it takes neither --signature-store nor --linkage leiden"
        )
    data = _load(
        engine, unit, university, direction, keep_duplicates, store_dir is None and not weighted,
        with_terms=weighted,
    )  # fmt: skip
    ids = data["ids"]
    scope = f" of {university}" if university else ""
    if len(data["shingle_k"]) > 1:
        raise StageError(
            f"the {unit} documents were shingled with different k {data['shingle_k']}: run "
            "`webometrics extract` again so that all use [shingle] k"
        )
    log.info(
        "clustering %d %s documents%s (%d duplicates left out)",
        len(ids),
        unit,
        scope,
        data["n_excluded"],
    )
    if store_dir is not None:
        signatures, lengths = _sign_into_store(
            engine, ids, Path(store_dir), model, workers, progress
        )
    bar = tqdm(
        total=n_levels,
        desc=f"{'Leiden' if linkage == 'leiden' else 'LSH'} levels ({len(ids)} {unit}s)",
        unit="level",
        disable=not progress or None,
    )

    def on_level(level: Any) -> None:
        if linkage == "leiden":
            bar.set_postfix(resolution=level.resolution, clusters=level.n_clusters)
        else:
            bar.set_postfix(r=level.r, clusters=level.n_clusters)
        bar.update(1)

    try:
        if store_dir is None:
            if weighted:
                _check_terms(data["terms"], unit, university)
            model.fit(data["terms"] if weighted else data["shingles"], progress=on_level)
        else:
            source = (
                _DatabaseShingles(engine, ids, lengths) if model.similarity == "jaccard" else None
            )
            model.fit(source, signatures=signatures, progress=on_level)
    finally:
        bar.close()
    hash_name = f"{HASH_NAME}|{model.signatures_.hash_func}"
    written = _store_signatures(engine, ids, model.signatures_, hash_name)
    # the clusters do not depend on max_pairs, n_jobs and band_memory_mb: left out
    parameters = {
        **model.result_params(),
        "hash_func": hash_name,
        "shingle_k": data["shingle_k"][0] if data["shingle_k"] else None,
    }
    if linkage == "leiden":
        parameters["resolution"] = model.resolutions()
        parameters["graph"] = model.graph_stats_
    else:
        parameters["levels_r"] = model.rows_per_level()
    stats = _store_clustering(
        engine,
        algorithm="lsh-leiden" if linkage == "leiden" else "lsh-link",
        linkage=linkage,
        unit=unit,
        parameters=parameters,
        selection=(university, direction, keep_duplicates),
        data=data,
        model=model,
        started=started,
        progress=progress,
    )
    stats.update(
        signatures_written=written,
        signature_store=str(store_dir) if store_dir is not None else None,
        workers=workers,
        seconds=round(time.perf_counter() - started, 3),
    )
    clustering_id = stats["clustering_id"]
    log.info("clustering %d: %s", clustering_id, stats)
    return stats
