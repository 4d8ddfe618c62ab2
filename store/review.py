"""The review workflow of domain categories: a review queue, coding sheets, coders'
agreement (Cohen's kappa) and adjudication.

The queue
    The domains whose category is least certain, ordered by how much a wrong category
    would move the category shares. A domain's **share points** are what it holds of the
    category shares as the Countries figures compute them (Figures 2 and 3: per
    university and direction, each distinct external domain of the run counts
    ``1 / n`` of the university's shares, ``n`` its distinct domains in that
    direction): ``sum(100 / n)`` over the universities and directions whose environment
    holds the domain, in percentage points. Its **priority** is ``(1 - confidence) x
    share points``: the share points expected to move if the category is wrong with
    probability ``1 - confidence`` (``confidence`` is the stored score, 0 where there is
    none). Reviewing the queue from the top fixes, in expectation, the most share points
    per domain reviewed; ties go to the domain with more links, then more universities.
    Domains with an analyst's override are reviewed already and left out.
Coding sheets
    :func:`write_sheet` writes queue rows as a CSV (:data:`SHEET_COLUMNS`) for a coder,
    with an empty ``category`` column and a ``note`` column; :func:`import_sheet` reads
    a filled one: every row is validated first (a category must be a key or an alias of
    the taxonomy, a domain must be in an environment, no domain twice) and any problem
    refuses the whole sheet, naming each line, with nothing stored. A coder's codings are
    kept per domain in :class:`~store.models.CategoryCoding`; importing a coder's sheet
    again replaces their codings of the domains it holds.
Agreement
    :func:`agreement` compares two coders on the domains both coded: observed agreement,
    Cohen's kappa (:func:`sklearn.metrics.cohen_kappa_score`; Cohen 1960) and the
    disagreements. :func:`accept_agreements` makes each agreed category the domain's
    override; :func:`adjudicate` gives a disputed domain its category (the override
    wins over the assigned category everywhere). Both write through
    :func:`store.overrides.set_override`, so every step is in the override history, its
    note naming the coders and their categories, or the adjudication.

Every function here reads or writes the database through one session; the queue reads
the run's environment rows once (O(rows)) and, for the domains it returns only, their
categories and one page each.

References
----------
Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational and
Psychological Measurement 20(1), 37-46.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, delete, func, select
from sqlalchemy.orm import Session

from analyse.taxonomy import Taxonomy, load_taxonomy
from core.choices import GRAPH_RUN_KIND
from core.exceptions import ParameterError
from store.models import (
    CategoryCoding,
    Citation,
    CrawlRun,
    DomainCategory,
    Environment,
    Link,
    Page,
)
from store.overrides import (
    OverrideRow,
    normalise_domain,
    not_in_environment,
    set_override,
    write_locked,
)
from store.session import session_scope

__all__ = [
    "QUEUE_COLUMNS",
    "SHEET_COLUMNS",
    "AcceptResult",
    "Agreement",
    "CoderRow",
    "CodingImportResult",
    "Disagreement",
    "QueueRow",
    "QueueSummary",
    "SheetError",
    "UncertainShareRow",
    "accept_agreements",
    "adjudicate",
    "agreement",
    "coders",
    "cohen_kappa",
    "confidence_of",
    "evidence_summary",
    "import_sheet",
    "pick_coders",
    "queue_summary",
    "review_queue",
    "review_run",
    "uncertain_shares",
    "write_sheet",
]

#: the columns of a coding sheet; the coder fills ``category`` (and ``note``)
SHEET_COLUMNS = (
    "domain",
    "suggested_category",
    "confidence",
    "evidence",
    "title",
    "sample",
    "url",
    "universities",
    "links",
    "category",
    "note",
)
SAMPLE_CHARS = 300
EVIDENCE_CHARS = 200
CODER_MAX_LENGTH = 100
MAX_PROBLEMS = 25  # listed in a refused sheet's message
_CHUNK = 500  # domains per IN list
# evidence keys the summary leaves out: raw numbers a reader cannot act on
_QUIET = {"scores", "taxonomy", "decided_by", "pages", "titles"}


#: the review queue's columns as a reader shows them (the CLI's csv/json, the dashboard)
QUEUE_COLUMNS = (
    "position",
    "domain",
    "category",
    "confidence",
    "priority",
    "share_points",
    "universities",
    "links",
    "coders",
    "evidence",
    "title",
    "sample",
    "url",
)


@dataclass(frozen=True)
class QueueRow:
    """A domain of the review queue.

    ``share_points`` are the percentage points of the universities' category shares the
    domain holds in the run; ``priority`` is ``(1 - confidence) x share_points``.
    """

    position: int
    domain: str
    category: str | None
    confidence: float
    decided_by: str | None
    evidence: str
    universities: int
    links: int
    share_points: float
    priority: float
    coders: int
    title: str | None
    sample: str | None
    url: str


@dataclass(frozen=True)
class CoderRow:
    """A coder and how many domains they coded, and when last."""

    coder: str
    codings: int
    last_import: Any


@dataclass(frozen=True)
class CodingImportResult:
    """What :func:`import_sheet` stored."""

    coder: str
    sheet: str
    stored: int
    replaced: int
    blank: int


@dataclass(frozen=True)
class Disagreement:
    """A domain two coders coded differently, and its override (after adjudication)."""

    domain: str
    category_a: str
    category_b: str
    note_a: str | None
    note_b: str | None
    suggested: str | None
    override: str | None


@dataclass(frozen=True)
class Agreement:
    """Two coders compared on the domains both coded.

    ``kappa`` is ``None`` where it is undefined: fewer than two domains in common, or
    every coding in one category (chance agreement is then 1).
    """

    coder_a: str
    coder_b: str
    coded_a: int
    coded_b: int
    both: int
    agreed: int
    observed: float | None
    kappa: float | None
    disagreements: list[Disagreement] = field(default_factory=list)
    agreements: list[tuple[str, str, str | None]] = field(default_factory=list)

    @property
    def summary(self) -> str:
        """One line: the coders, the domains in common, agreement and kappa."""
        if not self.both:
            return f"{self.coder_a} and {self.coder_b} coded no domain in common"
        kappa = "undefined" if self.kappa is None else f"{self.kappa:.3f}"
        return (
            f"{self.coder_a} ({self.coded_a} domains) and {self.coder_b} ({self.coded_b}): "
            f"{self.both} in common, {self.agreed} agreed ({self.observed:.1%}), "
            f"Cohen's kappa {kappa}, {len(self.disagreements)} disagreements"
        )


@dataclass(frozen=True)
class AcceptResult:
    """What :func:`accept_agreements` did: overrides set, already so, and analysts'
    overrides of another category kept (never overwritten)."""

    set: list[str]
    unchanged: list[str]
    kept: list[str]


@dataclass(frozen=True)
class SheetProblem:
    """A problem of a coding sheet: its line (1 is the header) and what."""

    line: int
    message: str


class SheetError(ParameterError):
    """A coding sheet refused: every problem with its line number; nothing stored."""

    def __init__(self, sheet: str, problems: Sequence[SheetProblem]) -> None:
        self.problems = list(problems)
        shown = [f"  line {p.line}: {p.message}" for p in self.problems[:MAX_PROBLEMS]]
        if len(self.problems) > MAX_PROBLEMS:
            shown.append(f"  ... and {len(self.problems) - MAX_PROBLEMS} more")
        super().__init__(
            f"coding sheet {sheet} refused, nothing was stored: {len(self.problems)} "
            f"problem(s)\n" + "\n".join(shown) + "\nCorrect the sheet and import it again."
        )


# --- the queue ---------------------------------------------------------------------------


def review_run(engine: Engine, run_id: int | None = None) -> int | None:
    """The crawl run whose environment the queue weighs: ``run_id`` (checked), or the
    newest run with environment rows that is not a Common Crawl graph run; ``None`` when
    no run has any.

    Raises
    ------
    ParameterError
        ``run_id`` has no environment rows (the message names the runs that have).
    """
    with session_scope(engine) as s:
        runs = s.execute(
            select(Environment.run_id, CrawlRun.kind)
            .join(CrawlRun, CrawlRun.id == Environment.run_id)
            .distinct()
            .order_by(Environment.run_id)
        ).all()
    if run_id is not None:
        if run_id not in {r for r, _ in runs}:
            have = ", ".join(str(r) for r, _ in runs) or "none"
            raise ParameterError(
                f"crawl run {run_id} has no environment rows; runs with some: {have}"
            )
        return run_id
    crawls = [r for r, kind in runs if kind != GRAPH_RUN_KIND] or [r for r, _ in runs]
    return crawls[-1] if crawls else None


def _weights(
    s: Session, run_id: int, direction: str | None
) -> dict[str, tuple[float, set[int], int]]:
    """domain -> (share points, universities, links) in the run's environment."""
    e = Environment
    query = select(e.university_id, e.direction, e.domain, e.link_count).where(e.run_id == run_id)
    if direction is not None:
        query = query.where(e.direction == direction)
    rows = s.execute(query).all()
    per_scope = Counter((u, d) for u, d, _dom, _l in rows)  # rows are distinct domains
    out: dict[str, tuple[float, set[int], int]] = {}
    for uid, d, dom, links in rows:
        points, unis, total = out.get(dom, (0.0, set(), 0))
        unis.add(uid)
        out[dom] = (points + 100.0 / per_scope[(uid, d)], unis, total + int(links or 0))
    return out


