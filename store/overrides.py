"""An analyst's category override of an external domain: set, clear, list.

The override lives in :class:`~store.models.DomainCategory`, keyed on the registered
domain, so it survives re-crawling (pages and environment rows come and go) and
re-clustering (clusters are rebuilt; domains stay). Everything that reports categories
applies it: the analyst views of migration 0002 (``COALESCE(override_category,
category)``), :mod:`store.analytics`, the report and the dashboard; the analyse stage never
overwrites it. Setting or clearing an override also re-votes the category of every final
cluster the domain belongs to (its own cluster override, if any, still wins).

Every set and clear is also kept, append-only, in
:class:`~store.models.DomainCategoryHistory` (who, when, the category, the note), in the
same transaction: when two analysts override one domain, the override is the last one's
and both notes stay in :func:`override_history`.

A domain that is in no environment (no university links to it, none is cited by it, in
any run) is usually a typo: :func:`set_override` with ``require_environment=True`` (the
command line's ``category set`` without ``--force``) refuses it, naming it, and stores
nothing; :func:`not_in_environment` says which of several domains are missing.

Concurrent writers (several dashboard sessions, the command line) are serialised: each
transaction of :func:`write_locked` first takes the override write lock, SQLite's write
lock (``BEGIN IMMEDIATE``, waited for within the engine's busy timeout instead of failing
with "database is locked" half-way) or a PostgreSQL transaction advisory lock
(:data:`LOCK_KEY`). One lock for every domain, since re-voting a cluster reads the
overrides of its other domains; writes take milliseconds, so waiting is short.

Examples
--------
>>> from store import make_engine, schema
>>> engine = make_engine("sqlite://")
>>> schema.upgrade(engine)
>>> set_override(engine, "Lenta.ru", "news", note="a news portal").override_category
'news_portals'
>>> try:  # no university links to it in this empty database
...     set_override(engine, "lenta.ru", "media", require_environment=True)
... except ParameterError as exc:
...     print(str(exc).split(":")[0])
lenta.ru is in no environment
>>> [o.domain for o in list_overrides(engine)]
['lenta.ru']
>>> clear_override(engine, "lenta.ru", analyst="Ann")
True
>>> [(e.action, e.category, e.note, e.analyst) for e in override_history(engine, "lenta.ru")]
[('clear', None, None, 'Ann'), ('set', 'news_portals', 'a news portal', None)]
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Connection, Engine, event, select
from sqlalchemy.orm import Session

from analyse.categories import Assignment, Taxonomy, categorize_cluster, load_taxonomy
from core.domains import is_valid_domain
from core.entities import SiteRules
from core.exceptions import ConfigError, ParameterError
from store.entities import site_rules
from store.models import (
    Cluster,
    ClusterMember,
    Document,
    DomainCategory,
    DomainCategoryHistory,
    Environment,
    utcnow,
)
from store.session import session_scope

__all__ = [
    "LOCK_KEY",
    "OverrideEvent",
    "OverrideRow",
    "analyst_name",
    "check_overrides",
    "clear_override",
    "list_overrides",
    "not_in_environment",
    "override_history",
    "set_override",
    "stored_assignment",
    "write_locked",
]

#: PostgreSQL's advisory-lock key of override writes ("ovrd"; pipeline runs use "webo")
LOCK_KEY = 0x6F76_7264
ANALYST_MAX_LENGTH = 100


@dataclass(frozen=True)
class OverrideRow:
    """A domain's assigned category and the analyst's override."""

    domain: str
    category: str | None
    override_category: str | None
    override_note: str | None
    override_at: dt.datetime | None


@dataclass(frozen=True)
class OverrideEvent:
    """One override action on a domain: ``set`` (with the category key) or ``clear``."""

    domain: str
    at: dt.datetime
    action: str
    category: str | None
    note: str | None
    analyst: str | None


def _row(dc: DomainCategory) -> OverrideRow:
    return OverrideRow(
        dc.domain, dc.category, dc.override_category, dc.override_note, dc.override_at
    )


def normalise_domain(domain: str, sites: SiteRules | None = None) -> str:
    """The key of the site (web entity, :mod:`core.entities`) of ``domain`` (a host, URL
    or site key is accepted) by ``sites`` (the shipped default rules when ``None``).

    >>> normalise_domain("HTTP://User.LiveJournal.com/1.html"), normalise_domain("Lenta.ru")
    ('user.livejournal.com', 'lenta.ru')

    Raises
    ------
    ParameterError
        Not a valid domain name with a public suffix.
    """
    raw = (domain or "").strip().lower().rstrip(".")
    key = (sites or SiteRules.default()).key(raw) if raw else ""
    if not key or not is_valid_domain(key.split("/", 1)[0]):
        raise ParameterError(
            f"{domain!r} is not a registered domain or site such as 'lenta.ru', 'ox.ac.uk' "
            "or 'user.livejournal.com'"
        )
    return key


def _missing(s: Session, domains: Iterable[str]) -> list[str]:
    """The domains of ``domains`` that no environment row holds, sorted."""
    wanted = sorted(set(domains))
    found: set[str] = set()
    for i in range(0, len(wanted), 500):  # bounded IN lists
        chunk = wanted[i : i + 500]
        found.update(
            s.scalars(select(Environment.domain).where(Environment.domain.in_(chunk)).distinct())
        )
    return [d for d in wanted if d not in found]


def not_in_environment(engine: Engine, domains: Iterable[str]) -> list[str]:
    """The registered domains of ``domains`` that are in no environment (no row of any
    run, university or direction), sorted; ``domains`` are taken as stored (normalise
    them first, :func:`normalise_domain`)."""
    with session_scope(engine) as s:
        return _missing(s, domains)


def _no_environment_error(domain: str) -> ParameterError:
    return ParameterError(
        f"{domain} is in no environment: no university links to it and it cites none, in "
        "any stored run, so its category would count nowhere (a typo?). Check the name "
        "(`webometrics category review` lists the domains that count), or store it anyway "
        "with `--force`; nothing was stored"
    )


def stored_assignment(row: DomainCategory) -> Assignment | str | None:
    """A domain's vote for its clusters: its override (a key), its stored assignment
    (category, score and the raw scores kept in its evidence), or ``None``."""
    if row.override_category:
        return row.override_category
    if not row.category:
        return None
    scores = (row.evidence or {}).get("scores") or {}
    if not isinstance(scores, dict):
        scores = {}
    return Assignment(
        row.category,
        float(row.score or 0.0),
        {str(k): float(v) for k, v in scores.items()},
        {},
    )


def _revote_clusters(s: Session, domain: str, taxonomy: Taxonomy) -> int:
    """Recompute the category of the clusters that hold ``domain``: the final clusters and
    those of the stored levels (the analyse stage names both; a cluster never named is
    left to it)."""
    cluster_ids = s.scalars(
        select(ClusterMember.cluster_id)
        .join(Document, Document.id == ClusterMember.document_id)
        .where(Document.domain == domain)
        .distinct()
    ).all()
    for cid in cluster_ids:
        cl = s.get(Cluster, cid)
        if cl is None or cl.category is None:  # never analysed: the analyse stage will
            continue
        doms = s.scalars(
            select(Document.domain)
            .join(ClusterMember, ClusterMember.document_id == Document.id)
            .where(ClusterMember.cluster_id == cid)
        ).all()
        rows = {
            r.domain: r
            for r in s.scalars(select(DomainCategory).where(DomainCategory.domain.in_(set(doms))))
        }
        votes = [v for d in doms if d in rows and (v := stored_assignment(rows[d])) is not None]
        valid = [v for v in votes if not isinstance(v, str) or v in taxonomy]
        a = categorize_cluster(
            valid,
            taxonomy=taxonomy,
            theme_terms=[*map(str, cl.theme_terms or ()), *map(str, cl.top_shingles or ())],
        )
        cl.category, cl.category_score = a.category, a.score
        cl.category_support, cl.category_voters = a.evidence["support"], a.evidence["voters"]
        cl.category_evidence = {**(cl.category_evidence or {}), **a.evidence, "scores": a.scores}
    return len(cluster_ids)


def _taxonomy(taxonomy: Taxonomy | str | Path | None) -> Taxonomy:
    return taxonomy if isinstance(taxonomy, Taxonomy) else load_taxonomy(taxonomy)


def _take_write_lock(conn: Connection) -> None:
    """The ``begin`` event of :func:`write_locked`'s engine."""
    if conn.dialect.name == "sqlite":
        # the write lock at the start: sqlite3 would begin only at the first write, after
        # the reads, and another writer in between makes the reads stale (once: an
        # engine made by write_locked from one made by write_locked has begun already)
        if not conn.connection.dbapi_connection.in_transaction:  # type: ignore[union-attr]
            conn.exec_driver_sql("BEGIN IMMEDIATE")
    elif conn.dialect.name == "postgresql":  # taken twice, it is held once
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({LOCK_KEY})")


