"""The paper's finding in the report: a university's groups against its rank.

``rank_factors.csv|md``: the factors per direction and university of the run
(:func:`store.analytics.rank_factors`, view ``v_rank_factors``); ``rank_correlation.csv|md``:
Spearman's ρ and Kendall's τ of each factor with the rank (and the impact rank where
stored), with n, the bootstrap 95 % interval, the p-value, the sign in words and the note
(:func:`store.analytics.rank_correlations`); ``rank_correlation.png``: the headline share
(universities plus scientific communities, seed 000's conclusion) against the rank, each
university labelled, one panel per direction.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from webometrics.commands.report.i18n import current
from webometrics.commands.report.render import table_rows, write_table

# the columns of rank_factors.csv around the shares (store.analytics.ranks.SHARE_COLUMNS)
FACTOR_FIELDS_BEFORE = (
    "direction",
    "university",
    "country",
    "rank",
    "impact_rank",
    "n_clusters",
    "clustered_size",
    "singletons",
    "domains",
    "evidence_domains",
    "unknown",
    "uncategorised",
)
FACTOR_FIELDS_AFTER = ("clustering_id",)
CORRELATION_FIELDS = (
    "run_id",
    "direction",
    "target",
    "factor",
    "statistic",
    "estimate",
    "n",
    "low",
    "high",
    "confidence",
    "p_value",
    "reading",
    "note",
)


def _number(v: Any) -> Any:
    """NaN as an empty cell, floats to 4 decimals."""
    if isinstance(v, float):
        return None if math.isnan(v) else round(v, 4)
    return v


def write_rank_correlation(
    engine: Any, out: Path, run_id: int | None, *, n_resamples: int = 9999, seed: int = 0
) -> list[Path]:
    """Write the factors, their rank correlations and the scatter of the headline share.

    Parameters
    ----------
    engine : Engine
    out : Path
        The report's folder.
    run_id : int or None
        The crawl run (``None``: no run has data; the files have their header only).
    n_resamples, seed
        Of the bootstrap interval (:func:`analyse.ranks.correlate`).

    Returns
    -------
    list of Path
        ``rank_factors.csv|md``, ``rank_correlation.csv|md``, ``rank_correlation.png``.
    """
    from analyse.ranks import SIGN_NOTE
    from store import analytics as A
    from store.analytics.ranks import SHARE_COLUMNS

    factor_fields = (*FACTOR_FIELDS_BEFORE, *SHARE_COLUMNS, *FACTOR_FIELDS_AFTER)
    factors = A.rank_factors(engine, run_id=run_id) if run_id else []
    corr = A.correlations_of(factors, n_resamples=n_resamples, seed=seed)
    written = write_table(
        out,
        "rank_factors",
        factor_fields,
        [[_number(v) for v in row] for row in table_rows(factors, factor_fields)],
        f"The groups of each university against its rank (run {run_id}; shares over the "
        "domains with evidence; cluster columns empty without a clustering of the run)",
    )
    written += write_table(
        out,
        "rank_correlation",
        CORRELATION_FIELDS,
        [[_number(v) for v in row] for row in table_rows(corr, CORRELATION_FIELDS)],
        f"Rank correlations of the groups with the Webometrics rank (run {run_id}): "
        f"{SIGN_NOTE}; interval: paired bootstrap, {n_resamples} resamples, seed {seed}",
    )
    written.append(_scatter(out / "rank_correlation.png", factors, corr, run_id))
    return written


def _scatter(path: Path, factors: Sequence[Any], corr: Sequence[Any], run_id: int | None) -> Path:
    """The headline share against the rank, one panel per direction, each university
    labelled; the panel's title gives ρ, τ, n and the interval, and the note when n is too
    small."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analyse.ranks import HEADLINE

    tr = current()
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), squeeze=False)
    for ax, direction in zip(axes[0], ("outgoing", "citing"), strict=True):
        pts = [
            (100 * getattr(r, HEADLINE), r.rank, r.university)
            for r in factors
            if r.direction == direction and getattr(r, HEADLINE) is not None and r.rank
        ]
        by_stat = {
            c.statistic: c
            for c in corr
            if c.direction == direction and c.factor == HEADLINE and c.target == "rank"
        }
        if not pts:
            ax.text(
                0.5,
                0.5,
                tr.text("no ranked university"),
                ha="center",
                va="center",
                transform=ax.transAxes,
            )
            ax.set_axis_off()
            ax.set_title(tr.value(direction))
            continue
        xs, ys, _names = zip(*pts, strict=True)
        ax.scatter(xs, ys, color="#1f77b4", zorder=3)
        for x, y, name in pts:
            ax.annotate(name, (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
        if max(ys) / min(ys) > 20:
            ax.set_yscale("log")
        ax.invert_yaxis()  # rank 1, the best, at the top
        ax.set_xlabel(tr.text("universities + scientific communities, % of domains with evidence"))
        ax.set_ylabel(tr.text("Webometrics rank (1 = best, at the top)"))
        ax.grid(alpha=0.3)
        lines = [tr.value(direction)]
        rho, tau = by_stat.get("spearman"), by_stat.get("kendall")
        if rho is not None and tau is not None:
            lines.append(f"{_fmt('ρ', rho)}   {_fmt('τ', tau)}   n = {rho.n}")
            if rho.note:
                lines.append(textwrap.fill(tr.text(rho.note.split(";")[0]), width=80))
        ax.set_title("\n".join(lines), fontsize=9)
        lo, hi = min(xs), max(xs)
        pad = max(2.0, 0.1 * (hi - lo))
        ax.set_xlim(max(0.0, lo - pad), min(100.0, hi + 3 * pad))
    fig.suptitle(
        tr.text(
            f"Share of universities and scientific communities against the rank (run {run_id}); "
            "a rise from left to right (higher share, better rank) is what the paper concluded"
        ),
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _fmt(symbol: str, c: Any) -> str:
    if math.isnan(c.estimate):
        return f"{symbol} undefined"
    return f"{symbol} = {c.estimate:+.2f} [{c.low:+.2f}, {c.high:+.2f}]"
