"""The cluster stage: the paper's LSH single link (or Leiden) over the stored documents.

Reads the :class:`~store.models.Document` rows of one unit (``page`` or ``domain``),
optionally those of one university's environment and one direction (the documents whose
registered domain has an :class:`~store.models.Environment` row of that university and
direction), leaves out the non-canonical members of the latest
:class:`~store.models.DedupRun` of that unit (unless asked to keep them), signs the
shingles with MinHash, runs :class:`cluster.LSHLink` (``linkage="single"``, the default)
or :class:`cluster.LSHLeiden` (``linkage="leiden"``: Leiden communities of the LSH
candidate graph, one level per resolution) and writes:

- one :class:`~store.models.Signature` row per document and MinHash parameters (num_perm,
  seed, scheme and hash function travel with it; an existing row is updated when the
  document's shingles changed);
- one :class:`~store.models.Clustering` (algorithm ``lsh-link``, linkage ``single``; or
  ``lsh-leiden``, ``leiden``) with its parameters, the filter it ran on and its levels
  (single: r, b, S-curve similarity, candidate pairs, clusters after the level; leiden:
  resolution, quality value, clusters; the candidate graph's figures in the parameters);
- :class:`~store.models.Cluster` rows for the final clusters (level ``-1``) and for every
  level (``0`` = the first: the largest r, or the largest resolution), each with its
  :class:`~store.models.ClusterMember` rows.

The documents are read in id order and every random choice comes from the seed, so the
same documents, parameters and seed give the same clusters.

Beyond one process: ``[minhash] workers`` threads sign the documents (the same
signatures for any number), and with ``[cluster] signature_store`` (a folder) the
documents are streamed from the database in chunks into a memory-mapped
:class:`cluster.sigstore.SignatureStore` instead of loading all shingles; the model then
fits from the memory-mapped signatures, bands them within ``[cluster] band_memory_mb`` and
fetches the shingles of the candidate pairs from the database for exact Jaccard. The
clusters are those of the in-memory run.

The package: this module holds :func:`run` (checks the options and takes the activity
or the paper's path) and :func:`run_each`; :mod:`.documents` loads the documents to
cluster, :mod:`.activity` and :mod:`.paper` are the two paths, :mod:`.signatures` stores
the MinHash signatures and :mod:`.storing` writes a clustering.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

from core.choices import CLUSTER_METHODS, DIRECTION_CHOICES, LINKAGES, UNITS
from core.exceptions import ParameterError, StageError
from core.settings import Settings
from store.models import University
from store.session import session_scope
from webometrics.stages.cluster.activity import _run_activity, activity_model
from webometrics.stages.cluster.paper import _run_paper

__all__ = [
    "DIRECTIONS",
    "LINKAGES",
    "METHODS",
    "activity_model",
    "resolve_method",
    "run",
    "run_each",
]

log = logging.getLogger(__name__)

DIRECTIONS = DIRECTION_CHOICES
METHODS = CLUSTER_METHODS


def resolve_method(settings: Settings, method: str | None, paper_options: dict[str, Any]) -> str:
    """The clustering method of a run (see :func:`run`'s ``method``).

    Raises
    ------
    ParameterError
        An unknown method.
    """
    if method is None:
        chosen = settings.cluster.model_fields_set
        if any(v is not None for v in paper_options.values()):
            return "paper"
        # a configuration that sets [cluster] linkage (and not method) asks for the paper's
        paper = "linkage" in chosen and "method" not in chosen
        method = "paper" if paper else settings.cluster.method
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    return method


def run(
    engine: Engine,
    settings: Settings,
    *,
    unit: str | None = None,
    university: str | None = None,
    direction: str = "both",
    threshold: float | None = None,
    r0: int | None = None,
    r_min: int | None = None,
    step: int | None = None,
    num_perm: int | None = None,
    seed: int | None = None,
    similarity: str | None = None,
    keep_duplicates: bool = False,
    progress: bool = False,
    linkage: str | None = None,
    resolution: float | Sequence[float] | None = None,
    quality: str | None = None,
    workers: int | None = None,
    signature_store: str | Path | None = None,
    method: str | None = None,
) -> dict[str, Any]:
    """Cluster the stored documents (activity, LSH single link or Leiden) and store the result.

    Parameters
    ----------
    engine : Engine
    settings : Settings
        ``[cluster]`` and ``[minhash]`` give the default of every option.
    unit : {"page", "domain"}, optional
        Which documents; default ``[cluster] unit``.
    university : str, optional
        Only the documents of this university's environment (its name); default all.
    direction : {"outgoing", "citing", "both"}
        Only the domains the university links to, that link to it, or both.
    threshold : float, optional
        Override of ``[cluster] threshold`` (single) or ``leiden_threshold`` (leiden).
    r0, r_min, step : optional
        Overrides of ``[cluster]`` for the single link (see :class:`cluster.LSHLink`).
    num_perm, seed : int, optional
        Overrides of ``[minhash]`` (of ``[activity]`` for the activity clustering: its
        weighted MinHash samples and seed).
    similarity : {"jaccard", "signature"}, optional
        Override of ``[cluster] similarity`` (single) or ``leiden_similarity`` (leiden).
    keep_duplicates : bool
        Keep the non-canonical members of the latest dedup run's groups.
    progress : bool
        Show progress bars.
    linkage : {"single", "leiden"}, optional
        Override of ``[cluster] linkage``.
    resolution : float or sequence of float, optional
        Override of ``[cluster] resolution`` (leiden; several values give nested levels,
        the smallest the final clusters).
    quality : {"rb", "modularity", "cpm"}, optional
        Override of ``[cluster] quality`` (leiden).
    workers : int, optional
        Override of ``[minhash] workers``: threads signing the documents (``-1`` every
        core); the signatures do not depend on it.
    signature_store : path, optional
        Override of ``[cluster] signature_store``: a folder where the documents, streamed
        from the database in chunks, are signed into a memory-mapped
        :class:`~cluster.sigstore.SignatureStore` (replacing a store of the same MinHash
        parameters there); the clusters are those of the in-memory run.
    method : {"activity", "paper"}, optional
        ``activity``: :class:`cluster.ActivityClusterer` on the stored term counts
        (``[activity]``); ``paper``: the shingle-set methods (``linkage``). Default
        ``[cluster] method``, except that an option of the paper's methods (``linkage``,
        ``threshold``, ``r0``, ``r_min``, ``step``, ``similarity``, ``signature_store``,
        or ``[cluster] linkage`` set in the configuration) implies ``paper``.

    Returns
    -------
    dict
        ``clustering_id``, ``unit``, ``linkage``, ``n_documents``, ``n_excluded_duplicates``,
        ``dedup_run_id``, ``n_clusters``, ``n_multi`` (clusters of two or more documents),
        ``largest``, ``n_levels``, ``signatures_written``, ``signature_store`` (the
        folder or ``None``), ``workers``, ``seconds``.

    Raises
    ------
    ParameterError
        A parameter is outside what is allowed, the university is unknown, or the
        signature store folder holds a store of other MinHash parameters.
    StageError
        No document to cluster (run ``webometrics extract`` first), or documents shingled
        with different k.
    """
    cfg = settings.cluster
    unit = unit or cfg.unit
    if unit not in UNITS:
        raise ParameterError(f"unit must be page or domain, got {unit!r}")
    if direction not in DIRECTIONS:
        raise ParameterError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    paper_options = {
        "linkage": linkage, "threshold": threshold, "r0": r0, "r_min": r_min, "step": step,
        "similarity": similarity, "signature_store": signature_store,
    }  # fmt: skip
    method = resolve_method(settings, method, paper_options)
    if method == "activity":
        given = [k for k, v in paper_options.items() if v is not None]
        if given:
            raise ParameterError(
                f"{', '.join(given)} apply to --method paper; the activity clustering takes "
                "its parameters from [activity] (and --resolution, --seed, --workers)"
            )
        return _run_activity(
            engine, settings, unit=unit, university=university, direction=direction,
            seed=seed, keep_duplicates=keep_duplicates, progress=progress,
            resolution=resolution, quality=quality, workers=workers, num_perm=num_perm,
        )  # fmt: skip
    return _run_paper(
        engine, settings, unit=unit, university=university, direction=direction,
        threshold=threshold, r0=r0, r_min=r_min, step=step, num_perm=num_perm, seed=seed,
        similarity=similarity, keep_duplicates=keep_duplicates, progress=progress,
        linkage=linkage, resolution=resolution, quality=quality, workers=workers,
        signature_store=signature_store,
    )  # fmt: skip


def run_each(
    engine: Engine,
    settings: Settings,
    *,
    university: str | None = None,
    direction: str | None = None,
    **options: Any,
) -> dict[str, Any]:
    """One clustering per university and direction (the paper's per-university view).

    Parameters
    ----------
    engine, settings
        As for :func:`run`.
    university : str, optional
        ``None``: every stored university, each on its own (its own idf); ``"all"``: one
        clustering of every document (:func:`run` without a university); a name: that
        university only.
    direction : {"outgoing", "citing", "both"}, optional
        ``None``: ``outgoing`` and ``citing`` each on its own (``both`` for
        ``university="all"``).
    **options
        Passed to :func:`run`.

    Returns
    -------
    dict
        ``clusterings`` (the stats of each :func:`run`), ``skipped`` (the selections
        without documents), ``n_documents``, ``n_clusters``.

    Raises
    ------
    StageError
        No selection has a document to cluster.
    """
    if university == "all":
        selections: list[tuple[str | None, str]] = [(None, direction or "both")]
    else:
        if university is not None:
            names = [university]
        else:
            with session_scope(engine) as s:
                names = list(s.scalars(select(University.name).order_by(University.name)))
        dirs = [direction] if direction else ["outgoing", "citing"]
        selections = [(name, d) for name in names for d in dirs]
        if not selections:  # no university stored: the whole corpus
            selections = [(None, direction or "both")]
    done: list[dict[str, Any]] = []
    skipped: list[str] = []
    for name, d in selections:
        try:
            done.append(run(engine, settings, university=name, direction=d, **options))
        except StageError as err:
            if "to cluster" not in str(err) or len(selections) == 1:
                raise
            skipped.append(f"{name or 'all'} ({d})")
            log.info("nothing to cluster for %s (%s)", name or "all", d)
    if not done:
        raise StageError(
            "no documents to cluster for any university and direction: run "
            "`webometrics extract` first"
        )
    return {
        "clusterings": done,
        "skipped": skipped,
        "n_documents": sum(c["n_documents"] for c in done),
        "n_clusters": sum(c["n_clusters"] for c in done),
    }