def write_locked(engine: Engine) -> Engine:
    """``engine`` (sharing its connections) whose every transaction first takes the
    override write lock, held until it ends.

    Writers of overrides, and of what follows them (``aggregates.sync_categories``, whose
    moves add to counts), run one after the other on it: each reads what the previous
    one committed. The waiting is bounded by SQLite's busy timeout (30 s, see
    :func:`store.session.make_engine`); PostgreSQL waits for the holder's commit.

    Examples
    --------
    >>> from store import make_engine
    >>> engine = write_locked(make_engine("sqlite://"))
    >>> with engine.begin() as conn:
    ...     conn.exec_driver_sql("SELECT 1").scalar()
    1
    """
    locked = engine.execution_options()
    event.listen(locked, "begin", _take_write_lock)
    return locked


def analyst_name(name: str | None) -> str | None:
    """Who, as they named themselves (blank: unknown)."""
    name = " ".join((name or "").split())
    if len(name) > ANALYST_MAX_LENGTH:
        raise ParameterError(
            f"analyst name {name[:20]!r}... is {len(name)} characters long; give at most "
            f"{ANALYST_MAX_LENGTH}"
        )
    return name or None


def set_override(
    engine: Engine,
    domain: str,
    category: str,
    *,
    note: str | None = None,
    analyst: str | None = None,
    taxonomy: Taxonomy | str | Path | None = None,
    require_environment: bool = False,
) -> OverrideRow:
    """Set the analyst's category of ``domain`` (validated against the taxonomy) and add
    the action to the domain's history, in one transaction under the override write lock.

    Parameters
    ----------
    engine : Engine
    domain : str
        A site (a host or URL is reduced to its site's key, :func:`normalise_domain`).
    category : str
        A category key or alias of the taxonomy.
    note : str, optional
        Why (shown beside the override).
    analyst : str, optional
        Who (kept in the history; blank: unknown).
    taxonomy : Taxonomy or path, optional
        The taxonomy, or its file; the shipped taxonomy when ``None``.
    require_environment : bool, default False
        Refuse a domain that is in no environment (checked under the write lock).

    Returns
    -------
    OverrideRow

    Raises
    ------
    ParameterError
        The domain is not a domain name, the category is not in the taxonomy, the
        analyst's name is too long, or (``require_environment``) the domain is in no
        environment; nothing is stored.
    """
    tax = _taxonomy(taxonomy)
    key = tax.resolve(category)
    dom = normalise_domain(domain, site_rules(engine))
    who = analyst_name(analyst)
    why = (note or "").strip() or None
    with session_scope(write_locked(engine)) as s:
        if require_environment and _missing(s, [dom]):
            raise _no_environment_error(dom)
        row = s.scalar(select(DomainCategory).where(DomainCategory.domain == dom))
        if row is None:
            row = DomainCategory(domain=dom, evidence={})
            s.add(row)
        now = utcnow()
        row.override_category, row.override_note, row.override_at = key, why, now
        s.add(
            DomainCategoryHistory(
                domain=dom, action="set", category=key, note=why, analyst=who, at=now
            )
        )
        s.flush()
        _revote_clusters(s, dom, tax)
        return _row(row)


