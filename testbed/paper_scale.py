"""A generated web the size of the paper's: nine universities and their external domains.

Korelin et al. (2015) studied nine universities (seed 000 of this project); their Table 3
gives the external domains clustered per university, direction and language, about 9,000
outgoing and 87,000 citing domains in all, and their Table 2 the external links on each
university's site. :func:`build_paper_web` writes a test web of that shape, scaled by
``scale`` (1.0: the paper's counts; every non-zero count keeps at least one domain):

* **Universities** (``http://www.<domain>/``): a home page linking to list pages
  (``/links/<n>.html``, depth 1), each holding :data:`LINKS_PER_PAGE` links to external
  targets. Every outgoing domain gets 1-3 target URLs (its home page and deeper pages),
  linked from as many list pages as Table 2's links per external domain say (external
  links / external domains of the university, 1.5 to 7).
* **Outgoing sites** (``http://www.<name>/``): the targets plus a home page naming
  ``site_pages`` more pages (so a crawl's extra pages per external domain find them).
* **Citing sites**: each holds its citing pages (``citing_pages`` on average per domain,
  from 1 to 4: Table 2's 100-240 citing pages per citing domain are what a backlink
  database lists, not what a study fetches), each linking to a page of its university;
  ``citing/<key>.majestic.csv`` lists them in Majestic's export format
  (:mod:`testbed.backlinks`), as a backlink database would.
* **Texts**: every page body is made of real texts of its site's category and language
  (:mod:`testbed.texts`): the paragraphs of three texts of the pool chosen by the page's
  hash, so pages of different domains do not repeat one text whole (the pools hold a few
  thousand texts for tens of thousands of pages); search engines get result lists of
  real headlines. Language follows Table 3 (ru or en); a category without a Russian pool
  (universities) gives its Russian domains another category.

Everything is plain HTTP, robots.txt answers 404 (allow all). The output is the format of
:func:`testbed.build.build` (``site/index.json`` + ``site/bodies.bin``,
``universities.toml``, ``citing/``) plus ``paper_manifest.json`` (the counts), so
``webometrics testbed serve --dir DIR`` serves it. Bodies are streamed to disk as they are
made: memory is the text pools (about 230 MB) plus the index (about 200 bytes a URL).
Time: 20 s for the 8,720 URLs of scale 0.05 on a shared core (4 s of it loading the texts).
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from testbed import CATEGORIES
from testbed.backlinks import write_citing
from testbed.siteindex import BODIES_FILE, INDEX_FILE, url_key
from testbed.sites import (
    escape,
    html_headers,
    links_html,
    render_results_page,
    stable_hash,
)
from testbed.texts import Text, TextPools, load_pools
from testbed.webkb import read_webkb

__all__ = ["PAPER_UNIVERSITIES", "PaperUniversity", "PaperWebOptions", "build_paper_web"]


@dataclass(frozen=True)
class PaperUniversity:
    """One university of the paper: Table 2 and Table 3 of Korelin et al. (2015)."""

    key: str
    name: str
    country: str
    domain: str
    rank: int  # Table 2: position in the Webometrics ranking
    links: int  # Table 2: external links on the university's site
    domains: int  # Table 2: external domains on the site
    citing_pages: int  # Table 2: pages citing the site
    citing_domains: int  # Table 2: domains citing the site
    out_ru: int  # Table 3: external domains on the site, Russian
    out_en: int  # Table 3: ..., English
    cite_ru: int  # Table 3: citing domains, Russian
    cite_en: int  # Table 3: ..., English

    @property
    def links_per_domain(self) -> float:
        """Table 2's external links per external domain (at least 1)."""
        return max(1.0, self.links / self.domains)


