"""The activity path of the cluster stage: :class:`cluster.ActivityClusterer` on the
stored term counts.

:func:`_run_activity` is :func:`webometrics.stages.cluster.run` with
``method="activity"``: tf-idf of the term counts, an LSH k-nearest-neighbour graph and
Leiden levels; each final cluster's weighted terms are stored as its category evidence.
:func:`activity_model` builds the clusterer from ``[activity]``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine
from tqdm import tqdm

from core.settings import Settings
from webometrics.stages.cluster.documents import _check_terms, _load
from webometrics.stages.cluster.storing import _store_clustering

log = logging.getLogger(__name__)


def activity_model(
    settings: Settings,
    *,
    seed: int | None = None,
    resolution: float | Sequence[float] | None = None,
    quality: str | None = None,
    workers: int | None = None,
    num_perm: int | None = None,
) -> Any:
    """The :class:`cluster.ActivityClusterer` of ``[activity]`` with the run's overrides."""
    from cluster.activity import ActivityClusterer

    # the run's options; None: the setting's value
    given = {
        "seed": seed, "resolution": resolution, "quality": quality, "n_jobs": workers,
        "num_perm": num_perm,
    }  # fmt: skip
    return ActivityClusterer.from_settings(
        settings, **{k: v for k, v in given.items() if v is not None}
    )


def _run_activity(
    engine: Engine,
    settings: Settings,
    *,
    unit: str,
    university: str | None,
    direction: str,
    seed: int | None,
    keep_duplicates: bool,
    progress: bool,
    resolution: float | Sequence[float] | None,
    quality: str | None,
    workers: int | None,
    num_perm: int | None = None,
) -> dict[str, Any]:
    """:func:`run` with ``method="activity"``: tf-idf of the stored term counts, an LSH
    k-nearest-neighbour graph and Leiden levels (:class:`cluster.ActivityClusterer`)."""
    from cluster.activity import weighted_terms

    model = activity_model(
        settings, seed=seed, resolution=resolution, quality=quality, workers=workers,
        num_perm=num_perm,
    )  # fmt: skip
    model.check_params()
    started = time.perf_counter()
    data = _load(engine, unit, university, direction, keep_duplicates, False, with_terms=True)
    ids = data["ids"]
    scope = f" of {university}" if university else ""
    _check_terms(data["terms"], unit, university)
    log.info(
        "activity clustering of %d %s documents%s (%d duplicates left out)",
        len(ids), unit, scope, data["n_excluded"],
    )  # fmt: skip
    bar = tqdm(
        total=len(model.resolutions()),
        desc=f"activity levels ({len(ids)} {unit}s)",
        unit="level",
        disable=not progress or None,
    )

    def on_level(level: Any) -> None:
        bar.set_postfix(resolution=level.resolution, clusters=level.n_clusters)
        bar.update(1)

    try:
        model.fit(data["terms"], progress=on_level)
    finally:
        bar.close()
    terms = weighted_terms(
        model.matrix_, model.vocabulary_, model.labels_, top=max(20, settings.analyse.theme_terms)
    )
    parameters = {
        **model.result_params(),
        "resolution": model.resolutions(),
        "graph": model.graph_stats_,
        "weights": {"tf": "1+ln(tf)", "idf": "ln((1+n)/(1+df))+1", "norm": "l2",
                    "dropped": model.weighting_.n_dropped_ if ids else {}},
    }  # fmt: skip
    stats = _store_clustering(
        engine,
        algorithm="activity",
        linkage="leiden",
        unit=unit,
        parameters=parameters,
        selection=(university, direction, keep_duplicates),
        data=data,
        model=model,
        started=started,
        progress=progress,
        evidence={c: {"weighted_terms": t} for c, t in terms.items()},
    )
    stats.update(method="activity", workers=model.n_jobs)
    clustering_id = stats["clustering_id"]
    log.info("clustering %d: %s", clustering_id, stats)
    return stats
