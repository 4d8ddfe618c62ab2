"""``webometrics universities import FILE | list``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    imp.add_argument("file")
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
