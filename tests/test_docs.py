"""The documents: generated pages up to date, every relative link resolves, and the
MkDocs site builds in strict mode (a broken link or a missing page fails it)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")
DOCUMENTS = sorted(
    [
        REPO / "README.md",
        REPO / "CONTRIBUTING.md",
        REPO / "CHANGELOG.md",
        *(REPO / "docs").rglob("*.md"),
    ]
)


def test_generated_pages_are_up_to_date() -> None:
    """docs/reference/*.md and docs/measurements.md are what scripts/gen_docs.py writes now
    (a new option, setting or benchmark result makes them stale until `make docs`)."""
    out = subprocess.run(
        [sys.executable, "scripts/gen_docs.py", "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(document: Path) -> None:
    """Every relative link of a document names a file of the repository, read from the
    document's folder (as GitHub and MkDocs read it)."""
    text = document.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if path and not (document.parent / path).exists():
            broken.append(target)
    assert not broken, f"{document.relative_to(REPO)} links to missing files: {broken}"


def test_readme_is_short() -> None:
    """README.md is an introduction a newcomer reads in five minutes; the guide is docs/."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines < 250, f"README.md has {lines} lines; move detail into docs/"


def test_site_builds_strict(tmp_path: Path) -> None:
    """`mkdocs build --strict` (what `make docs` runs) succeeds: every page of the nav
    exists and no link inside the site is broken."""
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "index.html").exists()
    assert (tmp_path / "bench" / "results" / "activity" / "index.html").exists()
