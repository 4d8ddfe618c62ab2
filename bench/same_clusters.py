"""Does a change keep the activity clustering's clusters? Every level, before and after.

Fits :class:`cluster.activity.ActivityClusterer` on the same documents with the code of
git revision ``REV`` (checked out in a temporary worktree) and with the working tree, in a
fresh process each, and compares the labels of every level, the graph statistics (the
seconds left out) and the vocabulary. The cases cover every neighbour mode and the
reassignment: the default on three labelled corpora (BBC, the 556 real websites, 3,000
Reuters stories), ``candidates`` ``wminhash``, ``simhash`` and ``nndescent``, no
reassignment and two passes, a fixed ``n_neighbors`` with one level. Exit 0 when every
case is identical, 1 otherwise.

Run: ``.venv/bin/python bench/same_clusters.py abdba35`` (about 2 minutes on 2 cores);
``--smoke`` (one small case, the working tree against itself in this process, a
temporary folder);
writes ``bench/results/same_clusters.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, machine, run_date, write_results  # noqa: E402

CASES: list[dict[str, Any]] = [
    {"corpus": "bbc", "params": {}},
    {"corpus": "websites", "params": {}},
    {"corpus": "reuters-3000", "params": {}},
    {"corpus": "reuters-3000", "params": {"candidates": "wminhash"}},
    {"corpus": "reuters-3000", "params": {"candidates": "simhash", "num_perm": 64, "rows": 8}},
    {"corpus": "reuters-3000", "params": {"candidates": "nndescent"}},
    {"corpus": "reuters-3000", "params": {"reassign": 0}},
    {"corpus": "reuters-3000", "params": {"reassign": 2, "seed": 3}},
    {"corpus": "bbc", "params": {"n_neighbors": 10, "resolution": 1.0, "coarser": ()}},
]
SMOKE_CASES: list[dict[str, Any]] = [{"corpus": "websites-60", "params": {}}]
SMOKE_ARGV = ["--smoke"]
"""The arguments of the smoke test (tests/bench): tiny data, a temporary folder."""

# run in the tree of either revision: only what both have (ActivityClusterer's flat
# parameters, its fitted attributes, the corpora)
FIT = r"""
import json, sys
from cluster.activity import ActivityClusterer
from corpora.activity import load_activity_corpus


def fit(cases):
    out = []
    for case in cases:
        name = case["corpus"]
        if name.startswith("reuters-"):
            from corpora.reuters import load_reuters
            docs = load_reuters()[: int(name.split("-")[1])]
            texts, languages = [d.text for d in docs], ["en"] * len(docs)
        else:
            base, _, limit = name.partition("-")
            c = load_activity_corpus(base, limit=int(limit) if limit else None)
            texts, languages = c.texts, c.languages
        m = ActivityClusterer(**case["params"]).fit(texts, languages)
        stats = {k: v for k, v in m.graph_stats_.items() if k != "seconds"}
        out.append({
            "labels": m.labels_.tolist(),
            "levels": [[lv.resolution, lv.role, lv.quality, lv.labels.tolist()]
                       for lv in m.levels_],
            "stats": json.loads(json.dumps(stats, default=str)),
            "vocabulary": list(m.vocabulary_),
        })
    return out


if __name__ == "__main__":
    print(json.dumps(fit(json.loads(sys.argv[1])), default=str))
"""


def fit_here(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every case fitted with the code of this process (the smoke test's way)."""
    namespace: dict[str, Any] = {"__name__": "same_clusters_fit"}
    exec(FIT, namespace)  # the same code the fresh processes run
    result: list[dict[str, Any]] = namespace["fit"](cases)
    return result


def fit_in(tree: Path, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every case fitted with the code of ``tree`` (a fresh interpreter, cwd ``tree``)."""
    from core.shared_data import data_dir

    env = {**os.environ, "PYTHONPATH": str(tree), "WEBOMETRICS_DATA": str(data_dir())}
    done = subprocess.run(
        [sys.executable, "-c", FIT, json.dumps(cases)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"fitting in {tree} failed:\n{done.stderr[-3000:]}")
    result: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What differs between two fits of one case (empty: identical)."""
    return [key for key in ("labels", "levels", "stats", "vocabulary") if before[key] != after[key]]


def worktree(rev: str, into: Path) -> Path:
    """A detached worktree of ``rev`` in ``into`` (removed by the caller)."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), rev],
                   check=True, capture_output=True)  # fmt: skip
    return into


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# The activity clustering before and after a change (`bench/same_clusters.py`)",
        "",
        f"{report['machine']}; {report['date']}. Revision `{report['rev']}` against the "
        "working tree: every level's labels, the graph statistics and the vocabulary of "
        "`ActivityClusterer(**params)` on each corpus, a fresh process per tree.",
        "",
        "| corpus | parameters | documents | clusters | levels | identical |",
        "|---|---|---:|---:|---:|---|",
    ]
    for r in report["rows"]:
        verdict = "yes" if not r["differs"] else "**no**: " + ", ".join(r["differs"])
        lines.append(
            f"| {r['corpus']} | `{json.dumps(r['params'])}` | {r['documents']:,} | "
            f"{r['clusters']} | {r['levels']} | {verdict} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev", nargs="?", default="HEAD", help="the revision to compare against")
    ap.add_argument("--smoke", action="store_true", help="one small case, into a temp folder")
    args = ap.parse_args(argv)
    cases = SMOKE_CASES if args.smoke else CASES
    with tempfile.TemporaryDirectory(prefix="same-clusters-") as tmp:
        if args.smoke:  # the working tree against itself: the comparison, not a revision
            before = fit_here(cases)
        else:
            tree = worktree(args.rev, Path(tmp) / "before")
            try:
                before = fit_in(tree, cases)
            finally:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(tree)], check=False, capture_output=True)  # fmt: skip
        after = fit_here(cases) if args.smoke else fit_in(ROOT, cases)
        rows = [
            {**case, "documents": len(a["labels"]), "clusters": len(set(a["labels"])),
             "levels": len(a["levels"]), "differs": compare(b, a)}
            for case, b, a in zip(cases, before, after, strict=True)
        ]  # fmt: skip
        report = {"machine": machine(), "date": run_date(), "rev": args.rev, "rows": rows}
        md = markdown(report)
        print(md)
        stem = Path(tmp) / "same_clusters" if args.smoke else RESULTS / "same_clusters"
        write_results(stem, report, md)
    return 0 if all(not r["differs"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
