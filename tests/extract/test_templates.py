"""Site-template removal on real sites: a Japanese shop crawl (ClueWeb WARC) and a
1996 university server (WebKB), and no false templates across different blogs."""

from __future__ import annotations

import pytest
from warcio.archiveiterator import ArchiveIterator

from core.domains import host_of
from core.shared_data import data_dir
from extract import ExtractOptions, extract_page
from extract.templates import TemplateRemover, block_key, remove_templates
from testbed.webkb import read_webkb

ANY_LANGUAGE = ExtractOptions(languages=())


@pytest.fixture(scope="module")
def shop_texts() -> list[str]:
    """Main texts of the 29 pages of one shop site (EUC-JP), as extracted."""
    path = data_dir("warc-samples") / "resiliparse" / "clueweb-quirk.warc.gz"
    texts = []
    with path.open("rb") as fh:
        for rec in ArchiveIterator(fh):
            if rec.rec_type == "response":
                url = rec.rec_headers.get_header("WARC-Target-URI")
                r = extract_page(rec.content_stream().read(), url, ANY_LANGUAGE)
                assert r.status == "ok" and r.charset == "euc-jp", r.reason
                texts.append(r.text)
    assert len(texts) == 29
    return texts


@pytest.fixture(scope="module")
def utexas_texts() -> list[str]:
    """Main texts of the pages of wwwhost.cc.utexas.edu in WebKB (January 1997)."""
    archive = data_dir("webkb-4universities") / "webkb.tar.gz"
    pages = [p for p in read_webkb(archive) if host_of(p.url) == "wwwhost.cc.utexas.edu"]
    results = [extract_page(p.body, p.url, ANY_LANGUAGE) for p in pages]
    texts = [r.text for r in results if r.ok]
    assert len(texts) >= 15
    return texts


def test_shop_whose_pages_all_extract_to_the_sidebar_is_kept_whole(shop_texts):
    """trafilatura takes the same ranking sidebar as the main text of all 29 shop pages:
    every block is template, and the pages are kept whole rather than emptied."""
    assert len(set(shop_texts)) == 1
    tr = TemplateRemover(min_pages=3, min_share=0.5).fit(shop_texts)
    assert tr.n_template_blocks_ >= 10 and tr.n_pages_ == 29 and tr.all_template_
    assert "| 12月度 |" in tr.examples_
    assert tr.transform(shop_texts) == shop_texts and tr.removed_share_ == 0


def test_thresholds_on_a_university_server(utexas_texts):
    nav = "| New & Good | Search |"
    having = sum(any(nav in line for line in t.splitlines()) for t in utexas_texts)
    share = having / len(utexas_texts)
    assert 0.2 < share < 0.5  # on a third of the pages: below the default share
    default = TemplateRemover().fit(utexas_texts)
    assert not any(nav in ex for ex in default.examples_)
    loose = TemplateRemover(min_pages=3, min_share=0.2).fit(utexas_texts)
    assert any(nav in ex for ex in loose.examples_)
    out = loose.transform(utexas_texts)
    assert not any(nav in line for t in out for line in t.splitlines())
    assert loose.removed_share_ > default.removed_share_
    # a page keeps exactly its own lines (or becomes empty when it has none)
    for before, after in zip(utexas_texts, out, strict=True):
        own = [
            line
            for line in before.splitlines()
            if line.strip() and block_key(line) not in loose.template_keys_
        ]
        if any(block_key(line) is not None for line in own):
            assert after.splitlines() == own
        else:
            assert after == ""


def test_no_templates_across_different_sites(shop_texts, utexas_texts):
    """The shop's sidebar on 4 of 16 pages is below the share: nothing is removed."""
    mixed = shop_texts[:4] + utexas_texts[:13]
    tr = TemplateRemover(min_pages=3, min_share=0.5).fit(mixed)
    assert tr.n_template_blocks_ == 0 and tr.removed_share_ == 0
    assert tr.transform(mixed) == mixed


def test_a_site_of_identical_pages_is_not_emptied(utexas_texts):
    same = [utexas_texts[0]] * 5
    assert remove_templates(same) == same


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="min_pages"):
        TemplateRemover(min_pages=1).fit(["a", "b"])
    with pytest.raises(ValueError, match="min_share"):
        TemplateRemover(min_share=0).fit(["a", "b"])
    with pytest.raises(RuntimeError, match="not fitted"):
        TemplateRemover().transform(["a"])
