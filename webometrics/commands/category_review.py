"""``webometrics category review | export | import | agreement | adjudicate``: the review
workflow of domain categories (:mod:`store.review`), registered under ``category`` by
:func:`register_review`."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from webometrics.cli import Context

PRIORITY = (
    "Priority = (1 - confidence) x share points. A domain's share points are what it holds "
    "of the category shares as the Countries figures compute them: in each university's "
    "shares of a direction every distinct external domain counts 1/n (n: the university's "
    "domains in that direction in the run), so the domain holds the sum of 100/n over the "
    "universities and directions whose environment has it, in percentage points. "
    "Confidence is the stored score (0 where none): a wrong category is expected to move "
    "(1 - confidence) x share points, so reviewing the queue from the top fixes the most "
    "of the figures per domain reviewed. Domains with an override are left out; ties go "
    "to more links, then more universities."
)
FORMATS = ("table", "csv", "json")


def register_review(csub: argparse._SubParsersAction) -> None:
    """Add ``review``, ``export``, ``import``, ``agreement`` and ``adjudicate`` to the
    subcommands ``csub`` of ``webometrics category``."""
    r = csub.add_parser(
        "review",
        help="the review queue: least certain domains that move the shares most first",
        description="The domains whose category is least certain (no override, low "
        "confidence), ordered by how much a wrong category would move the category "
        "shares. " + PRIORITY,
    )
    _queue_options(r, limit_help="at most N domains (default %(default)s; 0: every one)")
    r.add_argument("--format", choices=FORMATS, default="table", help="default: %(default)s")
    r.set_defaults(func=_review)

    e = csub.add_parser(
        "export",
        help="write a coding sheet (CSV) of the review queue or of chosen domains",
        description="Write a coding sheet to hand to a coder: one row per domain (the "
        "queue's first N, or --domains) with the suggested category, its confidence and "
        "evidence, a page title and the start of its text, a URL to look at, and an empty "
        "'category' column (a key or alias of `webometrics category keys`) and 'note' "
        "column for the coder. UTF-8 with a byte-order mark, so spreadsheets read "
        "Cyrillic. Import the filled sheet with `webometrics category import FILE "
        "--coder NAME`. " + PRIORITY,
    )
    e.add_argument("--sheet", required=True, metavar="FILE", help="the CSV to write ('-': stdout)")
    e.add_argument(
        "--domains", nargs="+", metavar="DOMAIN", help="these domains instead of the queue"
    )
    _queue_options(e, limit_help="the queue's first N domains (default %(default)s; 0: all)")
    e.set_defaults(func=_export)

    i = csub.add_parser(
        "import",
        help="store a coder's filled coding sheet (validated; nothing stored on error)",
        description="Read a filled coding sheet: rows with an empty 'category' are not "
        "coded and skipped; every other row needs a domain that is in an environment of the "
        "database and a category key or alias of the taxonomy, each domain once. Any "
        "problem refuses the whole sheet, naming each line (exit code 2), and nothing is "
        "stored. Importing a sheet of the same coder again replaces that coder's codings "
        "of the domains it holds (their other codings stay).",
    )
    i.add_argument("file", metavar="FILE", help="the filled CSV (',', ';' or tab separated)")
    i.add_argument("--coder", required=True, metavar="NAME", help="who filled the sheet")
    i.set_defaults(func=_import)

    a = csub.add_parser(
        "agreement",
        help="Cohen's kappa of two coders and their disagreements",
        description="Compare two coders on the domains both coded: observed agreement, "
        "Cohen's kappa (chance-corrected; undefined when every coding is one category) "
        "and the disagreements, each with its current override. --accept makes every "
        "agreed category the domain's override (the history's note names both coders); "
        "an override of another category is kept. Settle a disagreement with "
        "`webometrics category adjudicate DOMAIN CATEGORY --analyst NAME`.",
    )
    a.add_argument("--coders", nargs=2, metavar=("A", "B"), help="default: the only two coders")
    a.add_argument("--accept", action="store_true", help="store the agreements as overrides")
    a.add_argument("--analyst", metavar="NAME", help="who accepts (required with --accept)")
    a.add_argument("--format", choices=FORMATS, default="table", help="default: %(default)s")
    a.set_defaults(func=_agreement)

    j = csub.add_parser(
        "adjudicate",
        help="settle a coded domain's category: it becomes the override",
        description="Give a domain that coders coded its category: it becomes the "
        "domain's override and wins everywhere; the override history keeps it with the "
        "analyst and a note naming the adjudication and each coder's category.",
    )
    j.add_argument("domain")
    j.add_argument("category", help="a category key or alias of the taxonomy")
    j.add_argument("--analyst", required=True, metavar="NAME", help="who adjudicates")
    j.add_argument("--note", help="why")
    j.set_defaults(func=_adjudicate)


def _queue_options(p: argparse.ArgumentParser, *, limit_help: str) -> None:
    p.add_argument("--limit", type=int, default=50, metavar="N", help=limit_help)
    p.add_argument(
        "--run", type=int, metavar="ID", help="weigh by this crawl run (default: the newest)"
    )
    p.add_argument(
        "--direction",
        choices=("outgoing", "citing", "both"),
        default="both",
        help="the shares of one direction, or both (default)",
    )


def _queue(ctx: Context, domains: Sequence[str] | None = None) -> list[Any]:
    from core.exceptions import ParameterError
    from store.review import review_queue

    a = ctx.args
    if a.limit < 0:
        raise ParameterError(f"--limit {a.limit}: give 0 (every domain) or more")
    return review_queue(
        ctx.engine(read_only=True),
        run_id=a.run,
        direction=None if a.direction == "both" else a.direction,
        limit=a.limit or None,
        domains=domains,
    )


def _print_table(header: Sequence[str], rows: Sequence[Sequence[Any]], width: int = 48) -> None:
    """Rows as aligned text columns, each cell cut at ``width`` characters."""

    def cell(v: Any) -> str:
        text = "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)
        return text if len(text) <= width else text[: width - 1] + "…"

    cells = [[cell(v) for v in r] for r in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(header)]
    for r in [list(header), *cells]:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())


def _write(rows: Sequence[Any], columns: Sequence[str], fmt: str) -> None:
    values = [[getattr(r, c) for c in columns] for r in rows]
    if fmt == "json":
        print(
            json.dumps(
                [dict(zip(columns, v, strict=True)) for v in values],
                default=str,
                ensure_ascii=False,
                indent=1,
            )
        )
    elif fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(values)
    else:
        _print_table(columns, values)


def _review(ctx: Context) -> int:
    from store.review import QUEUE_COLUMNS

    rows = _queue(ctx)
    # the terminal table leaves the long sample and URL out
    columns = QUEUE_COLUMNS if ctx.args.format != "table" else QUEUE_COLUMNS[:11]
    _write(rows, columns, ctx.args.format)
    if ctx.args.format == "table":
        if not rows:
            print("the queue is empty: no domain without an override in the run's environment")
        else:
            moved = sum(r.priority for r in rows)
            print(
                f"\n{len(rows)} domains, expected share points to fix: {moved:.1f} "
                "(priority = (1 - confidence) x share points; see --help)"
            )
    return 0


def _export(ctx: Context) -> int:
    from store.review import write_sheet

    rows = _queue(ctx, ctx.args.domains)
    target = ctx.args.sheet
    if target == "-":
        n = write_sheet(rows, sys.stdout)
    else:
        path = Path(target)
        if path.is_dir():
            from core.exceptions import ParameterError

            raise ParameterError(f"--sheet {path}: a folder; give a file name such as sheet.csv")
        with path.open("w", encoding="utf-8-sig", newline="") as out:
            n = write_sheet(rows, out)
        print(
            f"wrote {n} domains to {path}: the coder fills its 'category' column (keys: "
            f"`webometrics category keys`), then `webometrics category import {path} "
            "--coder NAME`",
            file=sys.stderr,
        )
    return 0


def _import(ctx: Context) -> int:
    from core.exceptions import ParameterError
    from store.review import import_sheet

    path = Path(ctx.args.file)
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise ParameterError(f"cannot read {path}: {exc.strerror or exc}") from exc
    done = import_sheet(
        ctx.engine(),
        content,
        coder=ctx.args.coder,
        sheet=str(path),
        taxonomy=ctx.settings.analyse.taxonomy,
    )
    replaced = (
        f", replacing {done.replaced} earlier codings of {done.coder}" if done.replaced else ""
    )
    print(
        f"{path}: stored {done.stored} codings by {done.coder}{replaced}; "
        f"{done.blank} rows without a category skipped"
    )
    return 0


def _agreement(ctx: Context) -> int:
    from core.exceptions import ParameterError
    from store.review import agreement, pick_coders

    a = ctx.args
    if a.accept and not (a.analyst or "").strip():
        raise ParameterError("--accept stores overrides: name who accepts with --analyst NAME")
    engine = ctx.engine(read_only=not a.accept)
    first, second = pick_coders(engine, a.coders)
    result = agreement(engine, first, second)
    columns = ("domain", "category_a", "category_b", "note_a", "note_b", "suggested", "override")
    if a.format == "json":
        body = {
            "coder_a": result.coder_a,
            "coder_b": result.coder_b,
            "coded_a": result.coded_a,
            "coded_b": result.coded_b,
            "both": result.both,
            "agreed": result.agreed,
            "observed": result.observed,
            "kappa": result.kappa,
            "disagreements": [{c: getattr(d, c) for c in columns} for d in result.disagreements],
        }
        print(json.dumps(body, ensure_ascii=False, indent=1))
    else:
        if a.format == "table":
            print(result.summary + (":" if result.disagreements else ""))
        if result.disagreements or a.format == "csv":
            _write(result.disagreements, columns, a.format)
    if a.accept:
        _accept(ctx, first, second)
    return 0


def _accept(ctx: Context, first: str, second: str) -> None:
    from store import aggregates
    from store.review import accept_agreements

    engine = ctx.engine()
    done = accept_agreements(
        engine, first, second, analyst=ctx.args.analyst, taxonomy=ctx.settings.analyse.taxonomy
    )
    aggregates.sync_categories(engine)  # the saved counts follow the overrides
    kept = f"; kept the other override of {', '.join(done.kept)}" if done.kept else ""
    print(
        f"accepted {len(done.set)} agreements as overrides ({len(done.unchanged)} were "
        f"already){kept}",
        file=sys.stderr,
    )


def _adjudicate(ctx: Context) -> int:
    from store import aggregates
    from store.review import adjudicate

    engine = ctx.engine()
    row = adjudicate(
        engine,
        ctx.args.domain,
        ctx.args.category,
        analyst=ctx.args.analyst,
        note=ctx.args.note,
        taxonomy=ctx.settings.analyse.taxonomy,
    )
    aggregates.sync_categories(engine)
    print(f"{row.domain}: {row.category or '-'} -> {row.override_category} (adjudicated)")
    return 0
