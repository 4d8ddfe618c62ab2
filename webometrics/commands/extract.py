"""``webometrics extract``: main text, language and shingles of the stored pages."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from webometrics.cli import Context

ORDER = 35


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "extract",
        epilog=(
            "lock: a second `extract` on the same database (or a `webometrics run`) exits 4 "
            "naming this one; a `crawl`, `cluster` or `analyse` may run meanwhile "
            "(docs/operations.md)."
        ),
        help="extract main text, language and shingles of pending pages; build documents",
        description="Extract the main text (trafilatura), title, date, site name and "
        "language of every stored page still 'pending', in a pool of worker processes "
        "(one per core), committing in batches: interrupt it at any time (Ctrl-C) and run "
        "it again to go on. Then build the documents that are clustered: one per ok "
        "external page and one per external registered domain (union of its pages' "
        "shingles, site templates removed). Options come from [extract], [shingle] and "
        "[domain].",
    )
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="worker processes (default: [extract] workers, one per core; 0 = no pool, in "
        "this process)",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        metavar="N",
        help="pages per committed batch (default: [extract] batch_size, 100)",
    )
    p.add_argument("--limit", type=int, metavar="N", help="extract at most N pages this run")
    p.add_argument(
        "--redo",
        metavar="STATUSES",
        help="extract again the pages of these statuses first, comma-separated "
        "(e.g. timeout,error; 'all' = every extracted page)",
    )
    p.add_argument(
        "--no-documents", action="store_true", help="only extract pages, build no documents"
    )
    p.add_argument(
        "--rebuild-documents",
        action="store_true",
        help="rebuild every document (after changing [shingle] or [domain] settings)",
    )
    p.set_defaults(func=_extract)


def _extract(ctx: Context) -> int:
    from core.exceptions import ParameterError
    from webometrics.stages.extract import ExtractScope, run

    a = ctx.args
    if a.workers is not None and a.workers < 0:
        raise ParameterError(f"--workers {a.workers}: give 0 (no pool) or more")
    if a.limit is not None and a.limit < 0:
        raise ParameterError(f"--limit {a.limit}: give 0 or more")
    settings = ctx.settings.with_options(extract={"workers": a.workers, "batch_size": a.batch_size})
    redo = tuple(x.strip() for x in a.redo.split(",") if x.strip()) if a.redo else ()
    scope = ExtractScope(
        limit=a.limit,
        redo=redo,
        documents=not a.no_documents,
        rebuild_documents=a.rebuild_documents,
    )
    from webometrics.runlock import stage_lock

    with stage_lock(ctx.engine(), "extract"):  # exit 4 naming the holder
        result = run(ctx.engine(), settings, scope, progress=not a.quiet)
    by_status = ", ".join(f"{k} {v}" for k, v in result.by_status.items()) or "none pending"
    print(
        f"extracted {result.pages} pages in {result.seconds:.1f} s "
        f"({result.pages_per_second:.1f} pages/s, {result.workers} workers): {by_status}"
    )
    if result.page_documents is not None:
        print(
            f"documents: {result.page_documents} page, {result.domain_documents} domain "
            f"({result.page_documents_written} + {result.domain_documents_written} written, "
            f"{result.documents_deleted} deleted)"
        )
    return 0