def clear_override(
    engine: Engine,
    domain: str,
    *,
    analyst: str | None = None,
    taxonomy: Taxonomy | str | Path | None = None,
) -> bool:
    """Remove the override of ``domain`` and add the action to its history; ``False``
    (and no history) when it had none (``analyst`` and ``taxonomy`` as for
    :func:`set_override`)."""
    dom = normalise_domain(domain, site_rules(engine))
    who = analyst_name(analyst)
    with session_scope(write_locked(engine)) as s:
        row = s.scalar(select(DomainCategory).where(DomainCategory.domain == dom))
        if row is None or row.override_category is None:
            return False
        row.override_category = None
        row.override_note = None
        row.override_at = None
        s.add(DomainCategoryHistory(domain=dom, action="clear", analyst=who, at=utcnow()))
        s.flush()
        _revote_clusters(s, dom, _taxonomy(taxonomy))
        return True


def override_history(
    engine: Engine, domain: str | None = None, *, limit: int | None = None
) -> list[OverrideEvent]:
    """The override actions, newest first: of ``domain`` (a host or URL is reduced to its
    registered domain), or of every domain; at most ``limit``.

    Raises
    ------
    ParameterError
        ``domain`` is not a domain name.
    """
    h = DomainCategoryHistory
    query = select(h).order_by(h.id.desc()).limit(limit)
    if domain is not None:
        query = query.where(h.domain == normalise_domain(domain, site_rules(engine)))
    with session_scope(engine) as s:
        return [
            OverrideEvent(e.domain, e.at, e.action, e.category, e.note, e.analyst)
            for e in s.scalars(query)
        ]


