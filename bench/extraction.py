"""Main-text extraction quality and speed, site-template removal, language and shingling.

One run writes ``bench/results/extraction.json`` and ``.md``:

1. **Scrapinghub Article Extraction Benchmark** (181 pages, full gold text): token-level
   precision/recall/F1 (bags of ``\\w+`` tokens) and the benchmark's own 4-gram shingle
   F1 (:mod:`extract.evaluate`), per extractor, with pages/second on 2 worker processes.
2. **trafilatura evaluation** (990 pages, ``evaldata.json``): snippet precision/recall/F1
   exactly as trafilatura's ``tests/evaluate.py`` counts them.
   Extractors, each given the raw bytes and decoding them its own way:
   this project's :func:`extract.extract_page` (project defaults, language filter off so
   that every page is scored) and three variants of its options; trafilatura
   ``extract()`` with its defaults (comments included, fallbacks on); readability-lxml
   (``Document.summary()``, block elements as lines); jusText (default parameters, the
   stop list of the page's language as identified by py3langid, English when jusText
   has none).
3. **Site templates**: what :class:`extract.templates.TemplateRemover` removes and gains
   (a) on the trafilatura-eval pages grouped by registered domain (groups of >= 3 pages;
   snippet scores before/after), (b) on the WebKB pages of the 4 universities grouped
   by host in chunks of 20 pages (as a domain document sees them): share of text removed
   and leave-one-out 1-NN page-type accuracy by Jaccard of word sets, before/after,
   (c) on a 29-page shop crawl (ClueWeb WARC sample).
4. **Language identification** on the distinct texts of the tgcontest same-story pairs
   (392 ru + 66 en, labelled).
5. **Shingling speed**: all 21,578 Reuters stories tokenised, stemmed and shingled.

Run: ``.venv/bin/python bench/extraction.py`` (about 10-20 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import logging
import multiprocessing
import platform
import random
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, machine_info, write_results  # noqa: E402
from extract.evaluate import (  # noqa: E402
    aeb_counts,
    data_dir,
    iter_trafilatura_eval,
    load_aeb,
    scores_from_counts,
    snippet_counts,
    snippet_scores,
)
from extract.language import identify_language  # noqa: E402
from extract.page import ExtractOptions, extract_page  # noqa: E402

WORKERS = 2

OURS = "webometrics (ours, defaults)"
VARIANTS: dict[str, ExtractOptions] = {
    OURS: ExtractOptions(languages=()),
    "ours, favor=precision": ExtractOptions(languages=(), favor="precision"),
    "ours, favor=recall": ExtractOptions(languages=(), favor="recall"),
    "ours, fast (no fallback)": ExtractOptions(languages=(), fallback=False),
}
BASELINES = ("trafilatura (defaults)", "readability-lxml", "jusText")

_BLOCK = {
    "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table",
    "blockquote", "pre", "section", "article", "header", "footer", "dd", "dt", "figcaption",
}  # fmt: skip
_JUSTEXT_LANG = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "pt": "Portuguese",
    "it": "Italian", "pl": "Polish", "ru": "Russian", "nl": "Dutch", "uk": "Ukrainian",
    "cs": "Czech", "sv": "Swedish", "da": "Danish", "fi": "Finnish", "hu": "Hungarian",
    "ro": "Romanian", "tr": "Turkish", "no": "Norwegian_Bokmal", "ca": "Catalan",
}  # fmt: skip

PAGES: list[tuple[str | None, bytes]] = []  # (url, html) of the dataset being run


def _html_to_text(fragment: str) -> str:
    import lxml.html

    if not fragment.strip():
        return ""
    root = lxml.html.fromstring(fragment)
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.lower() in _BLOCK:
            el.tail = "\n" + (el.tail or "")
    return re.sub(r"[ \t]*\n\s*", "\n", root.text_content()).strip()


def run_extractor(name: str, url: str | None, html: bytes) -> str:
    """The main text one extractor gives for one page ('' on failure)."""
    try:
        if name in VARIANTS:
            return extract_page(html, url, VARIANTS[name]).text
        if name == "trafilatura (defaults)":
            import trafilatura

            return trafilatura.extract(html, url=url) or ""
        if name == "readability-lxml":
            from readability import Document

            return _html_to_text(Document(html).summary(html_partial=True))
        if name == "jusText":
            import justext

            lang, _ = identify_language(_html_to_text(html.decode("utf-8", "replace"))[:5000])
            stoplist = justext.get_stoplist(_JUSTEXT_LANG.get(lang or "", "English"))
            paragraphs = justext.justext(html, stoplist)
            return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)
    except Exception as exc:  # a failing library scores as an empty extraction
        logging.getLogger(__name__).debug("%s failed on %s: %s", name, url, exc)
        return ""
    raise ValueError(name)


def _task(args: tuple[str, int]) -> tuple[int, str, float]:
    name, i = args
    url, html = PAGES[i]
    started = time.process_time()
    text = run_extractor(name, url, html)
    return i, text, time.process_time() - started


def _init() -> None:
    logging.disable(logging.CRITICAL)
    # warm every extractor up outside the timed runs
    warm = PAGES[0][1]
    for name in (*VARIANTS, *BASELINES):
        run_extractor(name, PAGES[0][0], warm)


def extract_all(names: list[str], pages: list[tuple[str | None, bytes]]) -> dict[str, Any]:
    """Every extractor over every page in a 2-process pool: texts and pages/second."""
    global PAGES
    PAGES = pages
    out: dict[str, Any] = {}
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(WORKERS, initializer=_init) as pool:
        pool.map(_task, [(names[0], 0)] * WORKERS)  # workers are up and warm
        for name in names:
            started = time.perf_counter()
            texts = [""] * len(pages)
            cpu = 0.0
            for i, text, seconds in pool.imap_unordered(
                _task, [(name, i) for i in range(len(pages))], chunksize=2
            ):
                texts[i] = text
                cpu += seconds
            wall = time.perf_counter() - started
            cpu_ms = 1000 * cpu / len(pages)
            out[name] = {
                "texts": texts,
                "wall_pages_per_second": round(len(pages) / wall, 2),
                "cpu_ms_per_page": round(cpu_ms, 2),
                "pages_per_second": round(WORKERS * 1000 / cpu_ms, 1),
            }
            print(
                f"  {name:32s} {cpu_ms:6.1f} CPU ms/page, {len(pages) / wall:6.1f} pages/s wall",
                flush=True,
            )
    return out


def bench_aeb(names: list[str]) -> dict[str, Any]:
    pages = load_aeb()
    print(f"Scrapinghub AEB: {len(pages)} pages", flush=True)
    runs = extract_all(names, [(p.url, p.html) for p in pages])
    table = {}
    for name, run in runs.items():
        tok = scores_from_counts(
            [aeb_counts(p.gold, t, 1) for p, t in zip(pages, run["texts"], strict=True)]
        )
        sh4 = scores_from_counts(
            [aeb_counts(p.gold, t, 4) for p, t in zip(pages, run["texts"], strict=True)]
        )
        table[name] = {
            "token": tok.__dict__,
            "shingle4": sh4.__dict__,
            "pages_per_second": run["pages_per_second"],
            "cpu_ms_per_page": run["cpu_ms_per_page"],
            "wall_pages_per_second": run["wall_pages_per_second"],
        }
        print(f"  {name:32s} token F1 {tok.f1:.4f}  4-gram F1 {sh4.f1:.4f}", flush=True)
    return {"n_pages": len(pages), "extractors": table}


def bench_trafilatura_eval(names: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    pages = list(iter_trafilatura_eval())
    print(f"trafilatura evaluation: {len(pages)} pages", flush=True)
    runs = extract_all(names, [(p.url, p.html) for p in pages])
    table = {}
    for name, run in runs.items():
        counts = [
            snippet_counts(p.with_, p.without, t) for p, t in zip(pages, run["texts"], strict=True)
        ]
        s = snippet_scores(counts)
        table[name] = {
            "snippets": s.__dict__,
            "tp_fp_fn_tn": [sum(c[j] for c in counts) for j in range(4)],
            "pages_per_second": run["pages_per_second"],
            "cpu_ms_per_page": run["cpu_ms_per_page"],
            "wall_pages_per_second": run["wall_pages_per_second"],
        }
        print(f"  {name:32s} P {s.precision:.4f} R {s.recall:.4f} F1 {s.f1:.4f}", flush=True)
    templates = _templates_trafilatura_eval(pages, runs[OURS]["texts"])
    return {"n_pages": len(pages), "extractors": table}, templates


def _templates_trafilatura_eval(pages: list, texts: list[str]) -> dict[str, Any]:
    from core.domains import registered_domain
    from extract.templates import TemplateRemover

    groups: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(pages):
        groups[registered_domain(p.url)].append(i)
    before, after, rows = [], [], []
    for domain, idx in sorted(groups.items()):
        if len(idx) < 3:
            continue
        tr = TemplateRemover().fit([texts[i] for i in idx])
        for i in idx:
            p = pages[i]
            before.append(snippet_counts(p.with_, p.without, texts[i]))
            after.append(snippet_counts(p.with_, p.without, tr.transform_one(texts[i])))
        rows.append(
            {
                "domain": domain,
                "pages": len(idx),
                "template_blocks": tr.n_template_blocks_,
                "removed_share": round(tr.removed_share_, 4),
            }
        )
    return {
        "groups": rows,
        "before": snippet_scores(before).__dict__,
        "after": snippet_scores(after).__dict__,
    }


def _jaccard_1nn(sets: list[np.ndarray], labels: list[str], mask: np.ndarray) -> float:
    import scipy.sparse as sp

    vocab: dict[int, int] = {}
    indices: list[int] = []
    indptr = [0]
    for s in sets:
        indices.extend(vocab.setdefault(v, len(vocab)) for v in s.tolist())
        indptr.append(len(indices))
    x = sp.csr_matrix(
        (np.ones(len(indices), dtype=np.float32), indices, indptr), shape=(len(sets), len(vocab))
    )
    sel = np.where(mask)[0]
    xs = x[sel]
    inter = (xs @ xs.T).toarray()
    size = np.asarray(xs.sum(axis=1)).ravel()
    jac = inter / np.maximum(size[:, None] + size[None, :] - inter, 1)
    np.fill_diagonal(jac, -1.0)
    lab = np.asarray(labels)[sel]
    return float((lab[jac.argmax(axis=1)] == lab).mean())


def bench_templates_webkb() -> dict[str, Any]:
    from core.domains import host_of
    from extract.shingles import Shingler
    from extract.templates import TemplateRemover
    from testbed.webkb import read_webkb

    archive = data_dir("webkb-4universities") / "webkb.tar.gz"
    raw = [p for p in read_webkb(archive) if p.location is None and p.folder != "misc"]
    print(f"WebKB: {len(raw)} pages of the 4 universities", flush=True)
    run = extract_all([OURS], [(p.url, p.body) for p in raw])[OURS]
    ok = [(p, t) for p, t in zip(raw, run["texts"], strict=True) if t]
    labels = [p.label for p, _ in ok]
    mask = np.array([lab != "other" for lab in labels])
    shingler = Shingler(k=1, language="en")
    base_texts = [t for _, t in ok]
    result: dict[str, Any] = {"pages": len(raw), "pages_with_text": len(ok), "settings": []}
    rng = random.Random(0)
    by_host: dict[str, list[int]] = defaultdict(list)
    for i, (p, _) in enumerate(ok):
        by_host[host_of(p.url)].append(i)
    chunks: list[list[int]] = []
    for _, idx in sorted(by_host.items()):
        idx = idx[:]
        rng.shuffle(idx)
        chunks.extend(idx[c : c + 20] for c in range(0, len(idx), 20))
    total = sum(len(t) for t in base_texts)
    settings: list[tuple[int, float] | tuple[None, None]] = [
        (None, None),
        (3, 0.5),
        (3, 0.3),
        (3, 0.2),
        (2, 0.2),
    ]
    for min_pages, min_share in settings:
        texts = list(base_texts)
        blocks = 0
        if min_pages and min_share is not None:
            for chunk in chunks:
                if len(chunk) < min_pages:
                    continue
                tr = TemplateRemover(min_pages=min_pages, min_share=min_share).fit(
                    [base_texts[i] for i in chunk]
                )
                blocks += tr.n_template_blocks_
                for i in chunk:
                    texts[i] = tr.transform_one(base_texts[i])
        acc = _jaccard_1nn(shingler.hashes_many(texts), labels, mask)
        kept = sum(len(t) for t in texts)
        row = {
            "min_pages": min_pages,
            "min_share": min_share,
            "template_blocks": blocks,
            "removed_share": round(1 - kept / total, 4),
            "nn1_accuracy": round(acc, 4),
        }
        result["settings"].append(row)
        print(f"  templates {min_pages}/{min_share}: {row}", flush=True)
    result["n_scored"] = int(mask.sum())
    return result


def bench_templates_shop() -> dict[str, Any]:
    from warcio.archiveiterator import ArchiveIterator

    from extract.templates import TemplateRemover

    path = data_dir("warc-samples") / "resiliparse" / "clueweb-quirk.warc.gz"
    texts = []
    with path.open("rb") as fh:
        for rec in ArchiveIterator(fh):
            if rec.rec_type == "response":
                url = rec.rec_headers.get_header("WARC-Target-URI")
                texts.append(extract_page(rec.content_stream().read(), url, VARIANTS[OURS]).text)
    tr = TemplateRemover().fit(texts)
    return {
        "pages": len(texts),
        "distinct_texts": len(set(texts)),
        "template_blocks": tr.n_template_blocks_,
        "all_template": tr.all_template_,
        "removed_share": round(tr.removed_share_, 4),
    }


def bench_language() -> dict[str, Any]:
    from corpora.tgcontest import load_story_pairs, pair_corpus

    texts, languages, _ = pair_corpus(load_story_pairs())
    seen: dict[str, str | None] = {}
    for t, lang in zip(texts, languages, strict=True):
        seen.setdefault(t, lang)
    started = time.perf_counter()
    predicted = [identify_language(t) for t in seen]
    seconds = time.perf_counter() - started
    gold = list(seen.values())
    correct = sum(p[0] == g for p, g in zip(predicted, gold, strict=True))
    scores = [p[1] or 0 for p in predicted]
    return {
        "texts": len(gold),
        "by_language": dict(Counter(gold)),
        "accuracy": round(correct / len(gold), 4),
        "mean_confidence": round(float(np.mean(scores)), 4),
        "texts_per_second": round(len(gold) / seconds, 1),
    }


def bench_shingling() -> dict[str, Any]:
    from corpora.reuters import load_reuters
    from extract.shingles import Shingler

    texts = [d.text for d in load_reuters()]
    words = sum(len(t.split()) for t in texts)
    rows = []
    for k in (1, 3, 5):
        for language in ("en", None):
            best = float("inf")
            for _ in range(3):
                started = time.process_time()  # CPU time: the machine is shared
                Shingler(k=k, language=language).hashes_many(texts)
                best = min(best, time.process_time() - started)
            rows.append({"k": k, "language": language or "by script", "seconds": round(best, 3)})
            print(f"  shingling k={k} {language}: {best:.2f} s", flush=True)
    return {"documents": len(texts), "words": words, "runs": rows}


def bench_stage() -> dict[str, Any]:
    """``webometrics extract`` end to end: the AEB and trafilatura-eval pages stored in a
    fresh SQLite database, extracted by the stage with 2 workers, documents built."""
    import tempfile
    import zlib

    from core.domains import host_of, registered_domain
    from core.settings import Settings
    from store import make_engine, schema
    from store.models import Page
    from store.session import session_scope
    from webometrics.stages.extract import run

    pages = [(p.url, p.html) for p in load_aeb()]
    pages += [(p.url, p.html) for p in iter_trafilatura_eval()]
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{tmp}/bench.db")
        schema.upgrade(engine)
        seen = set()
        with session_scope(engine) as s:
            for url, html in pages:
                if url in seen:
                    continue
                seen.add(url)
                host = host_of(url)
                s.add(
                    Page(
                        url=url,
                        host=host,
                        registered_domain=registered_domain(host),
                        role="external",
                        http_status=200,
                        content_type="text/html",
                        body=zlib.compress(html),
                        extraction_status="pending",
                    )
                )
        settings = Settings().replace(extract={"workers": WORKERS, "batch_size": 100})
        stats = run(engine, settings).stats()
        engine.dispose()
    print(f"  stage: {stats}", flush=True)
    return stats


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("trafilatura", "readability-lxml", "jusText", "py3langid", "lxml"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            out[dist] = "missing"
    return out


def _fmt(x: float) -> str:
    return f"{x:.3f}"


def markdown(res: dict[str, Any]) -> str:
    lines = ["# Extraction benchmark", ""]
    lines.append(
        f"`{res['command']}` — {res['machine']['cpus']} CPUs, pool of {WORKERS} processes; "
        + ", ".join(f"{k} {v}" for k, v in res["versions"].items())
        + "."
    )
    lines += [
        "",
        "Speed: CPU time per page measured in each worker (the machine is shared, so wall "
        "times are noisy; they are in the JSON); pages/s on 2 cores = 2 / CPU time per "
        "page. Ours includes decoding, metadata (title, date, site name) and language "
        "identification, which `trafilatura.extract()` does not do.",
    ]
    aeb = res["aeb"]["extractors"]
    lines += [
        "",
        f"## Scrapinghub Article Extraction Benchmark ({res['aeb']['n_pages']} pages)",
        "",
        "Token-level bags of `\\w+` tokens, and the benchmark's own 4-gram shingle F1; "
        "precision and recall averaged over pages.",
        "",
        "| extractor | token P | token R | token F1 | 4-gram F1 | CPU ms/page | pages/s, 2 cores |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in aeb.items():
        t = r["token"]
        lines.append(
            f"| {name} | {_fmt(t['precision'])} | {_fmt(t['recall'])} | **{_fmt(t['f1'])}** | "
            f"{_fmt(r['shingle4']['f1'])} | {r['cpu_ms_per_page']:.1f} | "
            f"{r['pages_per_second']:.0f} |"
        )
    te = res["trafilatura_eval"]["extractors"]
    lines += [
        "",
        f"## trafilatura evaluation ({res['trafilatura_eval']['n_pages']} pages)",
        "",
        "Snippets that must / must not be in the main text, counted as trafilatura's "
        "`tests/evaluate.py` does.",
        "",
        "| extractor | precision | recall | F1 | CPU ms/page | pages/s, 2 cores |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in te.items():
        s = r["snippets"]
        lines.append(
            f"| {name} | {_fmt(s['precision'])} | {_fmt(s['recall'])} | **{_fmt(s['f1'])}** | "
            f"{r['cpu_ms_per_page']:.1f} | {r['pages_per_second']:.0f} |"
        )
    goal = res["goal"]
    lines += [
        "",
        "Goal (ours ≥ trafilatura defaults on both sets): "
        f"**{'met' if goal['met'] else 'NOT met'}** "
        f"— AEB token F1 {goal['aeb_ours']:.4f} vs {goal['aeb_trafilatura']:.4f}, "
        f"trafilatura-eval F1 {goal['te_ours']:.4f} vs {goal['te_trafilatura']:.4f}.",
        "",
        "## Site-template removal",
        "",
    ]
    tpl = res["templates"]
    w = tpl["webkb"]
    lines += [
        f"WebKB, {w['pages_with_text']} pages of the 4 universities with text, per host in "
        f"chunks of 20 (a domain document's page cap); 1-NN page-type accuracy over the "
        f"{w['n_scored']} pages of the 6 real types (Jaccard of word sets):",
        "",
        "| min_pages | min_share | template blocks | text removed | 1-NN accuracy |",
        "|---|---|---|---|---|",
    ]
    for r in w["settings"]:
        lines.append(
            f"| {r['min_pages'] or 'off'} | {r['min_share'] or '-'} | {r['template_blocks']} | "
            f"{100 * r['removed_share']:.2f} % | {r['nn1_accuracy']:.4f} |"
        )
    t = tpl["trafilatura_eval"]
    lines += [
        "",
        "trafilatura-eval pages grouped by registered domain (groups of ≥ 3 pages: "
        + ", ".join(f"{g['domain']} {g['pages']}" for g in t["groups"])
        + f"): snippet F1 {t['before']['f1']:.4f} before, {t['after']['f1']:.4f} after "
        f"(template blocks found: {sum(g['template_blocks'] for g in t['groups'])}).",
        "",
        f"Shop crawl (ClueWeb sample, {tpl['shop']['pages']} pages): trafilatura returns the "
        f"same sidebar for every page ({tpl['shop']['distinct_texts']} distinct text); "
        f"{tpl['shop']['template_blocks']} template blocks, all pages template → kept whole "
        f"(removed {100 * tpl['shop']['removed_share']:.1f} %).",
        "",
    ]
    st = res["stage"]
    lines += [
        "## `webometrics extract` end to end (2 workers)",
        "",
        f"The {st['pages']} pages above stored in a fresh SQLite database and extracted by "
        f"the stage (project defaults: English and Russian kept): {st['pages_per_second']:.1f} "
        f"pages/s wall ({st['seconds']:.0f} s, spawn and warm-up of the workers included); "
        f"statuses {st['by_status']}; then {st['page_documents']} page and "
        f"{st['domain_documents']} domain documents in {st['documents_seconds']:.1f} s.",
        "",
    ]
    lang = res["language"]
    lines += [
        "## Language identification (tgcontest, labelled)",
        "",
        f"{lang['texts']} texts {lang['by_language']}: accuracy {lang['accuracy']:.4f}, mean "
        f"confidence {lang['mean_confidence']:.3f}, {lang['texts_per_second']:.0f} texts/s.",
        "",
        "## Shingling speed (one process)",
        "",
        f"All {res['shingling']['documents']:,} Reuters stories "
        f"({res['shingling']['words']:,} words), tokenised, stop words dropped, stemmed, "
        "shingled (`Shingler`, CPU seconds, best of 3):",
        "",
        "| k | language | seconds |",
        "|---|---|---|",
    ]
    for r in res["shingling"]["runs"]:
        lines.append(f"| {r['k']} | {r['language']} | {r['seconds']:.2f} |")
    lines.append("")
    return "\n".join(lines)


SMOKE_SKIP = "every extractor on the labelled extraction corpora (10-20 minutes)"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    logging.disable(logging.CRITICAL)
    names = [*VARIANTS, *BASELINES]
    started = time.perf_counter()
    res: dict[str, Any] = {
        "command": "python bench/extraction.py",
        "machine": machine_info("cpus", "platform"),
        "versions": _versions(),
    }
    res["aeb"] = bench_aeb(names)
    res["trafilatura_eval"], te_templates = bench_trafilatura_eval(names)
    res["templates"] = {
        "trafilatura_eval": te_templates,
        "webkb": bench_templates_webkb(),
        "shop": bench_templates_shop(),
    }
    print("webometrics extract (stage)", flush=True)
    res["stage"] = bench_stage()
    print("language", flush=True)
    res["language"] = bench_language()
    print("shingling", flush=True)
    res["shingling"] = bench_shingling()
    aeb_o = res["aeb"]["extractors"][OURS]["token"]["f1"]
    aeb_t = res["aeb"]["extractors"]["trafilatura (defaults)"]["token"]["f1"]
    te_o = res["trafilatura_eval"]["extractors"][OURS]["snippets"]["f1"]
    te_t = res["trafilatura_eval"]["extractors"]["trafilatura (defaults)"]["snippets"]["f1"]
    res["goal"] = {
        "met": aeb_o >= aeb_t and te_o >= te_t,
        "aeb_ours": aeb_o,
        "aeb_trafilatura": aeb_t,
        "te_ours": te_o,
        "te_trafilatura": te_t,
    }
    res["seconds"] = round(time.perf_counter() - started, 1)
    text = markdown(res)
    write_results(RESULTS / "extraction", res, text, indent=2, ensure_ascii=False)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
