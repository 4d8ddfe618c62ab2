"""What the Sites page reads: the analysts' split and merge rules, their history, what
applying them would change, which site a URL is, and what a new rule would move
(:mod:`store.entities`)."""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

from core.entities import SiteRules
from dashboard.cache import TTL_SECONDS, read_engine
from store import entities

__all__ = ["pending_plan", "preview_rules", "rule_history", "rules", "site_rules"]

HISTORY_ROWS = 200  # the newest rule events listed


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def rules(url: str) -> pd.DataFrame:
    """The analysts' rules: kind, key, members (comma-separated), note, analyst, added."""
    rows = entities.list_rules(read_engine(url))
    df = pd.DataFrame([dataclasses.asdict(r) for r in rows])
    if df.empty:
        return pd.DataFrame(columns=["kind", "key", "members", "note", "analyst", "added"])
    df["members"] = df["members"].map(", ".join)
    df["created_at"] = df["created_at"].map(lambda t: f"{t:%Y-%m-%d %H:%M}")
    return _blank(df.drop(columns=["id"]).rename(columns={"created_at": "added"}))


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def rule_history(url: str) -> pd.DataFrame:
    """The newest :data:`HISTORY_ROWS` rule events, with the rows each one re-keyed."""
    events = entities.rule_history(read_engine(url), limit=HISTORY_ROWS)
    df = pd.DataFrame([dataclasses.asdict(e) for e in events])
    if df.empty:
        return pd.DataFrame(columns=["at", "action", "kind", "key", "members", "note", "analyst"])
    df["members"] = df["members"].map(", ".join)
    df["rows re-keyed"] = df["counts"].map(lambda c: sum((c or {}).get("rows", {}).values()))
    df["at"] = df["at"].map(lambda t: f"{t:%Y-%m-%d %H:%M:%S}")
    return _blank(df.drop(columns=["id", "counts"]))


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def pending_plan(url: str) -> entities.RekeyPlan:
    """What applying the current rules would change in the stored rows (a dry run)."""
    plan = entities.apply_rules(read_engine(url), dry_run=True)
    plan._updates.clear()  # the row ids: not needed to show it
    return plan


def site_rules(url: str) -> SiteRules:
    """The site rules in force: the platforms' and the analysts' (not cached: one probe)."""
    return entities.site_rules(read_engine(url))


def preview_rules(url: str, splits: list[str], merges: list[list[str]]) -> entities.RekeyPlan:
    """What the stored rows would change with these rules added (not cached: one preview)."""
    return entities.preview_rules(read_engine(url), splits=splits, merges=merges)


def _blank(df: pd.DataFrame) -> pd.DataFrame:
    """Missing text as blank cells, never "None" (pandas 3 keeps text in ``str`` columns,
    which :func:`dashboard.widgets.blank_missing` passes over)."""
    text = [c for c in df.columns if pd.api.types.is_string_dtype(df[c]) or df[c].dtype == object]
    return df.assign(**{c: df[c].astype(object).where(df[c].notna(), "") for c in text})