#: Seed 000's Tables 2 and 3 (Table 2's row of cam.ac.uk reads "3 385 1 174": 3,385 links
#: and 1,174 domains, fewer than Table 3's 4,759; the paper does not explain it).
PAPER_UNIVERSITIES: tuple[PaperUniversity, ...] = (
    PaperUniversity("spbu", "Saint Petersburg State University", "Russia", "spbu.ru",
                    539, 3280, 469, 1_599_059, 16_028, 342, 81, 7373, 3929),
    PaperUniversity("msu", "Lomonosov Moscow State University", "Russia", "msu.ru",
                    129, 817, 262, 7_039_127, 39_416, 177, 62, 3343, 1008),
    PaperUniversity("nsu", "Novosibirsk State University", "Russia", "nsu.ru",
                    616, 5747, 921, 926_004, 15_186, 535, 247, 2508, 1428),
    PaperUniversity("harvard", "Harvard University", "USA", "harvard.edu",
                    1, 918, 163, 75_994_723, 319_445, 4, 151, 1545, 16632),
    PaperUniversity("stanford", "Stanford University", "USA", "stanford.edu",
                    2, 175, 79, 29_551_130, 311_148, 5, 65, 409, 6088),
    PaperUniversity("mit", "Massachusetts Institute of Technology", "USA", "mit.edu",
                    3, 9, 6, 41_271_678, 324_989, 3, 3, 1625, 24930),
    PaperUniversity("ox", "University of Oxford", "United Kingdom", "ox.ac.uk",
                    16, 8075, 1631, 8_920_524, 117_959, 29, 1399, 126, 3187),
    PaperUniversity("cam", "University of Cambridge", "United Kingdom", "cam.ac.uk",
                    15, 3385, 1174, 12_084_107, 120_796, 91, 4668, 671, 9196),
    PaperUniversity("ucl", "University College London", "United Kingdom", "ucl.ac.uk",
                    24, 25_218, 5683, 4_733_566, 66_035, 14, 1054, 162, 3112),
)  # fmt: skip

LINKS_PER_PAGE = 20
"""External links on one list page of a university."""
_TLD = {"en": ("com", "org", "net", "co.uk", "edu"), "ru": ("ru",)}
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class PaperWebOptions:
    """What :func:`build_paper_web` makes.

    Parameters
    ----------
    scale : float
        Share of the paper's domain counts (1.0: Table 3 as printed).
    seed : int
    site_pages : int
        Pages of an outgoing site beyond its targets (listed on its home page).
    citing_pages : float
        Mean citing pages per citing domain (1 to 4 each).
    """

    scale: float = 1.0
    seed: int = 2015
    site_pages: int = 3
    citing_pages: float = 1.5

    def validate(self) -> None:
        from core.exceptions import ParameterError

        if not 0 < self.scale <= 10:
            raise ParameterError(f"--scale must be in (0, 10], got {self.scale}")
        if self.site_pages < 0:
            raise ParameterError(f"--site-pages must be >= 0, got {self.site_pages}")
        if not 1 <= self.citing_pages <= 4:
            raise ParameterError(f"--citing-pages must be in [1, 4], got {self.citing_pages}")


def scaled(count: int, scale: float) -> int:
    """``count * scale`` rounded, at least 1 when ``count`` is.

    >>> scaled(342, 0.05), scaled(3, 0.05), scaled(0, 0.5)
    (17, 1, 0)
    """
    return 0 if count == 0 else max(1, round(count * scale))


class _Writer:
    """Streams bodies to ``bodies.bin`` and keeps the index (the site index format)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.out = open(folder / BODIES_FILE, "wb")  # noqa: SIM115 - closed in close()
        self.entries: dict[str, dict[str, Any]] = {}
        self.offset = 0
        self.bytes_by_kind: Counter[str] = Counter()
        self.pages_by_kind: Counter[str] = Counter()

    def add(self, url: str, body: bytes, kind: str) -> None:
        key = url_key(url)
        if key in self.entries:
            return
        self.out.write(body)
        self.entries[key] = {"s": 200, "h": html_headers(), "o": self.offset, "n": len(body)}
        self.offset += len(body)
        self.bytes_by_kind[kind] += len(body)
        self.pages_by_kind[kind] += 1

    def close(self) -> None:
        self.out.close()
        doc = {"format": 1, "entries": self.entries, "prefixes": []}
        (self.folder / INDEX_FILE).write_text(json.dumps(doc), encoding="utf-8")


def _paragraphs(text: Text) -> list[str]:
    if text.paragraphs:
        return list(text.paragraphs)
    raw = (text.html or b"").decode("utf-8", "replace")
    raw = re.sub(r"(?is)<(script|style)[^>]*>.*?</\1>", " ", raw)
    lines = (" ".join(line.split()) for line in re.sub(r"<[^>]+>", "\n", raw).splitlines())
    return [line for line in lines if len(_WORD.findall(line)) >= 6]


class _Pages:
    """Page bodies from the text pools: three texts' paragraphs per page."""

    def __init__(self, pools: TextPools, seed: int) -> None:
        self.pools = pools
        self.seed = seed

    def category(self, name: str, language: str) -> str:
        cat = CATEGORIES[stable_hash(self.seed, "cat", name) % len(CATEGORIES)]
        if language in self.pools.languages(cat):
            return cat
        usable = [c for c in CATEGORIES if language in self.pools.languages(c)]
        return usable[stable_hash(self.seed, "cat2", name) % len(usable)]

    def body(
        self, site: str, url: str, category: str, language: str, links: list[tuple[str, str]]
    ) -> bytes:
        rng = random.Random(stable_hash(self.seed, "page", url))
        nav = [("/", "Home")]
        if category == "search":
            results = self.pools.take_headlines(language, 8, rng)
            query = results[0][1].split()[0].strip(".,:;«»\"'") if results else site
            return render_results_page(site, language, query, results, nav, links)
        pool = self.pools.pools[(category, language)]
        texts = [pool[rng.randrange(len(pool))] for _ in range(3)]
        paras = [p for t in texts for p in _paragraphs(t)[:6]]
        body = "\n".join(f"<p>{escape(p)}</p>" for p in paras)
        return (
            f'<!DOCTYPE html>\n<html lang="{language}"><head><meta charset="utf-8">\n'
            f"<title>{escape(texts[0].title)} | {escape(site)}</title></head>\n<body>\n"
            f'<header><nav><a href="/">{escape(site)}</a> | {links_html(nav)}</nav></header>\n'
            f"<main><article><h1>{escape(texts[0].title)}</h1>\n{body}\n</article></main>\n"
            f"<footer><p>{links_html(links)}</p></footer>\n</body></html>\n"
        ).encode()


