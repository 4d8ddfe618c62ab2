"""Rendering for ``webometrics report``: a table as CSV and GitHub-flavoured Markdown,
and the category shares per university and per country as a stacked-bar figure (PNG).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from core.choices import UNKNOWN
from webometrics.commands.report.i18n import current


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.0f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table (numbers right-aligned).

    Examples
    --------
    >>> print(markdown_table(["a", "n"], [["x", 1], ["y", 2.5]]))
    | a | n |
    |---|--:|
    | x | 1 |
    | y | 2.5 |
    """
    numeric = [
        bool(rows) and all(isinstance(r[i], int | float) or r[i] is None for r in rows)
        for i in range(len(header))
    ]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("--:" if n else "---" for n in numeric) + "|",
    ]
    lines += ["| " + " | ".join(_cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def write_table(
    out: Path, name: str, header: Sequence[str], rows: Sequence[Sequence[Any]], title: str
) -> list[Path]:
    csv_path = out / f"{name}.csv"
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows([["" if v is None else v for v in r] for r in rows])
    md_path = out / f"{name}.md"
    body = markdown_table(header, rows) if rows else "_no data_"
    md_path.write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
    return [csv_path, md_path]


def table_rows(items: Sequence[Any], fields: Sequence[str]) -> list[list[Any]]:
    out = []
    for it in items:
        row = []
        for f in fields:
            v = getattr(it, f)
            row.append("; ".join(map(str, v)) if isinstance(v, tuple) else v)
        out.append(row)
    return out


def share_figure(
    path: Path,
    uni_rows: Sequence[Any],
    country_rows: Sequence[Any],
    order: Sequence[str],
    labels: dict[str, str],
    colors: dict[str, str],
    title: str,
) -> Path:
    """A stacked bar chart of category shares per university and per country, over the
    domains with evidence (``known_share``; unknown left out and counted in the labels),
    each category in its fixed colour."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    unknown: dict[Any, int] = {}
    for r in uni_rows:
        if r.category == UNKNOWN:
            unknown[(r.country, r.university)] = r.domains
    for r in country_rows:
        if r.category == UNKNOWN:
            unknown[r.country] = r.domains
    uni_rows = [r for r in uni_rows if r.category != UNKNOWN]
    country_rows = [r for r in country_rows if r.category != UNKNOWN]
    cats = [c for c in order if any(r.category == c for r in [*uni_rows, *country_rows])]
    cats += sorted({r.category for r in [*uni_rows, *country_rows]} - set(cats))
    tab20 = cast(ListedColormap, plt.get_cmap("tab20"))
    spare = iter(cast("Sequence[Any]", tab20.colors)[1::2])  # light tones, categories without one
    colours = {c: colors.get(c) or next(spare, "#cccccc") for c in cats}
    unis = sorted(
        {(r.country, r.university) for r in uni_rows}
        | set(k for k in unknown if isinstance(k, tuple))
    )
    countries = sorted(
        {r.country for r in country_rows} | {k for k in unknown if isinstance(k, str)}
    )
    fig, axes = plt.subplots(
        1,
        2,
        figsize=(13, max(3.0, 0.45 * max(len(unis), len(countries)) + 2.0)),
        gridspec_kw={"width_ratios": [3, 2]},
    )
    for ax, keys, rows, key_of in (
        (axes[0], unis, uni_rows, lambda r: (r.country, r.university)),
        (axes[1], countries, country_rows, lambda r: r.country),
    ):
        share = {(key_of(r), r.category): r.known_share or 0.0 for r in rows}
        _share_bars(ax, keys, share, cats, colours, labels, unknown)
    tr = current()
    axes[0].set_title(tr.text("per university"))
    axes[1].set_title(tr.text("per country"))
    handles, names = axes[0].get_legend_handles_labels()
    if not handles:
        handles, names = axes[1].get_legend_handles_labels()
    if handles:
        fig.legend(handles, names, loc="lower center", ncol=min(4, len(names)), fontsize=8)
    fig.suptitle(tr.text(title))
    fig.tight_layout(rect=(0, 0.12 if handles else 0, 1, 0.95))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _share_bars(
    ax: Any,
    keys: Sequence[Any],
    share: dict[tuple[Any, str], float],
    cats: Sequence[str],
    colours: dict[str, Any],
    labels: dict[str, str],
    unknown: dict[Any, int],
) -> None:
    """One panel of :func:`share_figure`: a stacked bar per key (a university or a country),
    labelled with its count of unknown domains."""
    tr = current()
    if not keys:
        ax.text(0.5, 0.5, tr.text("no data"), ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    left = [0.0] * len(keys)
    for c in cats:
        vals = [100 * share.get((k, c), 0.0) for k in keys]
        ax.barh(range(len(keys)), vals, left=left, color=colours.get(c), label=labels.get(c, c))
        left = [a + b for a, b in zip(left, vals, strict=True)]
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels(
        [
            (f"{k[1]} ({k[0]})" if isinstance(k, tuple) else k)
            + (" · " + tr.text(f"{unknown[k]} unknown") if unknown.get(k) else "")
            for k in keys
        ],
        fontsize=8,
    )
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel(tr.text("share of the external domains with evidence, %"))
