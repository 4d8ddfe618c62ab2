"""``webometrics sites``: sites as web entities (where an external site begins and ends).

``of URL...`` says which site a URL belongs to and by which rule; ``rule add --split
PREFIX | --merge SITE SITE...`` and ``rule remove`` change the analysts' rules (kept with
their history); ``rules`` and ``history`` list them; ``apply`` re-keys the stored rows by
the current rules (no re-crawl). See :mod:`core.entities` and :mod:`store.entities`.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.entities import RekeyPlan
    from webometrics.cli import Context

ORDER = 62

_RULES_HELP = (
    "A site (web entity) is decided in this order: an analyst's split (a host, with its "
    "subdomains, or a URL prefix such as vk.com/spbu is a site of its own; the longest "
    "wins), a hosting platform's path rule (sites.google.com/site/x, geocities.com/"
    "athens/1234, best.com/~name), a platform's subdomain rule (user.livejournal.com, "
    "x.narod.ru, x.ucoz.ru), the registrable domain with the Public Suffix List's private "
    "section (x.blogspot.com, name.github.io), then an analyst's merge (msu.ru msu.su: one "
    "site named msu.ru). The platform rules ship in core/site_rules.toml."
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sites",
        help="sites as web entities: which site a URL is, split and merge rules, re-key "
        "the stored rows",
        description="Sites as web entities. " + _RULES_HELP + " Rules added or removed "
        "change what new crawls store at once; `sites apply` re-keys what is stored "
        "(pages, links, citations, environment rows) without a re-crawl and says which "
        "stages to run again.",
    )
    ssub = p.add_subparsers(dest="sites_command", metavar="ACTION", required=True)
    _register_of(ssub)
    _register_rule(ssub)
    _register_lists(ssub)
    _register_apply(ssub)


def _register_of(ssub: argparse._SubParsersAction) -> None:
    of = ssub.add_parser(
        "of",
        help="the site of each URL or host, and the rule that decided it",
        description="The site (web entity) of each URL or host under the current rules "
        "(the platform rules and the stored analysts' rules), the rule that decided it, "
        "and the registered domain (eTLD+1 without the private section) for comparison.",
    )
    of.add_argument("urls", nargs="+", metavar="URL", help="a URL, host, or host/path")
    of.add_argument("--format", choices=("table", "json"), default="table")
    of.set_defaults(func=_of)


def _register_rule(ssub: argparse._SubParsersAction) -> None:
    rule = ssub.add_parser(
        "rule",
        help="add or remove an analyst's split or merge rule",
        description="Add or remove an analyst's rule. " + _RULES_HELP,
    )
    rsub = rule.add_subparsers(dest="rule_command", metavar="ACTION", required=True)
    add = rsub.add_parser(
        "add",
        help="add a split (--split PREFIX) or a merge (--merge SITE SITE...)",
        description="Store an analyst's rule with its note and name, and record it in "
        "the history. Stored rows keep their keys until `webometrics sites apply`; new "
        "crawls use the rule at once. --preview shows what apply would then move, and "
        "stores nothing.",
        epilog="examples:\n  webometrics sites rule add --split vk.com/spbu --note "
        '"SPbU\'s VK page"\n  webometrics sites rule add --merge msu.ru msu.su --analyst Ann',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = add.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--split",
        metavar="PREFIX",
        help="a host (with its subdomains: user.livejournal.com) or a URL prefix "
        "(vk.com/spbu) that is a site of its own",
    )
    what.add_argument(
        "--merge",
        nargs="+",
        metavar="SITE",
        help="two or more sites that are one, named by the first (msu.ru msu.su)",
    )
    add.add_argument("--note", help="why (kept in the history)")
    add.add_argument("--analyst", help="who (kept in the history)")
    add.add_argument(
        "--preview",
        action="store_true",
        help="show the stored rows the rule would move, store nothing",
    )
    add.add_argument("--moves", type=int, default=15, metavar="N", help="moves shown (15)")
    add.set_defaults(func=_add)
    rm = rsub.add_parser(
        "remove",
        help="remove a rule by its key (a split's prefix, a merge's first site)",
        description="Remove an analyst's rule and record it in the history. Stored rows "
        "keep their keys until `webometrics sites apply`.",
    )
    rm.add_argument("key", metavar="KEY")
    rm.add_argument("--kind", choices=("split", "merge"), help="when KEY names both")
    rm.add_argument("--note", help="why (kept in the history)")
    rm.add_argument("--analyst", help="who (kept in the history)")
    rm.set_defaults(func=_remove)


def _register_lists(ssub: argparse._SubParsersAction) -> None:
    rules = ssub.add_parser("rules", help="list the analysts' rules")
    rules.add_argument("--format", choices=("table", "json"), default="table")
    rules.set_defaults(func=_rules)

    hist = ssub.add_parser(
        "history",
        help="the rules' history: every add, remove and apply, newest first",
    )
    hist.add_argument("key", nargs="?", metavar="KEY", help="only the rules of this key")
    hist.add_argument("--limit", type=int, default=50, metavar="N", help="at most N (50)")
    hist.set_defaults(func=_history)


def _register_apply(ssub: argparse._SubParsersAction) -> None:
    app = ssub.add_parser(
        "apply",
        help="re-key the stored rows by the current rules (no re-crawl)",
        description="Give every stored page, link, citation and citing node the site "
        "its URL has under the current rules; recompute the environment rows of the "
        "sites that lose or gain rows; delete those sites' documents (unit domain) so "
        "`webometrics extract` builds them again. Then run extract, dedup, cluster and "
        "analyse (or `webometrics run`) for the figures to follow. One transaction; "
        "running it twice changes nothing the second time.",
    )
    app.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
    app.add_argument("--analyst", help="who (kept in the history)")
    app.add_argument("--moves", type=int, default=15, metavar="N", help="moves shown (15)")
    app.add_argument("--format", choices=("table", "json"), default="table")
    app.set_defaults(func=_apply)


def _of(ctx: Context) -> int:
    from core.domains import registered_domain
    from core.entities import split_url
    from core.exceptions import ParameterError
    from store.entities import site_rules

    rules = site_rules(ctx.engine(read_only=True))
    out = []
    for url in ctx.args.urls:
        host, _path = split_url(url)
        if not host:
            raise ParameterError(f"{url!r} has no host: give a URL, a host or host/path")
        e = rules.entity(url)
        out.append(
            {
                "url": url,
                "site": e.key,
                "rule": e.rule,
                "registered_domain": registered_domain(host),
            }
        )
    if ctx.args.format == "json":
        print(json.dumps(out, indent=2))
        return 0
    width = max(len(r["url"]) for r in out)
    swidth = max(len(r["site"]) for r in out)
    for r in out:
        print(
            f"{r['url']:<{width}}  {r['site']:<{swidth}}  {r['rule']}  "
            f"(registered domain {r['registered_domain']})"
        )
    return 0


def _print_plan(plan: RekeyPlan, moves: int, *, done: bool) -> None:
    rows = ", ".join(f"{n} {table}" for table, n in plan.rows.items())
    verb = "re-keyed" if done else "would change key"
    print(f"rows that {verb}: {plan.changed_rows} ({rows})")
    print(
        f"external sites: {plan.keys_before} -> {plan.keys_after}; "
        f"sites losing or gaining rows: {len(plan.affected)}"
    )
    for m in plan.moves[: max(0, moves)]:
        print(f"  {m.table:<11} {m.old or '-'} -> {m.new or '-'}  ({m.rows}; e.g. {m.example})")
    if len(plan.moves) > moves:
        print(f"  ... {len(plan.moves) - moves} more moves (--moves N)")
    if done:
        print(
            f"environment rows rewritten: {plan.environment_rows}; documents deleted "
            f"for rebuilding: {plan.documents_deleted}"
        )
    if plan.orphan_overrides:
        print(
            "category overrides on sites no stored row has any more: "
            + ", ".join(plan.orphan_overrides)
            + " (set them on the new sites: `webometrics category set`)"
        )
    if plan.rerun:
        print(
            ("now run: " if done else "after apply, run: ")
            + " -> ".join(f"webometrics {s}" for s in plan.rerun)
            + " (or `webometrics run`)"
        )
    elif not plan.changed_rows:
        print("nothing to do: every stored row has its site under the current rules")


def _add(ctx: Context) -> int:
    from store.entities import add_merge, add_split, preview_rules

    args = ctx.args
    if args.preview:
        plan = preview_rules(
            ctx.engine(read_only=True),
            splits=[args.split] if args.split else [],
            merges=[args.merge] if args.merge else [],
        )
        _print_plan(plan, args.moves, done=False)
        return 0
    if args.split:
        row = add_split(ctx.engine(), args.split, note=args.note, analyst=args.analyst)
        print(f"split rule added: {row.key} is a site of its own")
    else:
        row = add_merge(ctx.engine(), args.merge, note=args.note, analyst=args.analyst)
        print(f"merge rule added: {', '.join((row.key, *row.members))} are one site, {row.key}")
    print("stored rows keep their keys until `webometrics sites apply` (--dry-run first)")
    return 0


def _remove(ctx: Context) -> int:
    from store.entities import remove_rule

    args = ctx.args
    row = remove_rule(ctx.engine(), args.key, kind=args.kind, note=args.note, analyst=args.analyst)
    print(f"{row.kind} rule {row.key} removed; `webometrics sites apply` re-keys the stored rows")
    return 0


def _rules(ctx: Context) -> int:
    from store.entities import list_rules

    rows = list_rules(ctx.engine(read_only=True))
    if ctx.args.format == "json":
        print(
            json.dumps(
                [
                    {
                        "kind": r.kind,
                        "key": r.key,
                        "members": list(r.members),
                        "note": r.note,
                        "analyst": r.analyst,
                        "created_at": r.created_at.isoformat(),
                    }
                    for r in rows
                ],
                indent=2,
            )
        )
        return 0
    if not rows:
        print("no analysts' rules: the platform rules (core/site_rules.toml) and the PSL decide")
    for r in rows:
        what = r.key if r.kind == "split" else f"{r.key} <- {', '.join(r.members)}"
        who = f" by {r.analyst}" if r.analyst else ""
        note = f"  ({r.note})" if r.note else ""
        print(f"{r.kind:<6} {what}  {r.created_at:%Y-%m-%d %H:%M}{who}{note}")
    return 0


def _history(ctx: Context) -> int:
    from store.entities import rule_history

    events = rule_history(ctx.engine(read_only=True), ctx.args.key, limit=max(1, ctx.args.limit))
    if not events:
        print("no history")
    for e in events:
        who = f" by {e.analyst}" if e.analyst else ""
        if e.action == "apply":
            rows = e.counts.get("rows", {})
            what = f"re-keyed {sum(rows.values())} rows " + json.dumps(rows)
        else:
            members = f" <- {', '.join(e.members)}" if e.members else ""
            what = f"{e.kind} {e.key}{members}"
        note = f"  ({e.note})" if e.note else ""
        print(f"{e.at:%Y-%m-%d %H:%M:%S}  {e.action:<6} {what}{who}{note}")
    return 0


def _apply(ctx: Context) -> int:
    from store.entities import apply_rules

    args = ctx.args
    engine = ctx.engine(read_only=args.dry_run)
    plan = apply_rules(engine, dry_run=args.dry_run, analyst=args.analyst)
    if not args.dry_run:
        ctx.refresh_figures()  # the rows re-keyed to their sites
    if args.format == "json":
        summary = plan.summary()
        summary["dry_run"] = bool(args.dry_run)
        summary["moves"] = [
            {"table": m.table, "old": m.old, "new": m.new, "rows": m.rows, "example": m.example}
            for m in plan.moves
        ]
        print(json.dumps(summary, indent=2))
        return 0
    _print_plan(plan, args.moves, done=not args.dry_run)
    return 0
