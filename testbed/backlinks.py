"""The citing sites' backlink files: Majestic-style CSVs and URL lists (``DIR/citing/``)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from testbed.sites import stable_hash

MAJESTIC_COLUMNS = (
    "Target URL", "Source URL", "Anchor Text", "Source Crawl Date", "Source First Found Date",
    "Flag No Follow", "Flag Image Link", "Flag Redirect", "Flag Frame", "Flag Old Crawl",
    "Flag Alt Text", "Flag Mention", "Source Citation Flow", "Source Trust Flow",
    "Target Citation Flow", "Target Trust Flow", "Source Topical Trust Flow Topic 0",
    "Source Topical Trust Flow Value 0",
)  # fmt: skip


def write_citing(folder: Path, unis: list[dict[str, Any]]) -> None:
    """Majestic-style backlink CSVs (its web export's column names) and URL lists."""
    folder.mkdir(parents=True, exist_ok=True)
    all_rows: list[list[str]] = []
    all_urls: list[str] = []
    for uni in unis:
        rows = []
        for i, c in enumerate(uni["citing"]):
            flow = 10 + stable_hash("flow", c["url"]) % 40
            rows.append(
                [c["target"], c["url"], c["anchor"], f"2015-03-0{1 + i % 9}",
                 f"2014-11-1{i % 10}", "False", "False", "False", "False",
                 "False" if c["expected"] != "gone" else "True", "False", "False",
                 str(flow), str(flow // 2), "40", "35", "Reference/Education", str(flow // 3)]
            )  # fmt: skip
        urls = list(dict.fromkeys(c["url"] for c in uni["citing"]))
        for name, data in ((f"{uni['key']}.majestic.csv", rows),):
            with open(folder / name, "w", newline="", encoding="utf-8") as f:
                writer = csv.writer(f)
                writer.writerow(MAJESTIC_COLUMNS)
                writer.writerows(data)
        (folder / f"{uni['key']}.txt").write_text("\n".join(urls) + "\n", encoding="utf-8")
        all_rows.extend(rows)
        all_urls.extend(urls)
    with open(folder / "backlinks-majestic.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(MAJESTIC_COLUMNS)
        writer.writerows(all_rows)
    (folder / "citing-urls.txt").write_text(
        "\n".join(dict.fromkeys(all_urls)) + "\n", encoding="utf-8"
    )
