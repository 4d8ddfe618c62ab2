"""The review workflow (:mod:`store.review`, ``webometrics category review | export |
import | agreement | adjudicate``, ``category set --force``) on the stored world, on
SQLite and PostgreSQL, and on what the pipeline stores (the test web's crawl).

The expected queue is derived from the world's facts (:data:`tests.stored_world.ENV`),
not from the SQL; Cohen's kappa against a value computed by hand.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from analyse.taxonomy import load_taxonomy
from store import make_engine
from store.models import CategoryCoding, DomainCategory, DomainCategoryHistory, Environment
from store.review import (
    SHEET_COLUMNS,
    agreement,
    cohen_kappa,
    queue_summary,
    review_queue,
    review_run,
)
from tests.pipeline_world import PipelineWorld
from tests.stored_world import DOMAINS, ENV, OVERRIDES, Facts
from webometrics.cli import main

# confidences the tests give the world's domains (the world stores 0.9 for each)
CONFIDENCE = {
    "arxiv.org": 0.2,
    "elibrary.ru": 0.6,
    "mit.edu": 0.95,
    "ox.ac.uk": 0.5,
    "msu.ru": 0.3,
    "cam.ac.uk": 0.8,
    "google.com": 0.9,
    "vk.com": 0.1,
    "bbc.co.uk": 0.4,
    "gazprom.ru": 0.7,
}  # lenta.ru: overridden; cnn.com: never categorised (confidence 0)


def expected_queue(run: int, confidence: dict[str, float] | None = None) -> list[tuple[str, float]]:
    """(domain, priority) in queue order for fixture run ``run``, from ENV: each
    university x direction's domains count 100 / n share points each; ``confidence`` by
    domain (:data:`CONFIDENCE` by default; 0 for a domain it lacks)."""
    confidence = CONFIDENCE if confidence is None else confidence
    points: dict[str, float] = defaultdict(float)
    links: dict[str, int] = defaultdict(int)
    unis: dict[str, set[str]] = defaultdict(set)
    for udom, directions in ENV[run].items():
        for domains in directions.values():
            for dom, n in domains.items():
                points[dom] += 100 / len(domains)
                links[dom] += n
                unis[dom].add(udom)
    rows = [
        ((1 - confidence.get(dom, 0.0)) * p, links[dom], len(unis[dom]), dom)
        for dom, p in points.items()
        if dom not in OVERRIDES
    ]
    rows.sort(key=lambda t: (-t[0], -t[1], -t[2], t[3]))
    return [(dom, prio) for prio, _l, _u, dom in rows]


def _confide(url: str) -> None:
    engine = make_engine(url)
    with engine.begin() as conn:
        for dom, conf in CONFIDENCE.items():
            conn.execute(
                update(DomainCategory).where(DomainCategory.domain == dom).values(score=conf)
            )
    engine.dispose()


def _sheet(tmp_path: Path, url: str, name: str, codes: dict[str, str], *extra: str) -> Path:
    """Export a sheet of every domain of the world, fill ``codes`` in its category column
    (the other rows left blank), add the ``extra`` raw lines; returns its path."""
    path = tmp_path / f"{name}.csv"
    args = ["category", "export", "--sheet", str(path), "--domains", *DOMAINS]
    assert main(["--db-url", url, *args]) == 0
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    out = io.StringIO()
    writer = csv.DictWriter(out, SHEET_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, "category": codes.get(row["domain"], "")})
    path.write_text(out.getvalue() + "".join(f"{line}\n" for line in extra), encoding="utf-8")
    return path


def test_queue_order_follows_the_share_points_and_confidence(filled_ro: Facts) -> None:
    engine = make_engine(filled_ro.url)
    try:
        run = review_run(engine)
        assert run == filled_ro.run_ids[2]  # the newest run with environment rows
        # the stored scores (0.9 each, cnn.com none: 0)
        stored = {d: 0.9 for d in DOMAINS if d != "cnn.com"}
        rows = review_queue(engine, limit=None)
        expected = expected_queue(2, stored)
        assert [r.domain for r in rows] == [d for d, _p in expected]
        assert [r.priority for r in rows] == pytest.approx([p for _d, p in expected], abs=1e-3)
        assert [r.confidence for r in rows] == [stored.get(r.domain, 0.0) for r in rows]
        # every university x direction's shares hold 100 points over its domains (run 2
        # has no overridden domain: lenta.ru is in run 1 only)
        scopes = sum(len(d) for d in ENV[2].values())
        assert sum(r.share_points for r in rows) == pytest.approx(100 * scopes)
    finally:
        engine.dispose()


def test_queue_order_on_given_confidences(filled: Facts) -> None:
    _confide(filled.url)
    engine = make_engine(filled.url)
    try:
        for run in (1, 2):
            rows = review_queue(engine, run_id=filled.run_ids[run], limit=None)
            expected = expected_queue(run)
            assert [r.domain for r in rows] == [d for d, _p in expected]
            assert [r.priority for r in rows] == pytest.approx([p for _d, p in expected], abs=1e-3)
            assert [r.position for r in rows] == list(range(1, len(rows) + 1))
        top = review_queue(engine, run_id=filled.run_ids[1], limit=3)
        assert [r.domain for r in top] == [d for d, _p in expected_queue(1)[:3]]
        # a domain with a page has its title, text and URL; cnn.com was never categorised
        first = top[0]
        assert first.url.startswith(("http://", "https://")) and first.domain in first.url
        assert first.title and first.sample
        summary = queue_summary(engine, run_id=filled.run_ids[1])
        assert summary.domains == len(expected_queue(1))
        assert summary.priority == pytest.approx(sum(p for _d, p in expected_queue(1)), abs=1e-2)
        # one direction: the citing shares only
        citing = review_queue(engine, run_id=filled.run_ids[1], direction="citing", limit=None)
        assert {r.domain for r in citing} == {
            d for v in ENV[1].values() for d in v.get("citing", {}) if d not in OVERRIDES
        }
        with pytest.raises(Exception, match="has no environment rows"):
            review_queue(engine, run_id=filled.failed_run_id)
    finally:
        engine.dispose()


def test_review_command_formats(filled_sqlite: Facts, capsys) -> None:
    url = filled_sqlite.url
    assert main(["--db-url", url, "category", "review", "--format", "csv", "--limit", "4"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 4 and list(rows[0])[:3] == ["position", "domain", "category"]
    assert main(["--db-url", url, "category", "review", "--format", "json"]) == 0
    assert '"share_points"' in capsys.readouterr().out
    assert main(["--db-url", url, "category", "review"]) == 0
    assert "expected share points to fix" in capsys.readouterr().out
    assert main(["--db-url", url, "category", "review", "--limit", "-1"]) == 2
    assert main(["--db-url", url, "category", "review", "--run", "999"]) == 2
    assert "crawl run 999 has no environment rows" in capsys.readouterr().err


def _codings(url: str) -> dict[tuple[str, str], str]:
    engine = make_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(
            select(CategoryCoding.coder, CategoryCoding.domain, CategoryCoding.category)
        ).all()
    engine.dispose()
    return {(c, d): k for c, d, k in rows}


def test_sheet_round_trip_and_replacement(filled: Facts, tmp_path: Path, capsys) -> None:
    url = filled.url
    # the export: every queue domain, suggested category and an empty coder's column
    path = tmp_path / "sheet.csv"
    assert main(["--db-url", url, "category", "export", "--sheet", str(path), "--limit", "3"]) == 0
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # spreadsheets read Cyrillic right
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert list(rows[0]) == list(SHEET_COLUMNS) and len(rows) == 3
    assert all(r["category"] == "" and r["note"] == "" for r in rows)
    chosen = tmp_path / "chosen.csv"
    args = ["category", "export", "--sheet", str(chosen), "--domains", "https://www.vk.com/x"]
    assert main(["--db-url", url, *args, "lenta.ru"]) == 0
    picked = list(csv.DictReader(io.StringIO(chosen.read_text(encoding="utf-8-sig"))))
    assert sorted(r["domain"] for r in picked) == ["lenta.ru", "vk.com"]
    assert main(["--db-url", url, *args, "nosuch-domain.org"]) == 2
    assert "in no environment: nosuch-domain.org" in capsys.readouterr().err

    # filled: keys, aliases, any case; blank rows skipped
    codes = {"vk.com": "Social", "arxiv.org": "science", "msu.ru": "universities"}
    sheet = _sheet(tmp_path, url, "ann", codes)
    assert main(["--db-url", url, "category", "import", str(sheet), "--coder", "Ann"]) == 0
    out = capsys.readouterr().out
    assert "stored 3 codings by Ann" in out
    assert _codings(url) == {
        ("Ann", "vk.com"): "social_networks",
        ("Ann", "arxiv.org"): "scientific_communities",
        ("Ann", "msu.ru"): "universities",
    }
    # again, with one domain changed and one more: that coder's codings of them replaced
    sheet = _sheet(tmp_path, url, "ann2", {"vk.com": "media", "google.com": "search"})
    assert main(["--db-url", url, "category", "import", str(sheet), "--coder", "Ann"]) == 0
    assert "replacing 1 earlier codings of Ann" in capsys.readouterr().out
    codings = _codings(url)
    assert codings[("Ann", "vk.com")] == "media"
    assert codings[("Ann", "google.com")] == "search_engines"
    assert codings[("Ann", "arxiv.org")] == "scientific_communities"  # kept
    # a ';'-separated sheet (a spreadsheet's) reads the same
    text = sheet.read_text(encoding="utf-8")
    semi = tmp_path / "semi.csv"
    rows = list(csv.reader(io.StringIO(text)))
    with semi.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f, delimiter=";").writerows(rows)
    assert main(["--db-url", url, "category", "import", str(semi), "--coder", "Bo"]) == 0
    assert _codings(url)[("Bo", "vk.com")] == "media"


def test_a_bad_sheet_is_refused_with_its_line_numbers(
    filled: Facts, tmp_path: Path, capsys
) -> None:
    url = filled.url
    good = _sheet(tmp_path, url, "good", {"vk.com": "media"})
    assert main(["--db-url", url, "category", "import", str(good), "--coder", "Ann"]) == 0
    before = _codings(url)
    capsys.readouterr()
    header = ",".join(SHEET_COLUMNS)
    blank = ",".join([""] * (len(SHEET_COLUMNS) - 3))  # between domain and category
    lines = [
        header,  # 1
        f"vk.com,{blank},news,",  # 2: fine (would replace Ann's media)
        f"google.com,{blank},sport,",  # 3: unknown category
        f'arxiv.org,{blank},science,"a note',  # 4-5: a quoted note over two lines
        'that goes on"',
        f"nosuch-domain.org,{blank},media,",  # 6: in no environment
        f"not a domain,{blank},media,",  # 7
        f"www.vk.com,{blank},media,",  # 8: vk.com again
        f",{blank},media,",  # 9: no domain
        f"msu.ru,{blank},,",  # 10: not coded: fine
    ]
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["--db-url", url, "category", "import", str(bad), "--coder", "Ann"]) == 2
    err = capsys.readouterr().err
    assert "nothing was stored" in err
    for line, what in [
        (3, "unknown category 'sport'"),
        (6, "unknown domain nosuch-domain.org: in no environment"),
        (7, "unknown domain: 'not a domain' is not a registered domain"),
        (8, "vk.com again (first on line 2)"),
        (9, "category 'media' but no domain"),
    ]:
        assert f"line {line}: {what}" in err, (line, err)
    assert "line 2:" not in err and "line 4:" not in err and "line 10:" not in err
    assert _codings(url) == before  # nothing stored, nothing replaced
    # a sheet without a category column, or not UTF-8
    nocat = tmp_path / "nocat.csv"
    nocat.write_text("domain,note\nvk.com,x\n", encoding="utf-8")
    assert main(["--db-url", url, "category", "import", str(nocat), "--coder", "Ann"]) == 2
    assert "line 1: no column 'category'" in capsys.readouterr().err
    latin = tmp_path / "latin.csv"
    latin.write_bytes("domain,category\nvk.com,m\xe9dia\n".encode("latin-1"))
    assert main(["--db-url", url, "category", "import", str(latin), "--coder", "Ann"]) == 2
    assert "line 2: not UTF-8 text" in capsys.readouterr().err
    assert main(["--db-url", url, "category", "import", str(good), "--coder", "  "]) == 2
    assert _codings(url) == before


def test_cohen_kappa_by_hand() -> None:
    a = ["sci", "sci", "uni", "uni", "search", "social"]
    b = ["sci", "uni", "uni", "uni", "search", "media"]
    po = Fraction(4, 6)  # four of six agree
    # chance: sum over categories of A's share x B's share (sci 2x1, uni 2x3, search 1x1)
    pe = Fraction(2 * 1 + 2 * 3 + 1 * 1, 6 * 6)
    assert cohen_kappa(a, b) == pytest.approx(float((po - pe) / (1 - pe)))  # 5/9
    assert cohen_kappa(["x"], ["y"]) is None
    assert cohen_kappa(["x", "x"], ["x", "x"]) is None  # chance agreement is 1


A_CODES = {
    "arxiv.org": "scientific_communities",
    "elibrary.ru": "scientific_communities",
    "mit.edu": "universities",
    "msu.ru": "universities",
    "google.com": "search_engines",
    "vk.com": "social_networks",
    "lenta.ru": "news_portals",  # both agree; its analyst's override (media) stays
}
B_CODES = {
    **A_CODES,
    "elibrary.ru": "universities",
    "vk.com": "media",
    "bbc.co.uk": "media",  # B only
}


def _history(url: str, domain: str) -> list[tuple[str, str | None, str | None, str | None]]:
    engine = make_engine(url)
    h = DomainCategoryHistory
    with engine.connect() as conn:
        rows = conn.execute(
            select(h.action, h.category, h.analyst, h.note)
            .where(h.domain == domain)
            .order_by(h.id.desc())
        ).all()
    engine.dispose()
    return [tuple(r) for r in rows]


def _override(url: str, domain: str) -> str | None:
    engine = make_engine(url)
    with engine.connect() as conn:
        got = conn.execute(
            select(DomainCategory.override_category).where(DomainCategory.domain == domain)
        ).scalar_one_or_none()
    engine.dispose()
    return got


@pytest.mark.slow
def test_agreement_acceptance_and_adjudication(filled: Facts, tmp_path: Path, capsys) -> None:
    url = filled.url
    for who, codes in (("Ann", A_CODES), ("Bo", B_CODES)):
        sheet = _sheet(tmp_path, url, who, codes)
        assert main(["--db-url", url, "category", "import", str(sheet), "--coder", who]) == 0
    capsys.readouterr()
    engine = make_engine(url)
    result = agreement(engine, "Ann", "Bo")
    engine.dispose()
    both = sorted(A_CODES)
    first, second = [A_CODES[d] for d in both], [B_CODES[d] for d in both]
    po = Fraction(sum(x == y for x, y in zip(first, second, strict=True)), len(both))
    share = defaultdict(lambda: [0, 0])
    for x, y in zip(first, second, strict=True):
        share[x][0] += 1
        share[y][1] += 1
    pe = Fraction(sum(m * n for m, n in share.values()), len(both) ** 2)
    assert (result.both, result.agreed) == (7, 5)
    assert result.kappa == pytest.approx(float((po - pe) / (1 - pe)))
    assert [d.domain for d in result.disagreements] == ["elibrary.ru", "vk.com"]

    assert main(["--db-url", url, "category", "agreement", "--format", "csv"]) == 0
    listed = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["domain"], r["category_a"], r["category_b"]) for r in listed] == [
        ("elibrary.ru", "scientific_communities", "universities"),
        ("vk.com", "social_networks", "media"),
    ]
    assert main(["--db-url", url, "category", "agreement"]) == 0
    assert f"Cohen's kappa {result.kappa:.3f}" in capsys.readouterr().out
    assert main(["--db-url", url, "category", "agreement", "--coders", "Ann", "Cy"]) == 2
    assert "no codings of Cy" in capsys.readouterr().err

    # the agreements become overrides, the analyst's override of lenta.ru is kept
    assert main(["--db-url", url, "category", "agreement", "--accept"]) == 2
    args = ["category", "agreement", "--accept", "--analyst", "Dee"]
    assert main(["--db-url", url, *args]) == 0
    assert "accepted 4 agreements" in capsys.readouterr().err
    assert _override(url, "mit.edu") == "universities"
    assert _override(url, "lenta.ru") == OVERRIDES["lenta.ru"]
    assert _history(url, "mit.edu") == [
        ("set", "universities", "Dee", "coding agreement: Ann and Bo both coded universities")
    ]

    # adjudication: the category chosen wins, and the history says whose codings it settled
    args = ["category", "adjudicate", "elibrary.ru", "universities", "--analyst", "Eve"]
    assert main(["--db-url", url, *args, "--note", "a library of a university"]) == 0
    assert "elibrary.ru: scientific_communities -> universities (adjudicated)" in (
        capsys.readouterr().out
    )
    assert _override(url, "elibrary.ru") == "universities"
    action, category, analyst, note = _history(url, "elibrary.ru")[0]
    assert (action, category, analyst) == ("set", "universities", "Eve")
    assert note == (
        "adjudication by Eve of coders' Ann: scientific_communities, Bo: universities; "
        "a library of a university"
    )
    engine = make_engine(url)
    try:
        after = agreement(engine, "Ann", "Bo")
        assert {d.domain: d.override for d in after.disagreements} == {
            "elibrary.ru": "universities",
            "vk.com": None,
        }
        queued = {r.domain for r in review_queue(engine, run_id=filled.run_ids[1], limit=None)}
        assert "elibrary.ru" not in queued and "vk.com" in queued  # reviewed: out of the queue
    finally:
        engine.dispose()
    # the views apply it
    assert main(["--db-url", url, "category", "list"]) == 0
    assert "elibrary.ru\tscientific_communities -> universities" in capsys.readouterr().out
    # refused: a domain no coder coded, an unknown category, no analyst
    assert (
        main(["--db-url", url, "category", "adjudicate", "cnn.com", "news", "--analyst", "E"]) == 2
    )
    assert "no coder coded cnn.com" in capsys.readouterr().err
    assert (
        main(["--db-url", url, "category", "adjudicate", "vk.com", "sport", "--analyst", "E"]) == 2
    )
    assert (
        main(["--db-url", url, "category", "adjudicate", "vk.com", "media", "--analyst", " "]) == 2
    )
    assert _override(url, "vk.com") is None


def test_set_on_a_domain_in_no_environment(filled: Facts, capsys) -> None:
    url = filled.url
    assert main(["--db-url", url, "category", "set", "nosuch-domain.org", "media"]) == 2
    err = capsys.readouterr().err
    assert "nosuch-domain.org is in no environment" in err and "--force" in err
    engine = make_engine(url)
    count = select(func.count()).select_from(DomainCategory)
    with engine.connect() as conn:
        before = conn.execute(count).scalar_one()
        assert _history(url, "nosuch-domain.org") == []
    args = ["category", "set", "nosuch-domain.org", "media", "--force"]
    assert main(["--db-url", url, *args]) == 0
    with engine.connect() as conn:
        assert conn.execute(count).scalar_one() == before + 1
    engine.dispose()
    assert _override(url, "nosuch-domain.org") == "media"
    # a domain of the environment needs no --force
    assert main(["--db-url", url, "category", "set", "www.cnn.com", "news"]) == 0
    assert _override(url, "cnn.com") == "news_portals"


# --- on what the pipeline stores ---------------------------------------------------------


def test_queue_on_the_pipeline_database(pipeline_db_copy: PipelineWorld, tmp_path, capsys) -> None:
    world = pipeline_db_copy
    engine = world.engine
    try:
        run = review_run(engine)
        rows = review_queue(engine, limit=None)
        with engine.connect() as conn:
            env = conn.execute(
                select(Environment.university_id, Environment.direction, Environment.domain).where(
                    Environment.run_id == run
                )
            ).all()
            overridden = set(
                conn.scalars(
                    select(DomainCategory.domain).where(
                        DomainCategory.override_category.is_not(None)
                    )
                )
            )
        scopes = defaultdict(set)
        for uid, direction, dom in env:
            scopes[(uid, direction)].add(dom)
        # every domain without an override once; the shares' points all there
        assert sorted(r.domain for r in rows) == sorted({d for *_s, d in env} - overridden)
        assert sum(r.share_points for r in rows) == pytest.approx(100 * len(scopes), rel=1e-3)
        assert [r.priority for r in rows] == sorted((r.priority for r in rows), reverse=True)
        assert all(0.0 <= r.confidence <= 1.0 for r in rows)
        # the first one's points from the environment rows
        top = rows[0]
        points = sum(100 / len(doms) for doms in scopes.values() if top.domain in doms)
        assert top.share_points == pytest.approx(points, abs=1e-3)
        assert top.priority == pytest.approx((1 - top.confidence) * points, abs=1e-3)
        fetched = [r for r in rows if r.title]
        assert fetched, "the test web's domains have pages with titles"
    finally:
        engine.dispose()

    # export -> fill with the suggestion -> import: the codings are the suggestions
    url = world.url
    sheet = tmp_path / "pipeline.csv"
    assert (
        main(["--db-url", url, "category", "export", "--sheet", str(sheet), "--limit", "20"]) == 0
    )
    rows_out = list(csv.DictReader(io.StringIO(sheet.read_text(encoding="utf-8-sig"))))
    keys = set(load_taxonomy().keys())  # "unknown" is no category a coder gives
    filled_rows = [
        {**r, "category": r["suggested_category"] if r["suggested_category"] in keys else "other"}
        for r in rows_out
    ]
    out = io.StringIO()
    writer = csv.DictWriter(out, SHEET_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(filled_rows)
    sheet.write_text(out.getvalue(), encoding="utf-8-sig")
    capsys.readouterr()
    assert main(["--db-url", url, "category", "import", str(sheet), "--coder", "Ann"]) == 0
    stored = {d: k for (c, d), k in _codings(url).items() if c == "Ann"}
    assert stored == {
        r["domain"]: "other_organisations" if r["category"] == "other" else r["category"]
        for r in filled_rows
    }
    assert len(stored) == 20


def test_imports_of_one_coder_at_once_leave_one_coding_per_domain(filled: Facts) -> None:
    import threading

    from store.review import import_sheet

    engine = make_engine(filled.url)
    categories = ["media", "news", "social", "other"]
    barrier = threading.Barrier(len(categories))
    errors: list[BaseException] = []

    def go(category: str) -> None:
        barrier.wait()
        try:
            import_sheet(
                engine, f"domain,category\nvk.com,{category}\n", coder="Ann", sheet=category
            )
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(c,)) for c in categories]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        with engine.connect() as conn:
            rows = conn.execute(
                select(CategoryCoding.category, CategoryCoding.sheet).where(
                    CategoryCoding.coder == "Ann"
                )
            ).all()
        assert len(rows) == 1  # the last import's, whichever it was
        assert rows[0].sheet in categories
    finally:
        engine.dispose()


def test_uncertain_shares_per_university_and_direction(filled: Facts) -> None:
    from store.review import uncertain_shares

    _confide(filled.url)
    engine = make_engine(filled.url)
    try:
        got = {
            (r.university_id, r.direction): (r.domains, r.uncertain, r.share)
            for r in uncertain_shares(engine, run_id=filled.run_ids[1], below=0.5)
        }
    finally:
        engine.dispose()
    expected = {}
    for udom, directions in ENV[1].items():
        for direction, domains in directions.items():
            unsure = [d for d in domains if d not in OVERRIDES and CONFIDENCE.get(d, 0.0) < 0.5]
            expected[(filled.university_ids[udom], direction)] = (
                len(domains),
                len(unsure),
                pytest.approx(len(unsure) / len(domains)),
            )
    assert got == expected
