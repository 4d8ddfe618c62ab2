"""The MinHash signatures of a clustering: stored as :class:`~store.models.Signature`
rows (inserted or refreshed), or signed into a memory-mapped
:class:`cluster.sigstore.SignatureStore` from the documents streamed out of the database.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine, insert, select, update
from tqdm import tqdm

from store.models import (
    Signature,
)
from store.session import session_scope
from webometrics.stages.cluster.documents import ID_BATCH, stream_shingles

__all__ = ["sign_into_store", "store_signatures"]

log = logging.getLogger(__name__)


def store_signatures(engine: Engine, ids: Sequence[int], signatures: Any, hash_name: str) -> int:
    """Insert or refresh the signature rows; return how many were written.

    Works through the documents in batches (the signatures may be memory-mapped from a
    store larger than memory).
    """
    params = signatures.params
    same = (
        Signature.num_perm == params["num_perm"],
        Signature.seed == params["seed"],
        Signature.scheme == params["scheme"],
        Signature.hash_func == hash_name,
    )
    written = 0
    with session_scope(engine) as s:
        for start in range(0, len(ids), ID_BATCH):
            batch = [int(i) for i in ids[start : start + ID_BATCH]]
            existing = dict(
                s.execute(
                    select(Signature.document_id, Signature.hashvalues).where(
                        Signature.document_id.in_(batch), *same
                    )
                )
                .tuples()
                .all()
            )
            new_rows, changed = [], []
            for k, doc_id in enumerate(batch, start=start):
                value = signatures.row_bytes(k)
                old = existing.get(doc_id)
                if old is None:
                    new_rows.append(
                        {
                            "document_id": doc_id,
                            "num_perm": params["num_perm"],
                            "seed": params["seed"],
                            "scheme": params["scheme"],
                            "hash_func": hash_name,
                            "hashvalues": value,
                        }
                    )
                elif bytes(old) != value:
                    changed.append((doc_id, value))
            if new_rows:
                s.execute(insert(Signature), new_rows)
            for doc_id, value in changed:
                s.execute(
                    update(Signature)
                    .where(Signature.document_id == doc_id, *same)
                    .values(hashvalues=value)
                )
            written += len(new_rows) + len(changed)
    return written


def sign_into_store(
    engine: Engine, ids: Sequence[int], folder: Path, model: Any, workers: int, progress: bool
) -> tuple[Any, np.ndarray]:
    """Stream the documents' shingles into the signature store ``folder``; return its
    memory-mapped signatures and the shingles per document."""
    from cluster.minhash import MinHasher
    from cluster.sigstore import SignatureStore

    hasher = MinHasher(num_perm=int(model.num_perm), seed=int(model.seed), scheme=model.scheme)
    bar = tqdm(total=len(ids), desc=f"sign into {folder}", unit="doc", disable=not progress or None)
    try:
        store = SignatureStore.write(
            folder,
            hasher,
            stream_shingles(engine, ids),
            ids=ids,
            n_jobs=workers,
            progress=bar.update,
        )
    finally:
        bar.close()
    log.info("signed %d documents into %s", len(store), folder)
    return store.signatures(), store.lengths
