"""Activity categories: real domains of the paper's kind, real page texts (WebKB course
pages, BBC and Lenta.ru articles) on neutral domain names, the taxonomy file's
validation with file and line, aliases and cluster votes."""

from __future__ import annotations

import tarfile
from pathlib import Path

import lxml.html
import pytest

from analyse.categories import categorize_cluster, categorize_domain
from analyse.taxonomy import default_taxonomy_path, load_taxonomy
from core.exceptions import ConfigError, ParameterError

# real domains of a university's environment and the group a webometrician puts them in
REAL_DOMAINS = {
    "harvard.edu": "universities",
    "cam.ac.uk": "universities",
    "u-tokyo.ac.jp": "universities",
    "anu.edu.au": "universities",
    "msu.ru": "universities",
    "hse.ru": "universities",
    "arxiv.org": "scientific_communities",
    "elibrary.ru": "scientific_communities",
    "ras.ru": "scientific_communities",
    "inr.ac.ru": "scientific_communities",
    "ieee.org": "scientific_communities",
    "springer.com": "scientific_communities",
    "researchgate.net": "scientific_communities",
    "scholar.google.com": "scientific_communities",
    "google.com": "search_engines",
    "google.co.uk": "search_engines",
    "yandex.ru": "search_engines",
    "bing.com": "search_engines",
    "vk.com": "social_networks",
    "facebook.com": "social_networks",
    "livejournal.com": "social_networks",
    "youtube.com": "social_networks",
    "forum.example.org": "social_networks",
    "bbc.co.uk": "media",
    "1tv.ru": "media",
    "imdb.com": "media",
    "lenta.ru": "news_portals",
    "ria.ru": "news_portals",
    "theguardian.com": "news_portals",
    "news.google.com": "news_portals",
    "gazprom.ru": "other_organisations",
    "nasa.gov": "scientific_communities",
    "whitehouse.gov": "other_organisations",
    "gov.uk": "other_organisations",
}


def test_real_domains_get_their_group() -> None:
    tax = load_taxonomy()
    wrong = {}
    for domain, want in REAL_DOMAINS.items():
        a = categorize_domain(domain, taxonomy=tax, hosts=[f"www.{domain}"])
        if a.category != want:
            wrong[domain] = (a.category, a.scores)
        assert 0 < a.score <= 1
        assert a.evidence["known"] or a.evidence["patterns"] or a.evidence["name_parts"]
    assert not wrong


def _webkb_course_pages(root: Path, n: int = 20) -> list[tuple[str, str]]:
    out = []
    with tarfile.open(root / "webkb-4universities" / "webkb.tar.gz") as tf:
        for m in tf:
            parts = m.name.split("/")
            if not m.isfile() or len(parts) < 4 or parts[1:3] != ["course", "misc"]:
                continue
            fh = tf.extractfile(m)
            assert fh is not None
            raw = fh.read().decode("latin-1")
            html = raw.split("\n\n", 1)[-1]
            try:
                doc = lxml.html.fromstring(html)
            except Exception:
                continue
            out.append((doc.findtext(".//title") or "", doc.text_content()))
            if len(out) >= n:
                break
    return out


def test_texts_decide_on_a_neutral_domain(shared_data: Path, corpora) -> None:
    tax = load_taxonomy()
    courses = _webkb_course_pages(shared_data)
    assert len(courses) == 20
    per_page = [
        categorize_domain("example.net", titles=[t], texts=[x], taxonomy=tax).category
        for t, x in courses
    ]
    assert per_page.count("universities") >= 16, per_page
    whole = categorize_domain(
        "example.net",
        titles=[t for t, _ in courses],
        texts=[x for _, x in courses],
        taxonomy=tax,
    )
    assert whole.category == "universities"
    assert whole.evidence["text_keywords"] and whole.evidence["pages"] == 20
    films = corpora["bbc"]["entertainment"][:20]
    a = categorize_domain(
        "example.net", titles=[t for t, _ in films], texts=[b for _, b in films], taxonomy=tax
    )
    assert a.category == "media", a.scores
    news = corpora["lenta"]["0"][:20]  # Россия / Общество
    a = categorize_domain("example.net", texts=[b for _, b in news], taxonomy=tax)
    assert a.category == "news_portals", a.scores
    # nothing fetched and nothing in the name: unknown (not the default), score 0, reason
    a = categorize_domain("example.net", taxonomy=tax)
    assert (a.category, a.score) == ("unknown", 0.0) and "no fetched page" in a.evidence["reason"]
    # fetched text without any keyword: the default category (a finding, not unknown)
    a = categorize_domain("example.net", texts=["Blue green purple orange."], taxonomy=tax)
    assert (a.category, a.score) == (tax.default, 0.0) and "no evidence" in a.evidence["reason"]


