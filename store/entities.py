"""Analysts' web-entity rules in the database, and re-keying stored rows by the rules.

A site (web entity, :mod:`core.entities`) is the key the pipeline stores in
``page.registered_domain``, ``link.target_domain``, ``citation.citing_domain``,
``citing_node.domain``, ``environment.domain`` and ``document.domain`` / ``document.key``
(unit ``domain``); categories and overrides are keyed on it. The shipped platform rules
decide it by default; an analyst adds **split** rules (a host or URL prefix is a site of
its own: ``vk.com/spbu``) and **merge** rules (several sites are one: ``msu.ru msu.su``),
kept in :class:`~store.models.SiteRule`. Every add and remove, and every re-keying, is
also a row of :class:`~store.models.SiteRuleHistory` (who, when, the note; append-only),
written in the same transaction. Writers take the override write lock
(:func:`store.overrides.write_locked`): re-keying moves the rows overrides are read with.

:func:`apply_rules` re-keys what is stored, without a re-crawl: every row whose key
changes under the current rules gets its new key; the environment rows of the keys that
lose or gain rows are recomputed from the run's links and citations (or citing nodes),
as the crawl's end computes them (:func:`environment_rows`; only in the runs that have
environment rows); the documents of unit
``domain`` of those keys are deleted (with their signatures, duplicate-group and cluster
memberships), so ``webometrics extract`` builds them again, and ``dedup``, ``cluster``
and ``analyse`` must run again for the figures to follow. Run twice, the second run
changes nothing. Migration 0016 re-keys a database stored under the old default
(eTLD+1 without the Public Suffix List's private section) the same way.

Examples
--------
>>> from store import make_engine, schema
>>> engine = make_engine("sqlite://")
>>> schema.upgrade(engine)
>>> add_split(engine, "https://vk.com/spbu/", note="SPbU's page", analyst="Ann").key
'vk.com/spbu'
>>> add_merge(engine, ["msu.ru", "www.msu.su"]).members
('msu.su',)
>>> site_rules(engine).key("https://vk.com/spbu?w=wall")
'vk.com/spbu'
>>> [(e.action, e.kind, e.key) for e in rule_history(engine)]
[('add', 'merge', 'msu.ru'), ('add', 'split', 'vk.com/spbu')]
>>> apply_rules(engine).changed_rows
0
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, delete, func, insert, literal, select, update
from sqlalchemy.orm import Session

from core.domains import in_domains
from core.entities import KEY_MAX_LENGTH, SiteRules, normalise_merge, normalise_prefix
from core.exceptions import ParameterError
from store.models import (
    Citation,
    CitingNode,
    Document,
    DomainCategory,
    Environment,
    Link,
    Page,
    SiteRule,
    SiteRuleHistory,
    UniversityDomain,
    utcnow,
)
from store.session import session_scope

__all__ = [
    "RERUN",
    "Move",
    "RekeyPlan",
    "RuleEvent",
    "RuleRow",
    "add_merge",
    "add_split",
    "apply_rules",
    "environment_rows",
    "list_rules",
    "plan_rekey",
    "preview_rules",
    "rekey",
    "remove_rule",
    "rule_history",
    "rules_of",
    "site_rules",
]

#: the stages to run again after a re-keying, in order
RERUN = ("extract", "dedup", "cluster", "analyse")
_CHUNK = 2000


@dataclass(frozen=True)
class RuleRow:
    """A stored rule: ``split`` (``key`` is a site of its own) or ``merge`` (``key`` and
    ``members`` are one site named ``key``)."""

    id: int
    kind: str
    key: str
    members: tuple[str, ...]
    note: str | None
    analyst: str | None
    created_at: dt.datetime


@dataclass(frozen=True)
class RuleEvent:
    """One action of the rules' history: ``add``, ``remove`` or ``apply`` (``counts``)."""

    id: int
    at: dt.datetime
    action: str
    kind: str | None
    key: str | None
    members: tuple[str, ...]
    note: str | None
    analyst: str | None
    counts: dict[str, Any]


def _rule_row(r: SiteRule) -> RuleRow:
    return RuleRow(r.id, r.kind, r.key, tuple(r.members or ()), r.note, r.analyst, r.created_at)


def _analyst(name: str | None) -> str | None:
    """Who, as they named themselves (the overrides' rule: blank is unknown)."""
    from store.overrides import analyst_name  # imported late: it imports us

    return analyst_name(name)


def _locked(engine: Engine) -> Engine:
    from store.overrides import write_locked  # one write lock for what moves categories

    return write_locked(engine)


