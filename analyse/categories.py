"""Activity categories of external sites from an editable taxonomy (TOML), with evidence.

The paper grouped the clusters of each university's external environment into
universities, scientific communities, search engines, social networks (with blogs and
forums), media, news portals and other organisations (seed 000_d819228b9213e10a.txt,
before its Figures 2 and 3), reading the clusters' most frequent shingles. This module
makes that step explicit and repeatable: a taxonomy file (``analyse/taxonomy.toml`` by
default, ``[analyse] taxonomy`` to use another) lists for every category its domains and
host patterns, parts of domain names, and English and Russian keywords, and a domain is
scored against every category:

``score(c) = known_domain·[domain listed] + domain_pattern·[a pattern matches]
+ name_part·w·[a name part occurs] + title_keyword·mean_t sat(k_t(c)) + text_keyword·mean_p
sat(k_p(c))``

where ``k_t(c)`` / ``k_p(c)`` are the weighted numbers of distinct keywords of ``c`` found
in title ``t`` / page ``p`` (a keyword or name part written ``"search results^4"`` weighs
4, others 1), and ``sat(k) = cap·(1 - exp(-k / cap))`` saturates, so that one long
page cannot outweigh the domain facts. The best category wins; its *score* is its share
of the sum over categories (``1.0``: no other category has any evidence; ``0.0``: no
evidence at all, the taxonomy's ``default`` is assigned). The *evidence* says what
matched. A cluster's category is the vote of its members (each member's normalised
scores, or a one-hot vote for an analyst's override; the votes are shares summing to 1)
plus ``cluster_theme · sat(k(c)) / cap`` for the keywords of ``c`` among its theme terms.

Complexity: compiling a taxonomy with K keywords and D domain entries is O(K + D); a
domain with W words in its pages and titles costs O(W · L) with L the longest word
(prefix look-ups), plus one regular-expression scan per multi-word keyword.

References
----------
V. N. Korelin, I. S. Blekanov, S. L. Sergeev (2015), seed 000_d819228b9213e10a.txt.

Examples
--------
>>> tax = load_taxonomy()
>>> tax.keys()[:3]
('universities', 'scientific_communities', 'search_engines')
>>> a = categorize_domain("ox.ac.uk", taxonomy=tax)
>>> a.category, a.evidence["patterns"]
('universities', ['*.ac.uk'])
>>> categorize_domain("vk.com", taxonomy=tax).category
'social_networks'
>>> categorize_domain("example-shop.com", texts=["Buy our products: order now, low price."],
...                   taxonomy=tax).category
'other_organisations'
>>> tax.resolve("news")
'news_portals'
"""

from __future__ import annotations

import fnmatch
import math
import re
import tomllib
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyse.themes import words
from core.exceptions import ConfigError, ParameterError

__all__ = [
    "Assignment",
    "Category",
    "Scoring",
    "Taxonomy",
    "categorize_cluster",
    "categorize_domain",
    "default_taxonomy_path",
    "load_taxonomy",
    "split_weight",
]

_KEY = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_PATTERN = re.compile(
    r"^(\*\.)?([a-z0-9-]+\.)*[a-z0-9-]+(\.\*)?$|^\*\.[a-z0-9-]+(\.[a-z0-9-]+)*\.\*$"
)
_CATEGORY_FIELDS = {
    "key",
    "aliases",
    "label_en",
    "label_ru",
    "domains",
    "name_parts",
    "keywords_en",
    "keywords_ru",
}
_TOP_FIELDS = {"version", "default", "scoring", "category"}


def default_taxonomy_path() -> Path:
    """The taxonomy shipped with the package (``analyse/taxonomy.toml``)."""
    return Path(__file__).resolve().parent / "taxonomy.toml"


