"""``webometrics report --language ru`` on the pipeline's database: the whole report in
Russian (headings, captions, table headers, notes, the index), not only the legends."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from webometrics.cli import main
from webometrics.commands.report.i18n import Translator

WORD = re.compile(r"[A-Za-z]{3,}")


def _english_sentences(markdown: str) -> set[str]:
    """The English the report itself writes in a Markdown file: headings, paragraphs,
    table headers, and the cells that are sentences (four words or more: the notes and
    readings; names of universities, domains and theme terms are shorter data)."""
    found: set[str] = set()
    header = True
    for line in markdown.splitlines():
        if line.startswith("|"):
            if set(line) <= set("|-: "):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            for cell in cells:
                if cell.startswith("`"):
                    continue  # a file's name
                for part in cell.split("; "):
                    if header and WORD.search(part) and "_" not in part:
                        found.add(part)
                    elif len(WORD.findall(part)) >= 4 and "," not in part:
                        found.add(part)  # a sentence, not a list of theme terms
            header = False
            continue
        header = True
        text = line.lstrip("# ").strip()
        if len(WORD.findall(text)) >= 2:
            found.add(text)
    return found


def _headers(markdown: str) -> set[str]:
    """The cells of every table's header row."""
    lines = markdown.splitlines()
    return {
        c.strip()
        for line, below in itertools.pairwise(lines)
        if line.startswith("|") and below.startswith("|-")
        for c in line.strip().strip("|").split(" | ")
    }


@pytest.fixture(scope="module")
def reports(pipeline_db, tmp_path_factory) -> dict[str, Path]:
    out = {}
    for lang in ("en", "ru"):
        folder = tmp_path_factory.mktemp(f"report-{lang}")
        argv = ["--db-url", pipeline_db.url, "report", "--out", str(folder), "--language", lang]
        assert main(argv) == 0
        out[lang] = folder
    return out


def test_the_russian_report_has_no_english_sentence_of_the_english_one(reports) -> None:
    en, ru = reports["en"], reports["ru"]
    files = sorted(p.relative_to(en) for p in en.rglob("*.md"))
    assert files == sorted(p.relative_to(ru) for p in ru.rglob("*.md"))
    assert len(files) >= 10
    checked = 0
    for name in files:
        english = _english_sentences((en / name).read_text(encoding="utf-8"))
        russian = (ru / name).read_text(encoding="utf-8")
        # a one-word header may be part of a column's name the Russian text cites
        # (known_share): compared with the Russian headers, longer texts anywhere
        headers = _headers(russian)
        left = sorted(s for s in english if (s in headers if " " not in s else s in russian))
        assert not left, f"{name}: untranslated {left[:5]}"
        assert re.search("[а-яА-Я]", russian), name
        checked += len(english)
    assert checked > 100  # the headings, headers and notes of every file were compared
    # the translations live in one table, and what the English report says is there
    assert "Отчёт webometrics" in (ru / "README.md").read_text(encoding="utf-8")


def test_the_russian_report_keeps_the_numbers_and_the_csv(reports) -> None:
    en, ru = reports["en"], reports["ru"]
    for csv_file in en.glob("*.csv"):
        if csv_file.name == "domain_categories.csv":
            continue
        # the CSV files keep their English column names (scripts read them by name)
        assert (ru / csv_file.name).read_text().splitlines()[
            0
        ] == csv_file.read_text().splitlines()[0]
    numbers = [re.findall(r"\d+(?:\.\d+)?", (d / "table2.md").read_text()) for d in (en, ru)]
    assert numbers[0][1:] == numbers[1][1:] and len(numbers[0]) > 10
    for png in ("figure2_outgoing.png", "figure3_citing.png", "rank_correlation.png"):
        assert (ru / png).read_bytes()[:4] == b"\x89PNG"


def test_a_text_outside_the_table_stays_as_it_is() -> None:
    tr = Translator("ru")
    assert tr.text("University of Texas at Austin") == "University of Texas at Austin"
    assert tr.value("outgoing") == "исходящее"
    with pytest.raises(ValueError, match="no report language"):
        Translator("de")
