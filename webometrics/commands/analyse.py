"""``webometrics analyse``: categories of the external domains, themes and categories of
the clusters (the pipeline's last stage), and ``webometrics category``: an analyst's
category override of a domain (set, clear, list)."""

from __future__ import annotations

import argparse
import getpass
import json
from typing import TYPE_CHECKING

from webometrics.commands.category_classify import register_classify
from webometrics.commands.category_review import register_review

if TYPE_CHECKING:
    from webometrics.cli import Context

ORDER = 60


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "analyse",
        epilog=(
            "lock: `analyse` and `cluster` share one lock: either exits 4 while the other (or"
            " a `webometrics run`) runs on the same database, naming it; a `crawl` or "
            "`extract` may run meanwhile (docs/operations.md)."
        ),
        help="categorise external domains, name and categorise clusters",
        description=(
            "Give every external domain a category of the taxonomy ([analyse] taxonomy, "
            "default analyse/taxonomy.toml) and of the registries of universities and research "
            "organisations ([analyse] registries; `webometrics registries info`) with its "
            "evidence and what decided it, then name the final clusters of "
            "the clusterings not analysed yet, and the clusters of their stored levels "
            "([analyse] levels: all, leiden or none), by most frequent shingles, distinctive "
            "terms, largest domains and typical titles, and vote their category. Analysts' "
            "overrides are kept."
        ),
    )
    p.add_argument(
        "--clustering",
        type=int,
        action="append",
        metavar="ID",
        help="analyse this clustering (repeatable; default: those without themes)",
    )
    p.add_argument("--redo", action="store_true", help="analyse every clustering again")
    p.add_argument(
        "--no-domains", action="store_true", help="do not re-categorise the domains first"
    )
    p.set_defaults(func=_analyse)
    _register_category(sub)


def _register_category(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser(
        "category",
        help="set, clear or list an analyst's category override of a domain",
        description=(
            "An override is stored per registered domain and wins over the assigned category "
            "everywhere (views, report, dashboard); it survives re-crawling and re-clustering."
        ),
    )
    csub = c.add_subparsers(dest="category_command", metavar="ACTION", required=True)
    s = csub.add_parser("set", help="override the category of DOMAIN")
    s.add_argument("domain")
    s.add_argument("category", help="a category key or alias of the taxonomy")
    s.add_argument("--note", help="why (shown beside the override)")
    s.add_argument(
        "--force",
        action="store_true",
        help="store the override even if DOMAIN is in no environment (by default such a "
        "domain, usually a typo, is refused with exit code 2 and nothing stored)",
    )
    r = csub.add_parser("clear", help="remove the override of DOMAIN")
    r.add_argument("domain")
    for action, func in ((s, _set), (r, _clear)):
        action.add_argument(
            "--by",
            metavar="NAME",
            default=getpass.getuser(),
            help="who overrides, for the history (default: your login name, %(default)s)",
        )
        action.set_defaults(func=func)
    ls = csub.add_parser("list", help="list the overrides")
    ls.set_defaults(func=_list)
    h = csub.add_parser(
        "history", help="every set and clear of the overrides (of DOMAIN), newest first"
    )
    h.add_argument("domain", nargs="?")
    h.set_defaults(func=_history)
    keys = csub.add_parser("keys", help="list the taxonomy's categories and aliases")
    keys.set_defaults(func=_keys)
    register_classify(csub)
    register_review(csub)


def _analyse(ctx: Context) -> int:
    from webometrics.runlock import stage_lock
    from webometrics.stages import analyse

    a = ctx.args
    scope = analyse.AnalyseScope(
        clustering_ids=tuple(a.clustering) if a.clustering is not None else None,
        redo=a.redo,
        domains=not a.no_domains,
    )
    with stage_lock(ctx.engine(), "analyse"):  # exit 4 naming the holder
        result = analyse.run(ctx.engine(), ctx.settings, scope, progress=True)
    print(json.dumps(result.stats(), indent=2, ensure_ascii=False))
    return 0


def _taxonomy(ctx: Context):
    from analyse.taxonomy import load_taxonomy

    return load_taxonomy(ctx.settings.analyse.taxonomy)


def _set(ctx: Context) -> int:
    from store import aggregates
    from store.overrides import set_override

    engine = ctx.engine()
    row = set_override(
        engine,
        ctx.args.domain,
        ctx.args.category,
        note=ctx.args.note,
        analyst=ctx.args.by,
        taxonomy=_taxonomy(ctx),
        require_environment=not ctx.args.force,
    )
    aggregates.sync_categories(engine)  # the saved counts follow the override
    print(f"{row.domain}: {row.category or '-'} -> {row.override_category} (override)")
    return 0


def _clear(ctx: Context) -> int:
    from store import aggregates
    from store.overrides import clear_override

    engine = ctx.engine()
    done = clear_override(engine, ctx.args.domain, analyst=ctx.args.by, taxonomy=_taxonomy(ctx))
    aggregates.sync_categories(engine)
    print(f"{ctx.args.domain}: override removed" if done else f"{ctx.args.domain}: no override")
    return 0


def _history(ctx: Context) -> int:
    from store.overrides import override_history

    events = override_history(ctx.engine(read_only=True), ctx.args.domain)
    for e in events:
        what = e.category if e.action == "set" else "(cleared)"
        note = f"  # {e.note}" if e.note else ""
        print(
            f"{e.at:%Y-%m-%d %H:%M:%S}\t{e.domain}\t{e.action} {what}\tby {e.analyst or '?'}{note}"
        )
    if not events:
        print("no override history" + (f" of {ctx.args.domain}" if ctx.args.domain else ""))
    return 0


def _list(ctx: Context) -> int:
    from store.overrides import list_overrides

    rows = list_overrides(ctx.engine(read_only=True))
    for r in rows:
        note = f"  # {r.override_note}" if r.override_note else ""
        print(f"{r.domain}\t{r.category or '-'} -> {r.override_category}{note}")
    if not rows:
        print("no overrides")
    return 0


def _keys(ctx: Context) -> int:
    tax = _taxonomy(ctx)
    for c in tax.categories:
        aliases = f" (also: {', '.join(c.aliases)})" if c.aliases else ""
        print(f"{c.key}\t{c.label_en} / {c.label_ru}{aliases}")
    return 0
