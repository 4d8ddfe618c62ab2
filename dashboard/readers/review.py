"""What the Review page reads: the review queue and its summary, the coding sheet, the
share of uncertain domains, the coders and the agreement of two of them, with the
universities and the category labels (:mod:`.common`)."""

from __future__ import annotations

import dataclasses
import io
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.cache import TTL_SECONDS, cached, cached_value, frame_of, read_engine
from dashboard.readers.common import category_labels, universities
from store import review

__all__ = [
    "agreement",
    "category_labels",
    "coders",
    "coding_sheet",
    "queue_summary",
    "review_queue",
    "uncertain_shares",
    "universities",
]

review_queue = cached(review.review_queue)
queue_summary = cached_value(review.queue_summary)
uncertain_shares = cached(review.uncertain_shares)
coders = cached(review.coders)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def coding_sheet(url: str, run_id: int, direction: str | None, limit: int | None) -> bytes:
    """The coding sheet of the queue's first ``limit`` domains (UTF-8 with a byte-order
    mark, :func:`store.review.write_sheet`)."""
    rows = review.review_queue(read_engine(url), run_id=run_id, direction=direction, limit=limit)
    out = io.StringIO()
    review.write_sheet(rows, out)
    return ("\ufeff" + out.getvalue()).encode("utf-8")


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def agreement(url: str, coder_a: str, coder_b: str) -> tuple[dict[str, Any], pd.DataFrame]:
    """Two coders compared: the figures of :class:`store.review.Agreement` (without its
    lists, plus ``summary`` and ``to_accept``, the agreements not yet an override) and
    the disagreements."""
    result = review.agreement(read_engine(url), coder_a, coder_b)
    figures = {
        f.name: getattr(result, f.name)
        for f in dataclasses.fields(result)
        if f.name not in ("disagreements", "agreements")
    }
    figures["summary"] = result.summary
    figures["to_accept"] = sum(1 for _d, _k, over in result.agreements if over is None)
    return figures, frame_of(review.Disagreement, result.disagreements)
