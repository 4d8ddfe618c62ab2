"""Real texts for the external sites of the test web, by the paper's categories.

Every page body of a generated or citing site is a real text from the shared data (never
written by this project); what kind of text depends on the site's category and language.
Where a real corpus of the category exists, the site's texts come from it (origin
``real``); where none exists here, the texts are real texts of a neighbouring kind that
stand in for it (origin ``stand-in``); a search engine's result lists are assembled from
real headlines (origin ``generated``). The manifest records the origin of every site
(``text_origin``) and the corpus and document of every page (see :mod:`testbed`).

==============  ===  ==========  ===========================================================
category        lan  origin      sources
==============  ===  ==========  ===========================================================
universities    en   real        WebKB *misc* pages of other universities (course,
                                 department, faculty, staff, student, other), real HTML
scientific      en   stand-in    WebKB *misc* research-project pages, real HTML; BBC tech;
                                 tgcontest science, technology (no corpus of learned
                                 societies' or conferences' sites here)
scientific      ru   stand-in    Lenta.ru "Science and technology"; tgcontest science,
                                 technology
search          en   generated   result lists of real BBC headlines with their lead sentence
search          ru   generated   result lists of real Lenta.ru / tgcontest headlines
social          en   real        website-classification "Social Networking and Messaging"
                                 home pages; trafilatura-eval blog and forum pages, real HTML
social          ru   stand-in    tgcontest "not_news" posts of Telegram channels
media           en   real        website-classification "Streaming Services",
                                 "Photography" home pages
media           ru   stand-in    tgcontest "entertainment" news
news            en   real        BBC business, entertainment, politics, sport; tgcontest
                                 news (society, economy, sports, entertainment, other);
                                 scrapinghub-aeb article pages, real HTML;
                                 website-classification "News" home pages
news            ru   real        Lenta.ru society, economy, security, former USSR, sport;
                                 tgcontest society, economy, sports, other; scrapinghub-aeb
other           en   real        website-classification "Travel", "Sports", "Law and
                                 Government" home pages
other           ru   stand-in    Lenta.ru self-care, construction, travel
==============  ===  ==========  ===========================================================

A website-classification home page (lower-cased, lemmatised words, no punctuation, as the
publisher cleaned it) is split into pages of :data:`WORDS_PER_PAGE` words, taken in order,
and a site starts on a new home page (:meth:`TextPools.begin_site`), so a site's pages are
the parts of one real website (of more when it has more pages than the home page has
parts). Each text is used once before any repeats.

Loading reads each corpus once: O(total size), a few seconds; the texts stay in memory
(about 60 MB at most, mostly the HTML pages).
"""

from __future__ import annotations

import csv
import gzip
import json
import random
import re
import tarfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from testbed.webkb import WebkbPage

csv.field_size_limit(1 << 24)


#: The shared data folder of each text source (the manifest's ``corpus``).
CORPORA: dict[str, str] = {
    "aeb": "scrapinghub-aeb",
    "bbc": "bbc-fulltext",
    "lenta": "lenta-rubrics-asryan",
    "tgcontest": "tgcontest-toloka-ru-en",
    "trafilatura": "trafilatura-eval",
    "webkb": "webkb-4universities",
    "websites": "website-classification",
}

REAL, STAND_IN, GENERATED = "real", "stand-in", "generated"
"""A site's ``text_origin``: texts of its kind, real texts standing in for a kind no
corpus here holds, or pages assembled from real texts (search result lists)."""

#: The origin of the texts of each (category, language) (the table above).
ORIGINS: dict[tuple[str, str], str] = {
    ("universities", "en"): REAL,
    ("scientific", "en"): STAND_IN,
    ("scientific", "ru"): STAND_IN,
    ("search", "en"): GENERATED,
    ("search", "ru"): GENERATED,
    ("social", "en"): REAL,
    ("social", "ru"): STAND_IN,
    ("media", "en"): REAL,
    ("media", "ru"): STAND_IN,
    ("news", "en"): REAL,
    ("news", "ru"): REAL,
    ("other", "en"): REAL,
    ("other", "ru"): STAND_IN,
}

WORDS_PER_PAGE = 90
"""Words of a website-classification home page per served page."""
MIN_WORDS = 40
"""Home pages with fewer words are left out (a title and a menu say nothing of a kind)."""


