"""Sites: where an external site begins and ends (web entities), the analysts' split and
merge rules with their history, a preview of what a rule would move, and re-keying the
stored rows (:mod:`core.entities`, :mod:`store.entities`; the reads and writes go
through :mod:`store.entities`)."""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

from core.exceptions import WebometricsError
from dashboard import widgets, writes
from dashboard.readers import sites as reads
from store import entities

url = widgets.database_url()
st.title("Sites")
st.caption(
    "Every figure counts sites. A site (web entity) is decided in this order: an "
    "analyst's **split** (a host with its subdomains, or a URL prefix such as "
    "`vk.com/spbu`, is a site of its own), a hosting platform's path rule "
    "(`sites.google.com/site/x`, `geocities.com/athens/1234`, `best.com/~name`), a "
    "platform's subdomain rule (`user.livejournal.com`, `x.narod.ru`, `x.ucoz.ru`), the "
    "registrable domain with the Public Suffix List's private section (`x.blogspot.com`, "
    "`name.github.io`), then an analyst's **merge** (`msu.ru msu.su`: one site, `msu.ru`). "
    "A rule changes what new crawls store at once; **Apply** re-keys what is stored "
    "(no re-crawl), then extract, dedup, cluster and analyse must run again."
)


def _plan_frame(plan: entities.RekeyPlan) -> pd.DataFrame:
    return pd.DataFrame(
        [dataclasses.asdict(m) for m in plan.moves],
        columns=["table", "old", "new", "rows", "example"],
    )


def _show_plan(plan: entities.RekeyPlan, what: str, key: str) -> None:
    rows = ", ".join(f"{n} {t}" for t, n in plan.rows.items())
    st.write(
        f"{what}: **{plan.changed_rows}** stored rows change site ({rows}); external "
        f"sites {plan.keys_before} → {plan.keys_after}; {len(plan.affected)} sites lose "
        "or gain rows."
    )
    if plan.moves:
        widgets.table(_plan_frame(plan), f"{what} moves", key=key)


st.subheader("Which site is this?")
probe = st.text_input(
    "A URL or host", key="sites-probe", placeholder="http://user.livejournal.com/123.html"
)
if probe.strip():
    rules_now = reads.site_rules(url)
    found = rules_now.entity(probe.strip())
    if found.key:
        st.write(f"site **{found.key}** (by {found.rule})")
    else:
        st.error(f"{probe.strip()!r} has no host: give a URL, a host or host/path.")

st.subheader("Analysts' rules")
rules = reads.rules(url)
if rules.empty:
    st.info("No analyst's rule: the platform rules (core/site_rules.toml) and the PSL decide.")
else:
    widgets.table(rules, "site rules", key="sites-rules")

with st.form("sites-add", clear_on_submit=False):
    kind = st.radio(
        "Rule", ["split", "merge"], horizontal=True, key="sites-kind",
        help="split: a host or URL prefix is a site of its own; merge: several sites are "
        "one, named by the first",
    )  # fmt: skip
    text = st.text_input(
        "Prefix (split) or sites separated by spaces (merge)",
        key="sites-text",
        placeholder="vk.com/spbu   or   msu.ru msu.su",
    )
    n1, n2 = st.columns([2, 1])
    note = n1.text_input("Note (why)", key="sites-note")
    analyst = n2.text_input("Your name (for the history)", key="sites-by")
    b1, b2 = st.columns(2)
    preview_it = b1.form_submit_button("Preview what it moves", key="sites-preview")
    add_it = b2.form_submit_button("Add rule", key="sites-add-rule", type="primary")
if preview_it or add_it:
    parts = (text or "").split()
    if not parts:
        st.error("Give a prefix such as vk.com/spbu, or two sites such as msu.ru msu.su.")
    elif kind == "split" and len(parts) > 1:
        st.error(
            "A split takes one host or URL prefix (such as vk.com/spbu); choose merge to "
            "make several sites one."
        )
    else:
        try:
            if preview_it:
                plan = reads.preview_rules(
                    url,
                    splits=parts[:1] if kind == "split" else [],
                    merges=[parts] if kind == "merge" else [],
                )
                _show_plan(plan, "With this rule, apply would change", "sites-preview-moves")
            else:
                added = writes.add_site_rule(url, kind, parts, note, analyst)
                st.session_state["sites-done"] = added
                st.rerun()
        except WebometricsError as exc:
            st.error(str(exc))
if done := st.session_state.pop("sites-done", None):
    st.success(done)

if not rules.empty:
    with st.form("sites-remove"):
        r1, r2 = st.columns([3, 1])
        chosen = r1.selectbox(
            "Remove a rule",
            [f"{k} {v}" for k, v in zip(rules["kind"], rules["key"], strict=True)],
            key="sites-remove-key",
            index=None,
        )
        who = r2.text_input("Your name", key="sites-remove-by")
        remove_it = st.form_submit_button("Remove rule", key="sites-remove-button")
    if remove_it:
        if not chosen:
            st.error("Choose the rule to remove.")
        else:
            rkind, rkey = chosen.split(" ", 1)
            try:
                removed = writes.remove_site_rule(url, rkind, rkey, who)
            except WebometricsError as exc:
                st.error(str(exc))
            else:
                st.session_state["sites-done"] = removed
                st.rerun()

st.subheader("Apply the rules to the stored rows")
pending = reads.pending_plan(url)
if not pending.changed_rows:
    st.success("Every stored row has its site under the current rules: nothing to apply.")
else:
    _show_plan(pending, "Apply would change", "sites-pending-moves")
    a1, a2 = st.columns([2, 1], vertical_alignment="bottom")
    applier = a1.text_input("Your name (for the history)", key="sites-apply-by")
    if a2.button("Apply", key="sites-apply", type="primary"):
        try:
            applied = writes.apply_site_rules(url, applier)
        except WebometricsError as exc:
            st.error(str(exc))
        else:
            st.session_state["sites-done"] = applied
            st.rerun()

with st.expander("History of the rules"):
    hist = reads.rule_history(url)
    if hist.empty:
        st.info("No rule added, removed or applied yet.")
    else:
        widgets.table(hist, "site rule history", key="sites-history")