@dataclass(frozen=True)
class Scoring:
    """Weights of the evidence kinds (see the module docstring)."""

    known_domain: float = 10.0
    domain_pattern: float = 4.0
    name_part: float = 1.5
    title_keyword: float = 1.0
    text_keyword: float = 1.0
    cap: float = 3.0
    cluster_theme: float = 0.25

    def saturate(self, k: float) -> float:
        """``cap · (1 - exp(-k / cap))``: grows like ``k`` for small ``k``, stays below cap.

        Examples
        --------
        >>> round(Scoring().saturate(3), 3)
        1.896
        """
        return self.cap * (1.0 - math.exp(-k / self.cap)) if k > 0 else 0.0


def split_weight(entry: str) -> tuple[str, float]:
    """``"search results^4"`` -> ``("search results", 4.0)``; no suffix: weight 1.

    Raises
    ------
    ValueError
        The weight is not a positive number.

    Examples
    --------
    >>> split_weight("univ^2"), split_weight("news")
    (('univ', 2.0), ('news', 1.0))
    """
    if "^" not in entry:
        return entry, 1.0
    text, _, raw = entry.rpartition("^")
    weight = float(raw)
    if not weight > 0 or math.isinf(weight):
        raise ValueError(f"weight {raw!r} must be a positive number")
    return text.strip(), weight


@dataclass(frozen=True)
class _Keywords:
    exact: frozenset[str]
    prefixes: frozenset[str]
    phrases: tuple[tuple[str, re.Pattern[str]], ...]
    weights: Mapping[str, float]

    @classmethod
    def compile(cls, keywords: Iterable[str]) -> _Keywords:
        exact: set[str] = set()
        prefixes: set[str] = set()
        phrases: list[tuple[str, re.Pattern[str]]] = []
        weights: dict[str, float] = {}
        for entry in keywords:
            kw, weight = split_weight(entry)
            if weight != 1.0:
                weights[kw] = weight
            parts = kw.split()
            if len(parts) == 1:
                (prefixes if kw.endswith("*") else exact).add(kw.rstrip("*"))
                continue
            body = r"\s".join(
                re.escape(p.rstrip("*")) + (r"\S*" if p.endswith("*") else "") for p in parts
            )
            phrases.append((kw, re.compile(rf"(?<!\S){body}(?!\S)")))
        return cls(frozenset(exact), frozenset(prefixes), tuple(phrases), weights)

    def weight(self, found: Iterable[str]) -> float:
        """The weighted number of distinct keywords found."""
        return sum(self.weights.get(kw, 1.0) for kw in found)

    def find(self, distinct: set[str], joined: str) -> set[str]:
        """The keywords (as written in the taxonomy) found among the words."""
        found = {w for w in distinct if w in self.exact}
        if self.prefixes:
            for w in distinct:
                for i in range(2, len(w) + 1):
                    if w[:i] in self.prefixes:
                        found.add(w[:i] + "*")
        for kw, rx in self.phrases:
            if rx.search(joined):
                found.add(kw)
        return found


@dataclass(frozen=True)
class Category:
    """One category of the taxonomy with its compiled matchers."""

    key: str
    label_en: str
    label_ru: str
    aliases: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    name_parts: tuple[str, ...] = ()
    keywords_en: tuple[str, ...] = ()
    keywords_ru: tuple[str, ...] = ()
    _keywords: _Keywords = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_keywords", _Keywords.compile((*self.keywords_en, *self.keywords_ru))
        )

    @property
    def weighted_name_parts(self) -> tuple[tuple[str, float], ...]:
        """``(part, weight)`` of every name part (``"univ^2"`` weighs 2)."""
        return tuple(split_weight(x) for x in self.name_parts)

    @property
    def exact_domains(self) -> tuple[str, ...]:
        """The listed domains without wildcards."""
        return tuple(d for d in self.domains if "*" not in d)

    @property
    def patterns(self) -> tuple[str, ...]:
        """The host patterns with wildcards."""
        return tuple(d for d in self.domains if "*" in d)

    def label(self, language: str = "en") -> str:
        """The label in ``language`` (``"ru"`` or anything else for English)."""
        return self.label_ru if language == "ru" else self.label_en


