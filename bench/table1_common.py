"""What Table 1's run (``bench/table1.py``) and its parameter sweep
(``bench/table1_sweep.py``) share: the benchmark's goals, shingling the stories with a
parameter set, and the ARI between two labellings.
"""

from __future__ import annotations

from typing import Any

import numpy as np

GOALS = {
    "lsh_pipeline_seconds_21578": 5.0,
    "lsh_pipeline_peak_mb_21578": 2048,
    "signature_speedup_vs_datasketch": 10.0,
    "exact_seconds_20000": 60.0,
    "ari_lsh_vs_exact_default": 0.95,
    "class_f_20000": 0.72,
}


def shingle_texts(texts: list[str], p: dict[str, Any]) -> list[np.ndarray]:
    from extract import Shingler

    sh = Shingler(k=p["k"], language="en", stem=p["stem"], stopwords=p["stopwords"])
    return sh.hashes_many(texts)


def ari(a: np.ndarray, b: np.ndarray) -> float:
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(a, b))
