"""``webometrics universities import FILE | list | import-ranks FILE --edition NAME | ranks``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analyse.rank_match import MatchResult
    from store.rank_editions import EditionImport
    from webometrics.cli import Context

ORDER = 20


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "universities",
        help="import or list the universities",
        description="Import a universities file (TOML) or list the stored ones.",
    )
    usub = p.add_subparsers(dest="uni_command", metavar="ACTION", required=True)
    imp = usub.add_parser(
        "import",
        help="insert or update universities from a TOML file "
        "(one transaction; see examples/universities.toml)",
        description="Insert the file's universities, or update those stored under the "
        "same name. A university stored with other domains or another country is not "
        "changed silently: the differences are listed (domains added/removed with their "
        "stored pages, country and rank old -> new) and nothing is imported (exit 2) "
        "unless --merge or --replace says how to reconcile them. A new rank or new home "
        "pages alone are updated. Importing the same file again changes nothing.",
        epilog="A domain with stored pages is never dropped silently: --replace refuses "
        "(exit 2) until --drop-domains-with-pages is added too. Its pages then stay stored "
        "(with their university) but leave the university's scope: later crawls skip the "
        "domain and links to it count as external. --merge never drops a domain.",
    )
    imp.add_argument(
        "file",
        metavar="FILE",
        help="a TOML file of [[university]] tables: name, domains, country, rank, home "
        "pages (see examples/universities.toml)",
    )
    how = imp.add_mutually_exclusive_group()
    how.add_argument(
        "--merge",
        action="store_true",
        help="for a university already stored under the name: keep its domains and add "
        "the file's; take the file's country, ranks and home pages",
    )
    how.add_argument(
        "--replace",
        action="store_true",
        help="for a university already stored under the name: take the file's domains, "
        "country, ranks and home pages",
    )
    imp.add_argument(
        "--drop-domains-with-pages",
        action="store_true",
        help="with --replace: drop domains even when pages of them are stored",
    )
    imp.set_defaults(func=_import)
    ls = usub.add_parser("list", help="list the stored universities")
    ls.set_defaults(func=_list)
    _register_ranks(usub)


EXIT_GAPS = 5  # core.exceptions.EXIT_CODES: done, with rows or universities unmatched

RANKS_EPILOG = (
    "The table: CSV with a header line, delimiter , ; tab or | (sniffed), UTF-8 with or "
    "without BOM (or UTF-16 with BOM). Columns, in any order and case (others are "
    "ignored and named): name (university, institution, ...), domain (url, website, "
    "homepage, site, ...), rank (world rank, ranking, position, ...), impact rank "
    "(impact, visibility rank, ...), country. A name or a domain, and a rank or an "
    "impact rank, are needed. Ranks like 12, =12, T12, #12, 1,234 are read; a band "
    "(101-150) is refused. A URL or subdomain is reduced to its registered domain. "
    "Rows are matched to the stored universities by domain, then by the registries "
    "(a second domain of the same organisation, or its name), then by name (St. = Saint, "
    "case, accents and punctuation ignored), then by a registry record of the name. "
    "Exit codes: 0 every row and every stored university matched; 2 the file is bad "
    "(every bad row is listed; nothing stored); 5 the matched rows were stored but rows "
    "were unmatched or ambiguous, or stored universities are not ranked by the table "
    "(listed). The newest edition (--published, else the import time) is the default "
    "everywhere; the Rank page and `webometrics report --rank-edition` pick another."
)


def _register_ranks(usub: argparse._SubParsersAction) -> None:
    imp = usub.add_parser(
        "import-ranks",
        help="import an edition of a ranking table (CSV) and match it to the universities",
        description="Read a ranking table, match its rows to the stored universities "
        "(by domain, the registries and name), list what could not be matched, and store "
        "the matched ranks as the edition NAME. Every edition is kept; importing an "
        "edition of the same name again replaces it (said so).",
        epilog=RANKS_EPILOG,
    )
    imp.add_argument("file", metavar="FILE", help="the ranking table (CSV)")
    imp.add_argument(
        "--edition", required=True, metavar="NAME", help="the edition's name, e.g. '2015 July'"
    )
    imp.add_argument(
        "--published",
        metavar="DATE",
        help="the edition's publication date YYYY-MM-DD (orders the editions; default: "
        "the import time)",
    )
    imp.add_argument("--dry-run", action="store_true", help="match and list only; store nothing")
    imp.add_argument(
        "--allow-unmatched-rows",
        action="store_true",
        help="rows of universities not stored are expected (a world table): they do not "
        "make the exit code 5 (still counted)",
    )
    imp.add_argument(
        "--no-registries",
        action="store_true",
        help="match by domain and name only, without the registries",
    )
    imp.add_argument(
        "--show",
        type=int,
        default=20,
        metavar="N",
        help="unmatched rows listed (default 20; 0: all)",
    )
    imp.set_defaults(func=_import_ranks)
    ranks = usub.add_parser(
        "ranks",
        help="list the rank editions, or one edition's ranks",
        description="List the stored rank editions, newest (the default) first; with "
        "--edition, that edition's rank of each university; with --delete, delete one.",
    )
    ranks.add_argument("--edition", metavar="NAME", help="show this edition's ranks")
    ranks.add_argument("--delete", metavar="NAME", help="delete this edition and its ranks")
    ranks.set_defaults(func=_ranks)


def _import(ctx: Context) -> int:
    from core.exceptions import ParameterError
    from core.universities import parse_universities
    from store.universities import Mode, import_universities

    args = ctx.args
    if args.drop_domains_with_pages and not args.replace:
        raise ParameterError("--drop-domains-with-pages goes with --replace")
    specs = parse_universities(args.file)
    mode: Mode = "merge" if args.merge else "replace" if args.replace else "refuse"
    result = import_universities(
        ctx.engine(), specs, mode=mode, drop_domains_with_pages=args.drop_domains_with_pages
    )
    ctx.refresh_figures()  # a name, a country or a domain changes what they count
    for change in result.changes:
        print(f"  updated {change.describe()}")
    print(
        f"{len(specs)} universities in {args.file}: {result.created} created, "
        f"{result.updated} updated, {result.unchanged} unchanged"
    )
    return 0


def _list(ctx: Context) -> int:
    from store.queries import list_universities

    rows = list_universities(ctx.engine(read_only=True))
    if not rows:
        print("no universities stored: run `webometrics universities import FILE`")
        return 0
    print(f"{'rank':>5}  {'country':<16} {'name':<45} domains")
    for r in rows:
        print(f"{r.rank or '-':>5}  {r.country:<16} {r.name:<45} {', '.join(r.domains)}")
    return 0


def _import_ranks(ctx: Context) -> int:
    import datetime as dt

    from core.exceptions import ParameterError
    from core.rank_table import read_rank_table
    from store.rank_editions import import_edition

    args = ctx.args
    published = None
    if args.published:
        try:
            published = dt.date.fromisoformat(args.published)
        except ValueError:
            raise ParameterError(
                f"--published {args.published!r}: give a date as YYYY-MM-DD"
            ) from None
    if args.show < 0:
        raise ParameterError("--show must be 0 (all) or more")
    table = read_rank_table(args.file)
    print(f"{args.file}: {table.describe()}")
    registry = None
    if not args.no_registries:
        from analyse.registries import Registry

        registry = Registry.load(ctx.settings.analyse.registry_folder())
    done = import_edition(
        ctx.engine(),
        table,
        args.edition,
        registry=registry,
        published=published,
        dry_run=args.dry_run,
    )
    _print_match(done.match, args.show)
    _print_outcome(done)
    gaps = bool(done.match.ambiguous or done.match.unranked)
    gaps |= bool(done.match.unmatched) and not args.allow_unmatched_rows
    return EXIT_GAPS if gaps else 0


def _print_match(match: MatchResult, show: int) -> None:
    from collections import Counter

    by = Counter(m.how for m in match.matched)
    how = ", ".join(f"{n} by {k}" for k, n in by.most_common())
    print(f"matched {len(match.matched)} rows to stored universities ({how or 'none'}):")
    for m in match.matched:
        ranks = f"rank {m.row.rank or '-'}" + (
            f", impact {m.row.impact_rank}" if m.row.impact_rank else ""
        )
        note = f"; {m.note}" if m.note else ""
        print(f"  line {m.row.line:>5}  {m.university:<45} {ranks}  ({m.how}{note})")
    if match.ambiguous:
        print(f"ambiguous rows ({len(match.ambiguous)}, not stored):")
        for u in match.ambiguous:
            print(f"  {u.row.label}: {u.reason}: {'; '.join(u.candidates)}")
    if match.unmatched:
        listed = match.unmatched if show == 0 else match.unmatched[:show]
        print(f"unmatched rows ({len(match.unmatched)}, no stored university):")
        for u in listed:
            print(f"  {u.row.label}: {u.reason}")
        if len(listed) < len(match.unmatched):
            print(f"  ... and {len(match.unmatched) - len(listed)} more (--show 0 lists all)")
    if match.unranked:
        print(f"stored universities left without a rank ({len(match.unranked)}):")
        for name in match.unranked:
            print(f"  {name}")


def _print_outcome(done: EditionImport) -> None:
    n = len(done.match.matched)
    if done.dry_run:
        verb = "would replace" if done.replaced is not None else "would store"
        print(f"dry run: nothing stored; {verb} edition {done.edition!r} with {n} ranks")
        if done.replaced is not None:
            print(f"  (the stored edition {done.edition!r} holds {done.replaced} ranks)")
        return
    if done.replaced is not None:
        print(f"edition {done.edition!r} replaced: it held {done.replaced} ranks, now {n}")
    else:
        print(f"edition {done.edition!r} stored: {n} ranks")
    print(f"default edition (the newest; university.rank holds its ranks): {done.newest!r}")


def _ranks(ctx: Context) -> int:
    from core.exceptions import ParameterError
    from store.queries import list_universities
    from store.rank_editions import delete_edition, edition_ranks, list_editions

    args = ctx.args
    if args.delete and args.edition:
        raise ParameterError("give --edition or --delete, not both")
    if args.delete:
        n, newest = delete_edition(ctx.engine(), args.delete)
        print(f"edition {args.delete!r} deleted ({n} ranks); default edition now: {newest!r}")
        return 0
    engine = ctx.engine(read_only=True)
    if args.edition:
        ranks = edition_ranks(engine, args.edition)
        print(f"{'rank':>5} {'impact':>6}  {'country':<16} name")
        unis = list_universities(engine)
        rows = sorted(unis, key=lambda u: (ranks.get(u.id, (None,))[0] is None,
                                           ranks.get(u.id, (0,))[0] or 0, u.name))  # fmt: skip
        for u in rows:
            rank, impact = ranks.get(u.id, (None, None))
            print(f"{rank or '-':>5} {impact or '-':>6}  {u.country:<16} {u.name}")
        return 0
    editions = list_editions(engine)
    if not editions:
        print(
            "no rank editions stored: `webometrics universities import-ranks FILE "
            "--edition NAME` imports one (the universities file's ranks are one too)"
        )
        return 0
    print(f"{'edition':<24} {'published':<10} {'imported (UTC)':<16} {'ranked':>6} "
          f"{'impact':>6} {'unmatched':>9}  source")  # fmt: skip
    for e in editions:
        mark = " *" if e.newest else ""
        print(
            f"{(e.name + mark)[:24]:<24} {e.published.isoformat() if e.published else '-':<10} "
            f"{e.imported_at:%Y-%m-%d %H:%M} {e.ranked:>6} {e.impact:>6} "
            f"{e.unmatched_rows:>9}  {e.source or '-'}"
        )
    print("* the default edition (the newest): university.rank holds its ranks")
    return 0
