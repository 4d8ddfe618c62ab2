"""The universities file (TOML): parsed and checked (stored by :mod:`store.universities`).

Format::

    [[university]]
    name = "Saint Petersburg State University"
    country = "Russia"
    rank = 363                       # Webometrics rank, optional
    impact_rank = 310                # Webometrics Impact rank, optional
    domains = ["spbu.ru"]            # registered domains; subdomains belong to them
    home = ["https://spbu.ru/"]      # optional start pages (default https://<domain>/)

Errors name the file and the line or field.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from core.domains import is_valid_domain, registered_domain
from core.exceptions import UniversitiesFileError

_FIELDS = {"name", "country", "rank", "impact_rank", "domains", "home"}


@dataclass(frozen=True)
class UniversitySpec:
    """One university as written in the file."""

    name: str
    country: str
    domains: tuple[str, ...]
    rank: int | None = None
    home: tuple[str, ...] = field(default_factory=tuple)
    impact_rank: int | None = None

    @property
    def start_urls(self) -> tuple[str, ...]:
        """The home pages, or ``https://<domain>/`` for each domain."""
        return self.home or tuple(f"https://{d}/" for d in self.domains)


def _line_of(text: str, needle: str, nth_table: int) -> int | None:
    """Line of ``needle`` inside the ``nth_table``-th ``[[university]]`` (best effort)."""
    table = -1
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith("[[university]]"):
            table += 1
        elif table == nth_table and line.strip().startswith(needle):
            return number
    return None


def normalize_name(text: str) -> str:
    """A name with its white space normalised (any run of spaces, tabs or line breaks one
    space, none at the ends), so that ``"Saint  Petersburg"`` is the university stored as
    ``"Saint Petersburg"``, not a new one.

    >>> normalize_name("  Saint  Petersburg\tState University ")
    'Saint Petersburg State University'
    """
    return " ".join(text.split())


def parse_universities(path: str | Path) -> list[UniversitySpec]:
    """Read and validate a universities file.

    Raises
    ------
    UniversitiesFileError
        Invalid TOML, unknown keys, missing fields, a malformed or duplicate domain,
        a duplicate name; the message names the file and the line.
    """
    p = Path(path)
    if not p.is_file():
        raise UniversitiesFileError(f"{p}: universities file not found")
    try:
        text = p.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise UniversitiesFileError(f"{p}: not UTF-8 text; save it as UTF-8") from exc
    except tomllib.TOMLDecodeError as exc:
        hint = (
            "; a universities file is TOML ([[university]] tables, as in "
            "examples/universities.toml), and a ranking table in CSV is imported with "
            "`webometrics universities import-ranks`"
            if p.suffix.lower() in {".csv", ".tsv", ".txt", ".json", ".xlsx"}
            else ""
        )
        raise UniversitiesFileError(f"{p}: invalid TOML: {exc}{hint}") from exc
    extra = set(data) - {"university"}
    if extra:
        raise UniversitiesFileError(
            f"{p}: unknown top-level key(s) {sorted(extra)}; expected [[university]] tables"
        )
    tables = data.get("university")
    if not isinstance(tables, list) or not tables:
        raise UniversitiesFileError(f"{p}: no [[university]] tables found")
    specs: list[UniversitySpec] = []
    seen_domains: dict[str, str] = {}
    seen_names: set[str] = set()
    for i, t in enumerate(tables):

        def where(key: str, i: int = i) -> str:
            line = _line_of(text, key, i)
            return f"{p}:{line}" if line else f"{p}: university #{i + 1}"

        unknown = set(t) - _FIELDS
        if unknown:
            k = sorted(unknown)[0]
            raise UniversitiesFileError(
                f"{where(k)}: unknown key {k!r} (allowed: {', '.join(sorted(_FIELDS))})"
            )
        for required in ("name", "country", "domains"):
            if required not in t:
                raise UniversitiesFileError(
                    f"{p}: university #{i + 1} ({t.get('name', 'unnamed')}): missing field "
                    f"{required!r}"
                )
        name, country = t["name"], t["country"]
        if not isinstance(name, str) or not name.strip():
            raise UniversitiesFileError(f"{where('name')}: name must be a non-empty string")
        name = normalize_name(name)
        if not isinstance(country, str) or not country.strip():
            raise UniversitiesFileError(f"{where('country')}: country must be a non-empty string")
        if name in seen_names:
            raise UniversitiesFileError(f"{where('name')}: duplicate university name {name!r}")
        seen_names.add(name)
        for key in ("rank", "impact_rank"):
            value = t.get(key)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 1
            ):
                raise UniversitiesFileError(f"{where(key)}: {key} must be a positive integer")
        rank = t.get("rank")
        domains = t["domains"]
        if isinstance(domains, str):
            domains = [domains]
        if not isinstance(domains, list) or not domains:
            raise UniversitiesFileError(f"{where('domains')}: domains must be a non-empty list")
        clean: list[str] = []
        for d in domains:
            if not isinstance(d, str) or not is_valid_domain(d):
                raise UniversitiesFileError(
                    f"{where('domains')}: {d!r} is not a valid domain name (write it like "
                    "'spbu.ru' or 'ox.ac.uk', without scheme or path)"
                )
            d = d.strip().lower()
            if registered_domain(d) != d:
                raise UniversitiesFileError(
                    f"{where('domains')}: {d!r} is a subdomain; give the registered domain "
                    f"{registered_domain(d)!r} (subdomains are included automatically)"
                )
            if d in seen_domains:
                raise UniversitiesFileError(
                    f"{where('domains')}: duplicate domain {d!r} (also given for "
                    f"{seen_domains[d]!r})"
                )
            seen_domains[d] = name
            clean.append(d)
        home = t.get("home", [])
        if isinstance(home, str):
            home = [home]
        if not isinstance(home, list) or not all(
            isinstance(h, str) and h.startswith(("http://", "https://")) for h in home
        ):
            raise UniversitiesFileError(f"{where('home')}: home must be a list of http(s) URLs")
        specs.append(
            UniversitySpec(
                name=name,
                country=normalize_name(country),
                rank=rank,
                domains=tuple(clean),
                home=tuple(home),
                impact_rank=t.get("impact_rank"),
            )
        )
    return specs
