"""MkDocs hooks of ``make docs``: the benchmark results join the site.

``docs/measurements.md`` links each ``bench/results/*.md`` as ``../bench/results/NAME.md`` so
that the links work when the Markdown is read in the repository; on the site those pages
are added under ``bench/results/`` and the links rewritten to them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

REPO = Path(__file__).resolve().parent.parent


def on_files(files: Files, config: Any) -> Files:
    """Add every bench/results page (Markdown and its figures) to the site."""
    for path in sorted((REPO / "bench" / "results").glob("*")):
        if path.suffix not in (".md", ".png"):
            continue
        files.append(
            File(
                f"bench/results/{path.name}",
                src_dir=str(REPO),
                dest_dir=config["site_dir"],
                use_directory_urls=config["use_directory_urls"],
            )
        )
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Point links to ../bench/results/ at the pages added by :func:`on_files`."""
    if page.file.src_uri.startswith("bench/"):
        return markdown
    depth = page.file.src_uri.count("/")
    return markdown.replace("](../bench/results/", "](" + "../" * depth + "bench/results/")
