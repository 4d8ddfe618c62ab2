"""Does the review queue put first the domains whose review fixes most of the figures?

On a crawled and analysed database of the test web (the demo's), every domain of the
queue (:func:`store.review.review_queue`: no override, by ``(1 - confidence) x share
points``) is checked against the category the test web's manifest gives its site: a
domain whose stored category differs (``unknown`` included) is *wrong*, and reviewing it
corrects its share points (what it holds of the universities' category shares, as the
Countries figures count them). For the first N domains of each ordering, the table gives
the wrong domains found and the share points they correct, beside the orderings an
analyst might use instead: lowest confidence first, most share points first, most links
first, and a random order (mean of 20 seeded permutations). Domains the manifest does not
know are never counted wrong.

Run: ``cp /work/demo-base/webometrics.db /tmp/demo.db && .venv/bin/webometrics --db-url
sqlite:////tmp/demo.db db upgrade && nice .venv/bin/python bench/review_queue.py --db-url
sqlite:////tmp/demo.db --manifest /work/demo-base/testbed`` (seconds); writes
``bench/results/review_queue.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import RESULTS, machine, run_date, write_results
from core.choices import UNKNOWN

FIRST = (10, 25, 50, 100)
RANDOM_PERMUTATIONS = 20


def manifest_categories(folder: Path) -> dict[str, str]:
    """domain -> the category the test web's manifest gives its site (the studied
    universities' own domains: universities)."""
    from testbed.manifest import load_manifest

    manifest = load_manifest(folder)
    truth = {d: "universities" for u in manifest.universities for d in u["domains"]}
    truth.update(
        (d, str(s["category"])) for d, s in manifest.data["sites"].items() if s.get("category")
    )
    return truth


def measure(url: str, manifest_folder: Path) -> dict[str, Any]:
    """The wrong domains and corrected share points of the first N of each ordering."""
    from store import make_engine
    from store.review import review_queue, review_run

    truth = manifest_categories(manifest_folder)
    engine = make_engine(url)
    try:
        run = review_run(engine)
        rows = review_queue(engine, limit=None)
    finally:
        engine.dispose()
    wrong = {r.domain for r in rows if r.domain in truth and r.category != truth[r.domain]}
    orders: dict[str, list[Any]] = {
        "review queue: (1 - confidence) x share points": rows,
        "lowest confidence first": sorted(rows, key=lambda r: (r.confidence, r.domain)),
        "most share points first": sorted(rows, key=lambda r: (-r.share_points, r.domain)),
        "most links first": sorted(rows, key=lambda r: (-r.links, r.domain)),
    }

    def first(order: list[Any], n: int) -> tuple[float, float]:
        picked = [r for r in order[:n] if r.domain in wrong]
        return len(picked), sum(r.share_points for r in picked)

    table: dict[str, dict[int, tuple[float, float]]] = {
        name: {n: first(order, n) for n in FIRST} for name, order in orders.items()
    }
    rng = random.Random(0)
    shuffled = [rng.sample(rows, len(rows)) for _ in range(RANDOM_PERMUTATIONS)]
    table[f"random order (mean of {RANDOM_PERMUTATIONS})"] = {
        n: tuple(  # type: ignore[misc]
            sum(first(o, n)[i] for o in shuffled) / RANDOM_PERMUTATIONS for i in (0, 1)
        )
        for n in FIRST
    }
    return {
        "database": url,
        "run_id": run,
        "queue": len(rows),
        "known_to_manifest": sum(r.domain in truth for r in rows),
        "wrong": len(wrong),
        "wrong_unknown": sum(
            1 for r in rows if r.domain in wrong and r.category in (None, UNKNOWN)
        ),
        "wrong_share_points": round(sum(r.share_points for r in rows if r.domain in wrong), 2),
        "expected_share_points": round(sum(r.priority for r in rows), 2),
        "first_50_expected": round(sum(r.priority for r in rows[:50]), 2),
        "orders": {
            name: {str(n): [round(a, 1), round(b, 2)] for n, (a, b) in by_n.items()}
            for name, by_n in table.items()
        },
    }


def markdown(r: dict[str, Any]) -> str:
    head = " | ".join(f"first {n}" for n in FIRST)
    lines = [
        "# Review queue: what reviewing the first domains fixes",
        "",
        f"{run_date()}, {machine()}. Database `{r['database']}`, crawl run {r['run_id']}: "
        f"{r['queue']} domains in the queue (no override), {r['known_to_manifest']} of them "
        f"sites of the test web's manifest; {r['wrong']} have a stored category other than "
        f"the manifest's ({r['wrong_unknown']} of them unknown: never fetched, nothing in "
        f"the name), holding {r['wrong_share_points']} share points "
        "(percentage points of the universities' category shares, summed over universities "
        "and directions).",
        "",
        f"The queue's priorities sum to {r['expected_share_points']} expected share points; "
        f"its first 50 hold {r['first_50_expected']} of them.",
        "",
        "Wrong domains found / share points they correct, in the first N of each order:",
        "",
        f"| order | {head} |",
        "|---|" + "---:|" * len(FIRST),
    ]
    for name, by_n in r["orders"].items():
        cells = " | ".join(f"{a:g} / {b:.1f}" for a, b in by_n.values())
        lines.append(f"| {name} | {cells} |")
    lines += [
        "",
        "Repeat: `nice .venv/bin/python bench/review_queue.py --db-url URL --manifest DIR` "
        "(see the module's docstring).",
        "",
    ]
    return "\n".join(lines)


SMOKE_SKIP = "reads a crawled, clustered and analysed database (the demo's copy)"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--db-url", required=True, help="an analysed database of the test web")
    p.add_argument("--manifest", type=Path, required=True, help="its test web's folder")
    a = p.parse_args(argv)
    result = measure(a.db_url, a.manifest)
    md = markdown(result)
    print(md)
    write_results(RESULTS / "review_queue", result, md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
