"""``webometrics dedup``: group fuzzy duplicates among the stored documents."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from core.choices import CANONICAL_RULES, GROUPINGS, UNITS

if TYPE_CHECKING:
    from webometrics.cli import Context

ORDER = 40


def _param(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE read as JSON when it parses (numbers, true/false), else text."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (e.g. threshold=0.7)")
    try:
        parsed: Any = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    return key.strip(), parsed


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "dedup",
        epilog=(
            "lock: a second `dedup` on the same database (or a `webometrics run`) exits 4 "
            "naming this one; a `crawl` or `extract` may run meanwhile "
            "(docs/operations.md)."
        ),
        help="group fuzzy duplicates (mirrors, syndicated copies) before clustering",
        description="Run a near-duplicate method over the stored page or domain documents, "
        "group the duplicates (connected components, greedy cliques or FPmax closed sets) "
        "and keep one canonical document per group; `webometrics cluster` leaves the "
        "others out. Defaults come from [dedup] in the settings.",
    )
    p.add_argument("--method", metavar="NAME", help="method name (see --list-methods)")
    p.add_argument("--grouping", choices=GROUPINGS)
    p.add_argument("--unit", choices=UNITS, help="default: [dedup] or [cluster] unit")
    p.add_argument("--canonical", choices=CANONICAL_RULES)
    p.add_argument(
        "--param",
        metavar="KEY=VALUE",
        type=_param,
        action="append",
        default=[],
        help="a method parameter, repeatable (e.g. --param threshold=0.7)",
    )
    p.add_argument(
        "--list-methods", action="store_true", help="list the methods and their parameters"
    )
    p.set_defaults(func=_dedup)


def _list_methods() -> int:
    from dedup.registry import describe_methods

    rows = describe_methods()
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        params = ", ".join(f"{k}={v!r}" for k, v in r["params"].items()) or "-"
        print(f"{r['name']:<{width}}  {r['label']}  [reads {r['input']}]")
        print(f"{'':<{width}}  pairs: {r['comparison']}; source: {r['reference']}")
        print(f"{'':<{width}}  parameters: {params}")
    return 0


def _dedup(ctx: Context) -> int:
    if ctx.args.list_methods:
        return _list_methods()
    from webometrics.runlock import stage_lock
    from webometrics.stages.dedup import DedupScope, run

    a = ctx.args
    given = {"method": a.method, "grouping": a.grouping, "unit": a.unit, "canonical": a.canonical}
    settings = ctx.settings.with_options(dedup={k: v or None for k, v in given.items()})
    with stage_lock(ctx.engine(), "dedup"):  # exit 4 naming the holder
        result = run(ctx.engine(), settings, DedupScope(params=dict(a.param)), progress=True)
    print(
        f"dedup run {result.dedup_run_id}: {result.method} over {result.n_documents} "
        f"{result.unit} documents: {result.n_pairs} duplicate pairs, {result.n_groups} "
        f"groups ({result.grouping}); {result.n_duplicates} non-canonical documents will "
        f"be left out of clustering ({result.seconds:.1f} s)"
    )
    return 0
