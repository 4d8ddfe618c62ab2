"""``webometrics cluster``: group the stored documents by kind of activity (the activity
clustering by default; the paper's LSH single link or Leiden with ``--method paper``)."""

from __future__ import annotations

import argparse

from core.choices import (
    CLUSTER_METHODS,
    DIRECTION_CHOICES,
    LINKAGES,
    QUALITIES,
    SIMILARITIES,
    UNITS,
)

ORDER = 50


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cluster",
        epilog=(
            "lock: `cluster` and `analyse` share one lock: either exits 4 while the other (or"
            " a `webometrics run`) runs on the same database, naming it; a `crawl` or "
            "`extract` may run meanwhile (README 'Scheduled runs')."
        ),
        help="group the stored page or domain documents by kind of activity, per university",
        description="By default (--method activity, [activity]) the stored term counts of "
        "each university's external domains become tf-idf vectors whose k nearest "
        "neighbours by cosine (every pair compared while that is cheap, else candidates "
        "from weighted MinHash + LSH decided by exact cosine) form a "
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
        "a --signature-store.",
    )
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
    p.set_defaults(func=_cluster)


def _cluster(ctx) -> int:
    from webometrics.stages.cluster import run_each

    a = ctx.args
    from webometrics.runlock import stage_lock

    with stage_lock(ctx.engine(), "cluster"):  # exit 4 naming the holder
        result = run_each(
            ctx.engine(),
            ctx.settings,
            method=a.method,
            unit=a.unit,
            university=a.university,
            direction=a.direction,
            threshold=a.threshold,
            r0=a.r0,
            r_min=a.r_min,
            step=a.step,
            num_perm=a.num_perm,
            seed=a.seed,
            similarity=a.similarity,
            keep_duplicates=a.keep_duplicates,
            progress=not a.quiet,
            linkage=a.linkage,
            resolution=a.resolution,
            quality=a.quality,
            workers=a.workers,
            signature_store=a.signature_store,
        )
    for stats in result["clusterings"]:
        _print(stats, a.keep_duplicates)
    if result["skipped"]:
        print(f"nothing to cluster for {', '.join(result['skipped'])}")
    return 0


def _print(stats: dict, keep_duplicates: bool) -> None:
    dup = stats["n_excluded_duplicates"]
    if stats["dedup_run_id"] is None:
        dup_note = "no dedup run yet (run `webometrics dedup` to leave out fuzzy duplicates)"
    elif keep_duplicates:
        dup_note = f"duplicates of dedup run {stats['dedup_run_id']} kept"
    else:
        dup_note = f"{dup} duplicates of dedup run {stats['dedup_run_id']} left out"
    scope = f"{stats['university'] or 'all universities'} ({stats['direction']})"
    method = "activity" if stats.get("method") == "activity" else f"{stats['linkage']} linkage"
    print(
        f"clustering {stats['clustering_id']} ({method}) of {scope}: "
        f"{stats['n_documents']} {stats['unit']} "
        f"documents -> {stats['n_clusters']} clusters ({stats['n_multi']} with 2+ documents, "
        f"largest {stats['largest']}) over {stats['n_levels']} levels; {dup_note}; "
        f"{stats['signatures_written']} signatures stored"
        + (f", signature store {stats['signature_store']}" if stats["signature_store"] else "")
        + f" ({stats['seconds']:.1f} s)"
    )