@dataclass(frozen=True)
class Taxonomy:
    """The categories, the default category and the scoring weights.

    Build it with :func:`load_taxonomy`.
    """

    categories: tuple[Category, ...]
    default: str
    scoring: Scoring = Scoring()
    source: str = "<memory>"
    version: int = 1

    def keys(self) -> tuple[str, ...]:
        """The category keys in the file's order."""
        return tuple(c.key for c in self.categories)

    def __contains__(self, key: object) -> bool:
        return key in self.keys()

    def get(self, key: str) -> Category:
        """The category of ``key`` (a key or an alias)."""
        resolved = self.resolve(key)
        return next(c for c in self.categories if c.key == resolved)

    def resolve(self, name: str) -> str:
        """The key of a category given by key or alias (case-insensitive).

        Raises
        ------
        ParameterError
            No category has this key or alias; the message lists the keys.
        """
        wanted = (name or "").strip().casefold()
        for c in self.categories:
            if wanted == c.key or wanted in c.aliases:
                return c.key
        raise ParameterError(
            f"unknown category {name!r}; the categories of {self.source} are "
            f"{', '.join(self.keys())}"
        )

    def labels(self, language: str = "en") -> dict[str, str]:
        """``{key: label}`` in the file's order."""
        return {c.key: c.label(language) for c in self.categories}


@dataclass(frozen=True)
class Assignment:
    """A category with its score (share of the evidence, 0..1), raw scores and evidence."""

    category: str
    score: float
    scores: dict[str, float]
    evidence: dict[str, Any]

    def distribution(self) -> dict[str, float]:
        """The raw scores normalised to sum 1 (one-hot on ``category`` without evidence)."""
        total = sum(self.scores.values())
        if total <= 0:
            return {self.category: 1.0}
        return {k: v / total for k, v in self.scores.items() if v > 0}


# --- loading ----------------------------------------------------------------------------


def _block_line(text: str, index: int | None, key: str | None) -> int | None:
    """Line of ``key`` in the ``index``-th ``[[category]]`` block (or the top level)."""
    lines = text.splitlines()
    start, end = 0, len(lines)
    if index is not None:
        headers = [i for i, ln in enumerate(lines) if ln.strip() == "[[category]]"]
        if index >= len(headers):
            return None
        start = headers[index]
        end = headers[index + 1] if index + 1 < len(headers) else len(lines)
    elif key is not None:
        first = next((i for i, ln in enumerate(lines) if ln.strip().startswith("[")), end)
        end = first
    if key is None:
        return start + 1
    rx = re.compile(rf"^\s*{re.escape(key)}\s*=")
    for i in range(start, end):
        if rx.match(lines[i]):
            return i + 1
    return start + 1 if index is not None else None


class _Checker:
    def __init__(self, source: str, text: str) -> None:
        self.source, self.text = source, text

    def fail(self, msg: str, index: int | None = None, key: str | None = None) -> ConfigError:
        line = _block_line(self.text, index, key)
        where = f"{self.source}:{line}" if line else self.source
        what = f"[[category]] #{index + 1}" if index is not None else "taxonomy"
        return ConfigError(f"{where}: {what}: {msg}")

    def strings(self, value: Any, name: str, index: int | None) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(f"{name} must be a list of strings", index, name)
        return tuple(v.strip().casefold() for v in value if v.strip())


def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """Read and validate a taxonomy file.

    Parameters
    ----------
    path : path-like, optional
        The TOML file; the shipped ``analyse/taxonomy.toml`` when ``None``.

    Returns
    -------
    Taxonomy

    Raises
    ------
    ConfigError
        The file is missing, is not TOML, or a field is missing, unknown or invalid; the
        message names the file, the line and what to fix.
    """
    p = Path(path) if path is not None else default_taxonomy_path()
    source = str(p)
    if not p.is_file():
        raise ConfigError(
            f"{p}: taxonomy file not found; set [analyse] taxonomy to an existing file or "
            "remove it to use the shipped analyse/taxonomy.toml"
        )
    try:
        text = p.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text ({exc.reason}); save it as UTF-8") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: invalid TOML: {exc}") from exc
    return taxonomy_from_dict(data, source=source, text=text)


