"""The taxonomy of activity categories: its file, its checks and its types.

A taxonomy file (TOML; ``analyse/taxonomy.toml`` is shipped, ``[analyse] taxonomy`` names
another) holds ``version``, the ``default`` category (assigned when nothing matches), the
``[scoring]`` weights (:class:`Scoring`) and one ``[[category]]`` table per category:
``key``, ``aliases``, ``label_en``, ``label_ru``, ``domains`` (known domains and host
patterns such as ``*.ac.uk``), ``name_parts`` (parts of domain names) and
``keywords_en`` / ``keywords_ru`` (an entry written ``"search results^4"`` weighs 4,
others 1; ``univ*`` is a prefix). :func:`load_taxonomy` reads and checks a file and
returns a :class:`Taxonomy` of :class:`Category` (each with its compiled keyword
matchers); a mistake is a :class:`~core.exceptions.ConfigError` naming the file, the line
and what to fix. Scoring domains and clusters against it is :mod:`analyse.categories`.

Examples
--------
>>> tax = load_taxonomy()
>>> tax.keys()[:3]
('universities', 'scientific_communities', 'search_engines')
>>> tax.resolve("news")
'news_portals'
>>> tax.get("universities").patterns[:2]
('*.edu', '*.edu.*')
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyse.themes import words
from core.choices import UNKNOWN
from core.exceptions import ConfigError, ParameterError

__all__ = [
    "Category",
    "Scoring",
    "Taxonomy",
    "default_taxonomy_path",
    "load_taxonomy",
    "split_weight",
    "taxonomy_from_dict",
]


_KEY = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_PATTERN = re.compile(
    r"^(\*\.)?([a-z0-9-]+\.)*[a-z0-9-]+(\.\*)?$|^\*\.[a-z0-9-]+(\.[a-z0-9-]+)*\.\*$"
)
_CATEGORY_FIELDS = {
    "key",
    "color",
    "aliases",
    "label_en",
    "label_ru",
    "domains",
    "name_parts",
    "keywords_en",
    "keywords_ru",
}
_TOP_FIELDS = {"version", "default", "scoring", "category"}
_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")
# colours of categories that name none (Tableau 10 without its grey), and of ``unknown``
_PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#bcbd22", "#17becf",
)  # fmt: skip
UNKNOWN_COLOR = "#b0b0b0"
UNKNOWN_LABELS = {
    "en": "Unknown (not fetched or no text)",
    "ru": "Неизвестно (не загружено или нет текста)",
}


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
    color: str = ""
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

    def labels(self, language: str = "en", *, with_unknown: bool = False) -> dict[str, str]:
        """``{key: label}`` in the file's order; ``with_unknown`` adds the label of
        :data:`core.choices.UNKNOWN` (domains without evidence) last."""
        out = {c.key: c.label(language) for c in self.categories}
        if with_unknown:
            out[UNKNOWN] = UNKNOWN_LABELS.get(language, UNKNOWN_LABELS["en"])
        return out

    def colors(self) -> dict[str, str]:
        """``{key: "#rrggbb"}`` in the file's order, :data:`core.choices.UNKNOWN` grey last:
        one fixed colour per category for every chart."""
        return {c.key: c.color for c in self.categories} | {UNKNOWN: UNKNOWN_COLOR}


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
    for top in data:
        if top not in _TOP_FIELDS:
            raise chk.fail(
                f"unknown key {top!r} (allowed: {', '.join(sorted(_TOP_FIELDS))})", None, top
            )
    raw_cats = data.get("category")
    if not isinstance(raw_cats, list) or not raw_cats:
        raise chk.fail("no [[category]] tables: define at least one category")
    scoring_raw = data.get("scoring", {})
    if not isinstance(scoring_raw, dict):
        raise chk.fail("[scoring] must be a table", None, "scoring")
    weights: dict[str, float] = {}
    for weight, value in scoring_raw.items():
        if weight not in Scoring.__dataclass_fields__:
            raise chk.fail(
                f"[scoring] has unknown key {weight!r} (allowed: "
                f"{', '.join(Scoring.__dataclass_fields__)})"
            )
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise chk.fail(f"[scoring] {weight} must be a number >= 0, got {value!r}")
        weights[weight] = float(value)
    scoring = Scoring(**weights)
    if scoring.cap <= 0:
        raise chk.fail("[scoring] cap must be > 0")
    categories: list[Category] = []
    names: dict[str, int] = {}
    for i, raw in enumerate(raw_cats):
        if not isinstance(raw, dict):
            raise chk.fail("must be a table", i)
        for field_key in raw:
            if field_key not in _CATEGORY_FIELDS:
                raise chk.fail(
                    f"unknown key {field_key!r} (allowed: {', '.join(sorted(_CATEGORY_FIELDS))})",
                    i,
                    field_key,
                )
        key = raw.get("key")
        if not isinstance(key, str) or not _KEY.match(key):
            raise chk.fail(
                f"key must be lower-case letters, digits and '_' (at most 40), got {key!r}",
                i,
                "key",
            )
        if key == UNKNOWN:
            raise chk.fail(
                f"key {UNKNOWN!r} is reserved for domains without evidence; choose another",
                i,
                "key",
            )
        color = raw.get("color", _PALETTE[i % len(_PALETTE)])
        if not isinstance(color, str) or not _COLOR.match(color):
            raise chk.fail(f"color must be '#rrggbb', got {color!r}", i, "color")
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
                color=color.lower(),
                label_en=labels["label_en"],
                label_ru=labels["label_ru"],
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
