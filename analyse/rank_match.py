"""Matching the rows of a ranking table to the stored universities.

A ranking table names universities its own way: ``St. Petersburg State University`` for
the stored ``Saint Petersburg State University``, ``https://www.msu.ru/en/`` for
``msu.ru``, sometimes no domain at all. Each row is matched by the first rule that finds
a university:

1. **domain**: the row's registered domain (a URL or subdomain reduced to it) is one of a
   stored university's domains;
2. **registry**: the registries (:mod:`analyse.registries`: Hipo's world universities
   list, ROR) hold the row's domain and a stored university's domain as the same
   organisation (a university's second domain), or name the row's domain's organisation
   as the stored university;
3. **name**: the row's name is a stored university's name, compared as :func:`name_key`
   makes them (case, accents, punctuation, ``St.`` = ``Saint``, a parenthesised acronym
   and a leading *The* ignored);
4. **registry name**: a registry record of the row's name has a domain of a stored
   university.

A row that one rule matches to several universities, whose domain and name point to
different universities, or that shares its university with another row, is
**ambiguous** and not stored; a row no rule matches is **unmatched** (most rows of a
world table: the universities not studied).

Complexity: O(U·D) to index U stored universities of D domains each, O(R) registry
records to index their names once, then O(L) dictionary probes per row of L host labels.

Examples
--------
>>> unis = [StoredUniversity(1, "Saint Petersburg State University", ("spbu.ru",)),
...         StoredUniversity(2, "University of Oxford", ("ox.ac.uk",))]
>>> rows = [RankRow(2, "St. Petersburg State University", "", "", 539, None),
...         RankRow(3, "Oxford", "https://www.cs.ox.ac.uk/", "ox.ac.uk", 16, None),
...         RankRow(4, "Tomsk State University", "tsu.ru", "tsu.ru", 700, None)]
>>> result = match_rows(rows, unis)
>>> [(m.row.line, m.university_id, m.how) for m in result.matched]
[(2, 1, 'name'), (3, 2, 'domain')]
>>> [u.row.line for u in result.unmatched]
[4]
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.domains import registered_domain
from core.rank_table import RankRow

if TYPE_CHECKING:
    from analyse.registries import Registry

__all__ = ["Match", "MatchResult", "StoredUniversity", "Unmatched", "match_rows", "name_key"]

_ABBREVIATIONS = {"st": "saint", "ste": "sainte", "univ": "university", "u": "university"}


def name_key(name: str, *, acronyms: bool = True) -> str:
    """A university's name as compared: lower case, no accents or punctuation, ``&`` as
    *and*, ``St.`` as *Saint*, a leading *The* dropped; with ``acronyms=False`` a
    parenthesised part (an acronym, a city) is dropped too.

    >>> name_key("St. Petersburg State University (SPbU)", acronyms=False)
    'saint petersburg state university'
    >>> name_key("The University of Texas at Austin") == name_key("University of Texas at Austin")
    True
    >>> name_key("Université Paris-Saclay")
    'universite paris saclay'
    """
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    if not acronyms:
        text = re.sub(r"\([^)]*\)", " ", text)
    text = text.replace("&", " and ")
    words = re.sub(r"[^\w]+", " ", text).replace("_", " ").split()
    if words and words[0] == "the":
        words = words[1:]
    return " ".join(_ABBREVIATIONS.get(w, w) for w in words)


@dataclass(frozen=True)
class StoredUniversity:
    """A stored university as matching sees it."""

    id: int
    name: str
    domains: tuple[str, ...]


@dataclass(frozen=True)
class Match:
    """A row matched to one university; ``how`` is the rule (``domain``, ``registry``,
    ``name``, ``registry name``) and ``note`` says what the rule found."""

    row: RankRow
    university_id: int
    university: str
    how: str
    note: str = ""


@dataclass(frozen=True)
class Unmatched:
    """A row matched to no university, or ``ambiguous`` between ``candidates`` (names),
    with the ``reason``."""

    row: RankRow
    reason: str
    candidates: tuple[str, ...] = ()

    @property
    def ambiguous(self) -> bool:
        """More than one university, or one shared with another row."""
        return bool(self.candidates)


@dataclass
class MatchResult:
    """The rows matched, unmatched and ambiguous, and the stored universities no row
    matched alone (``unranked``, names: those of ambiguous rows included)."""

    matched: list[Match] = field(default_factory=list)
    unmatched: list[Unmatched] = field(default_factory=list)
    ambiguous: list[Unmatched] = field(default_factory=list)
    unranked: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every row and every stored university matched, none ambiguous."""
        return not (self.unmatched or self.ambiguous or self.unranked)


