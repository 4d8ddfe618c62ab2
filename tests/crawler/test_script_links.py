"""A quality floor of the speculative links (:mod:`crawler.script_links`) on real pages.

150 real pages of the trafilatura evaluation corpus (``../shared/data``; the first by file
name): the share of their speculative links that the automatic checks find real (an
``<a href>`` of the page, or the site's own link scheme) stays above a floor measured on
them (``bench/script_links.py`` measures all 990 pages and judges a sample by hand), and
none of them is a file of a script, style or picture.
"""

from __future__ import annotations

import collections
import json
import tarfile
from pathlib import Path

import pytest

PAGES = 150
#: measured 0.55 on these pages (2026-11-28); a regression of the filters falls below
FLOOR = 0.5


@pytest.fixture(scope="module")
def real_pages(shared_data: Path) -> list[tuple[str, bytes]]:
    folder = shared_data / "trafilatura-eval"
    evaldata = json.loads((folder / "evaldata.json").read_text(encoding="utf-8"))
    by_file = {v["file"]: url for url, v in evaldata.items()}
    wanted = set(sorted(by_file)[:PAGES])
    out = []
    with tarfile.open(folder / "trafilatura-eval-html.tar.gz") as tar:  # one pass
        for member in tar:
            name = member.name.rsplit("/", 1)[-1]
            f = tar.extractfile(member) if name in wanted else None
            if f is not None:
                out.append((by_file[name], f.read()))
    assert len(out) == PAGES
    return out


def test_most_speculative_links_of_real_pages_are_real(
    real_pages: list[tuple[str, bytes]],
) -> None:
    from scrapy.http import HtmlResponse

    from crawler.links import page_links
    from crawler.script_links import NOT_PAGES, script_links, verdicts

    counts: collections.Counter[str] = collections.Counter()
    for url, body in real_pages:
        response = HtmlResponse(url, body=body)
        found = [target for target, _ in script_links(response)]
        anchors = [link.target for link in page_links(response)]
        counts.update(verdicts(found, anchors))
        for target in found:
            name = target.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
            assert "." not in name or name.rsplit(".", 1)[-1].lower() not in NOT_PAGES, target
    total = sum(counts.values())
    assert total > PAGES  # real pages have many: the extraction runs
    real = (counts["confirmed"] + counts["plausible"]) / total
    assert real >= FLOOR, counts