@dataclass(frozen=True)
class Text:
    """One real text: paragraphs to render, or a whole real HTML page."""

    source: str  # e.g. "bbc/tech/042.txt", "lenta/8/123", "aeb/<id>", "websites/17/0"
    language: str  # "en" | "ru"
    title: str
    paragraphs: tuple[str, ...] = ()
    html: bytes | None = None  # real page HTML (UTF-8), served with a navigation block
    part: int = 0  # the part of a document split over several pages (0: its first)

    def provenance(self) -> dict[str, str | int]:
        """Where the text is in the shared data: ``corpus`` (the folder), ``document``
        (its id there) and, for a document split over pages, ``part``.

        >>> Text("bbc/tech/042.txt", "en", "T").provenance()
        {'corpus': 'bbc-fulltext', 'document': 'tech/042.txt'}
        >>> Text("websites/17/2", "en", "T", part=2).provenance()
        {'corpus': 'website-classification', 'document': '17', 'part': 2}
        """
        name, _, doc = self.source.partition("/")
        if name == "websites":
            row, _, _part = doc.partition("/")
            return {"corpus": CORPORA[name], "document": row, "part": self.part}
        return {"corpus": CORPORA[name], "document": doc}


@dataclass
class TextPools:
    """Texts by (category, language): each source in a seeded random order, the sources
    of a pool taken in turn, a document's parts one after the other."""

    pools: dict[tuple[str, str], list[Text]] = field(default_factory=dict)
    headlines: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    _next: dict[tuple[str, str], int] = field(default_factory=dict)

    def languages(self, category: str) -> list[str]:
        langs = [lang for (cat, lang), pool in self.pools.items() if cat == category and pool]
        if category == "search":
            langs = [lang for lang, pool in self.headlines.items() if pool]
        return sorted(langs)

    def begin_site(self, category: str, language: str) -> None:
        """Start a new site: skip the rest of a document split over pages, so the site's
        first page is the start of a document."""
        pool = self.pools.get((category, language))
        if not pool:
            return
        i = self._next.get((category, language), 0)
        for step in range(len(pool)):
            if pool[(i + step) % len(pool)].part == 0:
                self._next[(category, language)] = i + step
                return

    def take(self, category: str, language: str) -> Text:
        """The next text of the pool (cycling when exhausted, so texts repeat only then)."""
        pool = self.pools[(category, language)]
        i = self._next.get((category, language), 0)
        self._next[(category, language)] = i + 1
        return pool[i % len(pool)]

    def take_headlines(self, language: str, n: int, rng: random.Random) -> list[tuple[str, ...]]:
        """``n`` (source, headline, lead sentence) triples for a result list."""
        pool = self.headlines[language]
        return [pool[rng.randrange(len(pool))] for _ in range(n)]


_SENT = re.compile(r"(?<=[.!?])\s+")


def _paragraphs(text: str) -> list[str]:
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n|\n", text) if p.strip()]


def _bbc(root: Path) -> list[tuple[str, str, str, list[str]]]:
    out = []
    with tarfile.open(root / "bbc-fulltext" / "bbc-fulltext.tar.gz", "r:gz") as tar:
        for m in tar:
            parts = m.name.split("/")
            if not m.isfile() or len(parts) != 3 or not parts[2].endswith(".txt"):
                continue
            f = tar.extractfile(m)
            assert f is not None
            raw = f.read()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("latin-1")
            paras = _paragraphs(text)
            if len(paras) >= 2:
                out.append((f"bbc/{parts[1]}/{parts[2]}", parts[1], paras[0], paras[1:]))
    out.sort()
    return out


def _lenta(root: Path) -> list[tuple[str, int, str, list[str]]]:
    out = []
    with open(root / "lenta-rubrics-asryan" / "train_news.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            paras = _paragraphs(row["content"])
            if not paras:
                continue
            first = _SENT.split(paras[0])[0]
            title = first if len(first) < 140 else first[:137].rsplit(" ", 1)[0] + "…"
            out.append((f"lenta/{row['topic']}/{row['index']}", int(row["topic"]), title, paras))
    return out


def _tgcontest(root: Path) -> list[tuple[str, str, str, str, list[str]]]:
    out = []
    folder = root / "tgcontest-toloka-ru-en" / "categories"
    for path in sorted(folder.glob("*_cat_*.tsv")):
        lang = path.name[:2]
        with open(path, encoding="utf-8") as f:
            for i, row in enumerate(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)):
                label = (row.get("GOLDEN:res") or "").strip()
                text = (row.get("INPUT:text") or "").strip()
                title = (row.get("INPUT:title") or "").strip()
                if label and text and title:
                    out.append(
                        (f"tgcontest/{path.stem}/{i}", lang, label, title, _paragraphs(text))
                    )
    return out


