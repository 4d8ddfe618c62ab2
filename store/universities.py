"""Storing the universities of a universities file (parsed by :mod:`core.universities`).

A university is keyed by its name. Importing a name already stored with other domains
or another country is refused unless the caller says how to reconcile them
(:data:`MODES`): the file may be for another university under the same name, and
dropping a domain takes its stored pages out of the university's scope (later crawls
skip the domain; links to it count as external).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from sqlalchemy import Engine, func, or_, select
from sqlalchemy.orm import Session

from core.exceptions import UniversitiesFileError
from core.universities import UniversitySpec
from store.models import Page, University, UniversityDomain
from store.rank_editions import file_edition_ranks, record_file_ranks
from store.session import session_scope

#: how a re-import under a stored name reconciles domains and country: ``refuse`` (the
#: default), ``merge`` (union of domains; the file's country, ranks and home pages) or
#: ``replace`` (the file's values)
Mode = Literal["refuse", "merge", "replace"]
MODES: tuple[Mode, ...] = ("refuse", "merge", "replace")


@dataclass(frozen=True)
class UniversityChange:
    """How a file's university differs from the one stored under its name."""

    name: str
    domains_added: tuple[str, ...] = ()
    domains_removed: tuple[str, ...] = ()
    #: stored pages (by host) of each removed domain
    pages: dict[str, int] = field(default_factory=dict)
    country: tuple[str, str] | None = None
    rank: tuple[int | None, int | None] | None = None
    impact_rank: tuple[int | None, int | None] | None = None
    home: bool = False

    @property
    def conflicting(self) -> bool:
        """Other domains or another country: an explicit ``merge``/``replace`` is needed."""
        return bool(self.domains_added or self.domains_removed or self.country)

    def describe(self) -> str:
        """One line: ``name: domains +a -b (N stored pages); country X -> Y; rank 1 -> 2``.

        Examples
        --------
        >>> UniversityChange("Cornell", ("cornell.ca",), ("cornell.edu",),
        ...                  {"cornell.edu": 3412}, ("USA", "Canada")).describe()
        'Cornell: domains +cornell.ca -cornell.edu (3412 stored pages); country USA -> Canada'
        """
        parts = []
        doms = [f"+{d}" for d in self.domains_added]
        doms += [f"-{d}" + (f" ({self.pages[d]} stored pages)" if self.pages.get(d) else "")
                 for d in self.domains_removed]  # fmt: skip
        if doms:
            parts.append("domains " + " ".join(doms))
        for label, pair in (
            ("country", self.country),
            ("rank", self.rank),
            ("impact_rank", self.impact_rank),
        ):
            if pair is not None:
                old, new = ("-" if v is None else v for v in pair)
                parts.append(f"{label} {old} -> {new}")
        if self.home:
            parts.append("home pages changed")
        return f"{self.name}: " + "; ".join(parts)


