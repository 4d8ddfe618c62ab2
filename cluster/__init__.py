"""Clustering of shingle sets: MinHash, LSH banding, the paper's LSH single-link, an exact
single-link baseline, and the scores to judge them.

Works on numpy arrays of 64-bit shingle hashes (:func:`extract.shingle_hashes`); imports
neither the database nor Scrapy.

- :class:`Estimator` (``cluster.base``): the one base of the estimators (parameters by
  introspection, constraints checked at ``fit``, ``from_settings``); its defaults are the
  settings', so an estimator made with no arguments is the command line's.
- :class:`MinHasher`, :class:`MinHashSignatures` (``cluster.minhash``): datasketch-equal MinHash
  signatures of a whole corpus at once.
- :func:`band_keys`, :func:`bucket_pairs`, :func:`candidate_pairs` (``cluster.lsh``): LSH
  banding (the last within a memory budget).
- :class:`SignatureStore` (``cluster.sigstore``): signatures signed from a stream into a
  memory-mapped file, for corpora larger than memory.
- :class:`LSHLink` (``cluster.lsh_link``): the modified LSH single-link agglomeration of
  seed 000 (Korelin, Blekanov, Sergeev 2015).
- :class:`ExactSingleLink` (``cluster.single_link``): exact Jaccard single linkage.
- :class:`LSHLeiden` (``cluster.lsh_leiden``), :class:`ExactLeiden`
  (``cluster.graph_leiden``): Leiden communities of the LSH candidate / exact graph.
- :class:`ActivityClusterer` (``cluster.activity``): grouping by kind of activity, the
  default of ``webometrics cluster``: tf-idf (:class:`TfidfWeighting`,
  ``cluster.weighting``), weighted MinHash (:class:`WeightedMinHasher`,
  ``cluster.weighted_minhash``) and LSH for a k-nearest-neighbour graph
  (``cluster.knn``), nested Leiden levels (``cluster.nested_leiden``); its four steps
  (:class:`TfidfWeighting`, :class:`KNeighbours`, :class:`LeidenCommunities`,
  :class:`CentroidReassignment`) can be swapped as a scikit-learn ``Pipeline``'s
  (:func:`clone` copies an estimator with its steps).
- :func:`score_clustering`, :func:`hierarchical_f_measure` (``cluster.evaluate``).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ActivityClusterer": "cluster.activity",
    "CentroidReassignment": "cluster.reassign",
    "Estimator": "cluster.base",
    "ExactLeiden": "cluster.graph_leiden",
    "ExactSingleLink": "cluster.single_link",
    "KNeighbours": "cluster.knn",
    "LSHLeiden": "cluster.lsh_leiden",
    "LSHLevel": "cluster.lsh_link",
    "LSHLink": "cluster.lsh_link",
    "LeidenCommunities": "cluster.nested_leiden",
    "MinHashSignatures": "cluster.minhash",
    "MinHasher": "cluster.minhash",
    "ShingleMatrix": "cluster.single_link",
    "SignatureStore": "cluster.sigstore",
    "TfidfWeighting": "cluster.weighting",
    "WeightedMinHasher": "cluster.weighted_minhash",
    "band_keys": "cluster.lsh",
    "bucket_pairs": "cluster.lsh",
    "candidate_pairs": "cluster.lsh",
    "clone": "cluster.base",
    "collision_probability": "cluster.lsh",
    "hierarchical_f_measure": "cluster.evaluate",
    "s_curve_threshold": "cluster.lsh",
    "score_clustering": "cluster.evaluate",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    # exports load on first use, so `import corpora` stays light (no scikit-learn)
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'cluster' has no attribute {name!r}")
