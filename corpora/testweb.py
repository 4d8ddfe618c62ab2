"""The project's local test web as a labelled corpus: one document per external site.

The test web (:mod:`testbed`) gives every external site it serves a category of the paper
(``universities``, ``scientific``, ``search``, ``social``, ``media``, ``news``,
``other``; Korelin et al. 2015) in ``manifest.json`` (``sites[domain].category``). This
loader builds the test web once (:func:`testbed.build.shared_build`: a cache folder under
the system temporary directory, keyed by the build options — the seed among them — the
testbed's code and the WebKB archive, shared with the crawler's and the testbed's test
suites; 10-40 s the first time, reused afterwards) and makes one document per external
site that has a category and pages: the ``generated`` sites (real texts under the linked
domains), the ``citing`` sites (``tb-*`` domains linking to a university) and the
``corpus`` sites (WebKB *misc* pages of other universities and institutes). University
sites, dead domains and the trouble host are left out.

What a domain document is here
------------------------------
Of the HTML pages the manifest lists for the site (status 200), at most ``max_pages``
(``[domain] max_pages``, 20) are taken by the pipeline's URL-hash sample
(:func:`extract.documents.select_pages`); each stored response is read from the built
site index and its main text extracted with :func:`extract.extract_page` — the
pipeline's extraction, with the response's ``Content-Type`` charset. Of the ``ok``
pages, the site's template blocks are removed (:func:`extract.templates.remove_templates`,
the pipeline's thresholds) and the texts are joined with blank lines, in the sample's
rank order. The document's language is that of most of its text.

The pipeline's domain document (:class:`extract.documents.DomainDocumentBuilder`) makes
the same choices but keeps the *union of the pages' shingle sets* (capped at
``[domain] max_shingles``), not text; it samples among the ``ok`` pages (here the sample
is drawn before extraction, to extract 5,228 pages instead of 8,309) and learns the
templates from all of them. Above all it holds only the pages the crawler fetched — the
linked targets within the crawl's depth and at most ``[crawl] external_pages_per_domain``
(3) more pages per external domain — whereas this document draws on every page the test
web serves for the site (1 to 142 in the default build: every linked target of any
depth, a home page and 1-4 more). Clusterers that take text (TF-IDF,
:class:`cluster.activity.ActivityClusterer`) get the joined text; shingling it gives
the pipeline's set for those pages.

Extraction is O(total HTML): about 40 s of CPU for the default build, spread over
``workers`` processes. The documents are cached as JSON in ``~/.cache/webometrics``
(keyed by the manifest, the site index, the options and the extraction code), so a
second load reads them in well under a second.

References
----------
A. Korelin et al., the paper the project reproduces (categories of external sites), and
:mod:`testbed` for the manifest format.

Examples
--------
>>> from corpora.testweb import join_domain_pages
>>> from extract.documents import PageText
>>> text, lang, urls = join_domain_pages(
...     [PageText("http://a.org/", "Alpha beta.", "en"), PageText("http://a.org/x", "Gamma.", "ru")]
... )
>>> sorted(text.split("\\n\\n")), lang, len(urls)
(['Alpha beta.', 'Gamma.'], 'en', 2)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import defaults as D

if TYPE_CHECKING:
    from extract.documents import PageText
    from testbed.siteindex import SiteIndex

_EXTRACTION_CODE = ("page.py", "encoding.py", "language.py", "templates.py", "tokens.py")
"""The modules of :mod:`extract` whose code the cached documents depend on."""

KINDS = ("generated", "citing", "corpus")
"""The kinds of manifest site made into documents (external sites with a category)."""


@dataclass(frozen=True, slots=True)
class TestwebSite:
    """One external site of the test web as a domain document.

    Attributes
    ----------
    domain : str
        Its registered domain (the manifest's key).
    kind : str
        One of :data:`KINDS`.
    label : str
        Its category (:data:`testbed.CATEGORIES`).
    language : str or None
        The detected language of most of its text (``en`` / ``ru``).
    text : str
        The joined main texts of its pages (see the module docstring).
    urls : tuple of str
        The pages joined, in order.
    n_pages : int
        HTML pages the test web serves for it (before extraction and sampling).
    """

    __test__ = False  # not a pytest test class despite the name

    domain: str
    kind: str
    label: str
    language: str | None
    text: str
    urls: tuple[str, ...]
    n_pages: int


def join_domain_pages(
    pages: Sequence[PageText], max_pages: int = D.DOMAIN_MAX_PAGES
) -> tuple[str, str | None, list[str]]:
    """One site's domain document as text: templates removed, pages sampled, joined.

    Parameters
    ----------
    pages : sequence of extract.documents.PageText
        The site's ``ok`` pages (URL, main text, language).
    max_pages : int, default ``[domain] max_pages``
        At most this many pages, the pipeline's URL-hash sample.

    Returns
    -------
    text : str
        The chosen pages' texts, blank-line separated.
    language : str or None
        The language of most of the chosen text.
    urls : list of str
        The chosen pages' URLs, in the order joined.
    """
    from extract.documents import select_pages
    from extract.templates import remove_templates

    texts = remove_templates(
        [p.text for p in pages],
        min_pages=D.EXTRACT_TEMPLATE_MIN_PAGES,
        min_share=D.EXTRACT_TEMPLATE_MIN_SHARE,
    )
    chosen = select_pages([p.url for p in pages], max_pages) if pages else []
    weight: Counter[str | None] = Counter()
    for i in chosen:
        weight[pages[i].language] += len(texts[i])
    language = weight.most_common(1)[0][0] if weight else None
    text = "\n\n".join(texts[i] for i in chosen if texts[i].strip())
    return text, language, [pages[i].url for i in chosen]


def build_testweb(seed: int = D.TESTBED_SEED, data_dir: str | Path | None = None) -> Path:
    """The built test web of a seed (built on first use, then reused from the cache).

    Parameters
    ----------
    seed : int, default ``[testbed] seed``
        The build's seed; other options are the defaults.
    data_dir : path-like, optional
        The shared data folder; default :func:`core.shared_data.data_dir`.

    Returns
    -------
    Path
        The folder holding ``manifest.json`` and ``site/``.
    """
    from testbed.build import BuildOptions, shared_build

    return shared_build(BuildOptions(seed=seed), data_dir)


def _cache_key(root: Path, max_pages: int) -> str:
    """A digest of the manifest, the site index, ``max_pages``, the extraction options and
    the code that makes the documents (extraction, templates, this module)."""
    import hashlib

    from extract.page import ExtractOptions

    h = hashlib.blake2b(digest_size=10)
    h.update((root / "manifest.json").read_bytes())
    h.update((root / "site" / "index.json").read_bytes())
    h.update(repr((max_pages, ExtractOptions(), D.EXTRACT_TEMPLATE_MIN_PAGES,
                   D.EXTRACT_TEMPLATE_MIN_SHARE)).encode())  # fmt: skip
    code = Path(__file__).parents[1] / "extract"
    for name in _EXTRACTION_CODE:
        h.update((code / name).read_bytes())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()


def _extract_site(pages: list[tuple[str, bytes, str | None, str | None]]) -> list[PageText]:
    """The ``ok`` pages of one site: (URL, body, charset, media type) -> main text."""
    from extract.documents import PageText
    from extract.page import extract_page

    out: list[PageText] = []
    for url, body, charset, media in pages:
        result = extract_page(body, url, charset=charset, content_type=media)
        if result.ok and result.text.strip():
            out.append(PageText(url, result.text, result.language))
    return out


def _served_pages(
    index: SiteIndex, site: dict[str, Any], max_pages: int
) -> list[tuple[str, bytes, str | None, str | None]]:
    """The sampled served pages of a manifest site with their bodies and content types."""
    from extract.documents import select_pages

    urls = [p["url"] for p in site["pages"]]
    out = []
    for i in sorted(select_pages(urls, max_pages)):
        stored = index.get(urls[i])
        if stored is None or stored.status != 200:
            continue
        media, _, params = (stored.header("Content-Type") or "").partition(";")
        charset = params.partition("charset=")[2].strip().strip('"') or None
        out.append((urls[i], stored.body, charset, media.strip() or None))
    return out


def load_testweb(
    folder: str | Path | None = None,
    *,
    seed: int = D.TESTBED_SEED,
    max_pages: int = D.DOMAIN_MAX_PAGES,
    workers: int | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
) -> list[TestwebSite]:
    """The external sites of a built test web as labelled domain documents.

    Parameters
    ----------
    folder : path-like, optional
        A built test web (``webometrics testbed build --out DIR``); default
        :func:`build_testweb` of ``seed``.
    seed : int, default ``[testbed] seed``
        The build's seed when ``folder`` is not given.
    max_pages : int, default ``[domain] max_pages``
        Pages per document (see :func:`join_domain_pages`).
    workers : int, optional
        Extraction processes; default the number of cores (1: in this process).
    cache_dir : path-like, optional
        Where the documents are cached; default ``~/.cache/webometrics``.
    use_cache : bool, default True
        Read and write the cache (``testweb-<digest>.json``, keyed by the manifest, the
        site index, ``max_pages``, the extraction options and the code of the extraction,
        the template removal and this module); other cached documents unused for a day
        are removed.

    Returns
    -------
    list of TestwebSite
        Sorted by domain; sites with no ``ok`` page are left out.

    Raises
    ------
    ConfigError
        ``folder`` holds no built test web.
    DataNotFoundError
        Building needs the shared data folder and it is missing.
    """
    import json
    import multiprocessing as mp
    import os
    from concurrent.futures import ProcessPoolExecutor

    from testbed.manifest import load_manifest
    from testbed.siteindex import SiteIndex

    root = Path(folder) if folder is not None else build_testweb(seed)
    manifest = load_manifest(root)
    cache_root = (
        Path(cache_dir) if cache_dir is not None else Path.home() / ".cache" / "webometrics"
    )
    cache = cache_root / f"testweb-{_cache_key(root, max_pages)}.json"
    if use_cache and cache.is_file():
        cache.touch()  # in use: spared by the pruning below
        return [
            TestwebSite(**{**row, "urls": tuple(row["urls"])})
            for row in json.loads(cache.read_text(encoding="utf-8"))
        ]
    sites = [
        (domain, site)
        for domain, site in sorted(manifest.data["sites"].items())
        if site["kind"] in KINDS and site.get("category") and site["pages"]
    ]
    index = SiteIndex(root)
    try:
        jobs = [_served_pages(index, site, max_pages) for _, site in sites]
    finally:
        index.close()
    n_workers = workers or os.cpu_count() or 1
    if n_workers > 1:
        with ProcessPoolExecutor(n_workers, mp_context=mp.get_context("fork")) as pool:
            extracted = list(pool.map(_extract_site, jobs, chunksize=4))
    else:
        extracted = [_extract_site(job) for job in jobs]
    out: list[TestwebSite] = []
    for (domain, site), pages in zip(sites, extracted, strict=True):
        text, language, urls = join_domain_pages(pages, max_pages)
        if text:
            out.append(
                TestwebSite(
                    domain, site["kind"], site["category"], language, text, tuple(urls),
                    len(site["pages"]),
                )
            )  # fmt: skip
    if use_cache:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        rows = [{f: getattr(s, f) for f in TestwebSite.__dataclass_fields__} for s in out]
        tmp.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        tmp.replace(cache)
        _prune_cache(cache)
    return out


def _prune_cache(keep: Path, max_age_seconds: float = 86400) -> None:
    """Remove the other cached documents (about 12 MB each) unused for a day."""
    import time

    for other in keep.parent.glob("testweb-*.json"):
        if other != keep and time.time() - other.stat().st_mtime > max_age_seconds:
            other.unlink(missing_ok=True)
