"""``webometrics cluster``: group the stored documents by kind of activity (the activity
clustering by default; the paper's LSH single link or Leiden with ``--method paper``).

The options that override a configuration key land in their section of the settings
(:func:`cluster_settings`); the stage reads the settings only.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from core.choices import (
    CLUSTER_METHODS,
    DIRECTION_CHOICES,
    LINKAGES,
    QUALITIES,
    SIMILARITIES,
    UNITS,
)
from core.exceptions import ParameterError
from core.settings import Settings

if TYPE_CHECKING:
    from webometrics.cli import Context
    from webometrics.stages.cluster import ClusteringResult

ORDER = 50

#: the options of the paper's methods: given without --method, they imply --method paper
PAPER_OPTIONS = ("linkage", "threshold", "r0", "r_min", "step", "similarity", "signature_store")

EPILOG = (
    "lock: `cluster` and `analyse` share one lock: either exits 4 while the other (or"
    " a `webometrics run`) runs on the same database, naming it; a `crawl` or "
    "`extract` may run meanwhile (docs/operations.md)."
)

DESCRIPTION = (
    "By default (--method activity, [activity]) the stored term counts of "
    "each university's external domains become tf-idf vectors whose k nearest "
    "neighbours by cosine (exact, every pair compared, up to about 200,000 documents; "
    "NN-descent above: [activity] candidates) form a "
    "graph whose nested Leiden communities are the clusters: one clustering per "
    "university and direction (outgoing, citing), each with its own idf; --university "
    "NAME for one university, --university all for one clustering of every document. "
    "With --method paper (implied by --linkage, --threshold, --r0 ...): "
    "sign the stored documents' shingles with MinHash and run the paper's "
    "modified LSH single-link agglomeration: level by level, r rows per band from r0 "
    "down to r_min by step, clusters merge when two of their documents share a bucket "
    "and their Jaccard similarity exceeds the threshold. Stores the signatures, the "
    "clustering, its levels and its clusters. Non-canonical members of the latest "
    "`webometrics dedup` run are left out. With --linkage leiden the documents sharing "
    "an LSH bucket whose similarity exceeds [cluster] leiden_threshold become the "
    "weighted edges of a graph whose Leiden communities are the clusters, one level per "
    "resolution. Defaults come from [cluster] and [minhash]; the same parameters and "
    "seed give the same clusters, whatever the number of --workers and with or without "
    "a --signature-store."
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cluster",
        epilog=EPILOG,
        help="group the stored page or domain documents by kind of activity, per university",
        description=DESCRIPTION,
    )
    _scope_options(p)
    _paper_options(p)
    _leiden_options(p)
    _run_options(p)
    p.set_defaults(func=_cluster)


def _scope_options(p: argparse.ArgumentParser) -> None:
    """Which documents: unit, university, direction."""
    p.add_argument("--unit", choices=UNITS, help="default: [cluster] unit")
    p.add_argument(
        "--university",
        metavar="NAME",
        help="only this university's environment; `all`: one clustering of every document "
        "(default: each university on its own)",
    )
    p.add_argument(
        "--direction",
        choices=DIRECTION_CHOICES,
        help="domains the university links to, that link to it, or both (default: outgoing "
        "and citing each on its own; both with --university all)",
    )


def _paper_options(p: argparse.ArgumentParser) -> None:
    """The method, and the parameters of the paper's methods."""
    p.add_argument(
        "--method",
        choices=CLUSTER_METHODS,
        help="activity: tf-idf k-NN graph + Leiden ([activity]); paper: the shingle-set "
        "methods of --linkage (default: [cluster] method, activity)",
    )
    p.add_argument("--threshold", type=float, metavar="T", help="similarity threshold t in (0, 1)")
    p.add_argument("--r0", type=int, help="rows per band at the first level")
    p.add_argument("--r-min", type=int, dest="r_min", help="rows per band at the last level")
    p.add_argument("--step", type=int, help="decrease of r per level (Δ)")
    p.add_argument("--num-perm", type=int, dest="num_perm", help="MinHash permutations")
    p.add_argument("--seed", type=int, help="seed of the permutations and bucket choices")
    p.add_argument(
        "--similarity",
        choices=SIMILARITIES,
        help="exact Jaccard of the shingle sets, or the share of equal MinHash rows; "
        "weighted: the paper's single link on the stored term counts (tf-idf, weighted "
        "MinHash, exact cosine against --threshold)",
    )
    p.add_argument(
        "--linkage",
        choices=LINKAGES,
        help="the paper's LSH single link, or Leiden communities of the LSH candidate graph "
        "(default: [cluster] linkage)",
    )


def _leiden_options(p: argparse.ArgumentParser) -> None:
    """The Leiden levels (of the activity clustering too)."""
    p.add_argument(
        "--resolution",
        type=float,
        nargs="+",
        metavar="GAMMA",
        help="leiden: resolution(s); several give nested levels, the smallest the clusters "
        "(default: [cluster] resolution)",
    )
    p.add_argument(
        "--quality",
        choices=QUALITIES,
        help="leiden: quality function (default: [cluster] quality)",
    )
    p.add_argument(
        "--coarser",
        type=float,
        nargs="*",
        metavar="FACTOR",
        help="activity: coarser levels stored beside the clusters, as factors of their "
        "resolution between 0 and 1 (0.5: a level at half of it, merging whole clusters); "
        "the option alone: none (default: [activity] coarser)",
    )


