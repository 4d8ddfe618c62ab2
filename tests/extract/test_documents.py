"""Domain documents: page sampling, shingle caps (bottom-k), union, language, templates,
term counts (summed over the template-free pages, capped)."""

from __future__ import annotations

import numpy as np
import pytest

from core.domains import registered_domain
from core.settings import Settings
from core.shared_data import data_dir
from corpora.reuters import load_reuters
from extract.documents import (
    DomainDocumentBuilder,
    PageText,
    cap_shingles,
    select_pages,
    union_shingles,
)
from extract.page import ExtractOptions, extract_page
from extract.shingles import shingle_hashes
from extract.templates import TemplateRemover
from extract.terms import TermCounter, merge_counts, top_terms
from testbed.webkb import read_webkb


@pytest.fixture(scope="module")
def wisc_pages() -> list[PageText]:
    """60 pages of cs.wisc.edu from WebKB, extracted."""
    archive = data_dir("webkb-4universities") / "webkb.tar.gz"
    out = []
    for p in read_webkb(archive):
        if registered_domain(p.url) == "wisc.edu" and p.location is None:
            r = extract_page(p.body, p.url, ExtractOptions(languages=()))
            if r.ok:
                out.append(PageText(p.url, r.text, r.language))
            if len(out) == 60:
                break
    return out


def test_page_selection_is_deterministic_and_stable(wisc_pages):
    urls = [p.url for p in wisc_pages]
    chosen = select_pages(urls, 20)
    assert len(chosen) == 20 and chosen == select_pages(urls, 20)
    assert [urls[i] for i in chosen] == [urls[i] for i in select_pages(urls[::-1], 20)][:0] or {
        urls[i] for i in chosen
    } == {urls[::-1][i] for i in select_pages(urls[::-1], 20)}
    # one more page displaces at most one of the chosen
    more = [*urls, "http://www.cs.wisc.edu/new-page.html"]
    again = {more[i] for i in select_pages(more, 20)}
    assert len(again & {urls[i] for i in chosen}) >= 19
    with pytest.raises(ValueError, match="max_pages"):
        select_pages(urls, 0)


def test_bottom_k_cap_estimates_jaccard_on_real_text():
    docs = [d.text for d in load_reuters(limit=400) if len(d.text) > 1500][:40]
    sets = [shingle_hashes(t, k=1, language="en") for t in docs]
    errors = []
    for a, b in zip(sets[::2], sets[1::2], strict=False):
        exact = len(np.intersect1d(a, b)) / len(union_shingles([a, b]))
        k = 60
        sketch_union = cap_shingles(union_shingles([cap_shingles(a, k), cap_shingles(b, k)]), k)
        both = np.intersect1d(np.intersect1d(cap_shingles(a, k), cap_shingles(b, k)), sketch_union)
        errors.append(abs(len(both) / len(sketch_union) - exact))
    assert np.mean(errors) < 0.05


def test_domain_document_from_real_pages(wisc_pages):
    builder = DomainDocumentBuilder(
        k=2, max_pages=20, max_shingles=1_000_000, template_removal=False
    )
    doc = builder.build(wisc_pages)
    assert doc.n_pages == 20 and len(doc.urls) == 20 and doc.language == "en"
    by_url = {p.url: p for p in wisc_pages}
    expected = union_shingles([builder.page_shingles(by_url[u].text, "en") for u in doc.urls])
    assert np.array_equal(doc.shingles, expected)
    assert doc.text_length == sum(len(by_url[u].text) for u in doc.urls)
    capped = DomainDocumentBuilder(k=2, max_pages=20, max_shingles=500, template_removal=False)
    small = capped.build(wisc_pages)
    assert np.array_equal(small.shingles, expected[:500])
    assert small.shingles.dtype == np.uint64 and np.all(np.diff(small.shingles) > 0)


