"""Speculative script links and ``render = "auto"`` on real pages (issue 35).

On the 990 real pages of the trafilatura evaluation corpus (``../shared/data``, news,
blogs, institutions of 2010-2020, their scripts and JSON blocks kept), this measures

1. **speculative links** (:func:`crawler.script_links.script_links`): how many a page gives,
   by where they were found (script, JSON), and how many are real links by two automatic
   checks: the same target is an ``<a href>`` of the page (*confirmed*), or it is on a
   host and under a first path segment that the page's ``<a href>`` links use
   (*plausible*: the site's own link scheme); the rest are *unconfirmed*.
   ``--sample N`` prints N unconfirmed ones at random (seed 35) to be judged by hand;
2. **render = "auto"** (:func:`crawler.render.needs_render`): the share of the pages it
   would send to the browser, by reason; ``--render N`` renders N of them in Debian's
   headless Chromium (their scripts from the network cannot load here: the time is the
   browser's own work on the page) and reports the time per page and the links the DOM
   adds.

Run: ``.venv/bin/python bench/script_links.py [--sample 40] [--render 20]``; writes
``bench/results/script_links.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import statistics
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import RESULTS, machine, run_date, write_results


def data_dir() -> Path:
    import os

    env = os.environ.get("WEBOMETRICS_DATA")
    path = Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"
    if not (path / "trafilatura-eval").is_dir():
        sys.exit(f"trafilatura-eval not found under {path}: set WEBOMETRICS_DATA")
    return path / "trafilatura-eval"


def pages() -> list[tuple[str, bytes]]:
    """(URL, HTML) of every page of the corpus."""
    folder = data_dir()
    evaldata = json.loads((folder / "evaldata.json").read_text(encoding="utf-8"))
    by_file = {v["file"]: url for url, v in evaldata.items()}
    out = []
    with tarfile.open(folder / "trafilatura-eval-html.tar.gz") as tar:
        for member in tar.getmembers():
            name = member.name.rsplit("/", 1)[-1]
            f = tar.extractfile(member) if name in by_file else None
            if f is not None:
                out.append((by_file[name], f.read()))
    return out


def measure(corpus: list[tuple[str, bytes]]) -> dict[str, Any]:
    from scrapy.http import HtmlResponse

    from crawler.links import page_links
    from crawler.render import needs_render
    from crawler.script_links import script_links, verdicts

    kinds: collections.Counter[str] = collections.Counter()
    tally: collections.Counter[tuple[str, str]] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    unconfirmed: list[tuple[str, str, str]] = []
    with_links = 0
    seconds = 0.0
    flagged: list[tuple[str, bytes]] = []
    for url, body in corpus:
        response = HtmlResponse(url, body=body)
        anchors = {link.target for link in page_links(response)}
        start = time.perf_counter()
        found = script_links(response)
        seconds += time.perf_counter() - start
        with_links += bool(found)
        checks = verdicts((target for target, _ in found), anchors)
        for (target, found_in), checked in zip(found, checks, strict=True):
            kinds[found_in] += 1
            if checked == "unconfirmed":
                unconfirmed.append((url, target, found_in))
            tally[(found_in, checked)] += 1
        reason = needs_render(response)
        if reason is not None:
            reasons[reason] += 1
            flagged.append((url, body))
    return {
        "pages": len(corpus),
        "pages_with_speculative": with_links,
        "speculative": dict(kinds),
        "verdicts": {f"{k}/{v}": n for (k, v), n in sorted(tally.items())},
        "ms_per_page": 1000 * seconds / max(1, len(corpus)),
        "auto_reasons": dict(reasons.most_common()),
        "auto_pages": sum(reasons.values()),
        "_unconfirmed": unconfirmed,
        "_flagged": flagged,
    }


async def render_sample(flagged: list[tuple[str, bytes]], n: int) -> dict[str, Any]:
    from crawler.render import Renderer, find_browser

    renderer = Renderer(find_browser("chromium"), timeout=15.0, user_agent="webometrics-bench")
    sample = random.Random(35).sample(flagged, min(n, len(flagged)))
    times: list[float] = []
    added: list[int] = []
    failed = 0
    from scrapy.http import HtmlResponse

    from crawler.links import page_links

    await renderer.links("http://warm.up/", b"<html><body></body></html>", "text/html")
    for url, body in sample:
        anchors = {link.target for link in page_links(HtmlResponse(url, body=body))}
        start = time.perf_counter()
        try:
            found = await renderer.links(url, body, "text/html")
        except Exception:
            failed += 1
            continue
        times.append(time.perf_counter() - start)
        added.append(sum(1 for target, _ in found if target not in anchors))
    await renderer.close()
    return {
        "rendered": len(times),
        "failed": failed,
        "seconds_median": statistics.median(times) if times else None,
        "seconds_mean": statistics.fmean(times) if times else None,
        "seconds_max": max(times) if times else None,
        "pages_with_new_links": sum(1 for a in added if a),
        "new_links_mean": statistics.fmean(added) if added else None,
    }


def report(result: dict[str, Any]) -> str:
    n = result["pages"]
    spec = result["speculative"]
    total = sum(spec.values())
    lines = [
        '# Speculative script links and render = "auto" on real pages',
        "",
        f"{run_date()}; {machine()}. The 990 real pages of the trafilatura evaluation",
        "corpus (`bench/script_links.py`). Confirmed: the target is also an `<a href>` of",
        "the page; plausible: same host and first path segment as the page's `<a href>`",
        "links; unconfirmed: neither (judged by hand on a sample, see",
        "docs/hostile-sites-scripts.md).",
        "",
        f"Pages with speculative links: {result['pages_with_speculative']} of {n};",
        f"speculative links: {total} ({', '.join(f'{k} {v}' for k, v in spec.items())});",
        f"extraction time {result['ms_per_page']:.2f} ms per page.",
        "",
        "| found in | confirmed | plausible | unconfirmed |",
        "|---|---:|---:|---:|",
    ]
    for kind in sorted(spec):
        v = [
            result["verdicts"].get(f"{kind}/{x}", 0)
            for x in ("confirmed", "plausible", "unconfirmed")
        ]
        lines.append(f"| {kind} | {v[0]} | {v[1]} | {v[2]} |")
    lines += [
        "",
        f'render = "auto" would render {result["auto_pages"]} of {n} pages '
        f"({100 * result['auto_pages'] / n:.0f} %):",
        "",
        "| reason | pages |",
        "|---|---:|",
        *(f"| {r} | {c} |" for r, c in result["auto_reasons"].items()),
    ]
    rs = result.get("render")
    if rs:
        lines += [
            "",
            f"Rendered {rs['rendered']} of them in headless Chromium ({rs['failed']} failed; "
            "the scripts they load from the network cannot load here):",
            f"median {rs['seconds_median']:.2f} s, mean {rs['seconds_mean']:.2f} s, "
            f"max {rs['seconds_max']:.2f} s per page; {rs['pages_with_new_links']} pages "
            f"gained links, {rs['new_links_mean']:.1f} new links per page on average.",
        ]
    return "\n".join(lines) + "\n"


SMOKE_SKIP = (
    "reads the 990 real pages of the trafilatura corpus and may render pages in Chromium (a minute)"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--sample", type=int, default=0, help="print N unconfirmed links")
    parser.add_argument("--render", type=int, default=0, help="render N auto-flagged pages")
    args = parser.parse_args(argv)
    result = measure(pages())
    unconfirmed = result.pop("_unconfirmed")
    flagged = result.pop("_flagged")
    if args.sample:
        for url, target, kind in random.Random(35).sample(unconfirmed, args.sample):
            print(f"{kind}\t{target}\t(on {url})")
    if args.render:
        result["render"] = asyncio.run(render_sample(flagged, args.render))
    md = report(result)
    print(md)
    write_results(RESULTS / "script_links", result, md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