def _run_options(p: argparse.ArgumentParser) -> None:
    """How the run signs the documents (threads, a signature store); duplicates."""
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="threads signing the documents; -1 every core (default: [minhash] workers, -1)",
    )
    p.add_argument(
        "--signature-store",
        dest="signature_store",
        metavar="DIR",
        help="stream the documents from the database in chunks into a memory-mapped signature "
        "store in folder DIR instead of loading all shingles, for corpora larger than memory "
        "(a store of other MinHash parameters there is refused; default: [cluster] "
        "signature_store, none)",
    )
    p.add_argument(
        "--keep-duplicates",
        action="store_true",
        help="also cluster the non-canonical members of the latest dedup run's groups",
    )


def cluster_settings(settings: Settings, args: argparse.Namespace) -> Settings:
    """The settings of a ``webometrics cluster`` run: each option given lands in its key.

    An option of the paper's methods (:data:`PAPER_OPTIONS`) implies ``--method paper``
    unless ``--method`` is given. ``--num-perm``, ``--seed``, ``--resolution``,
    ``--quality`` and ``--coarser`` set ``[activity]`` for the activity clustering (the
    paper's methods refuse ``--coarser``); for the paper's methods
    ``--num-perm`` and ``--seed`` set ``[minhash]``, and the others the keys of the
    linkage (:func:`_paper_keys`). ``--workers`` sets ``[minhash] workers``.

    Raises
    ------
    ParameterError
        An option of the paper's methods with ``--method activity``, an option of the
        other linkage, or a value a key does not allow (the key named).
    """
    from webometrics.stages.cluster import resolve_method

    given = [k for k in PAPER_OPTIONS if getattr(args, k) is not None]
    if args.method == "activity" and given:
        raise ParameterError(
            f"{', '.join(given)} apply to --method paper; the activity clustering takes "
            "its parameters from [activity] (and --resolution, --seed, --workers)"
        )
    method = args.method or ("paper" if given else None)
    settings = settings.with_options(
        cluster={"method": method, "unit": args.unit, "linkage": args.linkage,
                 "signature_store": args.signature_store},
        minhash={"workers": args.workers},
    )  # fmt: skip
    if resolve_method(settings) == "activity":
        activity = {"num_perm": args.num_perm, "seed": args.seed, "coarser": args.coarser,
                    "resolution": args.resolution, "quality": args.quality}  # fmt: skip
        return settings.with_options(activity=activity)
    if args.coarser is not None:
        raise ParameterError(
            "--coarser sets the activity clustering's coarser levels; the paper's methods "
            "have none: leave it out, or use --method activity"
        )
    return settings.with_options(
        cluster=_paper_keys(settings, args),
        minhash={"num_perm": args.num_perm, "seed": args.seed},
    )


def _paper_keys(settings: Settings, args: argparse.Namespace) -> dict[str, Any]:
    """The ``[cluster]`` keys the options set for the paper's linkage of ``settings``."""
    from cluster.graph_leiden import check_quality
    from webometrics.stages.cluster.paper import WEIGHTED_ALONE

    if settings.cluster.linkage == "leiden":
        levels = [k for k in ("r0", "r_min", "step") if getattr(args, k) is not None]
        if levels:
            raise ParameterError(
                f"{', '.join(levels)} set the levels of --linkage single; leiden bands with "
                "[cluster] leiden_rows and leiden_bands and takes --resolution levels"
            )
        if args.similarity == "weighted":
            raise ParameterError(WEIGHTED_ALONE)
        if args.resolution is not None:
            # modularity takes no resolution; it ignores only [cluster] resolution's
            check_quality(args.quality or settings.cluster.quality, args.resolution)
        return {"leiden_threshold": args.threshold, "leiden_similarity": args.similarity,
                "resolution": args.resolution, "quality": args.quality}  # fmt: skip
    if args.resolution is not None or args.quality is not None:
        raise ParameterError("--resolution and --quality apply to --linkage leiden")
    return {"threshold": args.threshold, "r0": args.r0, "r_min": args.r_min,
            "step": args.step, "similarity": args.similarity}  # fmt: skip


def _cluster(ctx: Context) -> int:
    from webometrics.runlock import stage_lock
    from webometrics.stages.cluster import ClusterScope, run

    a = ctx.args
    settings = cluster_settings(ctx.settings, a)
    scope = ClusterScope(
        university=a.university, direction=a.direction, keep_duplicates=a.keep_duplicates
    )
    with stage_lock(ctx.engine(), "cluster"):  # exit 4 naming the holder
        result = run(ctx.engine(), settings, scope, progress=not a.quiet)
    for stats in result.clusterings:
        _print(stats, a.keep_duplicates)
    if result.skipped:
        print(f"nothing to cluster for {', '.join(result.skipped)}")
    return 0


def _print(stats: ClusteringResult, keep_duplicates: bool) -> None:
    dup = stats.n_excluded_duplicates
    if stats.dedup_run_id is None:
        dup_note = "no dedup run yet (run `webometrics dedup` to leave out fuzzy duplicates)"
    elif keep_duplicates:
        dup_note = f"duplicates of dedup run {stats.dedup_run_id} kept"
    else:
        dup_note = f"{dup} duplicates of dedup run {stats.dedup_run_id} left out"
    scope = f"{stats.university or 'all universities'} ({stats.direction})"
    method = "activity" if stats.method == "activity" else f"{stats.linkage} linkage"
    print(
        f"clustering {stats.clustering_id} ({method}) of {scope}: "
        f"{stats.n_documents} {stats.unit} "
        f"documents -> {stats.n_clusters} clusters ({stats.n_multi} with 2+ documents, "
        f"largest {stats.largest}) over {stats.n_levels} levels; {dup_note}; "
        f"{stats.signatures_written} signatures stored"
        + (f", signature store {stats.signature_store}" if stats.signature_store else "")
        + f" ({stats.seconds:.1f} s)"
    )