def taxonomy_from_dict(
    data: Mapping[str, Any], *, source: str = "<memory>", text: str = ""
) -> Taxonomy:
    """Validate a parsed taxonomy (see :func:`load_taxonomy`)."""
    chk = _Checker(source, text)
    for key in data:
        if key not in _TOP_FIELDS:
            raise chk.fail(
                f"unknown key {key!r} (allowed: {', '.join(sorted(_TOP_FIELDS))})", None, key
            )
    raw_cats = data.get("category")
    if not isinstance(raw_cats, list) or not raw_cats:
        raise chk.fail("no [[category]] tables: define at least one category")
    scoring_raw = data.get("scoring", {})
    if not isinstance(scoring_raw, dict):
        raise chk.fail("[scoring] must be a table", None, "scoring")
    weights: dict[str, float] = {}
    for key, value in scoring_raw.items():
        if key not in Scoring.__dataclass_fields__:
            raise chk.fail(
                f"[scoring] has unknown key {key!r} (allowed: "
                f"{', '.join(Scoring.__dataclass_fields__)})"
            )
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise chk.fail(f"[scoring] {key} must be a number >= 0, got {value!r}")
        weights[key] = float(value)
    scoring = Scoring(**weights)
    if scoring.cap <= 0:
        raise chk.fail("[scoring] cap must be > 0")
    categories: list[Category] = []
    names: dict[str, int] = {}
    for i, raw in enumerate(raw_cats):
        if not isinstance(raw, dict):
            raise chk.fail("must be a table", i)
        for key in raw:
            if key not in _CATEGORY_FIELDS:
                raise chk.fail(
                    f"unknown key {key!r} (allowed: {', '.join(sorted(_CATEGORY_FIELDS))})", i, key
                )
        key = raw.get("key")
        if not isinstance(key, str) or not _KEY.match(key):
            raise chk.fail(
                f"key must be lower-case letters, digits and '_' (at most 40), got {key!r}",
                i,
                "key",
            )
        aliases = chk.strings(raw.get("aliases", []), "aliases", i)
        for name in (key, *aliases):
            if name in names:
                raise chk.fail(
                    f"name {name!r} is already used by [[category]] #{names[name] + 1}",
                    i,
                    "aliases" if name != key else "key",
                )
            names[name] = i
        labels = {}
        for lab in ("label_en", "label_ru"):
            value = raw.get(lab, key)
            if not isinstance(value, str) or not value.strip():
                raise chk.fail(f"{lab} must be a non-empty string", i, lab)
            labels[lab] = value.strip()
        domains = chk.strings(raw.get("domains", []), "domains", i)
        for d in domains:
            if not _PATTERN.match(d):
                raise chk.fail(
                    f"domain pattern {d!r} is invalid: use a domain ('vk.com'), '*.suffix' "
                    "('*.edu') or 'name.*' ('google.*')",
                    i,
                    "domains",
                )
        name_parts = chk.strings(raw.get("name_parts", []), "name_parts", i)
        for part in name_parts:
            try:
                text, _w = split_weight(part)
            except ValueError as exc:
                raise chk.fail(f"name part {part!r}: {exc}", i, "name_parts") from exc
            if not re.fullmatch(r"[a-z0-9-]+", text):
                raise chk.fail(
                    f"name part {part!r} is invalid: letters, digits and '-' only", i, "name_parts"
                )
        kws = {}
        for lang in ("keywords_en", "keywords_ru"):
            kws[lang] = chk.strings(raw.get(lang, []), lang, i)
            for entry in kws[lang]:
                try:
                    kw, _w = split_weight(entry)
                except ValueError as exc:
                    raise chk.fail(f"keyword {entry!r}: {exc}", i, lang) from exc
                parts = kw.split()
                if any("*" in p.rstrip("*") or p == "*" for p in parts) or any(
                    words(p.rstrip("*")) != [p.rstrip("*")] for p in parts
                ):
                    raise chk.fail(
                        f"keyword {entry!r} is invalid: words of letters (2 or more), '*' only "
                        "at the end of a word",
                        i,
                        lang,
                    )
        categories.append(
            Category(
                key=key,
                aliases=aliases,
                domains=domains,
                name_parts=name_parts,
                keywords_en=kws["keywords_en"],
                keywords_ru=kws["keywords_ru"],
                **labels,
            )
        )
    keys = [c.key for c in categories]
    default = data.get("default", keys[-1])
    if default not in keys:
        raise chk.fail(
            f"default {default!r} is not a category key ({', '.join(keys)})", None, "default"
        )
    version = data.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise chk.fail(f"version must be an integer, got {version!r}", None, "version")
    return Taxonomy(tuple(categories), default, scoring, source, version)


