"""``webometrics refresh``: compute the figures the dashboard and the report read."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from webometrics.cli import Context

ORDER = 65
STALE_EXIT = 1  # --check: the figures are stale


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "refresh",
        help="compute the figures the dashboard and the report read (the aggregates), "
        "when the data changed since",
        description="Compute the figures of the dashboard and the report again (the "
        "aggregates: Tables 2-3, category and country shares, the Network page's "
        "domains, the rank factors, the impact figures, per crawl run) from the stored "
        "data. Every stage does this when it finishes and `webometrics report` before it "
        "writes, so it is needed only for data stored otherwise (a crawl still running or "
        "killed, rows written by hand) or to recompute everything with --force. Nothing "
        "is done when the figures are fresh; when only categories or overrides changed, "
        "only the domains that moved are recounted. Readers see the old figures or the "
        "new ones, never half.",
        epilog="exit codes: 0 the figures are fresh (computed now or already); "
        f"{STALE_EXIT} with --check: they are stale (what changed is printed); 2 bad "
        "input or an unreachable database; 3 schema out of date.",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help=f"only say whether the figures are fresh and what changed since; exit "
        f"{STALE_EXIT} when stale (writes nothing)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="compute every figure again even when fresh",
    )
    p.set_defaults(func=_refresh)


def _refresh(ctx: Context) -> int:
    from core.exceptions import ParameterError
    from store import aggregates
    from store.freshness import staleness

    if ctx.args.check and ctx.args.force:
        raise ParameterError("--check and --force exclude each other: --check writes nothing")
    if ctx.args.check:
        stale = staleness(ctx.reader())
        if stale is None:
            print("figures fresh: nothing changed since they were computed")
            return 0
        print(f"figures stale: {stale.message()}")
        return STALE_EXIT
    done = aggregates.refresh_if_stale(ctx.engine(), force=ctx.args.force)
    computed = not done["aggregate_fresh"] and "recounted" not in done
    print(f"figures {'computed' if computed else 'fresh'}: {aggregates.describe(done)}")
    return 0