def test_templates_are_removed_before_shingling():
    site = "Home | Research | People | Contact\nCopyright 2015 Example University"
    bodies = [d.text for d in load_reuters(limit=5)]
    pages = [PageText(f"https://ex.edu/{i}", f"{site}\n{b}", "en") for i, b in enumerate(bodies)]
    on = DomainDocumentBuilder(k=1, template_removal=True).build(pages)
    off = DomainDocumentBuilder(k=1, template_removal=False).build(pages)
    template = shingle_hashes("Home Research People Contact Copyright Example", 1, "en")
    # the two site lines, and "Reuter", which ends every Reuters story
    assert on.n_template_blocks == 3 and on.template_removed_share > 0
    assert not np.intersect1d(on.shingles, template).size
    assert np.intersect1d(off.shingles, template).size == template.size


def test_domain_terms_are_the_capped_sum_over_the_template_free_pages():
    site = "Home | Research | People | Contact\nCopyright 2015 Example University"
    bodies = [d.text for d in load_reuters(limit=5)]
    pages = [PageText(f"https://ex.edu/{i}", f"{site}\n{b}", "en") for i, b in enumerate(bodies)]
    doc = DomainDocumentBuilder(k=1, max_pages=4).build(pages)
    assert doc.n_pages == 4
    # the reference: the same sampled pages, templates learnt from all five, one count each
    used = (
        TemplateRemover()
        .fit([p.text for p in pages])
        .transform([p.text for p in pages if p.url in doc.urls])
    )
    counter = TermCounter(language="en")
    full = merge_counts(counter.counts(t) for t in used)
    assert doc.terms == top_terms(full, 1000) == full
    assert sum(doc.terms.values()) == sum(sum(counter.counts(t).values()) for t in used)
    assert not {"home", "research", "contact", "copyright", "exampl"} & doc.terms.keys()
    # the cap keeps the most frequent terms, ties by term
    small = DomainDocumentBuilder(k=1, max_pages=4, max_terms=10).build(pages)
    assert small.terms == top_terms(full, 10) and len(small.terms) == 10
    assert min(small.terms.values()) >= max(c for t, c in full.items() if t not in small.terms)
    # no template removal: the raw texts, template terms included
    off = DomainDocumentBuilder(k=1, max_pages=4, template_removal=False).build(pages)
    raw = merge_counts(counter.counts(p.text) for p in pages if p.url in off.urls)
    assert off.terms == raw and raw["research"] == 4


def test_each_page_is_counted_in_its_own_language():
    ru = "Санкт-Петербургский университет: кафедры, факультеты и университетские рейтинги"
    en = "University rankings and the universities of Saint Petersburg"
    builder = DomainDocumentBuilder(max_terms=1000)
    doc = builder.build(
        [PageText("https://x.ru/1", ru, "ru"), PageText("https://x.ru/2", en, None)]
    )
    expected = merge_counts(
        [TermCounter(language="ru").counts(ru), TermCounter(language=None).counts(en)]
    )
    assert doc.terms == expected and doc.terms["университет"] == 1
    assert builder.page_terms(ru, "ru") == TermCounter(language="ru").counts(ru)
    # one memoising counter per language for the whole builder
    assert builder.term_counter("ru") is builder.term_counter("ru")
    assert builder.term_counter(None) is not builder.term_counter("en")


def test_page_terms_are_capped():
    text = " ".join(d.text for d in load_reuters(limit=20))
    full = TermCounter(language="en").counts(text)
    assert len(full) > 300
    capped = DomainDocumentBuilder(max_terms=300).page_terms(text, "en")
    assert capped == top_terms(full, 300) and len(capped) == 300
    with pytest.raises(ValueError, match="max_terms"):
        DomainDocumentBuilder(max_terms=0)


def test_language_of_the_document_is_the_language_of_most_text():
    pages = [
        PageText("https://x.ru/1", "Санкт-Петербургский университет " * 30, "ru"),
        PageText("https://x.ru/2", "A short English note", "en"),
    ]
    assert DomainDocumentBuilder().build(pages).language == "ru"
    with pytest.raises(ValueError, match="at least one page"):
        DomainDocumentBuilder().build([])


def test_builder_from_settings():
    s = Settings().replace(domain={"max_pages": 7, "max_terms": 50}, shingle={"k": 3})
    b = DomainDocumentBuilder.from_settings(s)
    assert b.max_pages == 7 and b.k == 3 and b.template_removal is True
    assert b.max_terms == 50 and Settings().domain.max_terms == 1000