# --- scoring ----------------------------------------------------------------------------


def _host_forms(domain: str, hosts: Iterable[str]) -> set[str]:
    forms = {domain.strip(".").lower()}
    for h in hosts:
        h = (h or "").strip(".").lower()
        if h:
            forms.add(h)
            if h.startswith("www."):
                forms.add(h[4:])
    return {f for f in forms if f}


def _domain_matches(entry: str, forms: set[str]) -> bool:
    if "*" not in entry:
        return any(f == entry or f.endswith("." + entry) for f in forms)
    return any(fnmatch.fnmatchcase(f, entry) for f in forms)


def _keyword_evidence(
    taxonomy: Taxonomy, texts: Iterable[str], max_words: int
) -> tuple[dict[str, float], dict[str, Counter[str]]]:
    """Mean saturated count of distinct keywords per text, and the keywords' text counts."""
    sat = {c.key: 0.0 for c in taxonomy.categories}
    hits: dict[str, Counter[str]] = {c.key: Counter() for c in taxonomy.categories}
    n = 0
    for text in texts:
        toks = words(text or "")[:max_words]
        if not toks:
            continue
        n += 1
        distinct, joined = set(toks), " ".join(toks)
        for c in taxonomy.categories:
            found = c._keywords.find(distinct, joined)
            if found:
                sat[c.key] += taxonomy.scoring.saturate(c._keywords.weight(found))
                hits[c.key].update(found)
    if n:
        sat = {k: v / n for k, v in sat.items()}
    return sat, hits


def _top(counter: Counter[str], n: int = 8) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:n])


def _decide(taxonomy: Taxonomy, scores: dict[str, float], evidence: dict[str, Any]) -> Assignment:
    total = sum(scores.values())
    order = {k: i for i, k in enumerate(taxonomy.keys())}
    rounded = {k: round(v, 4) for k, v in scores.items() if v > 0}
    if total <= 0:
        evidence["reason"] = f"no evidence: the default category {taxonomy.default!r}"
        return Assignment(taxonomy.default, 0.0, rounded, evidence)
    best = min(scores, key=lambda k: (-scores[k], order[k]))
    return Assignment(best, round(scores[best] / total, 4), rounded, evidence)