def _domain(prefix: str, uni: str, i: int, category: str, language: str, seed: int) -> str:
    tlds = _TLD[language]
    return f"{category}-{prefix}{uni}-{i + 1}.{tlds[stable_hash(seed, prefix, uni, i) % len(tlds)]}"


def build_paper_web(
    out: str | Path,
    options: PaperWebOptions | None = None,
    data_dir: str | Path | None = None,
    *,
    progress: bool = False,
) -> dict[str, Any]:
    """Write the paper-scale web into ``out``; return its counts.

    Parameters
    ----------
    out : path-like
        The output folder (its ``site/``, ``citing/`` and files are replaced).
    options : PaperWebOptions, optional
    data_dir : path-like, optional
        The shared data folder (default: ``$WEBOMETRICS_DATA`` or ``../shared/data``).
    progress : bool
        Show a progress bar on standard error.

    Returns
    -------
    dict
        ``universities`` (per university: outgoing and citing domains by language,
        targets, links, list pages, citing pages), ``pages`` and ``bytes`` by kind
        (university, outgoing, citing), ``urls``.

    Raises
    ------
    ParameterError
        An option is out of range.
    DataNotFoundError
        The shared data folder (or a corpus in it) is missing.
    """
    from tqdm import tqdm

    options = options or PaperWebOptions()
    options.validate()
    if data_dir is None:
        from core.shared_data import data_dir as shared

        data_dir = shared()
    root = Path(data_dir)
    archive = root / "webkb-4universities" / "webkb.tar.gz"
    if not archive.is_file():
        from core.exceptions import DataNotFoundError

        raise DataNotFoundError(f"{archive} not found: set WEBOMETRICS_DATA to the shared data")
    misc = [p for p in read_webkb(archive) if p.folder == "misc"]
    pages = _Pages(load_pools(root, misc, options.seed), options.seed)
    del misc
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    w = _Writer(out / "site")
    s = options.scale
    total = sum(
        scaled(u.out_ru, s) + scaled(u.out_en, s) + scaled(u.cite_ru, s) + scaled(u.cite_en, s)
        for u in PAPER_UNIVERSITIES
    )
    bar = tqdm(total=total, desc="paper-scale web", unit="domain", disable=not progress)
    counts: dict[str, dict[str, Any]] = {}
    unis: list[dict[str, Any]] = []
    for u in PAPER_UNIVERSITIES:
        rng = random.Random(stable_hash(options.seed, "uni", u.key))
        host = f"www.{u.domain}"
        home = f"http://{host}/"
        # outgoing: each domain's targets, linked from links_per_domain list-page slots
        slots: list[tuple[str, str]] = []
        n_targets = 0
        for language, n in (("ru", scaled(u.out_ru, s)), ("en", scaled(u.out_en, s))):
            for i in range(n):
                cat = pages.category(f"out:{u.key}:{language}:{i}", language)
                dom = _domain(f"o{language}-", u.key, i, cat, language, options.seed)
                site_host = f"www.{dom}"
                site_home = f"http://{site_host}/"
                extras = [f"{site_home}p/{j + 1}.html" for j in range(options.site_pages)]
                k = min(3, max(1, round(u.links_per_domain / 2)))
                deep = [f"{site_home}read/{j + 1}.html" for j in range(k - 1)]
                targets = [site_home, *deep]
                n_targets += len(targets)
                nav = [(x, f"Page {j + 1}") for j, x in enumerate(extras)]
                for url in dict.fromkeys([*targets, *extras]):
                    links = nav if url == site_home else [(site_home, dom)]
                    w.add(url, pages.body(dom, url, cat, language, links), "outgoing")
                occurrences = max(1, round(u.links_per_domain + rng.uniform(-0.5, 0.5)))
                for j in range(occurrences):
                    slots.append((targets[j % len(targets)], dom))
                bar.update()
        rng.shuffle(slots)
        n_lists = max(1, math.ceil(len(slots) / LINKS_PER_PAGE))
        list_urls = [f"{home}links/{j + 1}.html" for j in range(n_lists)]
        uni_pool = pages.pools.languages("universities")[0]
        w.add(
            home,
            pages.body(host, home, "universities", uni_pool,
                       [(x, f"Links {j + 1}") for j, x in enumerate(list_urls)]),
            "university",
        )  # fmt: skip
        for j, url in enumerate(list_urls):
            chunk = slots[j * LINKS_PER_PAGE : (j + 1) * LINKS_PER_PAGE]
            links = [(home, u.name), *chunk]
            w.add(url, pages.body(host, url, "universities", uni_pool, links), "university")
        # citing: domains whose pages link to a page of the university
        citing: list[dict[str, Any]] = []
        n_citing_pages = 0
        for language, n in (("ru", scaled(u.cite_ru, s)), ("en", scaled(u.cite_en, s))):
            for i in range(n):
                cat = pages.category(f"cite:{u.key}:{language}:{i}", language)
                dom = _domain(f"c{language}-", u.key, i, cat, language, options.seed)
                site_home = f"http://www.{dom}/"
                extra = options.citing_pages - 1
                k = 1 + sum(rng.random() < extra / 3 for _ in range(3))
                for j in range(k):
                    url = f"{site_home}{'a' if j % 2 else 'b'}/{j + 1}.html"
                    target = rng.choice([home, *list_urls])
                    w.add(url, pages.body(dom, url, cat, language, [(target, u.name)]), "citing")
                    citing.append(
                        {"url": url, "target": target, "anchor": u.name, "expected": "verified"}
                    )
                n_citing_pages += k
                bar.update()
        unis.append({"key": u.key, "citing": citing})
        counts[u.key] = {
            "domain": u.domain,
            "outgoing_ru": scaled(u.out_ru, s),
            "outgoing_en": scaled(u.out_en, s),
            "citing_ru": scaled(u.cite_ru, s),
            "citing_en": scaled(u.cite_en, s),
            "targets": n_targets,
            "links": len(slots),
            "list_pages": n_lists,
            "citing_pages": n_citing_pages,
        }
    bar.close()
    w.close()
    write_citing(out / "citing", unis)
    (out / "universities.toml").write_text(universities_toml(), encoding="utf-8")
    result = {
        "options": asdict(options),
        "universities": counts,
        "pages": dict(w.pages_by_kind),
        "bytes": dict(w.bytes_by_kind),
        "urls": len(w.entries),
    }
    (out / "paper_manifest.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    (out / "manifest.json").write_text(
        json.dumps({"format": 1, "paper_scale": True, "universities": []}), encoding="utf-8"
    )
    return result


def universities_toml() -> str:
    """The nine universities as a universities file (ranks: the paper's Table 2)."""
    lines = ["# The nine universities of Korelin et al. (2015), ranks of its Table 2.", ""]
    for u in PAPER_UNIVERSITIES:
        lines += [
            "[[university]]",
            f'name = "{u.name}"',
            f'country = "{u.country}"',
            f"rank = {u.rank}",
            f'domains = ["{u.domain}"]',
            f'home = ["http://www.{u.domain}/"]',
            "",
        ]
    return "\n".join(lines)