def _chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]


def _categories(s: Session, domains: Sequence[str]) -> dict[str, DomainCategory]:
    out: dict[str, DomainCategory] = {}
    for chunk in _chunks(domains):
        out.update(
            (r.domain, r)
            for r in s.scalars(select(DomainCategory).where(DomainCategory.domain.in_(chunk)))
        )
    return out


def _coder_counts(s: Session, domains: Sequence[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    c = CategoryCoding
    for chunk in _chunks(domains):
        counts.update(
            dict(
                s.execute(
                    select(c.domain, func.count()).where(c.domain.in_(chunk)).group_by(c.domain)
                ).all()
            )
        )
    return counts


def confidence_of(row: DomainCategory | None) -> float:
    """A stored category's confidence: its score in [0, 1], 0 where there is none."""
    score = None if row is None else row.score
    if score is None or not math.isfinite(score):
        return 0.0
    return min(max(float(score), 0.0), 1.0)


def evidence_summary(evidence: dict[str, Any] | None, limit: int = EVIDENCE_CHARS) -> str:
    """A short reading of a domain's evidence: what decided, then each kind of evidence
    with its first few items (keyword counts: the largest); at most ``limit`` characters.

    Examples
    --------
    >>> evidence_summary({"decided_by": "known", "known": ["imdb.com"], "pages": 7,
    ...                   "text_keywords": {"film": 3, "actor*": 1}, "scores": {"media": 1}})
    'decided by known; known: imdb.com; text keywords: film, actor*; 7 pages'
    >>> evidence_summary({"reason": "no evidence: no fetched page"})
    'reason: no evidence: no fetched page'
    """
    ev = evidence or {}
    parts = []
    if ev.get("decided_by"):
        parts.append(f"decided by {_short(ev['decided_by'])}")
    for key, value in ev.items():
        if key in _QUIET or value in (None, "", [], {}):
            continue
        parts.append(f"{key.replace('_', ' ')}: {_short(value)}")
    if ev.get("pages"):
        parts.append(f"{ev['pages']} pages")
    text = "; ".join(parts)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(value: Any, items: int = 3) -> str:
    if isinstance(value, dict):
        if all(isinstance(v, int | float) for v in value.values()):
            keys = sorted(value, key=lambda k: (-value[k], str(k)))
        else:
            keys = list(value)
        return ", ".join(
            f"{k}" if isinstance(value[k], int | float) else f"{k}={_short(value[k])}"
            for k in keys[:items]
        )
    if isinstance(value, list | tuple):
        return ", ".join(_short(v) for v in value[:items]) + (" …" if len(value) > items else "")
    if isinstance(value, float):
        return f"{value:.2f}"
    return " ".join(str(value).split())


def _samples(s: Session, domains: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
    """domain -> (title, the start of the text) of its page with a title and most text."""
    p = Page
    best: dict[str, tuple[tuple[bool, int], str | None, str | None]] = {}
    for chunk in _chunks(domains):
        rows = s.execute(
            select(
                p.registered_domain,
                p.title,
                func.substr(p.text, 1, SAMPLE_CHARS * 2),
                func.coalesce(func.length(p.text), 0),
            ).where(p.registered_domain.in_(chunk), (p.title.is_not(None)) | (p.text.is_not(None)))
        ).all()
        for dom, title, text, length in rows:
            title = " ".join((title or "").split()) or None
            key = (title is not None, int(length))
            if dom not in best or key > best[dom][0]:
                body = " ".join((text or "").split())
                if title and body.startswith(title):  # the text often opens with it
                    body = body[len(title) :].lstrip()
                best[dom] = (key, title, body[:SAMPLE_CHARS] or None)
    return {d: (t, x) for d, (_k, t, x) in best.items()}


def _urls(s: Session, domains: Sequence[str]) -> dict[str, str]:
    """domain -> a URL of it: a fetched page's, else a link's target, else a citation's."""
    out: dict[str, str] = {}
    queries = (
        (Page.registered_domain, Page.url, Page.http_status < 400),
        (Link.target_domain, Link.target_url, None),
        (Citation.citing_domain, Citation.citing_url, None),
    )
    for dom_col, url_col, cond in queries:
        missing = [d for d in domains if d not in out]
        for chunk in _chunks(missing):
            query = select(dom_col, func.min(url_col)).where(dom_col.in_(chunk))
            if cond is not None:
                query = query.where(cond)
            out.update((d, u) for d, u in s.execute(query.group_by(dom_col)).all() if u)
    return out


# priority, links, universities, domain, confidence, share points
_Scored = tuple[float, int, int, str, float, float]


def _scored(
    s: Session, run: int, direction: str | None, wanted: Sequence[str] | None
) -> tuple[list[_Scored], dict[str, DomainCategory]]:
    """The queue's domains (``wanted``, or those without an override) in queue order,
    and their stored categories."""
    weights = _weights(s, run, direction)
    for dom in wanted or ():
        weights.setdefault(dom, (0.0, set(), 0))
    names = sorted(weights) if wanted is None else list(wanted)
    cats = _categories(s, names)
    scored = []
    for dom in names:
        row = cats.get(dom)
        if wanted is None and row is not None and row.override_category:
            continue
        points, unis, links = weights[dom]
        conf = confidence_of(row)
        scored.append(((1.0 - conf) * points, links, len(unis), dom, conf, points))
    scored.sort(key=lambda t: (-t[0], -t[1], -t[2], t[3]))
    return scored, cats


@dataclass(frozen=True)
class QueueSummary:
    """The whole queue of a run: its domains and the sum of their priorities (the share
    points a review of every one is expected to move)."""

    run_id: int | None
    domains: int
    priority: float


def queue_summary(
    engine: Engine, *, run_id: int | None = None, direction: str | None = None
) -> QueueSummary:
    """The size and total priority of the review queue (see :func:`review_queue`)."""
    run = review_run(engine, run_id)
    if run is None:
        return QueueSummary(None, 0, 0.0)
    with session_scope(engine) as s:
        scored, _cats = _scored(s, run, direction, None)
    return QueueSummary(run, len(scored), round(sum(t[0] for t in scored), 4))


def review_queue(
    engine: Engine,
    *,
    run_id: int | None = None,
    direction: str | None = None,
    limit: int | None = 50,
    domains: Sequence[str] | None = None,
) -> list[QueueRow]:
    """The review queue: domains without an override by priority, highest first.

    Parameters
    ----------
    engine : Engine
    run_id : int, optional
        The crawl run whose environment weighs the domains (:func:`review_run`).
    direction : {"outgoing", "citing"}, optional
        Weigh one direction's shares only; both when ``None``.
    limit : int or None, default 50
        At most this many rows (``None`` or 0: every domain).
    domains : sequence of str, optional
        These domains (hosts and URLs are reduced to their registered domain), in queue
        order, overridden ones included: the rows of a coding sheet for chosen domains.

    Returns
    -------
    list of QueueRow

    Raises
    ------
    ParameterError
        ``run_id`` has no environment rows, or a domain of ``domains`` is not a domain
        name or is in no environment.
    """
    wanted = None
    if domains is not None:
        wanted = sorted({normalise_domain(d) for d in domains})
        if missing := not_in_environment(engine, wanted):
            raise ParameterError(
                f"in no environment: {', '.join(missing)}; give domains that a university "
                "links to or is cited by (`webometrics category review` lists them)"
            )
    run = review_run(engine, run_id)
    if run is None:
        return []
    with session_scope(engine) as s:
        scored, cats = _scored(s, run, direction, wanted)
        if limit:
            scored = scored[:limit]
        chosen = [t[3] for t in scored]
        samples, urls = _samples(s, chosen), _urls(s, chosen)
        coded = _coder_counts(s, chosen)
        out = []
        for i, (priority, links, n_unis, dom, conf, points) in enumerate(scored, 1):
            row = cats.get(dom)
            ev = dict(row.evidence or {}) if row is not None else {}
            title, sample = samples.get(dom, (None, None))
            out.append(
                QueueRow(
                    position=i,
                    domain=dom,
                    category=row.category if row is not None else None,
                    confidence=round(conf, 4),
                    decided_by=str(ev["decided_by"]) if ev.get("decided_by") else None,
                    evidence=evidence_summary(ev) if row is not None else "never categorised",
                    universities=n_unis,
                    links=links,
                    share_points=round(points, 4),
                    priority=round(priority, 4),
                    coders=coded.get(dom, 0),
                    title=title,
                    sample=sample,
                    url=urls.get(dom) or f"http://{dom}/",
                )
            )
        return out


@dataclass(frozen=True)
class UncertainShareRow:
    """How much of a university's category shares (one direction) rests on domains
    without an override whose confidence is below the threshold."""

    university_id: int
    direction: str
    domains: int
    uncertain: int
    share: float


def uncertain_shares(
    engine: Engine, *, run_id: int | None = None, below: float = 0.5
) -> list[UncertainShareRow]:
    """Per university and direction of the run: of its distinct domains, those without
    an override whose confidence is below ``below``, and their share (what of its
    category shares a review could still move), by university id and direction."""
    run = review_run(engine, run_id)
    if run is None:
        return []
    with session_scope(engine) as s:
        e = Environment
        rows = s.execute(
            select(e.university_id, e.direction, e.domain).where(e.run_id == run)
        ).all()
        cats = _categories(s, sorted({d for _u, _dir, d in rows}))
    totals: Counter[tuple[int, str]] = Counter()
    unsure: Counter[tuple[int, str]] = Counter()
    for uid, d, dom in rows:
        totals[(uid, d)] += 1
        row = cats.get(dom)
        if not (row is not None and row.override_category) and confidence_of(row) < below:
            unsure[(uid, d)] += 1
    return [
        UncertainShareRow(uid, d, n, unsure[(uid, d)], unsure[(uid, d)] / n)
        for (uid, d), n in sorted(totals.items())
    ]


# --- coding sheets ---------------------------------------------------------------------


def write_sheet(rows: Iterable[QueueRow], out: io.TextIOBase | Any) -> int:
    """Write queue rows as a coding sheet (CSV, :data:`SHEET_COLUMNS`, ``category`` and
    ``note`` empty for the coder) to the text stream ``out``; returns the rows written.

    Open a file for it with ``encoding="utf-8-sig"`` (a byte-order mark, so that a
    spreadsheet reads Cyrillic right) and ``newline=""``.
    """
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(SHEET_COLUMNS)
    n = 0
    for r in rows:
        writer.writerow(
            [
                r.domain,
                r.category or "",
                f"{r.confidence:.2f}",
                r.evidence,
                r.title or "",
                r.sample or "",
                r.url,
                r.universities,
                r.links,
                "",
                "",
            ]
        )
        n += 1
    return n


def _coder(name: str | None, what: str = "coder", option: str = "--coder") -> str:
    """A coder's (or analyst's) name as they gave it, blanks collapsed.

    Raises
    ------
    ParameterError
        Blank or longer than :data:`CODER_MAX_LENGTH`.
    """
    who = " ".join((name or "").split())
    if not who:
        raise ParameterError(f"give the {what}'s name ({option} NAME): it is kept with the work")
    if len(who) > CODER_MAX_LENGTH:
        raise ParameterError(
            f"{what} name {who[:20]!r}... is {len(who)} characters long; give at most "
            f"{CODER_MAX_LENGTH}"
        )
    return who


def _text_of(content: bytes | str, sheet: str) -> str:
    if isinstance(content, str):
        return content.removeprefix("\ufeff")
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SheetError(
            sheet,
            [
                SheetProblem(
                    content[: exc.start].count(b"\n") + 1,
                    "not UTF-8 text: save the sheet as CSV UTF-8",
                )
            ],
        ) from exc


def _delimiter(text: str) -> str:
    """The sheet's delimiter, the most frequent of ',', ';' and tab in its first line (a
    spreadsheet may save a CSV with ';' or tabs); quoting is always the CSV standard's."""
    header = text.lstrip("\r\n").split("\n", 1)[0]
    return max(",;\t", key=header.count)


@dataclass
class _Parsed:
    codings: dict[str, tuple[int, str, str | None, str | None, float | None]]
    problems: list[SheetProblem]
    blank: int
    # keys that are no site name (an IP, a host without public suffix): valid only when
    # the database stores them (the crawl keeps such hosts), with the reason otherwise
    odd: dict[str, str] = field(default_factory=dict)


def _parse(text: str, sheet: str, taxonomy: Taxonomy) -> _Parsed:
    """The rows of a filled sheet, and every problem (line numbers are the file's)."""
    parsed = _Parsed({}, [], 0)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text))
    header: dict[str, int] | None = None
    header_line = 1
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            parsed.problems.append(SheetProblem(start, f"not CSV: {exc}"))
            break
        if not any(c.strip() for c in cells):
            continue
        if header is None:
            header_line = start
            header = {c.strip().lower().replace(" ", "_"): i for i, c in enumerate(cells)}
            lacking = [c for c in ("domain", "category") if c not in header]
            if lacking:
                parsed.problems.append(
                    SheetProblem(
                        start,
                        f"no column {' or '.join(map(repr, lacking))}: the first row must "
                        f"name the columns ({', '.join(SHEET_COLUMNS)})",
                    )
                )
                break
            continue
        _parse_row(parsed, start, cells, header, taxonomy)
    if header is None:
        parsed.problems.append(SheetProblem(header_line, "empty sheet: no header row"))
    return parsed


def _cell(cells: list[str], header: dict[str, int], name: str) -> str:
    i = header.get(name)
    return cells[i].strip() if i is not None and i < len(cells) else ""


def _parse_row(
    parsed: _Parsed, line: int, cells: list[str], header: dict[str, int], taxonomy: Taxonomy
) -> None:
    raw_domain, raw_category = _cell(cells, header, "domain"), _cell(cells, header, "category")
    if not raw_category:
        parsed.blank += 1  # not coded (yet)
        return
    if not raw_domain:
        parsed.problems.append(SheetProblem(line, f"category {raw_category!r} but no domain"))
        return
    try:
        domain = normalise_domain(raw_domain)
    except ParameterError as exc:  # kept as written: a stored key need not be a DNS name
        domain = raw_domain.strip().lower().rstrip(".")
        parsed.odd[domain] = str(exc)
    try:
        key = taxonomy.resolve(raw_category)
    except ParameterError as exc:
        parsed.problems.append(SheetProblem(line, str(exc)))
        return
    if domain in parsed.codings:
        first = parsed.codings[domain][0]
        parsed.problems.append(SheetProblem(line, f"{domain} again (first on line {first})"))
        return
    try:
        conf = float(_cell(cells, header, "confidence")) if "confidence" in header else None
    except ValueError:
        conf = None  # the sheet's own column: informative only
    note = _cell(cells, header, "note") or None
    suggested = _cell(cells, header, "suggested_category") or None
    parsed.codings[domain] = (line, key, note, suggested, conf)


def import_sheet(
    engine: Engine,
    content: bytes | str,
    *,
    coder: str,
    sheet: str = "<sheet>",
    taxonomy: Taxonomy | str | Path | None = None,
) -> CodingImportResult:
    """Validate a filled coding sheet and store its codings as ``coder``'s.

    Rows with an empty ``category`` are not coded and skipped. Every other row must
    name a domain that is in an environment and a category of the taxonomy (a key or an
    alias, case-insensitive); a domain may appear once. The whole sheet is checked
    before anything is stored.

    Parameters
    ----------
    engine : Engine
    content : bytes or str
        The CSV (UTF-8, a byte-order mark allowed; ',', ';' or tab separated).
    coder : str
        Who coded it.
    sheet : str
        Its name, for messages and the stored rows.
    taxonomy : Taxonomy or path, optional
        The shipped taxonomy when ``None``.

    Returns
    -------
    CodingImportResult
        ``replaced``: the coder's earlier codings of these domains, now replaced.

    Raises
    ------
    SheetError
        Any problem; the message names each line (exit code 2); nothing is stored.
    """
    who = _coder(coder)
    tax = taxonomy if isinstance(taxonomy, Taxonomy) else load_taxonomy(taxonomy)
    parsed = _parse(_text_of(content, sheet), sheet, tax)
    if parsed.codings:
        for dom in not_in_environment(engine, list(parsed.codings)):
            why = parsed.odd.get(dom)
            what = f": {why}" if why else f" {dom}: in no environment of this database"
            parsed.problems.append(SheetProblem(parsed.codings[dom][0], f"unknown domain{what}"))
    if parsed.problems:
        raise SheetError(sheet, sorted(parsed.problems, key=lambda p: p.line))
    name = Path(sheet).name[:300]
    c = CategoryCoding
    # one import at a time (two of one coder at once would both delete, then both insert)
    with session_scope(write_locked(engine)) as s:
        replaced = 0
        for chunk in _chunks(sorted(parsed.codings)):
            mine = (c.coder == who) & c.domain.in_(chunk)
            replaced += s.scalar(select(func.count()).select_from(c).where(mine)) or 0
            s.execute(delete(c).where(mine))
        s.add_all(
            CategoryCoding(
                domain=dom,
                coder=who,
                category=key,
                note=note,
                suggested=suggested,
                confidence=conf,
                sheet=name,
                line=line,
            )
            for dom, (line, key, note, suggested, conf) in sorted(parsed.codings.items())
        )
    return CodingImportResult(who, name, len(parsed.codings), replaced, parsed.blank)


# --- agreement and adjudication ----------------------------------------------------------


def coders(engine: Engine) -> list[CoderRow]:
    """Every coder with their number of codings and last import, by name."""
    c = CategoryCoding
    with session_scope(engine) as s:
        rows = s.execute(
            select(c.coder, func.count(), func.max(c.coded_at)).group_by(c.coder).order_by(c.coder)
        ).all()
    return [CoderRow(who, int(n), at) for who, n, at in rows]


def _codings(s: Session, coder: str) -> dict[str, CategoryCoding]:
    return {
        r.domain: r for r in s.scalars(select(CategoryCoding).where(CategoryCoding.coder == coder))
    }


def pick_coders(engine: Engine, chosen: Sequence[str] | None = None) -> tuple[str, str]:
    """The two coders to compare: ``chosen`` (checked), or the only two there are.

    Raises
    ------
    ParameterError
        Not two coders given and not exactly two stored, or a coder has no codings.
    """
    known = [c.coder for c in coders(engine)]
    if chosen:
        picked = [_coder(c) for c in chosen]
        if len(picked) != 2 or picked[0] == picked[1]:
            raise ParameterError("give two different coders: --coders A B")
        if lacking := [c for c in picked if c not in known]:
            raise ParameterError(
                f"no codings of {', '.join(lacking)}; coders: {', '.join(known) or 'none yet'}"
            )
        return picked[0], picked[1]
    if len(known) != 2:
        have = ", ".join(known) or (
            "none: import sheets with `webometrics category import FILE --coder NAME`"
        )
        raise ParameterError(f"{len(known)} coders have codings ({have}); name two: --coders A B")
    return known[0], known[1]


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two coders' categories of the same items
    (:func:`sklearn.metrics.cohen_kappa_score`); ``None`` where it is undefined (fewer
    than two items, or every coding in one category).

    Examples
    --------
    >>> round(cohen_kappa(["u", "u", "n", "n"], ["u", "n", "n", "n"]), 3)
    0.5
    >>> cohen_kappa(["u", "u"], ["u", "u"]) is None
    True
    """
    if len(a) != len(b):
        raise ValueError("two coders' categories of the same items are needed")
    if len(a) < 2 or len(set(a) | set(b)) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score

    return float(cohen_kappa_score(list(a), list(b)))


def agreement(engine: Engine, coder_a: str, coder_b: str) -> Agreement:
    """Compare two coders on the domains both coded (see :class:`Agreement`); the
    disagreements and agreements by domain, each with the domain's current override."""
    a_name, b_name = _coder(coder_a), _coder(coder_b)
    with session_scope(engine) as s:
        a, b = _codings(s, a_name), _codings(s, b_name)
        both = sorted(set(a) & set(b))
        cats = _categories(s, both)
    overrides = {d: cats[d].override_category if d in cats else None for d in both}
    first = [a[d].category for d in both]
    second = [b[d].category for d in both]
    agreed = [d for d in both if a[d].category == b[d].category]
    return Agreement(
        coder_a=a_name,
        coder_b=b_name,
        coded_a=len(a),
        coded_b=len(b),
        both=len(both),
        agreed=len(agreed),
        observed=len(agreed) / len(both) if both else None,
        kappa=cohen_kappa(first, second),
        disagreements=[
            Disagreement(
                d,
                a[d].category,
                b[d].category,
                a[d].note,
                b[d].note,
                a[d].suggested or b[d].suggested,
                overrides[d],
            )
            for d in both
            if a[d].category != b[d].category
        ],
        agreements=[(d, a[d].category, overrides[d]) for d in agreed],
    )


def accept_agreements(
    engine: Engine,
    coder_a: str,
    coder_b: str,
    *,
    analyst: str | None = None,
    taxonomy: Taxonomy | str | Path | None = None,
) -> AcceptResult:
    """Make each category both coders gave a domain its override (history note:
    ``coding agreement: A and B both coded KEY``). A domain whose override is already
    that category is left as it is; an override of another category (an analyst's or
    an adjudication) is kept, never overwritten."""
    agreed = agreement(engine, coder_a, coder_b)
    done: list[str] = []
    unchanged: list[str] = []
    kept: list[str] = []
    for dom, key, override in agreed.agreements:
        if override == key:
            unchanged.append(dom)
        elif override is not None:
            kept.append(dom)
        else:
            set_override(
                engine,
                dom,
                key,
                note=f"coding agreement: {agreed.coder_a} and {agreed.coder_b} both coded {key}",
                analyst=analyst,
                taxonomy=taxonomy,
                require_environment=True,
            )
            done.append(dom)
    return AcceptResult(done, unchanged, kept)


def adjudicate(
    engine: Engine,
    domain: str,
    category: str,
    *,
    analyst: str,
    note: str | None = None,
    taxonomy: Taxonomy | str | Path | None = None,
) -> OverrideRow:
    """Give a coded domain its category: it becomes the override (it wins everywhere),
    the history's note naming the adjudication, every coder's category and ``note``.

    Raises
    ------
    ParameterError
        No analyst named, the category is not in the taxonomy, or no coder coded the
        domain (``webometrics category set`` sets any domain's override directly).
    """
    who = _coder(analyst, "analyst", "--analyst")
    dom = normalise_domain(domain)
    with session_scope(engine) as s:
        codings = s.execute(
            select(CategoryCoding.coder, CategoryCoding.category)
            .where(CategoryCoding.domain == dom)
            .order_by(CategoryCoding.coder)
        ).all()
    if not codings:
        raise ParameterError(
            f"no coder coded {dom}: adjudication settles coders' codings; set its category "
            "with `webometrics category set` instead"
        )
    said = ", ".join(f"{c}: {k}" for c, k in codings)
    why = f"adjudication by {who} of coders' {said}"
    if why_too := (note or "").strip():
        why += f"; {why_too}"
    return set_override(
        engine, dom, category, note=why, analyst=who, taxonomy=taxonomy, require_environment=True
    )
