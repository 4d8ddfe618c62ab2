"""``webometrics category classify`` and ``category train``, and the analyse stage storing
the pooled category (registries, taxonomy, text model) with its confidence and what
decided, on the stored world (SQLite and PostgreSQL) and on what the pipeline stores."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tests.stored_world import DOMAINS, Facts
from webometrics.cli import main


@pytest.fixture(autouse=True)
def _no_user_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user data folder: no text model of the developer's changes a test."""
    folder = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(folder))
    monkeypatch.delenv("WEBOMETRICS_ANALYSE__TEXT_MODEL", raising=False)
    return folder


def _csv(out: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(out)))


def test_classify_by_name_and_registries(filled_ro: Facts, capsys) -> None:
    argv = ["--db-url", filled_ro.url, "category", "classify", "--no-pages", "--format", "csv"]
    code = main([*argv, "mit.edu", "https://www.spbu.ru/news", "vk.com", "qwzx-nothing-here.com"])
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("domain,category,confidence,decided_by,")
    rows = {r["domain"]: r for r in _csv(out)}
    assert list(rows) == ["mit.edu", "spbu.ru", "vk.com", "qwzx-nothing-here.com"]
    assert (rows["mit.edu"]["category"], rows["mit.edu"]["decided_by"]) == (
        "universities",
        "registry",
    )
    assert "Massachusetts Institute of Technology" in rows["mit.edu"]["registry"]
    assert rows["spbu.ru"]["category"] == "universities"
    assert (rows["vk.com"]["category"], rows["vk.com"]["decided_by"]) == (
        "social_networks",
        "known_domain",
    )
    nothing = rows["qwzx-nothing-here.com"]
    assert (nothing["category"], float(nothing["confidence"]), nothing["decided_by"]) == (
        "unknown",
        0.0,
        "none",
    )
    assert all(0 <= float(r["confidence"]) <= 1 for r in rows.values())


def test_classify_reads_the_stored_pages(filled_ro: Facts, capsys, tmp_path: Path) -> None:
    listing = tmp_path / "domains.txt"
    listing.write_text("# fixture domains\n" + "\n".join(DOMAINS) + "\n\n", encoding="utf-8")
    code = main(
        [
            "--db-url",
            filled_ro.url,
            "category",
            "classify",
            "--file",
            str(listing),
            "--format",
            "json",
        ]
    )
    assert code == 0
    got = json.loads(capsys.readouterr().out)
    assert "absent" in got["text_model"] and "category train" in got["text_model"]
    rows = {r["domain"]: r for r in got["domains"]}
    assert set(rows) == set(DOMAINS)
    # every fixture domain has stored pages, and gets the category a human gives it
    assert all(r["pages"] > 0 for r in rows.values())
    wrong = {d: r["category"] for d, r in rows.items() if r["category"] != DOMAINS[d][1]}
    assert not wrong, wrong


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "no domain to classify"),
        (["--file", "/nonexistent/domains.txt"], "cannot read --file"),
        (["not a domain!"], "is not a valid domain"),
        (["mit.edu", "under_score..x"], "is not a valid domain"),
    ],
)
def test_classify_refuses_bad_input(filled_ro: Facts, capsys, args, message) -> None:
    assert main(["--db-url", filled_ro.url, "category", "classify", *args]) == 2
    assert message in capsys.readouterr().err