def check_overrides(engine: Engine, taxonomy: Taxonomy) -> None:
    """Refuse a taxonomy that lacks a category an analyst's override names.

    An edited taxonomy (``[analyse] taxonomy``) can drop or rename a category that
    overrides of domains (or of clusters) still give: the analyse stage could then vote
    with no such category, and every view that applies the override would show a key of
    no category. Nothing is changed: the analyst moves or clears the overrides, or puts
    the category back.

    Raises
    ------
    ConfigError
        Names each missing category with up to five of its domains and clusters, and
        the commands that move or clear an override (exit code 2).
    """
    stale: dict[str, list[str]] = {}
    with session_scope(engine) as s:
        domains = s.execute(
            select(DomainCategory.override_category, DomainCategory.domain).where(
                DomainCategory.override_category.is_not(None)
            )
        ).all()
        clusters = s.execute(
            select(Cluster.override_category, Cluster.id).where(
                Cluster.override_category.is_not(None)
            )
        ).all()
    for key, what in [*domains, *((k, f"cluster {i}") for k, i in clusters)]:
        if key not in taxonomy:
            stale.setdefault(str(key), []).append(what)
    if not stale:
        return
    parts = []
    for key, whats in sorted(stale.items()):
        more = f" and {len(whats) - 5} more" if len(whats) > 5 else ""
        parts.append(f"{key!r} ({', '.join(sorted(whats)[:5])}{more})")
    raise ConfigError(
        f"analysts' overrides give categories that the taxonomy {taxonomy.source} has "
        f"not: {'; '.join(parts)}. Put each category back in the taxonomy, or move the "
        "overrides to a category it has (`webometrics category set DOMAIN KEY`) or clear "
        "them (`webometrics category clear DOMAIN`); nothing was changed"
    )


def list_overrides(engine: Engine) -> list[OverrideRow]:
    """Every domain with an override, by domain."""
    with session_scope(engine) as s:
        return [
            _row(r)
            for r in s.scalars(
                select(DomainCategory)
                .where(DomainCategory.override_category.is_not(None))
                .order_by(DomainCategory.domain)
            )
        ]