# -- reading the rules ---------------------------------------------------------------------


def rules_of(session: Session, platforms: SiteRules | None = None) -> SiteRules:
    """The platform rules (the shipped ones when ``None``) with the stored analysts'
    rules, read in ``session``."""
    splits: list[str] = []
    merges: list[tuple[str, ...]] = []
    for kind, key, members in session.execute(
        select(SiteRule.kind, SiteRule.key, SiteRule.members).order_by(SiteRule.id)
    ):
        if kind == "split":
            splits.append(key)
        else:
            merges.append((key, *(members or ())))
    return (platforms or SiteRules.default()).with_analyst(splits=splits, merges=merges)


def site_rules(engine: Engine, platforms: SiteRules | None = None) -> SiteRules:
    """The rules that decide sites now: the platform rules and the stored analysts'."""
    with session_scope(engine) as s:
        return rules_of(s, platforms)


def list_rules(engine: Engine) -> list[RuleRow]:
    """The stored analysts' rules, oldest first."""
    with session_scope(engine) as s:
        return [_rule_row(r) for r in s.scalars(select(SiteRule).order_by(SiteRule.id))]


def rule_history(
    engine: Engine, key: str | None = None, *, limit: int | None = None
) -> list[RuleEvent]:
    """The rules' history, newest first: of the rules whose key is ``key`` (normalised
    like a prefix), or every action; at most ``limit``."""
    h = SiteRuleHistory
    query = select(h).order_by(h.id.desc()).limit(limit)
    if key is not None:
        query = query.where(h.key == normalise_prefix(key))
    with session_scope(engine) as s:
        return [
            RuleEvent(
                e.id,
                e.at,
                e.action,
                e.kind,
                e.key,
                tuple(e.members or ()),
                e.note,
                e.analyst,
                dict(e.counts or {}),
            )
            for e in s.scalars(query)
        ]


# -- writing the rules ---------------------------------------------------------------------


def _add(
    engine: Engine, kind: str, key: str, members: tuple[str, ...], note: str | None, who: str | None
) -> RuleRow:
    why = (note or "").strip() or None
    with session_scope(_locked(engine)) as s:
        existing = s.execute(select(SiteRule.kind, SiteRule.key, SiteRule.members)).all()
        for k, stored_key, stored_members in existing:
            if k == kind == "split" and stored_key == key:
                raise ParameterError(f"{key!r} is a split rule already")
            if k == "merge" and kind == "merge":
                taken = {stored_key, *(stored_members or ())} & {key, *members}
                if taken:
                    raise ParameterError(
                        f"{', '.join(sorted(taken))} already in the merge named "
                        f"{stored_key!r}: remove it first (`webometrics sites rule remove "
                        f"{stored_key}`)"
                    )
        now = utcnow()
        row = SiteRule(kind=kind, key=key, members=list(members), note=why, analyst=who)
        row.created_at = now
        s.add(row)
        s.add(
            SiteRuleHistory(
                action="add", kind=kind, key=key, members=list(members), note=why,
                analyst=who, counts={}, at=now,
            )
        )  # fmt: skip
        s.flush()
        return _rule_row(row)


def add_split(
    engine: Engine, prefix: str, *, note: str | None = None, analyst: str | None = None
) -> RuleRow:
    """Store a split rule: ``prefix`` (a host, covering its subdomains, or a URL prefix
    such as ``vk.com/spbu``) is a site of its own. Stored rows keep their keys until
    :func:`apply_rules`.

    Raises
    ------
    ParameterError
        Not a host or URL prefix, already a split, or the analyst's name too long.
    """
    return _add(engine, "split", normalise_prefix(prefix), (), note, _analyst(analyst))


def add_merge(
    engine: Engine, keys: Sequence[str], *, note: str | None = None, analyst: str | None = None
) -> RuleRow:
    """Store a merge rule: the sites ``keys`` are one site, named by the first.

    Raises
    ------
    ParameterError
        Fewer than two sites, a bad one, one already in another merge, or the analyst's
        name too long.
    """
    merged = normalise_merge(keys)
    return _add(engine, "merge", merged[0], merged[1:], note, _analyst(analyst))


