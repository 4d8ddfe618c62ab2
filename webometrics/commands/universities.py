"""``webometrics universities import FILE | list``."""

from __future__ import annotations

import argparse

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
    )
    imp.add_argument("file")
    imp.set_defaults(func=_import)
    ls = usub.add_parser("list", help="list the stored universities")
    ls.set_defaults(func=_list)


def _import(ctx) -> int:
    from core.universities import parse_universities
    from store.universities import import_universities

    specs = parse_universities(ctx.args.file)
    created, updated = import_universities(ctx.engine(), specs)
    print(f"{len(specs)} universities in {ctx.args.file}: {created} created, {updated} updated")
    return 0


def _list(ctx) -> int:
    from store.queries import list_universities

    rows = list_universities(ctx.engine(read_only=True))
    if not rows:
        print("no universities stored: run `webometrics universities import FILE`")
        return 0
    print(f"{'rank':>5}  {'country':<16} {'name':<45} domains")
    for r in rows:
        print(f"{r.rank or '-':>5}  {r.country:<16} {r.name:<45} {', '.join(r.domains)}")
    return 0
