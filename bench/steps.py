"""Steps the benchmarks swap into the project's estimators (``set_params``), shared.

A benchmark that varies one step of :class:`cluster.activity.ActivityClusterer` swaps it;
what several scripts need around the steps lives here. This module runs nothing itself.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

import scipy.sparse as sp

__all__ = ["CachedNeighbours"]


class CachedNeighbours:
    """A neighbour step that finds the graph of a matrix once: the same matrix (the same
    weighting of the same counts, across seeds and Leiden alternatives) gets the graph
    found first. ``step``: the neighbour step it runs."""

    def __init__(self, step: Any) -> None:
        self.step = step
        self.seen: dict[bytes, tuple[Any, Any, float]] = {}

    def get_params(self, deep: bool = False) -> dict[str, Any]:
        return {"step": self.step}

    def __repr__(self) -> str:
        return f"CachedNeighbours({self.step!r})"

    def fit(self, X: sp.csr_matrix) -> CachedNeighbours:
        key = hashlib.sha1(X.indptr.tobytes() + X.indices.tobytes() + X.data.tobytes()).digest()
        if key not in self.seen:
            t0 = time.perf_counter()
            self.step.fit(X)
            self.seen[key] = (self.step.graph_, self.step.edges_, time.perf_counter() - t0)
        self.graph_, self.edges_, self.seconds_ = self.seen[key]
        return self
