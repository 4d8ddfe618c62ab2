"""Rendering pieces the pages share: a table with its CSV download, the run picker, the
database URL of the session.

The database URL is read once per script run from the settings (``WEBOMETRICS_DB_URL``
set by ``webometrics dashboard``) and passed to every cached query as a parameter.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

import pandas as pd
import streamlit as st

from core.exceptions import WebometricsError
from dashboard import data


def database_url() -> str:
    """The database URL of this session; stops the page with the reason when the
    database cannot be opened (unreachable, missing file, schema not at head)."""
    url = data.settings().database.url
    try:
        data.read_engine(url)
    except WebometricsError as exc:
        st.error(str(exc))
        st.stop()
    return url


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "table"


def csv_bytes(df: pd.DataFrame) -> bytes:
    """The frame as UTF-8 CSV (lists and dicts written as JSON-like text)."""
    return df.to_csv(index=False).encode("utf-8")


def table(
    df: pd.DataFrame,
    name: str,
    *,
    key: str,
    column_config: dict[str, Any] | None = None,
    height: int | str = "auto",
) -> None:
    """Show ``df`` and a button that downloads it as ``<name>.csv``."""
    st.dataframe(
        df,
        hide_index=True,
        column_config=column_config,
        height=height,
    )
    download(df, name, key=key)


def download(df: pd.DataFrame, name: str, *, key: str) -> None:
    """A button that downloads ``df`` as ``<name>.csv``."""
    st.download_button(
        f"Download {name} (CSV)",
        functools.partial(csv_bytes, df),  # written when clicked, not on every render
        file_name=f"{_slug(name)}.csv",
        mime="text/csv",
        key=f"{key}-csv",
        on_click="ignore",
    )


def run_label(row: pd.Series) -> str:
    start = row["started_at"]
    when = start.strftime("%Y-%m-%d %H:%M") if pd.notna(start) else "?"
    return f"run {row['id']} · {row['kind']} · {when} · {row['status']}"


def pick_run(
    url: str, *, key: str, label: str = "Crawl run", with_data: bool = False
) -> int | None:
    """A select box of the crawl runs, newest first (finished ones before the others);
    ``with_data`` keeps the runs that have environment data (links or verified
    citations). ``None``, with a note on what to run, when there is none."""
    runs = data.crawl_runs(url)
    if with_data:
        runs = runs[runs["id"].isin(data.runs_with_data(url))]
    if runs.empty:
        st.info("No crawl run with data stored yet: run `webometrics crawl` (or `make demo`).")
        return None
    ordered = pd.concat([runs[runs["status"] == "finished"], runs[runs["status"] != "finished"]])
    labels = {int(r["id"]): run_label(r) for _, r in ordered.iterrows()}
    return st.selectbox(
        label, list(labels), format_func=labels.__getitem__, key=key, help="crawl_run.id"
    )


def category_options(url: str, present: Iterable[str] = ()) -> list[str]:
    """Every category of the taxonomy (file order), then ``uncategorised`` and any other
    category found in the data: fixed options, so a filter keeps its choice when the run
    or the university changes (the taxonomy as the analyse stage stored it)."""
    keys = list(data.category_labels(url))
    extra = sorted(set(present) - set(keys) - {"uncategorised"})
    return [*keys, "uncategorised", *extra]


def category_filter(
    url: str, key: str, present: Iterable[str] = (), *, label: str = "Category"
) -> list[str]:
    """A multiselect of the categories (all chosen by default)."""
    options = category_options(url, present)
    labels = data.category_labels(url)
    return st.multiselect(
        label, options, default=options, key=key, format_func=lambda c: labels.get(c, c)
    )


def link_config(*columns: str) -> dict[str, Any]:
    """Column configuration that renders URL columns as links opening the page."""
    return {c: st.column_config.LinkColumn(c, display_text=None) for c in columns}
