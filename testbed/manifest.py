"""A read-only view of ``manifest.json`` with the questions crawler tests ask of it.

The format is documented in :mod:`testbed`. Compare URLs through
:func:`testbed.siteindex.url_key`: the manifest keeps URLs as the link extractor wrote them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testbed.siteindex import url_key


@dataclass(frozen=True)
class Manifest:
    """The parsed manifest (``data``) and helpers over it."""

    data: dict[str, Any]

    @property
    def universities(self) -> list[dict[str, Any]]:
        return self.data["universities"]

    def university(self, key: str) -> dict[str, Any]:
        """The university with ``key`` (cornell, texas, washington, wisconsin)."""
        for uni in self.universities:
            if uni["key"] == key:
                return uni
        raise KeyError(f"no university {key!r} in the manifest")

    def external_links(self, key: str, max_depth: int | None = None) -> list[dict[str, Any]]:
        """The external links of a university's pages; with ``max_depth``, only those on
        pages a crawl to that depth fetches (``source_depth <= max_depth``)."""
        links = self.university(key)["external_links"]
        if max_depth is None:
            return list(links)
        return [
            link
            for link in links
            if link["source_depth"] is not None and link["source_depth"] <= max_depth
        ]

    def target(self, url: str) -> dict[str, Any]:
        """What fetching an external target gives (status, final URL, error ...)."""
        try:
            return self.data["targets"][url]
        except KeyError:
            wanted = url_key(url)
            for t, info in self.data["targets"].items():
                if url_key(t) == wanted:
                    return info
            raise

    def reachable_targets(self, key: str, max_depth: int | None = None) -> set[str]:
        """Distinct external targets of a university that answer 200 (as url_key)."""
        return {
            url_key(link["target"])
            for link in self.external_links(key, max_depth)
            if self.data["targets"][link["target"]]["reachable"]
        }

    def pages(self, key: str, max_depth: int | None = None) -> list[dict[str, Any]]:
        """A university's served pages (within ``max_depth`` when given)."""
        pages = self.university(key)["pages"]
        if max_depth is None:
            return list(pages)
        return [p for p in pages if p["depth"] is not None and p["depth"] <= max_depth]

    def citing(self, key: str, expected: str | None = None) -> list[dict[str, Any]]:
        """A university's citing pages (``expected``: verified | missing | gone)."""
        rows = self.university(key)["citing"]
        return [c for c in rows if expected is None or c["expected"] == expected]

    def site(self, domain: str) -> dict[str, Any]:
        return self.data["sites"][domain]

    def categories(self, kinds: tuple[str, ...] = ("generated", "citing")) -> dict[str, str]:
        """Registered domain -> category of the sites of the given kinds (ground truth)."""
        return {d: s["category"] for d, s in self.data["sites"].items() if s["kind"] in kinds}

    def trouble(self, case: str | None = None, where: str | None = None) -> list[dict[str, Any]]:
        return [
            t
            for t in self.data["trouble"]
            if (case is None or t["case"] == case) and (where is None or t["where"] == where)
        ]

    @property
    def forbidden(self) -> list[str]:
        return list(self.data["forbidden"])

    @property
    def robots_disallowed(self) -> set[str]:
        """Every URL robots.txt disallows (as url_key)."""
        return {url_key(u) for u in self.data["robots_disallowed"]}


def load_manifest(folder: str | Path) -> Manifest:
    """Read ``folder/manifest.json`` (``folder`` as given to ``testbed build --out``)."""
    path = Path(folder)
    if path.is_dir():
        path = path / "manifest.json"
    if not path.is_file():
        from core.exceptions import ConfigError

        raise ConfigError(
            f"{path}: no test-web manifest; build one with `webometrics testbed build --out DIR`"
        )
    return Manifest(json.loads(path.read_text(encoding="utf-8")))
