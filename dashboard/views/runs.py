"""Runs: crawl, whole-pipeline, near-duplicate and clustering runs with stats and errors."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core.choices import RUN_STATUSES
from dashboard import widgets
from dashboard.readers import runs as reads

url = widgets.database_url()
st.title("Runs")

STATUSES = list(RUN_STATUSES)
status = st.multiselect("Status", STATUSES, default=STATUSES, key="runs-status")


def _flat(df: pd.DataFrame, column: str, prefix: str) -> pd.DataFrame:
    """Spread a dict column into one column per key; a list value (Leiden resolutions,
    the paper's r levels) is shown as its items joined, so that a column holding lists in
    some rows and nothing in others stays one type."""
    if df.empty:
        return df.drop(columns=[column])
    spread = pd.json_normalize(df[column].tolist()).add_prefix(prefix)
    spread.index = df.index
    for name in spread.columns:
        if spread[name].map(lambda v: isinstance(v, list)).any():
            spread[name] = spread[name].map(
                lambda v: ", ".join(map(str, v)) if isinstance(v, list) else v
            )
    return pd.concat([df.drop(columns=[column]), spread], axis=1)


st.subheader("Crawl runs")
crawls = reads.list_crawl_runs(url)
crawls = crawls[crawls["status"].isin(status)]
st.metric("crawl runs", len(crawls))
shown = _flat(crawls.drop(columns=["settings"]), "stats", "stats.")
widgets.table(shown, "crawl runs", key="crawl-runs")
for _, run in crawls[crawls["error"].notna()].iterrows():
    st.error(f"crawl run {run['id']} ({run['status']}): {run['error']}")

st.subheader("Pipeline runs")
every_pipe = reads.list_pipeline_runs(url)
pipes = every_pipe[every_pipe["status"].isin(status)]
if every_pipe.empty:
    st.info(
        "No whole-pipeline run: `webometrics run` (or `webometrics schedule`) records one, "
        "with each stage's status; the stages run one by one are in the other tables."
    )
elif pipes.empty:
    st.info(f"No pipeline run with the chosen status ({len(every_pipe)} with others).")
else:
    summary = pipes.assign(
        stages=pipes["stages"].map(
            lambda st_: " → ".join(f"{s['name']}:{s['status']}" for s in st_)
        )
    )
    widgets.table(summary, "pipeline runs", key="pipeline-runs")
for _, run in pipes.iterrows():
    with st.expander(f"pipeline run {run['id']} · {run['trigger']} · {run['status']}"):
        stages = pd.DataFrame(list(run["stages"]))
        if "stats" in stages:
            stages["stats"] = stages["stats"].map(
                lambda v: json.dumps(v, sort_keys=True) if isinstance(v, dict) else v
            )
        widgets.table(stages, f"pipeline run {run['id']} stages", key=f"pipe-{run['id']}")
        if pd.notna(run["error"]):
            st.code(run["error"], language=None)

st.subheader("Near-duplicate runs")
dedup = reads.list_dedup_runs(url)
widgets.table(_flat(dedup, "parameters", "param."), "near-duplicate runs", key="dedup-runs")

st.subheader("Clusterings")
clus = reads.list_clusterings(url)
names = reads.universities(url).set_index("id")["name"]
clus = clus.assign(
    university=clus["university_id"].map(names), levels=clus["levels"].map(len)
).drop(columns=["filter", "university_id"])
widgets.table(_flat(clus, "parameters", "param."), "clusterings", key="clusterings")
