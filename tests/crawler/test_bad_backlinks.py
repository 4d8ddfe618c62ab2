"""Malformed backlink exports: bad rows are shown (how many, the first by line) and kept
with the run; an unterminated quote is an error naming its line, before any run."""

from __future__ import annotations

import codecs
import json
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select

from core.exceptions import ConfigError
from crawler.sources import UniversityDomains, read_backlinks
from store.models import CrawlRun
from store.session import session_scope
from tests.cli import FAST_CRAWL, run_webometrics

from .conftest import LocalWeb, html, write_universities

U = [UniversityDomains(1, frozenset({"alpha-university.edu"}))]
T = "http://www.alpha-university.edu/"

MAJESTIC = (
    "Target URL,Source URL,Anchor Text,Flag No Follow\n"
    f"{T},http://news.example.org/a,Alpha,0\n"
    f"{T},ftp://files.example.org/b,Files,0\n"  # line 3: not http(s)
    f"{T}\n"  # line 4: short
    f'{T},"http://blog.example.org/c"x,Blog,0\n'  # line 5: text after a closing quote
    "\n"  # a blank line is not a bad row
    f'{T},"http://quoted.example.org/d, with a comma",Quoted,0\n'  # a good quoted field
    f"{T},http://last.example.org/e,Last,0\n"
    f'{T},http://multi.example.org/f,"An anchor\non two lines",0\n'  # a good quoted break
)

AHREFS_UNTERMINATED = (
    "Referring page URL\tReferring page title\tTarget URL\tAnchor\n"
    f"http://news.example.org/a\tNews\t{T}\tAlpha\n"
    f'http://blog.example.org/b\t"Blog post\t{T}\tAlpha\n'  # line 3: the quote never closes
    f"http://c.example.org/c\tC\t{T}\tAlpha\n"
    f"http://d.example.org/d\tD\t{T}\tAlpha\n"
)


def test_majestic_bad_rows_are_listed_by_line(tmp_path: Path) -> None:
    path = tmp_path / "majestic.csv"
    path.write_text(MAJESTIC, encoding="utf-8")
    report = read_backlinks(path, U)
    assert [c.url for c in report.candidates] == [
        "http://news.example.org/a",
        "http://quoted.example.org/d, with a comma",
        "http://last.example.org/e",
        "http://multi.example.org/f",
    ]
    (bad,) = report.bad
    assert bad.count == 3
    assert [line for line, _ in bad.first] == [3, 4, 5]
    assert "'ftp://files.example.org/b' is not an http(s) source URL" in bad.first[0][1]
    assert "short row: 1 field, the 'Source URL' column is field 2" in bad.first[1][1]
    assert bad.first[2][1].startswith("malformed CSV: ")
    assert bad.message().startswith(f"{path}: 3 bad rows skipped:\n  line 3: ")


def test_an_unterminated_quote_names_its_line_in_both_layouts(tmp_path: Path) -> None:
    ahrefs = tmp_path / "ahrefs.csv"  # Ahrefs' "for Excel" export: UTF-16, tabs
    ahrefs.write_bytes(codecs.BOM_UTF16_LE + AHREFS_UNTERMINATED.encode("utf-16-le"))
    with pytest.raises(ConfigError, match=r"ahrefs\.csv:3: unterminated quote"):
        read_backlinks(ahrefs, U)
    majestic = tmp_path / "majestic.csv"
    lines = MAJESTIC.splitlines(keepends=True)
    lines.insert(2, f'{T},"http://open.example.org/x,Open,0\n')  # line 3
    majestic.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"majestic\.csv:3: unterminated quote.*close or remove"):
        read_backlinks(majestic, U)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_webometrics(*args, db="sqlite:///w.db", cwd=cwd, env=FAST_CRAWL)


def _runs(tmp_path: Path) -> list[CrawlRun]:
    engine = create_engine(f"sqlite:///{tmp_path / 'w.db'}")
    with session_scope(engine) as s:
        runs = list(s.scalars(select(CrawlRun)))
        s.expunge_all()
    engine.dispose()
    return runs


@pytest.mark.slow
def test_crawl_shows_and_stores_bad_rows_and_refuses_an_unterminated_quote(
    tmp_path: Path,
) -> None:
    assert _cli("db", "upgrade", cwd=tmp_path).returncode == 0
    unis = write_universities(
        tmp_path / "u.toml", {"name": "Alpha University", "domains": ["alpha-university.edu"]}
    )
    (tmp_path / "majestic.csv").write_text(MAJESTIC, encoding="utf-8")
    (tmp_path / "ahrefs.csv").write_text(AHREFS_UNTERMINATED, encoding="utf-8")
    refused = _cli(
        "crawl", "--universities", str(unis), "--direction", "citing",
        "--backlinks", "ahrefs.csv", "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "ahrefs.csv:3: unterminated quote" in refused.stderr
    assert _runs(tmp_path) == []  # no run was made

    pages = {u: html("cites", (T, "Alpha")) for u in ("http://news.example.org/a",)}
    with LocalWeb(pages) as web:
        out = _cli(
            "crawl", "--universities", str(unis), "--direction", "citing",
            "--backlinks", "majestic.csv", "--proxy", web.proxy_url, "--no-progress",
            cwd=tmp_path,
        )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "majestic.csv: 3 bad rows skipped:\n  line 3: 'ftp://files" in out.stderr
    assert "  line 4: short row" in out.stderr and "  line 5: malformed CSV" in out.stderr
    (run,) = _runs(tmp_path)
    assert run.status == "finished"
    (stored,) = run.stats["citing_bad_rows"]
    assert stored["file"] == "majestic.csv" and stored["count"] == 3
    assert [r["line"] for r in stored["first"]] == [3, 4, 5]
    assert json.dumps(stored)  # plain JSON
