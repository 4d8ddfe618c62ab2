"""The registry of activity-clustering corpora and its two new loaders, on the shared data.

The test web is built once per machine (:func:`testbed.build.shared_build`, the cache the
crawler and testbed suites use) and its documents cached in ``~/.cache/webometrics``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from corpora.activity import (
    POOLED,
    ActivityCorpus,
    corpus_names,
    load_activity_corpus,
    stratified_subset,
)
from corpora.testweb import KINDS, join_domain_pages
from corpora.websites import CATEGORIES, load_websites
from extract.documents import PageText
from testbed import CATEGORIES as TESTBED_CATEGORIES

# name -> (documents, classes, Counter of languages)
EXPECTED = {
    "reuters": (11367, 82, {"en": 11367}),
    "bbc": (2225, 5, {"en": 2225}),
    "webkb": (4518, 6, {"en": 4518}),
    "lenta": (773, 9, {"ru": 773}),
    "tgcontest-ru": (291, 8, {"ru": 291}),
    "tgcontest-en": (151, 8, {"en": 151}),
    "tgcontest-mixed": (442, 8, {"ru": 291, "en": 151}),
    "websites": (556, 7, {"en": 556}),
    "testweb": (500, 7, {"en": 459, "ru": 41}),
    "pooled-en": (7450, 26, {"en": 7450}),
}


def test_the_registry_names_every_corpus() -> None:
    assert corpus_names() == list(EXPECTED)
    assert corpus_names(pooled=False) == [n for n in EXPECTED if n not in POOLED]


def test_a_pooled_corpus_keeps_each_part_and_its_classes_apart(shared_data: Path) -> None:
    pooled = load_activity_corpus("pooled-en")
    parts = [load_activity_corpus(name) for name in POOLED["pooled-en"]]
    assert pooled.texts == [t for c in parts for t in c.texts]
    assert pooled.labels == [f"{c.name}/{label}" for c in parts for label in c.labels]
    # two corpora's look-alike classes stay two classes
    assert {"bbc/sport", "websites/Sports"} <= set(pooled.labels)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_corpus_loads_with_its_documented_counts(name: str, shared_data: Path) -> None:
    corpus = load_activity_corpus(name)
    n_docs, n_classes, languages = EXPECTED[name]
    assert corpus.name == name
    assert len(corpus.texts) == len(corpus.labels) == len(corpus.languages) == n_docs
    assert len(set(corpus.labels)) == n_classes
    assert Counter(corpus.languages) == languages
    assert all(isinstance(t, str) for t in corpus.texts)
    # three WebKB pages hold no text (no text in their HTML); every other document some
    assert sum(not t.strip() for t in corpus.texts) == (
        3 if "webkb" in POOLED.get(name, [name]) else 0
    )
    assert corpus.note and "\n" not in corpus.note


def test_labels_stay_with_their_texts(shared_data: Path) -> None:
    sites = load_websites()
    corpus = load_activity_corpus("websites", limit=100, seed=5)
    label_of = {s.text: s.label for s in sites}
    assert all(label_of[t] == lab for t, lab in zip(corpus.texts, corpus.labels, strict=True))
    mixed = load_activity_corpus("tgcontest-mixed")
    assert mixed.languages[:291] == ["ru"] * 291 and mixed.languages[291:] == ["en"] * 151
    assert Counter(mixed.labels) == Counter(
        load_activity_corpus("tgcontest-ru").labels + load_activity_corpus("tgcontest-en").labels
    )


def test_websites_has_556_sites_in_seven_activities(shared_data: Path) -> None:
    sites = load_websites()
    assert Counter(s.label for s in sites) == {
        "Travel": 101,
        "Sports": 100,
        "Streaming Services": 95,
        "Photography": 90,
        "Social Networking and Messaging": 82,
        "News": 73,
        "Law and Government": 15,
    }
    assert set(CATEGORIES) == {s.label for s in sites}
    assert len({s.url for s in sites}) == 547  # nine URLs occur twice, as in the source
    assert [s.doc_id for s in sites] == list(range(556))


def test_subset_is_deterministic_stratified_and_in_corpus_order(shared_data: Path) -> None:
    a = load_activity_corpus("bbc", limit=200, seed=7)
    b = load_activity_corpus("bbc", limit=200, seed=7)
    c = load_activity_corpus("bbc", limit=200, seed=8)
    assert a == b
    assert a.texts != c.texts
    assert len(a.texts) == 200
    # each topic keeps its share of the 2,225 articles, within one document
    full = Counter(load_activity_corpus("bbc").labels)
    for label, n in Counter(a.labels).items():
        assert abs(n - 200 * full[label] / 2225) <= 1
    whole = load_activity_corpus("bbc")
    positions = [whole.texts.index(t) for t in a.texts[:20]]
    assert positions == sorted(positions)


def test_stratified_subset_edges() -> None:
    labels = ["a"] * 5 + ["b"] * 3
    assert stratified_subset(labels, 100) == list(range(8))
    assert len(stratified_subset(labels, 4, seed=2)) == 4
    with pytest.raises(ValueError, match="limit=0"):
        stratified_subset(labels, 0)
    with pytest.raises(ValueError, match="unknown corpus"):
        load_activity_corpus("nope")
    with pytest.raises(ValueError, match="3 texts, 2 labels"):
        ActivityCorpus("x", ["a", "b", "c"], ["p", "q"], [None, None], "")


def test_testweb_documents_carry_the_manifest_categories(shared_data: Path) -> None:
    from corpora.testweb import build_testweb, load_testweb
    from testbed.manifest import load_manifest

    sites = load_testweb()
    manifest = load_manifest(build_testweb()).data["sites"]
    assert Counter(s.kind for s in sites) == {"generated": 300, "corpus": 160, "citing": 40}
    assert Counter(s.label for s in sites) == {
        "universities": 185,
        "other": 115,
        "scientific": 59,
        "social": 43,
        "news": 37,
        "media": 36,
        "search": 25,
    }
    for s in sites:
        entry = manifest[s.domain]
        assert (s.label, s.kind) == (entry["category"], entry["kind"])
        assert s.kind in KINDS and s.label in TESTBED_CATEGORIES
        assert 1 <= len(s.urls) <= 20 and set(s.urls) <= {p["url"] for p in entry["pages"]}
    # every external site with a category and pages is there but one (no ok page)
    wanted = [d for d, e in manifest.items() if e["kind"] in KINDS and e["pages"]]
    assert len(wanted) == 501


def test_domain_document_drops_the_template_and_keeps_the_majority_language() -> None:
    menu = "Home | About | Contact us here"
    stories = ("Rivers run to the sea.", "Lakes are calm today.", "Glaciers melt slowly.")
    pages = [
        PageText(f"http://a.org/{i}", f"{story}\n{menu}", "en") for i, story in enumerate(stories)
    ] + [PageText("http://a.org/ru", f"Короткий текст.\n{menu}", "ru")]
    text, language, urls = join_domain_pages(pages)
    assert menu not in text
    assert all(story in text for story in stories) and "Короткий" in text
    assert language == "en"
    assert sorted(urls) == sorted(p.url for p in pages)
    text2, _, urls2 = join_domain_pages(pages, max_pages=2)
    assert len(urls2) == 2 and text2.count("\n\n") == 1
