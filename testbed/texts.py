"""Real texts for the generated external sites, grouped by the paper's categories.

Every generated page body is a real text from the shared data (never written by this
project), so clustering the external sites by kind of activity has a ground truth:

==============  =========================================================================
category        sources (language)
==============  =========================================================================
universities    WebKB misc pages of other universities (faculty, course, department,
                staff, other), real HTML (en)
scientific      WebKB misc research-project pages, real HTML; BBC tech (en); Lenta.ru
                "Science and technology"; tgcontest "science", "technology" (ru, en)
search          result lists of real BBC / Lenta.ru headlines with their lead sentence
social          WebKB misc students' personal home pages (the social web of 1997), real
                HTML; blog and forum pages of trafilatura-eval in English, real HTML; forum
                threads of the Clough-Stevenson short answers (en); tgcontest "not_news"
                and "other" posts (ru, en)
media           BBC entertainment (en); tgcontest "entertainment" (ru, en)
news            scrapinghub-aeb article pages, real HTML; BBC politics and sport (en);
                Lenta.ru society, security, former USSR, sport; tgcontest society and
                sports (ru, en)
other           companies and organisations: BBC business; trafilatura-eval English pages
                that are neither blogs nor news (companies, shops, government), real
                HTML (en); tgcontest economy; Lenta.ru economy, self-care, construction,
                travel (ru)
==============  =========================================================================

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


@dataclass(frozen=True)
class Text:
    """One real text: paragraphs to render, or a whole real HTML page."""

    source: str  # e.g. "bbc/tech/042.txt", "lenta/8/123", "aeb/<id>"
    language: str  # "en" | "ru"
    title: str
    paragraphs: tuple[str, ...] = ()
    html: bytes | None = None  # real page HTML (UTF-8), served with a navigation block


@dataclass
class TextPools:
    """Texts by (category, language): each source in a seeded random order, the sources
    of a pool taken in turn."""

    pools: dict[tuple[str, str], list[Text]] = field(default_factory=dict)
    headlines: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    _next: dict[tuple[str, str], int] = field(default_factory=dict)

    def languages(self, category: str) -> list[str]:
        langs = [lang for (cat, lang), pool in self.pools.items() if cat == category and pool]
        if category == "search":
            langs = [lang for lang, pool in self.headlines.items() if pool]
        return sorted(langs)

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


def _clough_threads(root: Path) -> list[Text]:
    folder = root / "clough-plagiarism-short-answers"
    topics = {
        "a": "Inheritance in object-oriented programming",
        "b": "How does PageRank work?",
        "c": "The vector space model in information retrieval",
        "d": "Bayes' theorem and conditional probability",
        "e": "Dynamic programming",
    }
    threads = []
    for task, topic in topics.items():
        answers = sorted(folder.glob(f"g*_task{task}.txt"))
        # threads of four posts: a forum topic with replies
        for start in range(0, len(answers), 4):
            posts = []
            for path in answers[start : start + 4]:
                text = path.read_bytes().decode("utf-8", errors="replace")
                posts.append(" ".join(text.split()))
            if posts:
                threads.append(
                    Text(
                        f"clough/task{task}/{start // 4}",
                        "en",
                        f"Forum: {topic}",
                        tuple(posts),
                    )
                )
    return threads


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
_NEWSY = re.compile(r"news|article|story|stories|/20\d\d/|/19\d\d/|press|times|post|herald", re.I)


def _trafilatura(root: Path) -> tuple[list[Text], list[Text]]:
    """(English blog/forum pages, English other pages) of trafilatura-eval, real HTML."""
    import py3langid

    folder = root / "trafilatura-eval"
    meta = json.loads((folder / "evaldata.json").read_text(encoding="utf-8"))
    wanted: dict[str, tuple[str, bool]] = {}
    for url, v in meta.items():
        sample = " ".join(v.get("with") or [])[:1500]
        if len(sample) < 80 or py3langid.classify(sample)[0] != "en":
            continue
        wanted[v["file"]] = (url, bool(_BLOG.search(url)))
    blogs: list[Text] = []
    others: list[Text] = []
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
            url, is_blog = wanted.pop(name)
            if not is_blog and _NEWSY.search(url):
                continue
            t = re.search(rb"<title[^>]*>(.*?)</title>", html, re.I | re.S)
            title = " ".join(t.group(1).decode("utf-8", "replace").split()) if t else url
            (blogs if is_blog else others).append(
                Text(f"trafilatura/{name}", "en", title, (), html)
            )
    blogs.sort(key=lambda x: x.source)
    others.sort(key=lambda x: x.source)
    return blogs, others


def _webkb_text(page: WebkbPage) -> Text:
    m = re.search(rb"<title[^>]*>(.*?)</title>", page.body, re.I | re.S)
    title = " ".join(m.group(1).decode("latin-1").split()) if m else page.url
    html = page.body.decode("latin-1").encode("utf-8")
    return Text(f"webkb/{page.label}/{page.url}", "en", title or page.url, (), html)


#: Lenta.ru rubric codes per category (see lenta-rubrics-asryan/SOURCE.txt).
LENTA = {"scientific": (8,), "news": (0, 2, 3, 4), "other": (1, 5, 6, 7)}
#: tgcontest labels per category.
TGCONTEST = {
    "scientific": ("science", "technology"),
    "social": ("not_news", "other"),
    "media": ("entertainment",),
    "news": ("society", "sports"),
    "other": ("economy",),
}
#: BBC topics per category.
BBC = {"scientific": ("tech",), "media": ("entertainment",), "news": ("politics", "sport"),
       "other": ("business",)}  # fmt: skip


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
    """
    pools: dict[tuple[str, str], list[Text]] = defaultdict(list)
    bbc = _bbc(root)
    for source, topic, title, paras in bbc:
        for cat, topics in BBC.items():
            if topic in topics:
                pools[(cat, "en")].append(Text(source, "en", title, tuple(paras)))
    for source, rubric, title, paras in _lenta(root):
        for cat, rubrics in LENTA.items():
            if rubric in rubrics:
                pools[(cat, "ru")].append(Text(source, "ru", title, tuple(paras)))
    for source, lang, label, title, paras in _tgcontest(root):
        for cat, labels in TGCONTEST.items():
            if label in labels:
                pools[(cat, lang)].append(Text(source, lang, title, tuple(paras)))
    for page in misc_pages:
        if len(page.body) < 400:
            continue
        # research projects are scientific communities; students' personal home pages
        # are the social web of 1997 (as GeoCities and Tripod pages were)
        cat = {"project": "scientific", "student": "social"}.get(page.label, "universities")
        pools[(cat, "en")].append(_webkb_text(page))
    pools[("social", "en")].extend(_clough_threads(root))
    for text in _aeb(root):
        pools[("news", text.language)].append(text)
    blogs, others = _trafilatura(root)
    pools[("social", "en")].extend(blogs)
    pools[("other", "en")].extend(others)

    rng = random.Random(seed)
    ordered = {}
    for key in sorted(pools):
        # each source shuffled, then taken in turn, so a category's sites draw on all of
        # its sources evenly (not mostly on the largest one)
        by_source: dict[str, list[Text]] = defaultdict(list)
        for text in sorted(pools[key], key=lambda t: t.source):
            by_source[text.source.split("/", 1)[0]].append(text)
        queues = []
        for name in sorted(by_source):
            texts = by_source[name]
            rng.shuffle(texts)
            queues.append(texts)
        pool: list[Text] = []
        for i in range(max(len(q) for q in queues)):
            pool.extend(q[i] for q in queues if i < len(q))
        ordered[key] = pool
    headlines: dict[str, list[tuple[str, str, str]]] = {"en": [], "ru": []}
    for source, _topic, title, paras in bbc:
        headlines["en"].append((source, title, _SENT.split(paras[0])[0]))
    for text in ordered.get(("news", "ru"), []):
        if text.paragraphs:
            headlines["ru"].append((text.source, text.title, text.paragraphs[0][:240]))
    return TextPools(ordered, headlines)
