"""The external sites' texts are of their kind, and the manifest says where each came from.

Checked against the real corpora in the shared data (never against the test web's own
tables alone): a website-classification page's row has a label of the site's kind and its
words are served, a news portal's BBC article is not a tech one, a university's WebKB page
is not a research project, and a kind without a corpus says ``stand-in`` or ``generated``.
"""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from corpora.websites import load_websites
from testbed import CATEGORIES
from testbed.manifest import Manifest
from testbed.texts import (
    CORPORA,
    GENERATED,
    ORIGINS,
    REAL,
    STAND_IN,
    TGCONTEST,
    WEBSITES,
    WORDS_PER_PAGE,
    load_pools,
)
from testbed.webkb import read_webkb

#: The corpora a site of each (category, origin) may draw on.
_ALLOWED = {
    ("universities", REAL): {"webkb-4universities"},
    ("news", REAL): {"bbc-fulltext", "lenta-rubrics-asryan", "tgcontest-toloka-ru-en",
                     "scrapinghub-aeb", "website-classification"},
    ("social", REAL): {"website-classification", "trafilatura-eval"},
    ("media", REAL): {"website-classification"},
    ("other", REAL): {"website-classification"},
}  # fmt: skip


def _generated(manifest: Manifest) -> dict[str, dict]:
    return {d: s for d, s in manifest.data["sites"].items() if s["kind"] in ("generated", "citing")}


def test_every_site_says_where_its_texts_came_from(manifest: Manifest):
    sites = _generated(manifest)
    origins = Counter()
    for dom, site in sites.items():
        origin = site["text_origin"]
        assert origin == ORIGINS[(site["category"], site["language"])], dom
        origins[origin] += 1
        for page in site["pages"]:
            if origin == GENERATED:
                assert page["corpus"] is None and page["document"] is None, page
                assert page["source"].startswith("headlines/"), page
                continue
            assert page["corpus"] in CORPORA.values(), page
            prefix = {folder: name for name, folder in CORPORA.items()}[page["corpus"]]
            part = f"/{page['part']}" if "part" in page else ""
            assert page["source"] == f"{prefix}/{page['document']}{part}", page
            allowed = _ALLOWED.get((site["category"], origin))
            if allowed is not None:
                assert page["corpus"] in allowed, (dom, page)
    # every kind of origin occurs; only the kinds without a corpus here are not real
    assert set(origins) == {REAL, STAND_IN, GENERATED}
    not_real = {(s["category"], s["language"]) for s in sites.values()} - {
        key for key, origin in ORIGINS.items() if origin == REAL
    }
    assert {cat for cat, _ in not_real} == {"scientific", "search", "social", "media", "other"}
    assert all(lang == "ru" for cat, lang in not_real if cat in ("social", "media", "other"))
    assert all(s["text_origin"] is None for s in manifest.data["sites"].values()
               if s["kind"] in ("dead", "trouble"))  # fmt: skip
    assert all(s["text_origin"] == REAL for s in manifest.data["sites"].values()
               if s["kind"] in ("corpus", "university"))  # fmt: skip


def test_website_pages_are_the_real_home_pages_of_the_kind(manifest: Manifest, fetch):
    """Each website-classification page is part of a row whose label is of the site's
    kind, and the served page holds that part's words, in order."""
    rows = {str(d.doc_id): d for d in load_websites()}
    kind_of = {label: cat for cat, labels in WEBSITES.items() for label in labels}
    by_category: Counter[str] = Counter()
    checked = 0
    parts: dict[str, set[int]] = defaultdict(set)
    for site in _generated(manifest).values():
        for page in site["pages"]:
            if page["corpus"] != "website-classification":
                continue
            row = rows[page["document"]]
            assert kind_of[row.label] == site["category"], (page, row.label)
            by_category[site["category"]] += 1
            parts[page["document"]].add(page["part"])
            if checked < 40:
                words = row.text.split()
                body = fetch(page["url"], redirects=True).body.decode("utf-8")
                # the part's first words (a part is about WORDS_PER_PAGE words)
                n = len(words)
                k = max(1, round(n / WORDS_PER_PAGE))
                size = -(-n // k)
                first = " ".join(words[page["part"] * size : page["part"] * size + 20])
                assert html.escape(first) in body, page
                checked += 1
    assert checked == 40
    assert {"social", "media", "news", "other"} <= set(by_category)
    # a site's pages follow a home page's parts from its start: part 0 is served
    assert all(0 in p for p in parts.values())


def test_news_and_universities_hold_texts_of_their_kind(manifest: Manifest):
    """News portals' BBC articles are news (not the tech stand-ins of scientific sites),
    their tgcontest texts are labelled news; universities' WebKB pages are not research
    projects; Russian news portals have Russian news."""
    sites = _generated(manifest)
    tg_news = {label for (cat, _), labels in TGCONTEST.items() if cat == "news" for label in labels}
    seen: Counter[str] = Counter()
    for site in sites.values():
        for page in site["pages"]:
            src = page["source"]
            if site["category"] == "news":
                assert not src.startswith("bbc/tech/"), src
                assert site["language"] == page["language"]
                if src.startswith("lenta/"):
                    assert site["language"] == "ru" and src.split("/")[1] in "01234", src
                seen[f"news:{page['corpus']}"] += 1
            if site["category"] == "universities":
                assert src.startswith("webkb/") and not src.startswith("webkb/project/"), src
                seen["universities"] += 1
            if site["category"] == "scientific" and src.startswith("bbc/"):
                assert src.startswith("bbc/tech/"), src
    assert seen["universities"] > 100 and seen["news:bbc-fulltext"] > 20
    assert seen["news:lenta-rubrics-asryan"] > 0
    assert tg_news and "not_news" not in tg_news
    assert set(CATEGORIES) == {c for c, _ in ORIGINS}


@pytest.mark.slow
def test_texts_repeat_only_when_their_pool_is_used_up(manifest: Manifest, shared_data: Path):
    """A text is used again only when its pool (category, language) has given every
    document (a site starts at a home page's first part, so later parts may be skipped)."""
    misc = [
        p
        for p in read_webkb(shared_data / "webkb-4universities" / "webkb.tar.gz")
        if p.folder == "misc"
    ]
    pools = load_pools(shared_data, misc, manifest.data["seed"])
    uses: Counter[str] = Counter()
    kind: dict[str, tuple[str, str]] = {}
    for site in _generated(manifest).values():
        if site["text_origin"] == GENERATED:
            continue
        for page in site["pages"]:
            uses[page["source"]] += 1
            kind[page["source"]] = (site["category"], site["language"])
    repeated = {kind[s] for s, n in uses.items() if n > 1}
    for key in repeated:
        firsts = {t.source for t in pools.pools[key] if t.part == 0}
        assert firsts <= set(uses), (key, len(firsts - set(uses)))
    assert sum(1 for n in uses.values() if n > 1) < 0.05 * len(uses)
