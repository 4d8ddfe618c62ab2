"""What the test web's external sites are made of, and what real texts of their kind change.

Three parts, each from files the other benchmarks write (this script runs no pipeline):

* **composition** of a built test web (``manifest.json``): per category and language of
  the generated and citing sites, how many sites and pages, the origin of their texts
  (``real``: a corpus of the kind; ``stand-in``: real texts of a neighbouring kind, no
  corpus of the kind here; ``generated``: search result lists of real headlines) and the
  pages per corpus; with ``--before-manifest``, the same counts of an older build beside.
* **category agreement** of the demo pipeline's database and of the test web itself,
  before and after: the ``categories.json`` that ``bench/categories.py`` writes
  (``--before-categories``, ``--after-categories``).
* **activity clusters** of the demo against the manifest's categories, before and after:
  the ``demo_clusters.json`` that ``bench/demo_clusters.py`` writes.
* with ``--before-src DIR``, **build time**: ``webometrics testbed build`` of the code in
  DIR (e.g. ``git archive main | tar -x -C DIR``) and of this checkout, alternately,
  ``--runs`` times each, wall and CPU seconds of the build process.

Run (the commands that make the inputs are in ``bench/results/testweb_kinds.md``)::

    nice .venv/bin/python bench/testweb_kinds.py --before-manifest OLD/manifest.json \\
        --before-categories B/categories.json --after-categories A/categories.json \\
        --before-clusters B/demo_clusters.json --after-clusters A/demo_clusters.json \\
        [--before-src OLD_SRC --runs 2]

writes ``bench/results/testweb_kinds.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, machine_info, run_date, write_results  # noqa: E402

_KINDS = ("generated", "citing")

COMMANDS = (
    "git archive main | tar -x -C /tmp/main_src     # the code before",
    "cp demo-of-main/webometrics.db /tmp/demo_before.db # make demo's database of main",
    "(cd /tmp/main_src && WEBOMETRICS_DATA=$PWD/../shared/data python bench/categories.py \\",
    "   --db-url sqlite:////tmp/demo_before.db --manifest demo-of-main/testbed \\",
    "   --out /tmp/cat_before)",
    "(cd /tmp/main_src && python bench/demo_clusters.py --db /tmp/demo_before.db \\",
    "   --manifest demo-of-main/testbed/manifest.json --out /tmp/clusters_before/demo_clusters)",
    "nice .venv/bin/python bench/categories.py --build /tmp/demo_after --out /tmp/cat_after",
    "nice .venv/bin/python bench/demo_clusters.py --db /tmp/demo_after/webometrics.db \\",
    "   --manifest $(python -c 'from testbed.build import shared_build; print(shared_build())')"
    "/manifest.json --out /tmp/clusters_after/demo_clusters",
    "nice .venv/bin/python bench/testweb_kinds.py \\",
    "   --before-manifest demo-of-main/testbed/manifest.json \\",
    "   --before-categories /tmp/cat_before/categories.json \\",
    "   --after-categories /tmp/cat_after/categories.json \\",
    "   --before-clusters /tmp/clusters_before/demo_clusters.json \\",
    "   --after-clusters /tmp/clusters_after/demo_clusters.json \\",
    "   --before-src /tmp/main_src --runs 1",
)
"""How the inputs were made (printed at the end of the results)."""


def composition(manifest: Path) -> dict[str, Any]:
    """Sites, pages, text origin and pages per corpus, per (category, language)."""
    sites = json.loads(manifest.read_text("utf-8"))["sites"]
    rows: dict[str, dict[str, Any]] = {}
    uses: Counter[str] = Counter()
    for site in sites.values():
        if site["kind"] not in _KINDS:
            continue
        key = f"{site['category']}/{site['language']}"
        row = rows.setdefault(
            key, {"sites": 0, "pages": 0, "origin": Counter(), "corpora": Counter()}
        )
        row["sites"] += 1
        row["pages"] += len(site["pages"])
        row["origin"][site.get("text_origin") or "(not recorded)"] += 1
        for page in site["pages"]:
            uses[page["source"]] += 1
            corpus = page.get("corpus")
            if corpus is None and "corpus" not in page:  # a manifest before text_origin
                corpus = _corpus_of(page["source"])
            row["corpora"][corpus or "generated (headlines)"] += 1
    return {
        "rows": {
            k: {**v, "origin": dict(v["origin"]), "corpora": dict(v["corpora"].most_common())}
            for k, v in sorted(rows.items())
        },
        "pages": sum(uses.values()),
        "distinct_texts": len(uses),
        "repeated_texts": sum(1 for n in uses.values() if n > 1),
    }


def _corpus_of(source: str) -> str | None:
    from testbed.texts import CORPORA

    name = source.split("/", 1)[0]
    return {**CORPORA, "clough": "clough-plagiarism-short-answers"}.get(name)


def _load(path: str | None) -> dict[str, Any] | None:
    return json.loads(Path(path).read_text("utf-8")) if path else None


def agreement(report: dict[str, Any]) -> dict[str, Any]:
    """The figures of a categories.json compared here."""
    out: dict[str, Any] = {"date": report.get("date")}
    db = report.get("database")
    if db:
        res = db["domains"]["results"]
        fetched = res["fetched domains"]
        out["db"] = {
            name: {"sites": r["with_evidence"], "agree": r["agree"], "accuracy": r["accuracy"]}
            for name, r in res.items()
        }
        out["db_by_kind"] = fetched["by_kind"]
        out["db_by_category"] = fetched["by_category"]
        out["clusters"] = db["clusters"]["known"]
    tb = report.get("testbed")
    if tb:
        out["testbed"] = {
            name: {"sites": r["with_evidence"], "agree": r["agree"], "accuracy": r["accuracy"]}
            for name, r in tb["results"].items()
        }
        out["testbed_by_category"] = tb["results"]["full, served sites"]["by_category"]
    return out


def time_builds(before_src: Path, runs: int) -> dict[str, list[dict[str, float]]]:
    """Wall and CPU seconds of ``webometrics testbed build``, old and new code alternately."""
    env = {**os.environ, "WEBOMETRICS_DATA": os.environ.get("WEBOMETRICS_DATA", "")}
    if not env["WEBOMETRICS_DATA"]:
        from core.shared_data import data_dir

        env["WEBOMETRICS_DATA"] = str(data_dir())
    out: dict[str, list[dict[str, float]]] = defaultdict(list)
    for _ in range(runs):
        for name, src in (("before", before_src), ("after", ROOT)):
            with tempfile.TemporaryDirectory() as tmp:
                cmd = [sys.executable, "-c",
                       "import sys; sys.path.insert(0, sys.argv[1]); "
                       "from webometrics.cli import main; "
                       "sys.exit(main(['testbed', 'build', '--out', sys.argv[2]]))",
                       str(src), tmp]  # fmt: skip
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                subprocess.run(cmd, cwd=src, env=env, check=True, capture_output=True)
                wall = time.perf_counter() - t0
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
                out[name].append({"wall": round(wall, 1), "cpu": round(cpu, 1)})
    return dict(out)


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def _delta(a: float | None, b: float | None) -> str:
    return "–" if a is None or b is None else f"{100 * (b - a):+.1f}"


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# The test web's external sites: kinds and texts (`bench/testweb_kinds.py`)",
        "",
        f"Run {report['date']}; {report['machine']['platform']}, Python "
        f"{report['machine']['python']}. Inputs and commands: see the end.",
        "",
        "## What the generated and citing sites are made of",
        "",
        "Per category and language of the site (the manifest's `sites`, kinds generated and "
        "citing): sites, pages (HTML, status 200), the origin of their texts and pages per "
        "corpus (folder of the shared data). *real*: a corpus of the site's kind; "
        "*stand-in*: real texts of a neighbouring kind (no corpus of the kind here); "
        "*generated*: result lists assembled from real headlines.",
        "",
    ]
    after = report["composition"]["after"]
    before = report["composition"].get("before")
    lines += [
        "| category/language | sites | pages | origin | pages per corpus (after) "
        "| pages per corpus (before) |",
        "|---|--:|--:|---|---|---|",
    ]
    for key, row in after["rows"].items():
        old = (before or {"rows": {}})["rows"].get(key)
        corp = ", ".join(f"{c} {n}" for c, n in row["corpora"].items())
        old_corp = ", ".join(f"{c} {n}" for c, n in old["corpora"].items()) if old else "–"
        origin = ", ".join(f"{o} {n}" for o, n in row["origin"].items())
        lines.append(
            f"| {key} | {row['sites']} | {row['pages']} | {origin} | {corp} | {old_corp} |"
        )
    lines += [
        "",
        f"Pages {after['pages']}, distinct texts {after['distinct_texts']}, texts used on "
        f"more than one page {after['repeated_texts']}"
        + (
            f" (before: {before['pages']}, {before['distinct_texts']}, {before['repeated_texts']})."
            if before
            else "."
        ),
        "",
    ]
    ag = report.get("agreement", {})
    b, a = ag.get("before"), ag.get("after")
    if a:
        lines += [
            "## Category agreement (`bench/categories.py`)",
            "",
            f"Before: {b.get('date') if b else '–'} ; after: {a.get('date')}. The category "
            "the analyse stage assigns (keyword taxonomy, `analyse/taxonomy.toml`) against "
            "the manifest's; accuracy over the domains with evidence.",
            "",
            "| measure | before: sites | agree | accuracy | after: sites | agree "
            "| accuracy | change (points) |",
            "|---|--:|--:|--:|--:|--:|--:|--:|",
        ]

        def row(label: str, x: dict[str, Any] | None, y: dict[str, Any] | None) -> str:
            def cells(r: dict[str, Any] | None) -> str:
                if not r:
                    return "– | – | –"
                return f"{r['sites']} | {r['agree']} | {_pct(r['accuracy'])}"

            return (
                f"| {label} | {cells(x)} | {cells(y)} | "
                f"{_delta(x['accuracy'] if x else None, y['accuracy'] if y else None)} |"
            )

        for name in a.get("db", {}):
            lines.append(row(f"demo database: {name}", (b or {}).get("db", {}).get(name),
                             a["db"][name]))  # fmt: skip
        for kind, r in a.get("db_by_kind", {}).items():
            old = (b or {}).get("db_by_kind", {}).get(kind)
            lines.append(row(f"demo database, fetched, kind {kind}", old, r))
        for name in a.get("testbed", {}):
            lines.append(row(f"test web itself: {name}", (b or {}).get("testbed", {}).get(name),
                             a["testbed"][name]))  # fmt: skip
        lines += [
            "",
            "Recall per manifest category (fetched domains of the demo database; the test "
            "web's served sites):",
            "",
            "| category | demo before | demo after | test web before | test web after |",
            "|---|--:|--:|--:|--:|",
        ]
        cats = sorted(set(a.get("db_by_category", {})) | set(a.get("testbed_by_category", {})))

        def rec(report: dict[str, Any] | None, part: str, cat: str) -> str:
            r = (report or {}).get(part, {}).get(cat)
            return f"{r['agree']}/{r['sites']} {_pct(r['recall'])}" if r else "–"

        for cat in cats:
            lines.append(
                f"| {cat} | {rec(b, 'db_by_category', cat)} | {rec(a, 'db_by_category', cat)} "
                f"| {rec(b, 'testbed_by_category', cat)} | {rec(a, 'testbed_by_category', cat)} |"
            )
        if a.get("clusters"):
            cb, ca = (b or {}).get("clusters"), a["clusters"]
            lines += [
                "",
                "Per cluster (final clusters of the latest clustering per university and "
                "direction; right = the cluster's category is its members' majority "
                "manifest category):",
                "",
                "| | clusters | right | accuracy | mean purity | pooled purity |",
                "|---|--:|--:|--:|--:|--:|",
            ]
            for label, c in (("before", cb), ("after", ca)):
                if c:
                    lines.append(
                        f"| {label} | {c['clusters']} | {c['right']} | {_pct(c['accuracy'])} "
                        f"| {_pct(c['mean_purity'])} | {_pct(c['pooled_purity'])} |"
                    )
        lines.append("")
    cl = report.get("clusters", {})
    if cl.get("after"):
        lines += [
            "## Activity clusters against the manifest's categories (`bench/demo_clusters.py`)",
            "",
            "Size-weighted mean class F of the per-university activity clusterings (the "
            "demo's database re-clustered with the current defaults); the global activity "
            "clustering and the paper's LSH single link for comparison.",
            "",
            "| | per-university class F | global activity class F | paper class F |",
            "|---|--:|--:|--:|",
        ]
        for label in ("before", "after"):
            r = cl.get(label)
            if r:
                lines.append(
                    f"| {label} | {r['per_university_f']:.3f} | {r['global']} | {r['paper']} |"
                )
        lines.append("")
    if report.get("build"):
        lines += [
            "## Build time (`webometrics testbed build`, default options)",
            "",
            "Old and new code alternately on the shared 2-core machine (other work running): "
            "wall and CPU seconds of the build process.",
            "",
            "| code | runs | wall s | CPU s |",
            "|---|--:|---|---|",
        ]
        for name, runs in report["build"].items():
            walls = ", ".join(str(r["wall"]) for r in runs)
            cpus = ", ".join(str(r["cpu"]) for r in runs)
            lines.append(f"| {name} | {len(runs)} | {walls} | {cpus} |")
        lines.append("")
    lines += ["## Inputs", ""]
    lines += [f"- {k}: `{v}`" for k, v in report["inputs"].items() if v]
    lines += ["", "Made by (before = the main branch's code and its `make demo` database):", ""]
    lines += ["```sh", *COMMANDS, "```"]
    after_md = report["inputs"].get("after_categories")
    if after_md and Path(after_md).with_suffix(".md").is_file():
        # the whole output of bench/categories.py after the change, its headings one down
        text = Path(after_md).with_suffix(".md").read_text("utf-8")
        lines += ["", "## Appendix: `bench/categories.py` after the change", ""]
        lines += [("#" + line if line.startswith("#") else line) for line in text.splitlines()]
    return "\n".join(lines) + "\n"


def _clusters(path: str | None) -> dict[str, Any] | None:
    data = _load(path)
    if data is None:
        return None
    rows = data["rows"]
    glob = [r for r in rows if r["university"] == "all" and r["method"] == "activity"]
    paper = [r for r in rows if r["method"] != "activity"]
    return {
        "per_university_f": data["per_university_f"],
        "global": glob[-1]["f_class"] if glob else None,
        "paper": paper[-1]["f_class"] if paper else None,
        "when": data.get("when"),
    }


SMOKE_SKIP = "builds and clusters the local test web before and after a change"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--manifest", help="the built test web (default: the shared build)")
    ap.add_argument("--before-manifest", help="an older build's manifest.json")
    ap.add_argument("--before-categories", help="categories.json of the older build")
    ap.add_argument("--after-categories", help="categories.json of this build")
    ap.add_argument("--before-clusters", help="demo_clusters.json of the older build")
    ap.add_argument("--after-clusters", help="demo_clusters.json of this build")
    ap.add_argument("--before-src", help="a checkout of the older code, to time both builds")
    ap.add_argument("--runs", type=int, default=2, help="build runs per code (--before-src)")
    ap.add_argument("--out", default=str(RESULTS / "testweb_kinds"), help="output path stem")
    args = ap.parse_args(argv)
    if args.manifest:
        manifest = Path(args.manifest)
    else:
        from testbed.build import shared_build

        manifest = shared_build() / "manifest.json"
    if manifest.is_dir():
        manifest = manifest / "manifest.json"
    report: dict[str, Any] = {
        "date": run_date(),
        "machine": machine_info("python", "platform", "cpus"),
        "composition": {"after": composition(manifest)},
        "inputs": {"manifest": str(manifest), **{k: v for k, v in vars(args).items()
                                                 if k.startswith(("before", "after"))}},
    }  # fmt: skip
    if args.before_manifest:
        report["composition"]["before"] = composition(Path(args.before_manifest))
    cats = {k: _load(getattr(args, f"{k}_categories")) for k in ("before", "after")}
    report["agreement"] = {k: agreement(v) for k, v in cats.items() if v}
    report["clusters"] = {
        k: v for k in ("before", "after") if (v := _clusters(getattr(args, f"{k}_clusters")))
    }
    if args.before_src:
        report["build"] = time_builds(Path(args.before_src), args.runs)
    md = markdown(report)
    out = Path(args.out)
    write_results(out, report, md, indent=2, newline=True, ensure_ascii=False)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
