"""Duplicates: the near-duplicate groups of a method's run, with their canonical page."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import widgets
from dashboard.readers import duplicates as reads

MAX_GROUPS = 500  # rows of the groups table
MAX_EXPANDERS = 20

url = widgets.database_url()
st.title("Near duplicates")

runs = reads.list_dedup_runs(url)
if runs.empty:
    st.info("No near-duplicate run stored yet: run `webometrics dedup`.")
    st.stop()


def _label(row: pd.Series) -> str:
    return (
        f"run {row['id']} · {row['method']} · {row['grouping']} · {row['unit']}s · "
        f"{row['n_groups']} groups, {row['n_duplicates']} duplicates of {row['n_documents']}"
    )


# what each stored parameter means (webometrics dedup's methods, dedup/*.py); two k's:
# the method's own shingle size, and the k the extract stage made the stored shingles with
PARAMETER_MEANINGS = {
    "k": "shingle size of the method: words per shingle it compares",
    "shingle_k": "shingle size of the stored shingles ([shingle] k of the extract stage): "
    "reported only, the method made its own k-word shingles",
    "num_perm": "MinHash permutations per signature",
    "threshold": "similarity from which two documents are near duplicates",
    "seed": "random seed of the hash functions",
    "canonical": "which member of a group is kept for clustering",
    "n_pairs": "near-duplicate pairs found (before grouping)",
    "n_super": "super-shingles per document",
    "rows": "rows per band",
    "bands": "bands of the locality-sensitive hash",
    "n_bits": "bits of the fingerprint",
    "n_words": "words per document signature",
    "n_sentences": "sentences per document signature",
    "stem": "words stemmed before comparing",
    "b": "BM25's length normalisation",
}


# methods whose k is no shingle size
K_MEANINGS = {
    "simhash": "largest Hamming distance between the fingerprints of two near duplicates",
    "a2-tfidf": "BM25's k1: term-frequency saturation",
    "a5-heavy-sent": "BM25's k1: term-frequency saturation",
}


def parameter_meaning(method: str, name: str) -> str:
    """What a parameter of a dedup run of ``method`` means (blank when not listed)."""
    if name == "k" and method in K_MEANINGS:
        return K_MEANINGS[method]
    return PARAMETER_MEANINGS.get(name, "")


labels = {int(r["id"]): _label(r) for _, r in runs.iterrows()}
left, right = st.columns([3, 1])
run_id = left.selectbox(
    "Near-duplicate run", list(labels), format_func=labels.__getitem__, key="dedup-run"
)
langs = ["all", *reads.document_languages(url)]
language = right.selectbox("Language", langs, key="dedup-language")
run = runs.set_index("id").loc[run_id]

m = st.columns(4)
m[0].metric("method", run["method"])
m[1].metric("documents", int(run["n_documents"]))
m[2].metric("groups", int(run["n_groups"]))
m[3].metric("duplicates removed", int(run["n_duplicates"]))
if run["parameters"]:
    with st.expander("Parameters of this run", expanded=True):
        widgets.table(
            pd.DataFrame(
                [
                    {
                        "parameter": name,
                        "value": str(value),
                        "meaning": parameter_meaning(run["method"], name),
                    }
                    for name, value in run["parameters"].items()
                ]
            ),
            f"dedup run {run_id} parameters",
            key="dedup-parameters",
        )

groups = reads.duplicate_groups(
    url, int(run_id), language=None if language == "all" else language, limit=MAX_GROUPS
)
st.subheader("Groups")
if groups.empty:
    st.info(
        (
            f"No near-duplicate group in this run: none of its {int(run['n_documents'])} "
            "documents is a near copy of another at its threshold"
            if language == "all"
            else f"No near-duplicate group of {language} documents in this run"
        )
        + " (mirrors and syndicated copies would be grouped here, and one of each kept "
        "for clustering)."
    )
    st.stop()
if len(groups) == MAX_GROUPS:
    st.caption(f"The {MAX_GROUPS} largest groups.")
shown = groups.rename(
    columns={
        "id": "group",
        "canonical_key": "canonical",
        "canonical_domain": "domain",
        "canonical_language": "language",
        "canonical_title": "title",
    }
)[["group", "method", "size", "canonical", "domain", "language", "title"]]
is_url = shown["canonical"].str.contains("://", regex=False).any()
widgets.table(
    shown,
    f"duplicate groups run {run_id}",
    key="groups",
    column_config=widgets.named_columns(
        {
            "size": ("size", "documents in the group"),
            "canonical": ("kept", "the member kept for clustering (`[dedup] canonical`)"),
        },
        links=("canonical",) if is_url else (),
    ),
)

top = groups.head(MAX_EXPANDERS)
members = reads.duplicate_members(url, tuple(int(i) for i in top["id"]))
for _, g in top.iterrows():
    with st.expander(f"group {g['id']} · {g['size']} documents · kept: {g['canonical_key']}"):
        mine = members[members["group_id"] == g["id"]][
            ["key", "canonical", "domain", "language", "title"]
        ]
        widgets.table(
            mine,
            f"duplicate group {g['id']}",
            key=f"group-{g['id']}",
            column_config=widgets.named_columns(
                {
                    "key": ("document", f"the member: a {run['unit']} (the run's unit)"),
                    "canonical": (
                        "kept",
                        "yes: the member kept for clustering; the others "
                        "are left out as its near duplicates",
                    ),
                },
                links=("key",) if is_url else (),
            ),
        )
