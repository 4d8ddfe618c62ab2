"""The analyst's writes from the dashboard: the category override, the coding sheets and
their adjudication, and computing the figures again.

Each write goes through :mod:`store` on the read-write engine
(:func:`dashboard.cache.write_engine`, validated there against the taxonomy of the
settings), moves the changed domains in the saved aggregates, then forgets every cached
result (:func:`dashboard.cache.reload`) so that every page reads anew.
"""

from __future__ import annotations

from typing import Any

from dashboard.cache import reload, settings, write_engine
from dashboard.readers import common
from store import aggregates, entities, review
from store import overrides as ov


def refresh_figures(url: str) -> dict[str, Any]:
    """Compute the figures again (:func:`store.aggregates.refresh_if_stale`, what every
    stage ends with and ``webometrics refresh`` does) and read everything anew."""
    built = aggregates.refresh_if_stale(write_engine(url))
    reload(url)
    return built


def write_override(
    url: str, domain: str, category: str | None, note: str | None, analyst: str | None = None
) -> str:
    """Set (``category``) or clear (``None``) the override of ``domain`` through
    :mod:`store.overrides` (validated against the taxonomy of the settings; ``analyst``
    is who, for the history) on the read-write engine, move the domain in the saved
    aggregates, then forget the cached results; returns what was done.

    Several sessions may write at once: the override and the aggregates' update each run
    under the override write lock (:func:`store.overrides.write_locked`), one after the
    other, so none fails on a busy database and no count is moved twice.

    Raises
    ------
    ParameterError
        Not a domain, not a category of the taxonomy, or too long a name.
    """
    taxonomy = settings().analyse.taxonomy
    engine = write_engine(url)
    if category is None:
        cleared = ov.clear_override(engine, domain, analyst=analyst, taxonomy=taxonomy)
    else:
        row = ov.set_override(
            engine, domain, category, note=note, analyst=analyst, taxonomy=taxonomy
        )
    aggregates.sync_categories(engine)  # the saved counts follow (under the same lock)
    reload()
    if category is None:
        return f"override of {domain} cleared" if cleared else f"{domain} had no override"
    labels = common.category_labels(url)
    now, before = (labels.get(c, c) if c else "–" for c in (row.override_category, row.category))
    return f"{row.domain} is now {now} (assigned: {before})"


def import_sheet(url: str, content: bytes, coder: str, name: str) -> str:
    """Store a filled coding sheet as ``coder``'s (:func:`store.review.import_sheet`,
    validated against the taxonomy of the settings; nothing stored on error), then forget
    the cached results; returns what was done.

    Raises
    ------
    ParameterError
        The sheet's problems, each with its line; or no coder named.
    """
    done = review.import_sheet(
        write_engine(url), content, coder=coder, sheet=name, taxonomy=settings().analyse.taxonomy
    )
    reload()
    replaced = f", replacing {done.replaced} earlier codings" if done.replaced else ""
    return (
        f"{done.sheet}: stored {done.stored} codings by {done.coder}{replaced}; "
        f"{done.blank} rows without a category skipped"
    )


def accept_agreements(url: str, coder_a: str, coder_b: str, analyst: str) -> str:
    """Make the two coders' agreed categories overrides (:func:`store.review.
    accept_agreements`), move the domains in the saved aggregates, forget the cached
    results; returns what was done."""
    engine = write_engine(url)
    done = review.accept_agreements(
        engine, coder_a, coder_b, analyst=analyst, taxonomy=settings().analyse.taxonomy
    )
    aggregates.sync_categories(engine)
    reload()
    kept = f"; the other override of {', '.join(done.kept)} kept" if done.kept else ""
    return f"{len(done.set)} agreements stored as overrides{kept}"


def adjudicate(url: str, domain: str, category: str, analyst: str, note: str | None) -> str:
    """Settle a coded domain's category as its override (:func:`store.review.adjudicate`),
    move it in the saved aggregates, forget the cached results; returns what was done.

    Raises
    ------
    ParameterError
        No analyst, an unknown category, or a domain no coder coded.
    """
    engine = write_engine(url)
    row = review.adjudicate(
        engine, domain, category, analyst=analyst, note=note, taxonomy=settings().analyse.taxonomy
    )
    aggregates.sync_categories(engine)
    reload()
    label = common.category_labels(url).get(row.override_category or "", row.override_category)
    return f"{row.domain} is now {label} (adjudicated by {analyst.strip()})"


def add_site_rule(
    url: str, kind: str, parts: list[str], note: str | None, analyst: str | None
) -> str:
    """Add a ``split`` (of ``parts[0]``) or a ``merge`` (of ``parts``) rule
    (:mod:`store.entities`), then forget the cached results; returns what was done.

    Raises
    ------
    ParameterError
        Not a host or prefix, a rule that already exists, or too few sites to merge.
    """
    engine = write_engine(url)
    if kind == "split":
        row = entities.add_split(engine, parts[0], note=note, analyst=analyst)
    else:
        row = entities.add_merge(engine, parts, note=note, analyst=analyst)
    reload()
    return f"{row.kind} rule {row.key} added: new crawls use it; Apply re-keys the stored rows."


def remove_site_rule(url: str, kind: str, key: str, analyst: str | None) -> str:
    """Remove the ``kind`` rule of ``key`` (:func:`store.entities.remove_rule`), then forget
    the cached results; returns what was done."""
    entities.remove_rule(write_engine(url), key, kind=kind, analyst=analyst)
    reload()
    return f"{kind} rule {key} removed."


def apply_site_rules(url: str, analyst: str | None) -> str:
    """Re-key the stored rows under the current rules (:func:`store.entities.apply_rules`),
    then forget the cached results; returns what was done and the stages to run again."""
    plan = entities.apply_rules(write_engine(url), analyst=analyst)
    reload()
    return (
        f"{plan.changed_rows} rows re-keyed, {plan.environment_rows} environment rows "
        f"rewritten, {plan.documents_deleted} documents to rebuild: now run "
        + " → ".join(f"`webometrics {s}`" for s in plan.rerun)
    )