def remove_rule(
    engine: Engine,
    key: str,
    *,
    kind: str | None = None,
    note: str | None = None,
    analyst: str | None = None,
) -> RuleRow:
    """Remove the rule named ``key`` (a split's prefix or a merge's first key; ``kind``
    when both exist) and add the action to the history.

    Raises
    ------
    ParameterError
        No such rule, or ``key`` names a split and a merge and ``kind`` is not given.
    """
    norm = normalise_prefix(key)
    who = _analyst(analyst)
    with session_scope(_locked(engine)) as s:
        query = select(SiteRule).where(SiteRule.key == norm)
        if kind is not None:
            query = query.where(SiteRule.kind == kind)
        rows = s.scalars(query).all()
        if not rows:
            raise ParameterError(
                f"no {kind or 'split or merge'} rule named {norm!r}: see `webometrics sites rules`"
            )
        if len(rows) > 1:
            raise ParameterError(f"{norm!r} names a split and a merge: give --kind")
        row = rows[0]
        out = _rule_row(row)
        s.add(
            SiteRuleHistory(
                action="remove", kind=row.kind, key=row.key, members=list(row.members or ()),
                note=(note or "").strip() or None, analyst=who, counts={}, at=utcnow(),
            )
        )  # fmt: skip
        s.delete(row)
        return out


# -- environment rows ----------------------------------------------------------------------


