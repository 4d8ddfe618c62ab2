"""The parameter sweep of Table 1's benchmark (``bench/table1.py``, on Reuters-21578).

:func:`sweep_representations` compares the representations (k = 1, 2, 3 word shingles;
with and without stemming and stop words) by exact single link, one dendrogram per
representation cut at each threshold of :data:`CUT_THRESHOLDS`; :func:`sweep_lsh` runs
the LSH parameters (:data:`SCHEDULES` x :data:`SWEEP_THRESHOLDS`, seeds
:data:`SWEEP_SEEDS`) against exact single link (ARI) and the topics (class F) with their
cost, and chooses the best class F among the settings with ARI >= 0.95 and a pipeline
within 5 s (:data:`~bench.table1_common.GOALS`), confirmed with :data:`CONFIRM_SEEDS`.
``bench/table1.py`` runs it (unless ``--no-sweep``) and writes its tables.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from bench.table1_common import GOALS, ari, shingle_texts
from cluster.evaluate import hierarchical_f_measure, score_clustering

REPRESENTATIONS = [
    {"k": k, "stem": stem, "stopwords": stop}
    for k in (1, 2, 3)
    for stem, stop in ((True, True), (False, True), (False, False))
]
CUT_THRESHOLDS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6)
SCHEDULES = [  # (num_perm, r0, step, r_min)
    (64, 8, 2, 2),
    (128, 8, 1, 3),
    (128, 16, 2, 4),
    (256, 12, 3, 3),
    (512, 12, 4, 4),
    (512, 9, 3, 3),
    (768, 12, 4, 4),
    (768, 16, 4, 4),
    (1024, 12, 4, 4),
    (1024, 16, 4, 4),
    (1024, 15, 5, 5),
]
SWEEP_THRESHOLDS = (0.25, 0.3, 0.35)
SWEEP_SEEDS = (1, 2)
CONFIRM_SEEDS = (3, 4, 5)


def sweep_representations(texts: list[str], truth: list[str | None]) -> list[dict]:
    from scipy.cluster.hierarchy import fcluster

    from cluster import ExactSingleLink

    out = []
    for rep in REPRESENTATIONS:
        t0 = time.perf_counter()
        sets = shingle_texts(texts, rep)
        shingle_s = time.perf_counter() - t0
        # 1-word shingles share so much that low thresholds link nearly every pair
        t_min = 0.15 if rep["k"] == 1 else 0.05
        grid = [t for t in CUT_THRESHOLDS if t >= t_min]
        t0 = time.perf_counter()
        model = ExactSingleLink(threshold=t_min).fit(sets)
        exact_s = time.perf_counter() - t0
        f_h = hierarchical_f_measure(truth, model.linkage_matrix_, max_height=1.0)
        cuts = []
        for t in grid:
            labels = fcluster(model.linkage_matrix_, np.nextafter(1 - t, 0), "distance")
            s = score_clustering(truth, labels)
            cuts.append(
                {
                    "threshold": t,
                    **{k: s[k] for k in ("f_class", "f_pairwise", "nmi", "ari", "n_clusters")},
                }
            )
        best = max(cuts, key=lambda c: c["f_class"])
        row = {
            **rep,
            "n_shingles": int(sum(len(s) for s in sets)),
            "empty_documents": int(sum(len(s) == 0 for s in sets)),
            "shingle_seconds": shingle_s,
            "exact_threshold": t_min,
            "exact_seconds": exact_s,
            "f_hierarchical": f_h,
            "best_threshold": best["threshold"],
            "best_f_class": best["f_class"],
            "cuts": cuts,
        }
        at_03 = fcluster(model.linkage_matrix_, np.nextafter(1 - 0.3, 0), "distance")
        sizes = np.bincount(at_03)
        row["clusters_at_0.3"] = int((sizes > 0).sum())
        row["alone_at_0.3"] = int((sizes == 1).sum())
        print(
            f"  k={rep['k']} stem={rep['stem']} stop={rep['stopwords']}: best class F "
            f"{best['f_class']:.3f} at t={best['threshold']}, dendrogram F {f_h:.3f} "
            f"({shingle_s:.1f} s shingles, {exact_s:.1f} s exact)",
            flush=True,
        )
        out.append(row)
    return out


def sweep_lsh(texts: list[str], truth: list[str | None], rep: dict[str, Any]) -> dict:
    from cluster import ExactSingleLink, LSHLink, MinHasher, ShingleMatrix

    t0 = time.process_time()
    sets = shingle_texts(texts, rep)
    shingle_s = time.process_time() - t0  # CPU: wall time on a shared machine is noisy
    matrix = ShingleMatrix.from_sets(sets)
    exact = {}
    for t in SWEEP_THRESHOLDS:
        t0 = time.perf_counter()
        exact[t] = (ExactSingleLink(threshold=t).fit(matrix).labels_, time.perf_counter() - t0)
    sig_cache: dict[tuple[int, int], tuple[Any, float]] = {}

    def signatures(num_perm: int, seed: int) -> tuple[Any, float]:
        if (num_perm, seed) not in sig_cache:
            for key in [k for k in sig_cache if k[0] != num_perm]:
                del sig_cache[key]  # keep the signatures of one num_perm at a time
            t0 = time.process_time()
            sig = MinHasher(num_perm=num_perm, seed=seed).sign(sets)
            sig_cache[(num_perm, seed)] = (sig, time.process_time() - t0)
        return sig_cache[(num_perm, seed)]

    runs = []
    for num_perm, r0, step, r_min in SCHEDULES:
        for t in SWEEP_THRESHOLDS:
            run: dict[str, Any] = {
                "num_perm": num_perm,
                "r0": r0,
                "step": step,
                "r_min": r_min,
                "threshold": t,
            }
            per_seed = []
            for seed in SWEEP_SEEDS:
                sig, sig_s = signatures(num_perm, seed)
                model = LSHLink(
                    threshold=t, r0=r0, r_min=r_min, step=step, num_perm=num_perm, seed=seed
                )
                t0, c0 = time.perf_counter(), time.process_time()
                try:
                    model.fit(sets, signatures=sig)
                except ValueError as exc:  # the pair guard: too many candidates
                    run["error"] = str(exc)
                    break
                levels_s = time.perf_counter() - t0
                s = score_clustering(truth, model.labels_)
                per_seed.append(
                    {
                        "seed": seed,
                        "levels_seconds": levels_s,
                        "levels_cpu_seconds": time.process_time() - c0,
                        "signature_seconds": sig_s,
                        "n_compared": model.n_compared_,
                        "ari_vs_exact": ari(exact[t][0], model.labels_),
                        "f_class": s["f_class"],
                        "f_pairwise": s["f_pairwise"],
                        "nmi": s["nmi"],
                        "n_clusters": s["n_clusters"],
                    }
                )
            if "error" not in run:
                for key in (
                    "levels_seconds",
                    "levels_cpu_seconds",
                    "signature_seconds",
                    "n_compared",
                    "f_class",
                    "f_pairwise",
                    "nmi",
                    "n_clusters",
                ):
                    run[key] = float(np.mean([p[key] for p in per_seed]))
                run["ari_vs_exact"] = min(p["ari_vs_exact"] for p in per_seed)
                run["ari_vs_exact_seeds"] = [p["ari_vs_exact"] for p in per_seed]
                run["pipeline_seconds_est"] = (
                    shingle_s + run["signature_seconds"] + run["levels_cpu_seconds"]
                )
                run["exact_seconds"] = exact[t][1]
                print(
                    f"  P={num_perm:4d} r0={r0:2d} Δ={step} r_min={r_min} t={t}: ARI vs exact "
                    f"{', '.join(f'{a:.3f}' for a in run['ari_vs_exact_seeds'])}, class F "
                    f"{run['f_class']:.3f}, {run['levels_seconds']:.2f} s levels, "
                    f"{run['n_compared']:.0f} pairs",
                    flush=True,
                )
            runs.append(run)
    ok = [
        r
        for r in runs
        if "error" not in r
        and r["ari_vs_exact"] >= GOALS["ari_lsh_vs_exact_default"]
        and r["pipeline_seconds_est"] <= GOALS["lsh_pipeline_seconds_21578"]
    ]
    # confirm the best candidates with three more seeds: the choice must hold for all five
    # class F to the percent shown (finer differences are noise), then the cheaper
    ok.sort(key=lambda r: (-round(r["f_class"], 2), r["pipeline_seconds_est"]))
    chosen, confirmed = None, []
    for cand in ok[:4]:
        seeds = []
        for seed in CONFIRM_SEEDS:
            sig, _ = signatures(cand["num_perm"], seed)
            model = LSHLink(
                threshold=cand["threshold"],
                r0=cand["r0"],
                r_min=cand["r_min"],
                step=cand["step"],
                num_perm=cand["num_perm"],
                seed=seed,
            ).fit(sets, signatures=sig)
            seeds.append(
                {
                    "seed": seed,
                    "ari_vs_exact": ari(exact[cand["threshold"]][0], model.labels_),
                    "f_class": score_clustering(truth, model.labels_)["f_class"],
                }
            )
        worst = min([cand["ari_vs_exact"], *(x["ari_vs_exact"] for x in seeds)])
        name = {k: cand[k] for k in ("num_perm", "r0", "step", "r_min", "threshold")}
        confirmed.append({**name, "other_seeds": seeds, "ari_min_all_seeds": worst})
        print(f"  confirm {name}: ARI over five seeds >= {worst:.3f}", flush=True)
        if worst >= GOALS["ari_lsh_vs_exact_default"]:
            chosen = {**cand, "other_seeds": seeds, "ari_min_all_seeds": worst}
            break
    seeds = chosen["other_seeds"] if chosen else []
    return {
        "representation": rep,
        "shingle_seconds": shingle_s,
        "runs": runs,
        "chosen": chosen,
        "chosen_other_seeds": seeds,
        "confirmed": confirmed,
    }