def categorize_domain(
    domain: str,
    *,
    taxonomy: Taxonomy,
    hosts: Sequence[str] = (),
    titles: Sequence[str] = (),
    texts: Sequence[str] = (),
    known: Mapping[str, str] | None = None,
    max_words: int = 5000,
) -> Assignment:
    """The category of one registered domain from its name, hosts, page titles and texts.

    Parameters
    ----------
    domain : str
        The registered domain (``"ox.ac.uk"``).
    taxonomy : Taxonomy
    hosts : sequence of str
        Host names of its pages (``"www.cs.ox.ac.uk"``): host patterns match them too.
    titles, texts : sequence of str
        Titles and main texts of its fetched pages.
    known : mapping of str to str, optional
        More listed domains, ``{domain: category key}``, weighed as the taxonomy's own
        (e.g. the registered domains of the universities under study).
    max_words : int
        Words read from each text.

    Returns
    -------
    Assignment
        ``evidence`` holds ``known`` (listed domains that matched), ``patterns``,
        ``name_parts``, ``title_keywords`` and ``text_keywords`` (keyword -> number of
        titles/pages, for the winning category), ``pages`` and ``titles`` (counts).
    """
    sc = taxonomy.scoring
    forms = _host_forms(domain, hosts)
    label = domain.strip(".").lower().split(".")[0]
    scores = {c.key: 0.0 for c in taxonomy.categories}
    listed: dict[str, list[str]] = {}
    patterns: dict[str, list[str]] = {}
    parts: dict[str, list[str]] = {}
    extra: dict[str, list[str]] = defaultdict(list)
    for d, key in (known or {}).items():
        extra[taxonomy.resolve(key)].append(d.lower())
    for c in taxonomy.categories:
        k = [d for d in (*c.exact_domains, *extra[c.key]) if _domain_matches(d, forms)]
        p = [d for d in c.patterns if _domain_matches(d, forms)]
        n = [x for x, _w in c.weighted_name_parts if x in label]
        if k:
            # the most specific listing wins: a longer listed domain adds its length share
            scores[c.key] += sc.known_domain + 0.01 * max(len(d) for d in k)
            listed[c.key] = k
        if p:
            scores[c.key] += sc.domain_pattern
            patterns[c.key] = p
        if n:
            weights = dict(c.weighted_name_parts)
            scores[c.key] += sc.name_part * max(weights[x] for x in n)
            parts[c.key] = n
    title_sat, title_hits = _keyword_evidence(taxonomy, titles, max_words)
    text_sat, text_hits = _keyword_evidence(taxonomy, texts, max_words)
    for key in scores:
        scores[key] += sc.title_keyword * title_sat[key] + sc.text_keyword * text_sat[key]
    evidence: dict[str, Any] = {"pages": len(texts), "titles": len(titles)}
    result = _decide(taxonomy, scores, evidence)
    best = result.category
    evidence.update(
        known=listed.get(best, []),
        patterns=patterns.get(best, []),
        name_parts=parts.get(best, []),
        title_keywords=_top(title_hits[best]),
        text_keywords=_top(text_hits[best]),
    )
    return result


def categorize_cluster(
    members: Sequence[Assignment | str],
    *,
    taxonomy: Taxonomy,
    theme_terms: Sequence[str] = (),
) -> Assignment:
    """The category of a cluster from its members' categories and its theme terms.

    Parameters
    ----------
    members : sequence of Assignment or str
        One entry per member domain: its :class:`Assignment` (votes with its normalised
        scores) or a category key (an analyst's override: a one-hot vote).
    taxonomy : Taxonomy
    theme_terms : sequence of str
        The cluster's terms and shingles: a category's keywords among them add at most
        ``cluster_theme`` (0.25) to its share of the members' votes, which only tips
        near ties (and decides for a cluster without categorised members).

    Returns
    -------
    Assignment
        ``evidence``: ``members`` (category -> number of members), ``votes`` (category ->
        share of the votes), ``theme_keywords``.

    Examples
    --------
    >>> tax = load_taxonomy()
    >>> a = categorize_cluster(["media", "media", "news_portals"], taxonomy=tax)
    >>> a.category, a.score, a.evidence["members"]
    ('media', 0.6667, {'media': 2, 'news_portals': 1})
    """
    votes = {c.key: 0.0 for c in taxonomy.categories}
    counts: Counter[str] = Counter()
    for m in members:
        if isinstance(m, str):
            key = taxonomy.resolve(m)
            votes[key] += 1.0
            counts[key] += 1
        else:
            for key, share in m.distribution().items():
                votes[key] = votes.get(key, 0.0) + share
            counts[m.category] += 1
    theme_sat, theme_hits = _keyword_evidence(taxonomy, [" . ".join(theme_terms)], 10_000)
    sc = taxonomy.scoring
    total_votes = sum(votes.values()) or 1.0
    scores = {
        k: v / total_votes + sc.cluster_theme * theme_sat[k] / sc.cap for k, v in votes.items()
    }
    evidence: dict[str, Any] = {
        "members": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "votes": {k: round(v / total_votes, 4) for k, v in votes.items() if v > 0},
    }
    result = _decide(taxonomy, scores, evidence)
    evidence["theme_keywords"] = _top(theme_hits[result.category])
    return result
