"""The paper's finding in the report: a university's groups against its rank.

``rank_factors.csv|md``: the factors per share definition (by domain, the view
``v_rank_factors``; by cluster, the paper's way), direction and university of the run
(:func:`store.analytics.rank_factors`), with the part of the headline share resting on
unreviewed low-confidence domains; ``rank_correlation.csv|md``: Spearman's ρ and
Kendall's τ of each factor with the rank (and the impact rank where stored) under each
definition, with n, the p-value, the p-values adjusted over every factor x statistic x
direction x target of the definition (Holm; Benjamini-Hochberg), the 95 % interval
consistent with the test (from 10 universities on), the sign in words and the note
(:func:`store.analytics.correlations_of`); ``rank_sensitivity.csv|md``: whether each sign
holds under both definitions and every stored clustering setting
(:func:`store.analytics.rank_sensitivity`); ``rank_correlation.png``: the headline share
(universities plus scientific communities, seed 000's conclusion) against the rank, each
university labelled, one panel per direction. The ranks are those of one rank edition
(``--rank-edition``, default the newest; :mod:`store.rank_editions`), named in the
``rank_edition`` column.
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
    "definition",
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
FACTOR_FIELDS_AFTER = ("share_academic_low_confidence", "clustering_id", "rank_edition")
CORRELATION_FIELDS = (
    "run_id",
    "definition",
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
    "p_holm",
    "q_bh",
    "tests",
    "reading",
    "note",
    "rank_edition",
)
SENSITIVITY_FIELDS = (
    "run_id",
    "direction",
    "target",
    "factor",
    "statistic",
    "holds",
    "line",
    "signs",
)


def _number(v: Any) -> Any:
    """NaN as an empty cell, floats to 4 decimals."""
    if isinstance(v, float):
        return None if math.isnan(v) else round(v, 4)
    return v


def resolve_edition(engine: Any, edition: str | None) -> str | None:
    """The rank edition the rank files read: ``edition``, or the newest when ``None``
    (``None`` when no edition is stored).

    Raises
    ------
    ParameterError
        ``edition`` is not stored (the message lists those that are).
    """
    from store.rank_editions import edition_ranks, newest_edition

    if edition is None:
        return newest_edition(engine)
    edition_ranks(engine, edition)
    return edition


def write_rank_correlation(
    engine: Any,
    out: Path,
    run_id: int | None,
    edition: str | None = None,
    *,
    n_resamples: int = 9999,
    seed: int = 0,
    low_confidence: float = 0.5,
) -> list[Path]:
    """Write the factors, their rank correlations, the sensitivity of their signs and the
    scatter of the headline share, with the ranks of a rank edition (the ``rank_edition``
    column names it).

    Parameters
    ----------
    engine : Engine
    out : Path
        The report's folder.
    run_id : int or None
        The crawl run (``None``: no run has data; the files have their header only).
    n_resamples, seed
        Of the permutation test above 8 universities (:func:`analyse.ranks.correlate`).
    low_confidence : float
        ``[analyse] low_confidence``.
    edition : str, optional
        The rank edition (:mod:`store.rank_editions`); the newest when ``None``
        (:func:`resolve_edition`).

    Returns
    -------
    list of Path
        ``rank_factors.csv|md``, ``rank_correlation.csv|md``, ``rank_sensitivity.csv|md``,
        ``rank_correlation.png``.
    """
    from analyse.ranks import MIN_CONCLUSIVE, SIGN_NOTE
    from store.analytics.ranks import SHARE_COLUMNS

    used = resolve_edition(engine, edition)
    factor_fields = (*FACTOR_FIELDS_BEFORE, *SHARE_COLUMNS, *FACTOR_FIELDS_AFTER)
    factor_rows, corr, domain_factors = _factors_and_correlations(
        engine, run_id, factor_fields, (n_resamples, seed, low_confidence), used
    )
    written = write_table(
        out,
        "rank_factors",
        factor_fields,
        factor_rows,
        f"The groups of each university against its rank (run {run_id}; shares over the "
        "domains with evidence, by domain: each in its own category, by cluster: each "
        "cluster's members in its category, as the paper; cluster columns empty without a "
        "clustering of the run; share_academic_low_confidence: the part of share_academic "
        f"resting on unreviewed domains scored below {low_confidence:g})",
    )
    tests = max((c.tests for c in corr), default=0)
    written += write_table(
        out,
        "rank_correlation",
        CORRELATION_FIELDS,
        [[_number(v) for v in row] + [used] for row in table_rows(corr, CORRELATION_FIELDS[:-1])],
        f"Rank correlations of the groups with the Webometrics rank (run {run_id}): "
        f"{SIGN_NOTE}. p_holm and q_bh: p adjusted over the {tests} tests of each definition "
        "(every factor x statistic x direction x rank) by Holm's method and by "
        "Benjamini-Hochberg's. Below "
        f"{MIN_CONCLUSIVE} universities p is an exact permutation test (all n! pairings up "
        f"to 8, else {n_resamples} random ones, seed {seed}) and no interval is given (too "
        "few to conclude; the note says why); from 10 on, p and the 95 % interval are "
        "Fisher's z of the same statistic (Bonett-Wright for ρ, Fieller for τ), so the "
        "interval excludes 0 exactly when p < 0.05",
    )
    written += _sensitivity(engine, out, run_id, used)
    domain_corr = [c for c in corr if c.definition == "domain"]
    written.append(_scatter(out / "rank_correlation.png", domain_factors, domain_corr, run_id))
    return written


def _factors_and_correlations(
    engine: Any,
    run_id: int | None,
    factor_fields: Sequence[str],
    options: tuple[int, int, float],
    edition: str | None,
) -> tuple[list[list[Any]], list[Any], list[Any]]:
    """The rows of ``rank_factors`` under both share definitions with the ranks of
    ``edition``, the correlations of each (adjusted per definition) and the domain
    definition's factors (the scatter's); ``options``: ``n_resamples, seed,
    low_confidence``."""
    n_resamples, seed, low_confidence = options
    from store import analytics as A
    from store.analytics.ranks import headline_low_confidence

    factor_rows: list[list[Any]] = []
    corr: list[Any] = []
    domain_factors: list[Any] = []
    for definition in A.DEFINITIONS:
        factors = (
            A.rank_factors(engine, run_id=run_id, definition=definition, edition=edition)
            if run_id
            else []
        )
        if definition == "domain":
            domain_factors = factors
        low = (
            headline_low_confidence(
                engine, run_id=run_id, definition=definition, low_confidence=low_confidence
            )
            if run_id
            else {}
        )
        for f in factors:
            values: dict[str, Any] = {
                "definition": definition,
                "share_academic_low_confidence": low.get((f.direction, f.university_id)),
                "rank_edition": edition,
            }
            factor_rows.append(
                [_number(values[k] if k in values else getattr(f, k)) for k in factor_fields]
            )
        corr += A.correlations_of(
            factors, n_resamples=n_resamples, seed=seed, definition=definition
        )
    return factor_rows, corr, domain_factors


def _sensitivity(engine: Any, out: Path, run_id: int | None, edition: str | None) -> list[Path]:
    """``rank_sensitivity.csv|md``: whether each sign holds with the ranks of ``edition``
    (:func:`store.analytics.rank_sensitivity`)."""
    from store import analytics as A

    sens = A.rank_sensitivity(engine, run_id=run_id, edition=edition) if run_id else []
    settings = A.clustering_settings(engine, run_id=run_id) if run_id else []
    legend = "; ".join(f"{s.label}: {s.setting} ({s.clusterings} clusterings)" for s in settings)
    return write_table(
        out,
        "rank_sensitivity",
        SENSITIVITY_FIELDS,
        table_rows(sens, SENSITIVITY_FIELDS),
        f"Does each sign hold under both share definitions and every clustering setting "
        f"stored for run {run_id}? holds: the same sign under every defined variant; flips: "
        f"it changes; undefined: fewer than two variants defined. Settings: {legend or 'none'}",
    )


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
    interval = "" if math.isnan(c.low) else f" [{c.low:+.2f}, {c.high:+.2f}]"
    return f"{symbol} = {c.estimate:+.2f}{interval}, p = {c.p_value:.2f} (Holm {c.p_holm:.2f})"