def test_cluster_votes_only_with_evidence_and_stores_its_support() -> None:
    tax = load_taxonomy()
    never_fetched = [categorize_domain(f"dead{i}.example", taxonomy=tax) for i in range(5)]
    assert {m.category for m in never_fetched} == {"unknown"}
    voters = [categorize_domain(d, taxonomy=tax) for d in ("arxiv.org", "ieee.org", "mit.edu")]
    a = categorize_cluster([*never_fetched, *voters], taxonomy=tax)
    # five unknown members neither vote nor outvote the three with evidence
    assert a.category == "scientific_communities"
    assert (a.evidence["voters"], a.evidence["unknown"]) == (3, 5)
    assert a.evidence["support"] == round(2 / 3, 4)
    only_unknown = categorize_cluster(never_fetched, taxonomy=tax)
    assert (only_unknown.category, only_unknown.evidence["support"]) == ("unknown", None)
    # no voter, but the theme names a kind of site: the theme decides, support unknown
    themed = categorize_cluster(never_fetched, taxonomy=tax, theme_terms=["journal", "conference"])
    assert themed.category == "scientific_communities" and themed.evidence["support"] is None


def test_cluster_vote_and_overrides() -> None:
    tax = load_taxonomy()
    members = [categorize_domain(d, taxonomy=tax) for d in ("arxiv.org", "ieee.org", "mit.edu")]
    a = categorize_cluster(members, taxonomy=tax, theme_terms=["journal", "conference"])
    assert a.category == "scientific_communities"
    assert a.evidence["members"] == {"scientific_communities": 2, "universities": 1}
    assert a.evidence["theme_keywords"] == {"conference": 1, "journal": 1}
    # two analyst overrides outvote one assignment
    b = categorize_cluster([members[0], "universities", "university"], taxonomy=tax)
    assert b.category == "universities" and b.score == pytest.approx(2 / 3, abs=1e-3)
    assert categorize_cluster([], taxonomy=tax).category == "unknown"  # no member, no theme
    with pytest.raises(ParameterError, match="unknown category 'sports'"):
        categorize_cluster(["sports"], taxonomy=tax)


def test_shipped_taxonomy_has_the_papers_groups() -> None:
    tax = load_taxonomy(default_taxonomy_path())
    assert tax.keys() == (
        "universities",
        "scientific_communities",
        "search_engines",
        "social_networks",
        "media",
        "news_portals",
        "other_organisations",
    )
    for c in tax.categories:
        assert c.keywords_en and c.keywords_ru and c.domains, c.key
        assert c.label_ru and c.label_en
    # the test web's short names are aliases
    for short in ("universities", "scientific", "search", "social", "media", "news", "other"):
        assert tax.resolve(short) in tax


BAD = [
    (
        'default = "x"\n[[category]]\nkey = "a"\nkeywords_en = [1]\n',
        r":4: \[\[category\]\] #1: keywords_en must be a list of strings",
    ),
    (
        '[[category]]\nkey = "a"\n\n[[category]]\nkey = "a"\n',
        r":5: \[\[category\]\] #2: name 'a' is already used",
    ),
    (
        '[[category]]\nkey = "a"\ndomains = ["*bad*"]\n',
        r":3: .*domain pattern '\*bad\*' is invalid",
    ),
    (
        '[[category]]\nkey = "a"\nkeywords_ru = ["ст*ранный"]\n',
        r":3: .*keyword 'ст\*ранный' is invalid",
    ),
    ('[[category]]\nkey = "a"\ncolour = "red"\n', r":3: .*unknown key 'colour'"),
    (
        'default = "b"\n[[category]]\nkey = "a"\n',
        r":1: taxonomy: default 'b' is not a category key",
    ),
    (
        '[scoring]\nknown_domain = -1\n[[category]]\nkey = "a"\n',
        r"known_domain must be a number >= 0",
    ),
    ("version = 1\n", r"no \[\[category\]\] tables"),
    ('[[category]\nkey = "a"\n', r"invalid TOML: .*line 1"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_invalid_taxonomy_files_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "taxonomy.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_taxonomy(path)


def test_missing_taxonomy_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="taxonomy file not found"):
        load_taxonomy(tmp_path / "nope.toml")


def test_edited_taxonomy_changes_the_result(tmp_path: Path) -> None:
    text = default_taxonomy_path().read_text(encoding="utf-8")
    edited = text.replace('"vk.com", ', "").replace(
        'name_parts = ["radio"', 'name_parts = ["vk", "radio"'
    )
    path = tmp_path / "taxonomy.toml"
    path.write_text(edited, encoding="utf-8")
    tax = load_taxonomy(path)
    assert categorize_domain("vk.com", taxonomy=tax).category == "media"
