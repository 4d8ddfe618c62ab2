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

The entry point is :func:`run` (one clustering per university and direction of a
:class:`ClusterScope`); :func:`cluster_one` makes one clustering. Every parameter comes
from the settings: ``[cluster] method`` (see :func:`resolve_method`) chooses
:func:`.activity.run_activity` or :func:`.paper.run_paper`; :mod:`.documents` loads the
documents to cluster, :mod:`.signatures` stores the MinHash signatures and
:mod:`.storing` writes a clustering.
"""

from __future__ import annotations

import dataclasses
import logging

from sqlalchemy import Engine, select

from core.choices import DIRECTION_CHOICES
from core.exceptions import NothingToDoError, ParameterError
from core.settings import Settings
from store.models import University
from store.session import session_scope
from webometrics.stages import StageResult, refreshes_figures
from webometrics.stages.cluster.activity import run_activity
from webometrics.stages.cluster.documents import Selection
from webometrics.stages.cluster.paper import run_paper
from webometrics.stages.cluster.storing import ClusteringResult

__all__ = [
    "ClusterResult",
    "ClusterScope",
    "ClusteringResult",
    "cluster_one",
    "resolve_method",
    "run",
]

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class ClusterScope:
    """What a cluster run works on.

    Parameters
    ----------
    university : str, optional
        ``None``: every stored university, each on its own (its own idf); ``"all"``: one
        clustering of every document; a name: that university only.
    direction : {"outgoing", "citing", "both"}, optional
        ``None``: ``outgoing`` and ``citing`` each on its own (``both`` with
        ``university="all"``).
    keep_duplicates : bool
        Also cluster the non-canonical members of the latest dedup run's groups.
    """

    university: str | None = None
    direction: str | None = None
    keep_duplicates: bool = False


@dataclasses.dataclass(frozen=True)
class ClusterResult(StageResult):
    """The clusterings of a cluster run.

    Attributes
    ----------
    clusterings : tuple of ClusteringResult
        One per university and direction with documents, in order.
    skipped : tuple of str
        The selections without documents, as ``"<university> (<direction>)"``.
    n_documents, n_clusters : int
        Totals over the clusterings.
    """

    clusterings: tuple[ClusteringResult, ...]
    skipped: tuple[str, ...]
    n_documents: int
    n_clusters: int


def resolve_method(settings: Settings) -> str:
    """The clustering method of the settings: ``[cluster] method``, except that a
    configuration setting ``[cluster] linkage`` (and not ``method``) asks for ``paper``.

    >>> resolve_method(Settings())
    'activity'
    >>> resolve_method(Settings().replace(cluster={"linkage": "leiden"}))
    'paper'
    """
    chosen = settings.cluster.model_fields_set
    if "linkage" in chosen and "method" not in chosen:
        return "paper"
    return settings.cluster.method


def cluster_one(
    engine: Engine,
    settings: Settings,
    university: str | None = None,
    direction: str = "both",
    *,
    keep_duplicates: bool = False,
    progress: bool = False,
) -> ClusteringResult:
    """Cluster the stored documents of ``[cluster] unit`` (activity, LSH single link or
    Leiden) and store the result.

    Parameters
    ----------
    engine : Engine
    settings : Settings
        Every parameter: ``[cluster]`` (``unit``, ``method``, ``linkage``, the paper's
        ``threshold``, ``r0`` ..., ``signature_store``), ``[minhash]`` (``num_perm``,
        ``seed``, ``workers``: threads signing the documents) and ``[activity]``. The
        method is :func:`resolve_method`'s: ``activity`` is
        :class:`cluster.ActivityClusterer` on the stored term counts; ``paper`` is
        :class:`cluster.LSHLink` (``linkage = "single"``) or :class:`cluster.LSHLeiden`
        (``"leiden"``) on the shingle sets. With ``signature_store`` (a folder) the
        documents, streamed from the database in chunks, are signed into a memory-mapped
        :class:`~cluster.sigstore.SignatureStore` (replacing a store of the same MinHash
        parameters there); the clusters are those of the in-memory run.
    university : str, optional
        Only the documents of this university's environment (its name); default all.
    direction : {"outgoing", "citing", "both"}
        Only the domains the university links to, that link to it, or both.
    keep_duplicates : bool
        Keep the non-canonical members of the latest dedup run's groups.
    progress : bool
        Show progress bars.

    Returns
    -------
    ClusteringResult

    Raises
    ------
    ParameterError
        A parameter is outside what is allowed, the direction or the university is
        unknown, or the signature store folder holds a store of other MinHash parameters.
    NothingToDoError
        No document to cluster (run ``webometrics extract`` first).
    StageError
        Documents shingled with different k, or without stored term counts.
    """
    if direction not in DIRECTION_CHOICES:
        choices = ", ".join(DIRECTION_CHOICES)
        raise ParameterError(f"direction must be one of {choices}, got {direction!r}")
    selection = Selection(settings.cluster.unit, university, direction, keep_duplicates)
    if resolve_method(settings) == "activity":
        return run_activity(engine, settings, selection, progress=progress)
    return run_paper(engine, settings, selection, progress=progress)


@refreshes_figures
def run(
    engine: Engine,
    settings: Settings,
    scope: ClusterScope | None = None,
    *,
    progress: bool = False,
) -> ClusterResult:
    """One clustering per university and direction (the paper's per-university view),
    each made by :func:`cluster_one`.

    Parameters
    ----------
    engine : Engine
    settings : Settings
        Every parameter (see :func:`cluster_one`).
    scope : ClusterScope, optional
        Which universities and directions; default each stored university on its own,
        outgoing and citing each on its own (the whole corpus when no university is
        stored).
    progress : bool
        Show progress bars.

    Returns
    -------
    ClusterResult

    Raises
    ------
    NothingToDoError
        No selection has a document to cluster (with a single selection, its own
        message).
    ParameterError, StageError
        As for :func:`cluster_one`.
    """
    scope = scope or ClusterScope()
    selections = _selections(engine, scope)
    done: list[ClusteringResult] = []
    skipped: list[str] = []
    for name, d in selections:
        try:
            done.append(
                cluster_one(engine, settings, name, d,
                            keep_duplicates=scope.keep_duplicates, progress=progress)
            )  # fmt: skip
        except NothingToDoError:
            if len(selections) == 1:
                raise
            skipped.append(f"{name or 'all'} ({d})")
            log.info("nothing to cluster for %s (%s)", name or "all", d)
    if not done:
        raise NothingToDoError(
            "no documents to cluster for any university and direction: run "
            "`webometrics extract` first"
        )
    return ClusterResult(
        clusterings=tuple(done),
        skipped=tuple(skipped),
        n_documents=sum(c.n_documents for c in done),
        n_clusters=sum(c.n_clusters for c in done),
    )


def _selections(engine: Engine, scope: ClusterScope) -> list[tuple[str | None, str]]:
    """The (university, direction) pairs of a scope; ``None``: every document."""
    if scope.university == "all":
        return [(None, scope.direction or "both")]
    if scope.university is not None:
        names = [scope.university]
    else:
        with session_scope(engine) as s:
            names = list(s.scalars(select(University.name).order_by(University.name)))
    dirs = [scope.direction] if scope.direction else ["outgoing", "citing"]
    selections: list[tuple[str | None, str]] = [(name, d) for name in names for d in dirs]
    # no university stored: the whole corpus
    return selections or [(None, scope.direction or "both")]