def test_classify_refuses_an_empty_file_naming_a_bad_line(
    filled_ro: Facts, capsys, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n", encoding="utf-8")
    assert main(["--db-url", filled_ro.url, "category", "classify", "--file", str(empty)]) == 2
    assert "holds no domain" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_text("mit.edu\nno such domain\n", encoding="utf-8")
    assert main(["--db-url", filled_ro.url, "category", "classify", "--file", str(bad)]) == 2
    assert "line 2" in capsys.readouterr().err


def test_train_then_analyse_stores_the_pooled_category(
    filled: Facts, capsys, _no_user_model: Path
) -> None:
    """``category train`` writes the model into the user's data folder; the analyse stage
    then pools it with the registries and the taxonomy and stores the confidence and
    what decided; ``classify`` shows the same."""
    from store import make_engine
    from store.models import DomainCategory

    assert main(["--db-url", filled.url, "category", "train", "--corpora", "websites"]) == 0
    trained = json.loads(capsys.readouterr().out)
    path = _no_user_model / "webometrics" / "category-model.npz"
    assert trained["model"] == str(path) and path.is_file()
    assert trained["sources"] == {"websites": sum(trained["samples"].values())}
    assert main(["--db-url", filled.url, "analyse"]) == 0
    capsys.readouterr()
    engine = make_engine(filled.url)
    try:
        with Session(engine) as s:
            rows = {r.domain: r for r in s.scalars(select(DomainCategory))}
            n = s.scalar(select(func.count()).select_from(DomainCategory))
    finally:
        engine.dispose()
    assert n == len(DOMAINS)
    for dom, (_lang, cat, _src) in DOMAINS.items():
        ev = rows[dom].evidence
        assert rows[dom].category == cat, (dom, ev)
        assert rows[dom].score == ev["confidence"] and 0 < rows[dom].score <= 1
        assert ev["decided_by"] in {"registry", "known_domain", "pattern", "text", "keywords"}
        assert str(path) in ev["text_model"]
        # the text model read every fixture domain's pages
        assert ev["sources"]["text"]["pages"] > 0, dom
    assert rows["mit.edu"].evidence["registry"]["source"] == "hipo"
    # the analyst's override is kept beside the refreshed category
    assert rows["lenta.ru"].override_category is not None
    code = main(["--db-url", filled.url, "category", "classify", "cnn.com", "--format", "json"])
    assert code == 0
    shown = json.loads(capsys.readouterr().out)
    assert str(path) in shown["text_model"]
    assert shown["domains"][0]["category"] == rows["cnn.com"].category
    assert shown["domains"][0]["confidence"] == pytest.approx(rows["cnn.com"].score, abs=1e-3)


def test_train_refuses_unknown_corpora_and_nothing_to_learn(filled_ro: Facts, capsys) -> None:
    assert main(["--db-url", filled_ro.url, "category", "train", "--corpora", "imdb"]) == 2
    assert "unknown corpus 'imdb'" in capsys.readouterr().err
    # no corpus and a database with too few labelled texts: nothing to learn from
    code = main(["--db-url", filled_ro.url, "category", "train", "--corpora", "--from-db"])
    assert code == 2
    assert "cannot train the text model" in capsys.readouterr().err


def test_classify_on_what_the_pipeline_stores(pipeline_db, capsys) -> None:
    from store.models import DomainCategory, Page

    engine = pipeline_db.engine
    try:
        with Session(engine) as s:
            fetched = s.scalars(
                select(Page.registered_domain)
                .where(Page.role != "university", Page.text.is_not(None))
                .group_by(Page.registered_domain)
                .order_by(Page.registered_domain)
                .limit(5)
            ).all()
            stored = {
                r.domain: r
                for r in s.scalars(select(DomainCategory).where(DomainCategory.domain.in_(fetched)))
            }
    finally:
        engine.dispose()
    assert len(fetched) == 5
    code = main(["--db-url", pipeline_db.url, "category", "classify", *fetched, "--format", "json"])
    assert code == 0
    got = json.loads(capsys.readouterr().out)["domains"]
    for r in got:
        assert r["pages"] > 0 and r["category"] != "unknown", r
        # the stage stored what classify shows (the same pooling, the same pages)
        assert r["category"] == stored[r["domain"]].category, r
        assert r["confidence"] == pytest.approx(stored[r["domain"]].score, abs=1e-3)
        assert stored[r["domain"]].evidence["decided_by"] == (r["decided_by"] or None)