def _websites(root: Path) -> list[tuple[str, list[Text]]]:
    """website-classification's home pages, each split into parts of about
    :data:`WORDS_PER_PAGE` words: one (label, parts) per site, a URL's second row and home
    pages under :data:`MIN_WORDS` words left out."""
    out: list[tuple[str, list[Text]]] = []
    seen: set[str] = set()
    path = root / "website-classification" / "website_classification.csv"
    with path.open(encoding="utf-8", newline="") as fh:  # read as corpora.websites reads it
        rows = [
            (row_no, row["website_url"], row["cleaned_website_text"], row["category"].strip())
            for row_no, row in enumerate(csv.DictReader(fh))
        ]
    for doc_id, site_url, site_text, label in rows:
        words = site_text.split()
        url = site_url.strip().rstrip("/").lower()
        if len(words) < MIN_WORDS or url in seen:
            continue
        seen.add(url)
        n = max(1, round(len(words) / WORDS_PER_PAGE))
        size = -(-len(words) // n)
        parts = []
        for k in range(n):
            chunk = words[k * size : (k + 1) * size]
            title = " ".join(chunk[:6]).capitalize()
            paras = tuple(" ".join(chunk[j : j + 40]) for j in range(0, len(chunk), 40))
            source = f"websites/{doc_id}/{k}"
            parts.append(Text(source, "en", title, paras, part=k))
        out.append((label, parts))
    return out


def _aeb(root: Path) -> list[Text]:
    folder = root / "scrapinghub-aeb"
    truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    out = []
    for item_id in sorted(truth):
        path = folder / "html" / f"{item_id}.html.gz"
        if not path.is_file():
            continue
        body = truth[item_id].get("articleBody") or ""
        lang = "ru" if len(re.findall(r"[а-яё]", body[:2000], re.I)) > 200 else "en"
        html = gzip.decompress(path.read_bytes())
        m = re.search(rb"<title[^>]*>(.*?)</title>", html, re.I | re.S)
        title = m.group(1).decode("utf-8", "replace").strip() if m else item_id
        out.append(Text(f"aeb/{item_id}", lang, " ".join(title.split()), (), html))
    return out


_BLOG = re.compile(r"blog|forum|community|wordpress|reddit|discuss|threads/", re.I)


def _trafilatura_blogs(root: Path) -> list[Text]:
    """The English blog and forum pages of trafilatura-eval (by their URL), real HTML."""
    import py3langid

    folder = root / "trafilatura-eval"
    meta = json.loads((folder / "evaldata.json").read_text(encoding="utf-8"))
    wanted: dict[str, str] = {}
    for url, v in meta.items():
        if not _BLOG.search(url):
            continue
        sample = " ".join(v.get("with") or [])[:1500]
        if len(sample) < 80 or py3langid.classify(sample)[0] != "en":
            continue
        wanted[v["file"]] = url
    blogs: list[Text] = []
    with tarfile.open(folder / "trafilatura-eval-html.tar.gz", "r:gz") as tar:
        for m in tar:
            name = m.name.rsplit("/", 1)[-1]
            if not m.isfile() or name not in wanted:
                continue
            f = tar.extractfile(m)
            assert f is not None
            html = f.read()
            try:
                html.decode("utf-8")
            except UnicodeDecodeError:
                continue
            url = wanted.pop(name)
            t = re.search(rb"<title[^>]*>(.*?)</title>", html, re.I | re.S)
            title = " ".join(t.group(1).decode("utf-8", "replace").split()) if t else url
            blogs.append(Text(f"trafilatura/{name}", "en", title, (), html))
    blogs.sort(key=lambda x: x.source)
    return blogs


def _webkb_text(page: WebkbPage) -> Text:
    m = re.search(rb"<title[^>]*>(.*?)</title>", page.body, re.I | re.S)
    title = " ".join(m.group(1).decode("latin-1").split()) if m else page.url
    html = page.body.decode("latin-1").encode("utf-8")
    return Text(f"webkb/{page.label}/{page.url}", "en", title or page.url, (), html)


#: Lenta.ru rubric codes per category (see lenta-rubrics-asryan/SOURCE.txt): science is
#: the scientific stand-in; self-care, construction and travel stand in for the Russian
#: other organisations; the rest is news.
LENTA = {"scientific": (8,), "news": (0, 1, 2, 3, 4), "other": (5, 6, 7)}
#: tgcontest labels per (category, language).
TGCONTEST = {
    ("scientific", "en"): ("science", "technology"),
    ("scientific", "ru"): ("science", "technology"),
    ("news", "en"): ("society", "economy", "sports", "entertainment", "other"),
    ("news", "ru"): ("society", "economy", "sports", "other"),
    ("media", "ru"): ("entertainment",),
    ("social", "ru"): ("not_news",),
}
#: BBC topics per category.
BBC = {"scientific": ("tech",), "news": ("business", "entertainment", "politics", "sport")}
#: website-classification labels per category (all English).
WEBSITES = {
    "social": ("Social Networking and Messaging",),
    "media": ("Streaming Services", "Photography"),
    "news": ("News",),
    "other": ("Travel", "Sports", "Law and Government"),
}


def load_pools(root: Path, misc_pages: list[WebkbPage], seed: int) -> TextPools:
    """Read every text source and group the texts by (category, language).

    Parameters
    ----------
    root : Path
        The shared data folder.
    misc_pages : list of WebkbPage
        WebKB pages of universities outside the test web's four (the *misc* part).
    seed : int
        Seeds the order of each pool.

    Returns
    -------
    TextPools
        One pool per key of :data:`ORIGINS` (search engines: the headlines).
    """
    # a pool's documents; a document is the list of its parts (one Text but for websites)
    pools: dict[tuple[str, str], list[list[Text]]] = defaultdict(list)
    bbc = _bbc(root)
    for source, topic, title, paras in bbc:
        for cat, topics in BBC.items():
            if topic in topics:
                pools[(cat, "en")].append([Text(source, "en", title, tuple(paras))])
    for source, rubric, title, paras in _lenta(root):
        for cat, rubrics in LENTA.items():
            if rubric in rubrics:
                pools[(cat, "ru")].append([Text(source, "ru", title, tuple(paras))])
    for source, lang, label, title, paras in _tgcontest(root):
        for (cat, language), labels in TGCONTEST.items():
            if language == lang and label in labels:
                pools[(cat, lang)].append([Text(source, lang, title, tuple(paras))])
    for page in misc_pages:
        if len(page.body) < 400:
            continue
        # research projects stand in for scientific communities; every other misc page
        # (students' home pages too) is a page of a university
        cat = "scientific" if page.label == "project" else "universities"
        pools[(cat, "en")].append([_webkb_text(page)])
    for text in _aeb(root):
        pools[("news", text.language)].append([text])
    for label, parts in _websites(root):
        for cat, labels in WEBSITES.items():
            if label in labels:
                pools[(cat, "en")].append(parts)
    blogs = _trafilatura_blogs(root)
    pools[("social", "en")].extend([t] for t in blogs)
    unknown = set(pools) - set(ORIGINS)
    if unknown:  # pragma: no cover - a mapping above names a pool the table lacks
        raise RuntimeError(f"text pools without an origin: {sorted(unknown)}")

    rng = random.Random(seed)
    ordered = {}
    for key in sorted(pools):
        # each source's documents shuffled, then the next document taken from the source
        # that has given the fewest pages so far, so a category's sites draw on all of its
        # sources evenly (not mostly on the largest, nor on the one of long documents)
        by_source: dict[str, list[list[Text]]] = defaultdict(list)
        for doc in sorted(pools[key], key=lambda d: d[0].source):
            by_source[doc[0].source.split("/", 1)[0]].append(doc)
        queues = []
        for name in sorted(by_source):
            docs = by_source[name]
            rng.shuffle(docs)
            queues.append(docs)
        given = [0] * len(queues)
        at = [0] * len(queues)
        pool: list[Text] = []
        while True:
            open_ = [i for i, q in enumerate(queues) if at[i] < len(q)]
            if not open_:
                break
            i = min(open_, key=lambda i: (given[i], i))
            doc = queues[i][at[i]]
            at[i] += 1
            given[i] += len(doc)
            pool.extend(doc)
        ordered[key] = pool
    headlines: dict[str, list[tuple[str, str, str]]] = {"en": [], "ru": []}
    for source, _topic, title, paras in bbc:
        headlines["en"].append((source, title, _SENT.split(paras[0])[0]))
    for text in ordered.get(("news", "ru"), []):
        if text.paragraphs:
            headlines["ru"].append((text.source, text.title, text.paragraphs[0][:240]))
    return TextPools(ordered, headlines)