@dataclass
class UniversityImportResult:
    """What :func:`import_universities` did."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    #: the differences of the updated universities
    changes: list[UniversityChange] = field(default_factory=list)


class ReimportRefusedError(UniversitiesFileError):
    """Universities already stored under the file's names with other domains or country,
    or domains with stored pages that ``replace`` would drop; nothing was imported.

    Attributes
    ----------
    changes : list of UniversityChange
        The refused differences.
    """

    def __init__(self, changes: list[UniversityChange], reason: str, advice: str) -> None:
        self.changes, self.reason, self.advice = changes, reason, advice
        lines = "\n".join(f"  {c.describe()}" for c in changes)
        super().__init__(f"{reason}; nothing was imported:\n{lines}\n{advice}")


#: what to do, said when an import refuses (by every command that imports a file)
IMPORT_ADVICE = (
    "Reconcile them with `webometrics universities import --merge FILE` (keep the stored "
    "domains and add the file's; take its country and ranks) or `--replace` (take the "
    "file's domains, country and ranks); see `webometrics universities import --help`."
)


def import_universities(
    engine: Engine,
    specs: list[UniversitySpec],
    *,
    mode: Mode = "refuse",
    drop_domains_with_pages: bool = False,
) -> UniversityImportResult:
    """Insert or update universities by name, in one transaction.

    Parameters
    ----------
    engine : Engine
    specs : list of UniversitySpec
    mode : {"refuse", "merge", "replace"}
        What to do with a university stored under the same name with other domains or
        another country: refuse the whole import (default), merge the domains (union;
        the file's country, ranks and home pages) or replace them with the file's.
        Differences in ranks or home pages alone are updates in every mode.
    drop_domains_with_pages : bool
        With ``replace``: drop a domain even when pages of it are stored (they stay
        stored, with their university, but leave its scope: later crawls skip the domain
        and links to it count as external). Without it such an import is refused.

    Returns
    -------
    UniversityImportResult
        Counts of created, updated and unchanged universities, and the changes.

    Raises
    ------
    ReimportRefusedError
        Other domains or another country under ``refuse``, or stored pages of a domain
        ``replace`` would drop; the message lists every difference.
    UniversitiesFileError
        A domain already belongs to another university in the database.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    result = UniversityImportResult()
    with session_scope(engine) as session:
        _check_owners(session, specs)
        stored = {
            u.name: u
            for u in session.scalars(
                select(University).where(University.name.in_([s.name for s in specs]))
            )
        }
        file_ranks = file_edition_ranks(session)
        changes = {
            s.name: _change(
                session,
                stored[s.name],
                s,
                file_ranks.get(stored[s.name].id, (None, None)) if file_ranks else None,
            )
            for s in specs
            if s.name in stored
        }
        if mode == "merge":  # nothing is removed
            changes = {n: replace(c, domains_removed=(), pages={}) for n, c in changes.items()}
        refused = [c for c in changes.values() if c.conflicting]
        if refused and mode == "refuse":
            raise ReimportRefusedError(
                refused,
                f"{len(refused)} universit{'y is' if len(refused) == 1 else 'ies are'} "
                "already stored under the same name with other domains or country",
                IMPORT_ADVICE,
            )
        dropping = [c for c in changes.values() if any(c.pages.get(d) for d in c.domains_removed)]
        if dropping and mode == "replace" and not drop_domains_with_pages:
            raise ReimportRefusedError(
                dropping,
                "--replace would drop domains with stored pages (they would stay stored "
                "but leave the university's scope: later crawls skip them and links to "
                "them count as external)",
                "Use --merge to keep the domains, or add --drop-domains-with-pages to drop "
                "them all the same.",
            )
        for spec in specs:
            uni = stored.get(spec.name)
            if uni is None:
                uni = University(name=spec.name, domains=[])
                session.add(uni)
                result.created += 1
            elif not _differs(changes[spec.name]):
                result.unchanged += 1
                continue
            else:
                result.updated += 1
                result.changes.append(changes[spec.name])
            uni.country, uni.rank, uni.impact_rank = spec.country, spec.rank, spec.impact_rank
            uni.home_urls = list(spec.start_urls)
            keep = set(spec.domains)
            if mode == "merge":
                keep |= {d.domain for d in uni.domains}
            for d in list(uni.domains):
                if d.domain not in keep:
                    uni.domains.remove(d)
            have = {d.domain for d in uni.domains}
            for domain in spec.domains:
                if domain not in have:
                    uni.domains.append(UniversityDomain(domain=domain))
            session.flush()
        # the file's ranks are an edition; university.rank holds the newest edition's
        record_file_ranks(session, specs)
    return result


def _check_owners(session: Session, specs: list[UniversitySpec]) -> None:
    """Refuse a domain stored for another university."""
    for spec in specs:
        owner = session.execute(
            select(UniversityDomain.domain, University.name)
            .join(University)
            .where(UniversityDomain.domain.in_(spec.domains))
        )
        for d, other in owner:
            if other != spec.name:
                raise UniversitiesFileError(
                    f"domain {d!r} of {spec.name!r} already belongs to {other!r} in the "
                    "database; nothing was imported"
                )


def _change(
    session: Session,
    uni: University,
    spec: UniversitySpec,
    file_ranks: tuple[int | None, int | None] | None,
) -> UniversityChange:
    """How ``spec`` differs from the stored ``uni``; its ranks are compared with the
    universities file's edition (``file_ranks``) when that edition is stored."""
    have = [d.domain for d in uni.domains]
    rank, impact_rank = file_ranks if file_ranks is not None else (uni.rank, uni.impact_rank)
    removed = tuple(sorted(set(have) - set(spec.domains)))
    pages: dict[str, int] = {}
    for d in removed:
        pages[d] = int(
            session.scalar(
                select(func.count())
                .select_from(Page)
                .where(or_(Page.host == d, Page.host.like(f"%.{d}")))
            )
            or 0
        )
    return UniversityChange(
        name=spec.name,
        domains_added=tuple(d for d in spec.domains if d not in have),
        domains_removed=removed,
        pages=pages,
        country=(uni.country, spec.country) if uni.country != spec.country else None,
        rank=(rank, spec.rank) if rank != spec.rank else None,
        impact_rank=((impact_rank, spec.impact_rank) if impact_rank != spec.impact_rank else None),
        # home pages given in the file, or the default ones of unchanged domains
        home=list(uni.home_urls or []) != list(spec.start_urls)
        and (bool(spec.home) or set(have) == set(spec.domains)),
    )


def _differs(change: UniversityChange) -> bool:
    return change.conflicting or bool(change.rank or change.impact_rank or change.home)