def environment_rows(
    session: Session, run_id: int, keys: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """The environment rows of a crawl run computed from what is stored (only those of
    ``keys`` when given).

    Outgoing rows: per university and external site, ``link_count`` = links of the
    university's pages to the site, ``page_count`` = the site's pages fetched (HTTP 200)
    in the run. Citing rows: per university and citing site, ``page_count`` = verified
    citing pages, ``link_count`` = their stored links into the university. A run of a web
    graph (with :class:`~store.models.CitingNode` rows) has citing rows from its nodes
    instead: ``link_count`` = the nodes' links, ``page_count`` 0.
    """
    wanted = None if keys is None else set(keys)
    uni_domains: dict[int, set[str]] = defaultdict(set)
    for uid, dom in session.execute(
        select(UniversityDomain.university_id, UniversityDomain.domain)
    ):
        uni_domains[uid].add(dom)

    def keep(key: str) -> bool:
        return wanted is None or key in wanted

    fetched_pages = dict(
        session.execute(
            select(Page.registered_domain, func.count())
            .where(Page.last_run_id == run_id, Page.http_status == 200)
            .group_by(Page.registered_domain)
        ).all()
    )
    outgoing: Counter[tuple[int, str]] = Counter()
    for source_uni, dom, n in session.execute(
        select(Page.university_id, Link.target_domain, func.count())
        .join(Page, Page.id == Link.source_page_id)
        .where(Link.run_id == run_id, Link.external, Page.role == "university")
        .group_by(Page.university_id, Link.target_domain)
    ):
        if source_uni is not None and dom not in uni_domains.get(source_uni, ()) and keep(dom):
            outgoing[(source_uni, dom)] += n
    rows = [
        {
            "run_id": run_id,
            "university_id": uid,
            "domain": dom,
            "direction": "outgoing",
            "link_count": n,
            "page_count": fetched_pages.get(dom, 0),
        }
        for (uid, dom), n in sorted(outgoing.items())
    ]
    graph = session.scalar(select(CitingNode.id).where(CitingNode.run_id == run_id).limit(1))
    if graph is not None:
        for uid, dom, links in session.execute(
            select(CitingNode.university_id, CitingNode.domain, func.sum(CitingNode.links))
            .where(CitingNode.run_id == run_id)
            .group_by(CitingNode.university_id, CitingNode.domain)
            .order_by(CitingNode.university_id, CitingNode.domain)
        ):
            if keep(dom):
                rows.append(
                    {
                        "run_id": run_id,
                        "university_id": uid,
                        "domain": dom,
                        "direction": "citing",
                        "link_count": int(links or 0),
                        "page_count": 0,
                    }
                )
        return rows
    citing_pages: dict[tuple[int, str], set[int]] = defaultdict(set)
    for uid, dom, pid in session.execute(
        select(Citation.university_id, Citation.citing_domain, Citation.page_id).where(
            Citation.run_id == run_id, Citation.status == "verified"
        )
    ):
        if pid is not None and keep(dom):
            citing_pages[(uid, dom)].add(pid)
    all_pids = sorted({p for s in citing_pages.values() for p in s})
    page_links: dict[int, list[str]] = defaultdict(list)
    for start in range(0, len(all_pids), 500):
        for src, host in session.execute(
            select(Link.source_page_id, Link.target_host).where(
                Link.source_page_id.in_(all_pids[start : start + 500])
            )
        ):
            page_links[src].append(host)
    for (uid, dom), pids in sorted(citing_pages.items()):
        doms = uni_domains.get(uid, set())
        rows.append(
            {
                "run_id": run_id,
                "university_id": uid,
                "domain": dom,
                "direction": "citing",
                "link_count": sum(
                    1 for pid in pids for host in page_links.get(pid, ()) if in_domains(host, doms)
                ),
                "page_count": len(pids),
            }
        )
    return rows


# -- re-keying -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    """Rows of one table whose key changes from ``old`` to ``new``, with an example."""

    table: str
    old: str
    new: str
    rows: int
    example: str


@dataclass
class RekeyPlan:
    """What re-keying the stored rows by some rules changes.

    Attributes
    ----------
    fingerprint : str
        The rules' fingerprint (:meth:`core.entities.SiteRules.fingerprint`).
    rows : dict
        Rows whose key changes, per table (``page``, ``link``, ``citation``,
        ``citing_node``).
    moves : list of Move
        Per table and (old key, new key), most rows first.
    keys_before, keys_after : int
        Distinct keys of the external sites (pages not of a university, links leaving
        one, citations, citing nodes) before and after.
    affected : set of str
        The keys that lose or gain rows.
    environment_rows, documents_deleted : int
        After :func:`rekey`: environment rows rewritten and domain documents deleted.
    orphan_overrides : list of str
        Keys with an analyst's category override that no stored row has any more.
    """

    fingerprint: str
    rows: dict[str, int] = field(default_factory=dict)
    moves: list[Move] = field(default_factory=list)
    keys_before: int = 0
    keys_after: int = 0
    affected: set[str] = field(default_factory=set)
    environment_rows: int = 0
    documents_deleted: int = 0
    orphan_overrides: list[str] = field(default_factory=list)
    _updates: dict[str, list[tuple[int, str]]] = field(default_factory=dict, repr=False)

    @property
    def changed_rows(self) -> int:
        """Rows whose key changes, over every table."""
        return sum(self.rows.values())

    @property
    def rerun(self) -> tuple[str, ...]:
        """The stages to run again (none when nothing changed)."""
        return RERUN if self.changed_rows else ()

    def summary(self) -> dict[str, Any]:
        """The plan as plain values (the history's ``counts``, the command's JSON)."""
        return {
            "fingerprint": self.fingerprint,
            "rows": dict(self.rows),
            "keys_before": self.keys_before,
            "keys_after": self.keys_after,
            "affected_keys": len(self.affected),
            "moves": len(self.moves),
            "environment_rows": self.environment_rows,
            "documents_deleted": self.documents_deleted,
            "orphan_overrides": list(self.orphan_overrides),
            "rerun": list(self.rerun),
        }


#: table -> (model, id column, source of the key, key column)
_TABLES: dict[str, tuple[Any, Any, Any, Any]] = {
    "page": (Page, Page.id, Page.url, Page.registered_domain),
    "link": (Link, Link.id, Link.target_url, Link.target_domain),
    "citation": (Citation, Citation.id, Citation.citing_url, Citation.citing_domain),
    "citing_node": (CitingNode, CitingNode.id, CitingNode.node, CitingNode.domain),
}


def _external(table: str) -> Any:
    """The condition of a table's rows that name external sites (keys counted)."""
    if table == "page":
        return Page.role != "university"
    if table == "link":
        return Link.external
    return None


def plan_rekey(session: Session, rules: SiteRules) -> RekeyPlan:
    """What :func:`rekey` would change under ``rules``, read in ``session`` (nothing is
    written)."""
    plan = RekeyPlan(rules.fingerprint())
    before: set[str] = set()
    after: set[str] = set()
    cache: dict[str, str] = {}
    for table, (_model, id_col, source, key_col) in _TABLES.items():
        moves: Counter[tuple[str, str]] = Counter()
        examples: dict[tuple[str, str], str] = {}
        updates: list[tuple[int, str]] = []
        ext = _external(table)
        query = select(id_col, source, key_col, ext if ext is not None else literal(True))
        last = 0
        while True:  # by id, in chunks: a big table is never held whole
            chunk = session.execute(query.where(id_col > last).order_by(id_col).limit(_CHUNK)).all()
            if not chunk:
                break
            last = chunk[-1][0]
            for row_id, src, old, external in chunk:
                new = cache.get(src)
                if new is None:
                    new = rules.key(src)[:KEY_MAX_LENGTH]
                    cache[src] = new
                if external and old:
                    before.add(old)
                if external and new:
                    after.add(new)
                if new != old:
                    updates.append((row_id, new))
                    moves[(old, new)] += 1
                    examples.setdefault((old, new), src)
        plan.rows[table] = len(updates)
        plan._updates[table] = updates
        for (old, new), n in moves.items():
            plan.moves.append(Move(table, old, new, n, examples[(old, new)]))
            plan.affected.update((old, new))
        cache.clear()
    plan.moves.sort(key=lambda m: (-m.rows, m.table, m.old, m.new))
    plan.affected.discard("")
    plan.keys_before, plan.keys_after = len(before), len(after)
    return plan


def rekey(session: Session, rules: SiteRules, plan: RekeyPlan | None = None) -> RekeyPlan:
    """Re-key the stored rows by ``rules`` in ``session``'s transaction (see the module
    docstring); return the plan with what was written."""
    plan = plan or plan_rekey(session, rules)
    if not plan.changed_rows:
        return plan
    for table, updates in plan._updates.items():
        model, _id, _src, key_col = _TABLES[table]
        for start in range(0, len(updates), _CHUNK):
            session.execute(
                update(model),
                [{"id": i, key_col.key: new} for i, new in updates[start : start + _CHUNK]],
            )
    moved_pages = dict(plan._updates.get("page", []))
    page_ids = sorted(moved_pages)
    for start in range(0, len(page_ids), _CHUNK):
        ids = page_ids[start : start + _CHUNK]
        docs = session.execute(
            select(Document.id, Document.page_id).where(
                Document.unit == "page", Document.page_id.in_(ids)
            )
        ).all()
        if docs:
            session.execute(
                update(Document),
                [{"id": d, "domain": moved_pages[p]} for d, p in docs if p is not None],
            )
    affected = sorted(plan.affected)
    for start in range(0, len(affected), 500):
        part = affected[start : start + 500]
        gone = session.scalars(
            select(Document.id).where(Document.unit == "domain", Document.key.in_(part))
        ).all()
        if gone:
            session.execute(delete(Document).where(Document.id.in_(gone)))
        plan.documents_deleted += len(gone)
    # the runs whose environment was computed (a run that never finished has none: it
    # gets none now either)
    runs = session.scalars(select(Environment.run_id).distinct().order_by(Environment.run_id))
    for run_id in list(runs):
        for start in range(0, len(affected), 500):
            part = affected[start : start + 500]
            session.execute(
                delete(Environment).where(
                    Environment.run_id == run_id, Environment.domain.in_(part)
                )
            )
        rows = environment_rows(session, run_id, plan.affected)
        if rows:
            session.execute(insert(Environment), rows)
        plan.environment_rows += len(rows)
    overridden = set(
        session.scalars(
            select(DomainCategory.domain).where(
                DomainCategory.override_category.is_not(None),
                DomainCategory.domain.in_(affected[:30000]),
            )
        )
    )
    if overridden:
        still = set()
        for key_col in (Page.registered_domain, Link.target_domain, Citation.citing_domain):
            query = select(key_col).where(key_col.in_(overridden)).distinct()
            still |= set(session.scalars(query))
        plan.orphan_overrides = sorted(overridden - still)
    return plan


def preview_rules(
    engine: Engine, *, splits: Iterable[str] = (), merges: Iterable[Sequence[str]] = ()
) -> RekeyPlan:
    """What :func:`apply_rules` would change with these rules added to the stored ones
    (validated like :func:`add_split` and :func:`add_merge`; nothing is stored)."""
    with session_scope(engine) as s:
        current = rules_of(s)
        rules = current.with_analyst(
            splits=[*current.splits, *splits], merges=[*current.merges, *merges]
        )
        return plan_rekey(s, rules)


def apply_rules(
    engine: Engine,
    *,
    dry_run: bool = False,
    analyst: str | None = None,
    rules: SiteRules | None = None,
) -> RekeyPlan:
    """Re-key the stored rows by the current rules (the stored ones, or ``rules``) in one
    transaction under the override write lock, and record it in the history; with
    ``dry_run`` only say what would change. Idempotent: a second run changes nothing."""
    who = _analyst(analyst)
    with session_scope(_locked(engine) if not dry_run else engine) as s:
        current = rules or rules_of(s)
        if dry_run:
            return plan_rekey(s, current)
        plan = rekey(s, current)
        if plan.changed_rows:
            s.add(
                SiteRuleHistory(
                    action="apply", members=[], analyst=who, counts=plan.summary(), at=utcnow()
                )
            )
        return plan
