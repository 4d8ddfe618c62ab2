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
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine, insert, select, update
from tqdm import tqdm

from core.exceptions import ParameterError, StageError
from core.settings import Settings
from store.models import (
    Cluster,
    Clustering,
    ClusterMember,
    DedupRun,
    Document,
    DuplicateGroup,
    DuplicateMember,
    Environment,
    Signature,
    University,
)
from store.session import session_scope

log = logging.getLogger(__name__)

DIRECTIONS = ("outgoing", "citing", "both")
LINKAGES = ("single", "leiden")


def _university_id(s: Any, name: str) -> int:
    uid = s.scalar(select(University.id).where(University.name == name))
    if uid is None:
        known = s.scalars(select(University.name).order_by(University.name).limit(8)).all()
        hint = f" (stored: {', '.join(known)}{' ...' if len(known) == 8 else ''})" if known else ""
        raise ParameterError(
            f"no university named {name!r}{hint}: see `webometrics universities list`"
        )
    return int(uid)


def _load(
    engine: Engine,
    unit: str,
    university: str | None,
    direction: str,
    keep_duplicates: bool,
    with_shingles: bool = True,
    with_terms: bool = False,
) -> dict[str, Any]:
    """Ids, domains and shingles (or term counts) of the documents to cluster, and what
    was left out; a :class:`StageError` when none is left (``run_each`` skips that
    selection).

    Without shingles (``with_shingles=False``: they are streamed later by
    :func:`_stream_shingles`), ``shingles`` is ``None``. With ``with_terms``, ``terms``
    holds each document's stored term counts (``None`` where not stored yet).
    """
    with session_scope(engine) as s:
        uid = _university_id(s, university) if university else None
        shingles_col = Document.shingles if with_shingles else Document.n_shingles
        cols = [Document.id, Document.domain, shingles_col, Document.shingle_k]
        if with_terms:
            cols.append(Document.terms)
        stmt = select(*cols).where(Document.unit == unit)
        if uid is not None or direction != "both":
            env = select(Environment.domain).distinct()
            if uid is not None:
                env = env.where(Environment.university_id == uid)
            if direction != "both":
                env = env.where(Environment.direction == direction)
            stmt = stmt.where(Document.domain.in_(env.scalar_subquery()))
        rows = s.execute(stmt.order_by(Document.id)).all()
        dedup_run_id = s.scalar(
            select(DedupRun.id)
            .where(DedupRun.unit == unit)
            .order_by(DedupRun.created_at.desc(), DedupRun.id.desc())
            .limit(1)
        )
        duplicates: set[int] = set()
        if dedup_run_id is not None and not keep_duplicates:
            duplicates = set(
                s.scalars(
                    select(DuplicateMember.document_id)
                    .join(DuplicateGroup, DuplicateMember.group_id == DuplicateGroup.id)
                    .where(
                        DuplicateGroup.dedup_run_id == dedup_run_id,
                        DuplicateMember.document_id != DuplicateGroup.canonical_document_id,
                    )
                )
            )
    kept = [r for r in rows if r.id not in duplicates]
    if not kept:
        scope = f" of {university}" if university else ""
        raise StageError(
            f"no {unit} documents{scope} to cluster (direction {direction}, "
            f"{len(rows)} left out as duplicates): run `webometrics extract` first, "
            f"or choose another --unit/--university/--direction"
        )
    ks = sorted({r.shingle_k for r in kept if r.shingle_k})
    return {
        "university_id": uid,
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


_ID_BATCH = 500  # ids per IN (...) query: far below any database's parameter limit


def _fetch_shingles(engine: Engine, ids: Sequence[int]) -> list[np.ndarray]:
    """The shingles of the documents ``ids``, in that order."""
    got: dict[int, np.ndarray] = {}
    with engine.connect() as conn:
        for start in range(0, len(ids), _ID_BATCH):
            batch = [int(i) for i in ids[start : start + _ID_BATCH]]
            rows = conn.execute(
                select(Document.id, Document.shingles).where(Document.id.in_(batch))
            )
            got.update((int(r.id), _shingles(r.shingles)) for r in rows)
    missing = [int(i) for i in ids if int(i) not in got]
    if missing:
        raise StageError(
            f"{len(missing)} documents (ids {missing[:5]}) were deleted while clustering: "
            "run `webometrics cluster` again"
        )
    return [got[int(i)] for i in ids]


def _stream_shingles(
    engine: Engine, ids: Sequence[int], chunk: int = 2000
) -> Iterator[list[np.ndarray]]:
    """The shingles of the documents ``ids`` in order, ``chunk`` documents at a time."""
    for start in range(0, len(ids), chunk):
        yield _fetch_shingles(engine, ids[start : start + chunk])


class _DatabaseShingles:
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


def _store_signatures(engine: Engine, ids: Sequence[int], signatures: Any, hash_name: str) -> int:
    """Insert or refresh the signature rows; return how many were written.

    Works through the documents in batches (the signatures may be memory-mapped from a
    store larger than memory).
    """
    params = signatures.params
    same = (
        Signature.num_perm == params["num_perm"],
        Signature.seed == params["seed"],
        Signature.scheme == params["scheme"],
        Signature.hash_func == hash_name,
    )
    written = 0
    with session_scope(engine) as s:
        for start in range(0, len(ids), _ID_BATCH):
            batch = [int(i) for i in ids[start : start + _ID_BATCH]]
            existing = dict(
                s.execute(
                    select(Signature.document_id, Signature.hashvalues).where(
                        Signature.document_id.in_(batch), *same
                    )
                )
                .tuples()
                .all()
            )
            new_rows, changed = [], []
            for k, doc_id in enumerate(batch, start=start):
                value = signatures.row_bytes(k)
                old = existing.get(doc_id)
                if old is None:
                    new_rows.append(
                        {
                            "document_id": doc_id,
                            "num_perm": params["num_perm"],
                            "seed": params["seed"],
                            "scheme": params["scheme"],
                            "hash_func": hash_name,
                            "hashvalues": value,
                        }
                    )
                elif bytes(old) != value:
                    changed.append((doc_id, value))
            if new_rows:
                s.execute(insert(Signature), new_rows)
            for doc_id, value in changed:
                s.execute(
                    update(Signature)
                    .where(Signature.document_id == doc_id, *same)
                    .values(hashvalues=value)
                )
            written += len(new_rows) + len(changed)
    return written


def _sign_into_store(
    engine: Engine, ids: Sequence[int], folder: Path, model: Any, workers: int, progress: bool
) -> tuple[Any, np.ndarray]:
    """Stream the documents' shingles into the signature store ``folder``; return its
    memory-mapped signatures and the shingles per document."""
    from cluster.minhash import MinHasher
    from cluster.sigstore import SignatureStore

    hasher = MinHasher(num_perm=int(model.num_perm), seed=int(model.seed), scheme=model.scheme)
    bar = tqdm(total=len(ids), desc=f"sign into {folder}", unit="doc", disable=not progress or None)
    try:
        store = SignatureStore.write(
            folder,
            hasher,
            _stream_shingles(engine, ids),
            ids=ids,
            n_jobs=workers,
            progress=bar.update,
        )
    finally:
        bar.close()
    log.info("signed %d documents into %s", len(store), folder)
    return store.signatures(), store.lengths


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


def _leiden_resolution(
    given: float | Sequence[float] | None, quality: str, configured: Sequence[float]
) -> float | list[float] | None:
    """The resolution(s) of a Leiden run: the given ones, else the configured levels
    (modularity, which has none, takes none)."""
    if given is not None:
        return given if isinstance(given, int | float) else list(given)
    return None if quality == "modularity" else list(configured)


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
    from cluster.lsh_leiden import LSHLeiden
    from cluster.lsh_link import LSHLink
    from extract.shingles import HASH_NAME

    cfg, mh = settings.cluster, settings.minhash
    unit = unit or cfg.unit
    if unit not in ("page", "domain"):
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
    linkage = linkage or cfg.linkage
    if linkage not in LINKAGES:
        raise ParameterError(f"linkage must be one of {', '.join(LINKAGES)}, got {linkage!r}")
    num_perm = mh.num_perm if num_perm is None else num_perm
    workers = mh.workers if workers is None else workers
    store_dir = signature_store if signature_store is not None else cfg.signature_store
    model: Any
    if linkage == "leiden":
        given = [k for k, v in (("r0", r0), ("r_min", r_min), ("step", step)) if v is not None]
        if given:
            raise ParameterError(
                f"{', '.join(given)} set the levels of --linkage single; leiden bands with "
                "[cluster] leiden_rows and leiden_bands and takes --resolution levels"
            )
        rows = cfg.leiden_rows
        model = LSHLeiden(
            threshold=cfg.leiden_threshold if threshold is None else threshold,
            num_perm=num_perm,
            seed=mh.seed if seed is None else seed,
            rows=rows,
            # the bench's banding (bench/results/linkage.md), fewer bands on short signatures
            bands=min(cfg.leiden_bands, max(1, num_perm // rows)),
            resolution=_leiden_resolution(resolution, quality or cfg.quality, cfg.resolution),
            quality=quality or cfg.quality,
            similarity=similarity or cfg.leiden_similarity,
            max_neighbours=cfg.max_neighbours,
            scheme=mh.scheme,
            n_jobs=workers,
            band_memory_mb=cfg.band_memory_mb,
        )
        n_levels = len(model.resolutions())  # validates the parameters before any work
    else:
        if resolution is not None or quality is not None:
            raise ParameterError("--resolution and --quality apply to --linkage leiden")
        model = LSHLink(
            threshold=cfg.threshold if threshold is None else threshold,
            r0=cfg.r0 if r0 is None else r0,
            r_min=cfg.r_min if r_min is None else r_min,
            step=cfg.step if step is None else step,
            num_perm=num_perm,
            seed=mh.seed if seed is None else seed,
            similarity=similarity or cfg.similarity,
            scheme=mh.scheme,
            n_jobs=workers,
            band_memory_mb=cfg.band_memory_mb,
        )
        n_levels = len(model.rows_per_level())  # validates the parameters before any work
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
    parameters = {
        **{
            k: v
            for k, v in model.get_params().items()
            if k
            not in ("max_pairs", "n_jobs", "band_memory_mb")  # the clusters do not depend on them
        },
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


METHODS = ("activity", "paper")


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

    a = settings.activity
    res = resolution if resolution is not None else list(a.resolution)
    return ActivityClusterer(
        n_neighbors=a.n_neighbors,
        resolution=res if isinstance(res, int | float) else list(res),
        quality=quality or a.quality,
        min_df=a.min_df,
        max_df=a.max_df,
        candidates=a.candidates,
        num_perm=a.num_perm if num_perm is None else num_perm,
        rows=a.rows,
        max_bucket=a.max_bucket,
        refine=a.refine,
        seed=a.seed if seed is None else seed,
        n_jobs=settings.minhash.workers if workers is None else workers,
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
    try:
        model._validate()
    except ValueError as err:
        raise ParameterError(str(err)) from None
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
        **{k: v for k, v in model.get_params().items() if k != "n_jobs"},
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


def _check_terms(terms: Sequence[Any], unit: str, university: str | None) -> None:
    """Raise unless every document has stored term counts."""
    missing = sum(t is None for t in terms)
    if missing:
        scope = f" of {university}" if university else ""
        raise StageError(
            f"{missing} of the {len(terms)} {unit} documents{scope} have no stored term "
            "counts (extracted before they were kept): run "
            "`webometrics extract --rebuild-documents`"
        )


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