class _Index:
    """The stored universities by domain and name key, and the registry's view of them."""

    def __init__(self, universities: Sequence[StoredUniversity], registry: Registry | None):
        self.by_id = {u.id: u for u in universities}
        self.domain: dict[str, int] = {d: u.id for u in universities for d in u.domains}
        self.name: dict[str, set[int]] = defaultdict(set)
        for u in universities:
            for key in {name_key(u.name), name_key(u.name, acronyms=False)}:
                self.name[key].add(u.id)
        self.registry = registry
        # a registry organisation -> the stored universities whose domain it holds
        self.org: dict[tuple[str, str], set[int]] = defaultdict(set)
        self.registry_names: dict[str, set[str]] | None = None
        if registry is not None:
            for u in universities:
                for d in u.domains:
                    found = registry.lookup(d)
                    if found is not None and found.matched_domain == d:
                        self.org[(found.source, found.source_id)].add(u.id)

    def names_in_registry(self) -> dict[str, set[str]]:
        """Name key -> registered domains of the registry records of that name (made on
        first use: a pass over every record)."""
        if self.registry_names is None:
            names: dict[str, set[str]] = defaultdict(set)
            assert self.registry is not None
            for rec in self.registry.records:
                doms = {registered_domain(w) for w in rec.websites} & set(self.domain)
                if doms:
                    for key in {name_key(rec.name), name_key(rec.name, acronyms=False)}:
                        names[key] |= doms
            self.registry_names = names
        return self.registry_names

    def by_name(self, name: str) -> set[int]:
        if not name:
            return set()
        return self.name.get(name_key(name), set()) | self.name.get(
            name_key(name, acronyms=False), set()
        )


def _candidates(row: RankRow, ix: _Index) -> tuple[set[int], str, str]:
    """The universities the first rule that finds any gives, the rule and a note."""
    if row.domain and row.domain in ix.domain:
        return {ix.domain[row.domain]}, "domain", ""
    reg = ix.registry
    if row.domain and reg is not None:
        found = reg.lookup(row.domain)
        if found is not None:
            same = ix.org.get((found.source, found.source_id), set())
            if same:
                return set(same), "registry", f"{found.source}:{found.source_id} {found.name}"
            named = ix.by_name(found.name)
            if named:
                return named, "registry", f"{row.domain} is {found.name} ({found.source})"
    named = ix.by_name(row.name)
    if named:
        return named, "name", ""
    if row.name and reg is not None:
        names = ix.names_in_registry()
        doms = names.get(name_key(row.name), set()) | names.get(
            name_key(row.name, acronyms=False), set()
        )
        ids = {ix.domain[d] for d in doms}
        if ids:
            return ids, "registry name", f"the registries name {', '.join(sorted(doms))} so"
    return set(), "", ""


def match_rows(
    rows: Iterable[RankRow],
    universities: Sequence[StoredUniversity],
    registry: Registry | None = None,
) -> MatchResult:
    """Match each row to a stored university (see the module's rules).

    Parameters
    ----------
    rows : iterable of RankRow
        The table's rows (:func:`core.rank_table.read_rank_table`).
    universities : sequence of StoredUniversity
    registry : Registry, optional
        Names and second domains of universities; without it, domain and name rules only.

    Returns
    -------
    MatchResult
        Matches in the table's order; a row whose domain and name point to different
        universities, a row of several candidates, and every row of a university matched
        by two rows are ambiguous.
    """
    ix = _Index(universities, registry)
    result = MatchResult()
    found: list[Match] = []
    for row in rows:
        ids, how, note = _candidates(row, ix)
        if not ids:
            result.unmatched.append(Unmatched(row, "no stored university has its domain or name"))
            continue
        if how == "domain":
            by_name = ix.by_name(row.name) - ids
            if by_name and not ix.by_name(row.name) & ids:
                ids |= by_name
                how = "domain and name disagree"
        if len(ids) > 1:
            names = tuple(sorted(ix.by_id[i].name for i in ids))
            result.ambiguous.append(Unmatched(row, f"{how}: more than one university", names))
            continue
        uid = next(iter(ids))
        found.append(Match(row, uid, ix.by_id[uid].name, how, note))
    rows_of: dict[int, list[Match]] = defaultdict(list)
    for m in found:
        rows_of[m.university_id].append(m)
    for m in found:
        twins = rows_of[m.university_id]
        if len(twins) == 1:
            result.matched.append(m)
        else:
            lines = ", ".join(str(t.row.line) for t in twins)
            result.ambiguous.append(
                Unmatched(m.row, f"lines {lines} all match {m.university}", (m.university,))
            )
    seen = {m.university_id for m in result.matched}
    result.unranked = sorted(u.name for u in universities if u.id not in seen)
    return result
