"""Cluster purity by category, and how far the two share definitions differ and which is
nearer the truth, on a crawled and analysed database with the test web's manifest.

The paper drew its category shares from the clusters (each cluster's members counted in
the cluster's voted category); the pipeline counts each domain in its own category
(:mod:`store.analytics.shares`). Whether the paper's way is sound depends on how pure the
clusters are by category. Measured here, on the chosen clusterings of the latest run (per
university and direction the newest clustering of the default method, as the figures
read them):

* per cluster: size, the voted category and its support, the category its members are
  counted in (``mixed`` when the support is at most 0.5), its purity by the members' own
  stored categories (the share of members whose category, the analyst's override first,
  is the cluster's) and by the manifest (the share whose true category, from the test
  web's manifest, is the cluster's), and the best purity any one category could reach
  (the manifest's majority share);
* pooled over every cluster (member-weighted) and by direction;
* per university x direction x category: the share by domain, by cluster and their
  difference, and the true share (the manifest's categories of the same domains);
* the error of each definition against the truth: the mean absolute difference of the
  shares from the manifest's over every university x direction x category, for the
  domain definition over its domains with evidence, the same restricted to the clustered
  domains (the cluster definition's domains: isolates the vote from the coverage), and
  the cluster definition.

Run: ``nice .venv/bin/python bench/purity.py`` (a copy of ``/work/demo-base/webometrics.db``
with its manifest ``/work/demo-base/testbed``; seconds); ``--db-url URL --manifest DIR`` for
another database (never written). Writes ``bench/results/purity.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import RESULTS, machine, run_date, write_results  # noqa: E402
from core.choices import UNKNOWN  # noqa: E402

DEMO = Path("/work/demo-base")
NO_EVIDENCE = (UNKNOWN, "uncategorised")


def _truth(manifest_dir: Path) -> dict[str, str]:
    """domain -> the manifest's category of every site of the test web, as a key of the
    taxonomy (the manifest says ``news``, the taxonomy ``news_portals``: its aliases)."""
    from analyse.taxonomy import load_taxonomy
    from testbed.manifest import load_manifest

    tax = load_taxonomy()
    manifest = load_manifest(manifest_dir)
    truth = {d: "universities" for u in manifest.universities for d in u["domains"]}
    for d, site in manifest.data["sites"].items():
        if site.get("category"):
            truth[d] = tax.resolve(site["category"])
    return truth


def _members(engine: Any, chosen: dict[tuple[int, str], int]) -> list[tuple[Any, ...]]:
    """(cluster_id, university, direction, domain, own category, cluster category,
    support, overridden) of every member of the chosen clusterings."""
    from sqlalchemy import text

    if not chosen:
        return []
    ids = ", ".join(str(i) for i in chosen.values())
    with engine.connect() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                text(
                    "SELECT m.cluster_id, c.university, m.direction, m.domain, m.category, "
                    "c.category, c.category_support, c.overridden FROM v_cluster_member m "
                    "JOIN v_cluster c ON c.cluster_id = m.cluster_id "
                    f"WHERE m.clustering_id IN ({ids}) ORDER BY m.cluster_id, m.domain"
                )
            )
        ]


def _share(n: int, total: int) -> float | None:
    return round(n / total, 4) if total else None


def measure(engine: Any, truth: dict[str, str]) -> dict[str, Any]:
    from store import analytics as A
    from store.analytics import shares as S

    run = A.latest_run_id(engine)
    if run is None:
        raise SystemExit("no crawl run in the database: run `make demo` (or a crawl) first")
    chosen = S.chosen_clusterings(engine, run)
    members = _members(engine, chosen)
    clusters: dict[int, dict[str, Any]] = {}
    for cid, uni, direction, domain, own, category, support, overridden in members:
        c = clusters.setdefault(
            cid,
            {
                "cluster_id": cid,
                "university": uni,
                "direction": direction,
                "category": category,
                "support": None if support is None else round(float(support), 4),
                "counted_as": S.cluster_category(
                    category, None if support is None else float(support), bool(overridden)
                ),
                "own": Counter(),
                "true": Counter(),
            },
        )
        c["own"][own or "uncategorised"] += 1
        c["true"][truth.get(domain, UNKNOWN)] += 1
    per_cluster = []
    pooled: dict[str, Counter[str]] = defaultdict(Counter)
    for c in clusters.values():
        size = sum(c["own"].values())
        top, top_n = c["true"].most_common(1)[0]
        row = {
            "cluster_id": c["cluster_id"],
            "university": c["university"],
            "direction": c["direction"],
            "size": size,
            "category": c["category"],
            "support": c["support"],
            "counted_as": c["counted_as"],
            "purity_stored": _share(c["own"][c["category"]], size),
            "purity_manifest": _share(c["true"][c["category"]], size),
            "best_manifest_category": top,
            "best_manifest_purity": _share(top_n, size),
        }
        per_cluster.append(row)
        for scope in ("all", c["direction"]):
            p = pooled[scope]
            p["clusters"] += 1
            p["members"] += size
            p["stored"] += c["own"][c["category"]]
            p["manifest"] += c["true"][c["category"]]
            p["best"] += top_n
            p["mixed_clusters"] += c["counted_as"] == S.MIXED
            p["mixed_members"] += size if c["counted_as"] == S.MIXED else 0
            p["no_category_in_members"] += c["own"][c["category"]] == 0
    pooled_rows = {
        scope: {
            "clusters": p["clusters"],
            "members": p["members"],
            "purity_stored": _share(p["stored"], p["members"]),
            "purity_manifest": _share(p["manifest"], p["members"]),
            "best_manifest_purity": _share(p["best"], p["members"]),
            "mixed_clusters": p["mixed_clusters"],
            "mixed_members": _share(p["mixed_members"], p["members"]),
            "clusters_whose_category_no_member_has": p["no_category_in_members"],
        }
        for scope, p in pooled.items()
    }
    return {
        "run_id": run,
        "clusterings": len(chosen),
        "per_cluster": per_cluster,
        "pooled": pooled_rows,
        **_definitions(engine, run, truth, members),
    }


def _definitions(
    engine: Any, run: int, truth: dict[str, str], members: list[tuple[Any, ...]]
) -> dict[str, Any]:
    """The shares by domain and by cluster per university x direction x category, the
    manifest's true shares, and each definition's error against them."""
    from store.analytics import shares as S

    compared = S.share_comparison(engine, run_id=run)
    env = S.university_shares(engine, run_id=run)  # the domain definition's counts
    # the domains with evidence of each university x direction, and their clustered part
    from store import analytics as A

    evidence: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for r in A.environment(engine, run_id=run):
        if (r.category or "uncategorised") not in NO_EVIDENCE:
            evidence[(r.university, r.direction)][r.domain] = r.category or ""
    clustered: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    voted: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for _cid, uni, direction, domain, own, category, _s, _o in members:
        clustered[(uni, direction)][domain] = own or "uncategorised"
        voted[(uni, direction)][domain] = category or "uncategorised"  # no mixed: the vote
    del env

    def shares_of(cats: dict[str, str]) -> dict[str, float]:
        n = len(cats)
        return {k: v / n for k, v in Counter(cats.values()).items()} if n else {}

    truth_all = {k: shares_of({d: truth.get(d, UNKNOWN) for d in v}) for k, v in evidence.items()}
    truth_clu = {k: shares_of({d: truth.get(d, UNKNOWN) for d in v}) for k, v in clustered.items()}
    domain_clu = {k: shares_of(v) for k, v in clustered.items()}
    voted_clu = {k: shares_of(v) for k, v in voted.items()}
    rows: list[dict[str, Any]] = []
    errors: dict[str, list[float]] = defaultdict(list)
    for c in compared:
        key = (str(c.university), c.direction)
        t_all = truth_all.get(key, {}).get(c.category, 0.0)
        t_clu = truth_clu.get(key, {}).get(c.category, 0.0) if key in truth_clu else None
        d_clu = domain_clu.get(key, {}).get(c.category, 0.0) if key in domain_clu else None
        rows.append(
            {
                "university": c.university,
                "direction": c.direction,
                "category": c.category,
                "by_domain": _round(c.domain_share),
                "by_cluster": _round(c.cluster_share),
                "difference": _round(c.difference),
                "true_share": round(t_all, 4),
                "by_domain_clustered_only": _round(d_clu),
                "true_share_clustered": _round(t_clu),
            }
        )
        if c.domain_share is not None:
            errors["domain"].append(abs(c.domain_share - t_all))
        if c.cluster_share is not None and t_clu is not None and d_clu is not None:
            errors["cluster"].append(abs(c.cluster_share - t_clu))
            errors["domain_clustered_only"].append(abs(d_clu - t_clu))
            v = voted_clu.get(key, {}).get(c.category, 0.0)
            errors["cluster_voted_no_mixed"].append(abs(v - t_clu))
    by_category: dict[str, dict[str, float]] = {}
    for row in rows:
        if row["difference"] is None:
            continue
        got = by_category.setdefault(row["category"], {"max_abs": 0.0, "sum": 0.0, "n": 0})
        got["max_abs"] = max(got["max_abs"], abs(row["difference"]))
        got["sum"] += row["difference"]
        got["n"] += 1
    return {
        "shares": rows,
        "difference_by_category": {
            k: {"mean": round(v["sum"] / v["n"], 4), "max_abs": round(v["max_abs"], 4)}
            for k, v in sorted(by_category.items())
        },
        "error_against_manifest": {
            k: {"mean_abs": round(sum(v) / len(v), 4), "max_abs": round(max(v), 4), "n": len(v)}
            for k, v in errors.items()
            if v
        },
    }


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def _pct(v: Any) -> str:
    return "" if v is None else f"{100 * v:.1f} %"


def to_markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Cluster purity by category, and the two share definitions",
        "",
        f"{result['date']}, {result['machine']}. Database: `{result['database']}` (run "
        f"{result['run_id']}, {result['clusterings']} clusterings: per university and "
        "direction the one the figures read); truth: the test web's manifest "
        f"(`{result['manifest']}`). Repeat: `{result['command']}`.",
        "",
        "Purity: the share of a cluster's members whose category is the cluster's: by their "
        "own stored category (override first), and by the manifest. Best: the manifest's "
        "majority share in the cluster (the purity the best single category would give). "
        "Mixed: clusters whose vote has support <= 0.5, counted as `mixed` by cluster.",
        "",
        "## Pooled (member-weighted)",
        "",
        "| scope | clusters | members | purity (stored) | purity (manifest) | best "
        "(manifest) | mixed clusters | members in mixed | clusters whose category no member "
        "has |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for scope in ("all", "outgoing", "citing"):
        p = result["pooled"].get(scope)
        if p:
            lines.append(
                f"| {scope} | {p['clusters']} | {p['members']} | {_pct(p['purity_stored'])} | "
                f"{_pct(p['purity_manifest'])} | {_pct(p['best_manifest_purity'])} | "
                f"{p['mixed_clusters']} | {_pct(p['mixed_members'])} | "
                f"{p['clusters_whose_category_no_member_has']} |"
            )
    lines += [
        "",
        "## Each definition against the manifest",
        "",
        "Mean absolute difference of the shares from the manifest's true shares over every "
        "university x direction x category (points of share):",
        "",
        "| definition | over | mean abs. error | max abs. error | shares |",
        "|---|---|--:|--:|--:|",
    ]
    over = {
        "domain": "each domain's own category, its domains with evidence",
        "domain_clustered_only": "each domain's own category, the clustered domains only",
        "cluster": "the cluster's category (the paper's way), the clustered domains, "
        "no-majority clusters as mixed",
        "cluster_voted_no_mixed": "the cluster's voted category even without a majority "
        "(exactly the paper's way), the clustered domains",
    }
    for k in ("domain", "domain_clustered_only", "cluster", "cluster_voted_no_mixed"):
        e = result["error_against_manifest"].get(k)
        if e:
            lines.append(
                f"| {k} | {over[k]} | {100 * e['mean_abs']:.1f} | {100 * e['max_abs']:.1f} | "
                f"{e['n']} |"
            )
    lines += [
        "",
        "## Difference by category (cluster − domain, points)",
        "",
        "| category | mean | max abs. |",
        "|---|--:|--:|",
    ]
    for cat, d in result["difference_by_category"].items():
        lines.append(f"| {cat} | {100 * d['mean']:+.1f} | {100 * d['max_abs']:.1f} |")
    lines += [
        "",
        "## Per university, direction and category",
        "",
        "| university | direction | category | by domain | by cluster | difference | true "
        "(manifest) | by domain, clustered only | true, clustered only |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|",
    ]
    for r in result["shares"]:
        diff = "" if r["difference"] is None else f"{100 * r['difference']:+.1f}"
        lines.append(
            f"| {r['university']} | {r['direction']} | {r['category']} | {_pct(r['by_domain'])} "
            f"| {_pct(r['by_cluster'])} | {diff} | {_pct(r['true_share'])} | "
            f"{_pct(r['by_domain_clustered_only'])} | {_pct(r['true_share_clustered'])} |"
        )
    lines += [
        "",
        "## Per cluster",
        "",
        "| cluster | university | direction | size | category | support | counted as | purity "
        "(stored) | purity (manifest) | best manifest category | best purity |",
        "|--:|---|---|--:|---|--:|---|--:|--:|---|--:|",
    ]
    for c in result["per_cluster"]:
        lines.append(
            f"| {c['cluster_id']} | {c['university']} | {c['direction']} | {c['size']} | "
            f"{c['category']} | {'' if c['support'] is None else c['support']} | "
            f"{c['counted_as']} | {_pct(c['purity_stored'])} | {_pct(c['purity_manifest'])} | "
            f"{c['best_manifest_category']} | {_pct(c['best_manifest_purity'])} |"
        )
    return "\n".join(lines) + "\n"


SMOKE_SKIP = "reads a crawled, clustered and analysed database (the demo's copy)"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--db-url",
        help="a crawled, clustered and analysed database (default: a copy of the demo's, "
        f"{DEMO / 'webometrics.db'})",
    )
    parser.add_argument(
        "--manifest",
        type=Path,
        default=DEMO / "testbed",
        help="the built test web whose manifest.json gives the true categories",
    )
    args = parser.parse_args(argv)
    from store import make_engine

    with tempfile.TemporaryDirectory() as tmp:
        url = args.db_url
        if url is None:
            copy = Path(tmp) / "webometrics.db"
            shutil.copy(DEMO / "webometrics.db", copy)
            url = f"sqlite:///{copy}"
        engine = make_engine(url)
        try:
            result = measure(engine, _truth(args.manifest))
        finally:
            engine.dispose()
    result.update(
        date=run_date(),
        machine=machine(),
        database=args.db_url or str(DEMO / "webometrics.db") + " (a copy)",
        manifest=str(args.manifest),
        command="nice .venv/bin/python bench/purity.py"
        + (f" --db-url {args.db_url} --manifest {args.manifest}" if args.db_url else ""),
    )
    md = to_markdown(result)
    write_results(RESULTS / "purity", result, md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
