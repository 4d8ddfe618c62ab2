"""Review: the domains whose category is least certain, ordered by how much they move the
category shares, with a form to set a queue domain's category; coding sheets to download
and to upload filled; two coders' agreement (Cohen's kappa), their disagreements, and the
adjudication that settles one (:mod:`store.review`; every write goes through
:mod:`store.overrides`, so it is in the override history).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from core.exceptions import WebometricsError
from dashboard import widgets, writes
from dashboard.readers import review as reads
from store.review import QUEUE_COLUMNS

url = widgets.database_url()
st.title("Review")
st.caption(
    "The domains without an analyst's override, least certain first where they weigh "
    "most. **Priority = (1 − confidence) × share points**: a domain's share points are "
    "what it holds of the category shares as the Countries figures count them (in each "
    "university's shares of a direction every distinct domain counts 1/n of it, n its "
    "domains), summed over the universities and directions that link with it, in "
    "percentage points; confidence is the stored score (0 where none). Reviewing from "
    "the top fixes the most of the figures per domain reviewed."
)
left, mid, right = st.columns([3, 1, 1])
with left:
    run_id = widgets.pick_run(url, key="review-run", with_data=True)
if run_id is None:
    st.stop()
direction = mid.radio(
    "Shares of", ["both", "outgoing", "citing"], horizontal=True, key="review-direction"
)
limit = int(right.number_input("Queue length", 1, 1000, 50, step=10, key="review-limit"))
way = None if direction == "both" else direction
labels = reads.category_labels(url)
name = widgets.category_namer(url)


def _messages(key: str) -> None:
    """The result of the last write of this section (kept over the rerun that shows it)."""
    if done := st.session_state.pop(f"{key}-done", None):
        st.success(done)


def _write(key: str, action: Callable[..., str], *args: Any) -> None:
    """Run a write of :mod:`dashboard.writes`; its message shows after the rerun that
    renders every table again, an error at once."""
    try:
        st.session_state[f"{key}-done"] = action(*args)
    except WebometricsError as exc:
        st.error(str(exc))
    else:
        st.rerun()


try:
    queue = reads.review_queue(url, run_id=run_id, direction=way, limit=limit)
    summary = reads.queue_summary(url, run_id=run_id, direction=way)
    n_queue, total = summary.domains, summary.priority
except WebometricsError as exc:
    st.error(str(exc))
    st.stop()

st.subheader("Review queue")
if queue.empty:
    st.info(f"No domain without an override in the environment of run {run_id}.")
else:
    first = float(queue["priority"].sum())
    m1, m2, m3 = st.columns(3)
    m1.metric("domains to review", n_queue)
    m2.metric(f"expected share points, first {len(queue)}", f"{first:.1f}")
    m3.metric(
        "of all expected share points",
        f"{first / total:.0%}" if total else "–",
        help="the first rows' priorities over the sum of every domain's",
    )
    shown = queue.assign(category=queue["category"].map(name))
    widgets.table(
        shown[list(QUEUE_COLUMNS)],
        f"review queue run {run_id} {direction}",
        key="review-queue",
        column_config={
            **widgets.link_config("url"),
            "confidence": st.column_config.NumberColumn(format="%.2f"),
            "priority": st.column_config.NumberColumn(format="%.2f"),
            "share_points": st.column_config.NumberColumn("share points", format="%.2f"),
            "coders": st.column_config.NumberColumn(help="coders who coded it (sheets)"),
        },
    )

    with st.form("review-set"):
        st.markdown("**Set the category of a queue domain** (an override, kept in its history)")
        rows = {r.domain: r for r in queue.itertuples()}
        f1, f2 = st.columns(2)
        domain = f1.selectbox(
            "Domain",
            list(rows),
            format_func=lambda d: (
                f"{rows[d].position}. {d} ({name(rows[d].category) or '–'}, "
                f"{rows[d].confidence:.2f})"
            ),
            key="review-domain",
        )
        category = f2.selectbox(
            "Category", list(labels), format_func=labels.__getitem__, key="review-category"
        )
        n1, n2 = st.columns([2, 1])
        note = n1.text_input("Note (why)", key="review-note")
        analyst = n2.text_input("Your name (for the history)", key="review-by")
        submitted = st.form_submit_button("Set category", key="review-set-button", type="primary")
    if submitted:
        if category is None:
            st.error("No category stored yet: run `webometrics analyse`.")
        else:
            _write("review-set", writes.write_override, url, domain, category, note, analyst)
    _messages("review-set")

with st.expander("How much of each university's shares rests on unreviewed, uncertain domains"):
    below = st.slider("Confidence below", 0.05, 1.0, 0.5, 0.05, key="review-below")
    uncertain = reads.uncertain_shares(url, run_id=run_id, below=below)
    if uncertain.empty:
        widgets.no_data("environment rows")
    else:
        unis = reads.universities(url).set_index("id")["name"]
        uncertain = uncertain.assign(university=uncertain["university_id"].map(unis))
        widgets.table(
            uncertain[["university", "direction", "domains", "uncertain", "share"]],
            f"unreviewed uncertain domains run {run_id}",
            key="review-uncertain",
            column_config={"share": st.column_config.NumberColumn(format="percent")},
        )

st.subheader("Coding sheets")
st.caption(
    "Hand a sheet of the queue's first domains to a coder: they fill its `category` "
    "column (a category key or alias, as in the taxonomy; leave it empty when unsure) and "
    "may add a `note`. A filled sheet is checked whole: an unknown category or domain is "
    "refused with its line number and nothing is stored. Uploading a coder's sheet again "
    "replaces that coder's codings of the domains it holds."
)
s1, s2 = st.columns([1, 2])
s1.download_button(
    f"Download the coding sheet ({len(queue)} domains)",
    reads.coding_sheet(url, run_id, way, limit),
    file_name=f"coding-sheet-run{run_id}-{direction}.csv",
    mime="text/csv",
    key="review-sheet",
    on_click="ignore",
)
with s2.form("review-import", clear_on_submit=False):
    uploaded = st.file_uploader("Filled sheet (CSV)", type=["csv"], key="review-upload")
    coder = st.text_input("Coder's name", key="review-coder")
    imported = st.form_submit_button("Import the sheet", key="review-import-button")
if imported:
    if uploaded is None:
        st.error("Choose the filled sheet (CSV) first.")
    else:
        _write("review-import", writes.import_sheet, url, uploaded.getvalue(), coder, uploaded.name)
_messages("review-import")

st.subheader("Agreement")
coders = reads.coders(url)
if len(coders) < 2:
    st.info(
        f"{len(coders)} coder(s) so far: import two coders' sheets of the same domains to "
        "compare them (Cohen's kappa) and settle their disagreements."
    )
    st.stop()
names = list(coders["coder"])
c1, c2 = st.columns(2)
coder_a = c1.selectbox("Coder A", names, index=0, key="review-coder-a")
coder_b = c2.selectbox("Coder B", names, index=1, key="review-coder-b")
if coder_a == coder_b:
    st.info("Choose two different coders.")
    st.stop()
figures, disagreements = reads.agreement(url, coder_a, coder_b)
a1, a2, a3, a4 = st.columns(4)
a1.metric("domains both coded", figures["both"])
a2.metric("agreed", figures["agreed"])
a3.metric(
    "observed agreement", "–" if figures["observed"] is None else f"{figures['observed']:.1%}"
)
a4.metric(
    "Cohen's kappa",
    "undefined" if figures["kappa"] is None else f"{figures['kappa']:.3f}",
    help="agreement beyond chance: 1 perfect, 0 chance; undefined with fewer than two "
    "domains in common or every coding in one category",
)
st.caption(figures["summary"])
if figures["to_accept"]:
    with st.form("review-accept"):
        by = st.text_input("Your name (for the history)", key="review-accept-by")
        accept = st.form_submit_button(
            f"Accept the {figures['to_accept']} agreements without an override as overrides",
            key="review-accept-button",
        )
    if accept:
        _write("review-accept", writes.accept_agreements, url, coder_a, coder_b, by)
_messages("review-accept")

if disagreements.empty:
    st.info("No disagreement.")
    st.stop()
readable = disagreements.assign(
    **{c: disagreements[c].map(name) for c in ("category_a", "category_b", "suggested", "override")}
)
widgets.table(
    pd.DataFrame(readable).rename(
        columns={
            "category_a": f"{coder_a}",
            "category_b": f"{coder_b}",
            "note_a": "note A",
            "note_b": "note B",
        }
    ),
    f"disagreements {coder_a} {coder_b}",
    key="review-disagreements",
)
with st.form("review-adjudicate"):
    st.markdown("**Adjudicate a disagreement**: the category chosen becomes the override")
    j1, j2 = st.columns(2)
    disputed = j1.selectbox("Domain", list(disagreements["domain"]), key="review-adj-domain")
    settled = j2.selectbox(
        "Category", list(labels), format_func=labels.__getitem__, key="review-adj-category"
    )
    k1, k2 = st.columns([2, 1])
    why = k1.text_input("Note (why)", key="review-adj-note")
    judge = k2.text_input("Your name", key="review-adj-by")
    settle = st.form_submit_button("Adjudicate", key="review-adj-button", type="primary")
if settle:
    _write("review-adj", writes.adjudicate, url, disputed, settled, judge, why)
_messages("review-adj")
