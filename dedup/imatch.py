"""I-Match: one SHA-1 of a document's words that are in a filtered lexicon (seed 004).

Chowdhury et al. 2002: words too frequent or too rare in the collection carry no meaning
for duplicate detection and are removed by an IDF filter; the remaining distinct words of
a document, sorted, are hashed with SHA-1; documents with equal hashes are duplicates.
The lexicon here (:func:`imatch_lexicon`): words (stop words dropped, stemmed) seen in at
least ``min_df`` documents (2: a word in a single document has the highest IDF and
cannot be shared with a copy anyway; dropping it makes a substituted word harmless) and
in at most a fraction ``max_df`` of them (0.5: the lowest IDFs). A document with no
lexicon word has no signature. Seed 004 notes I-Match is unstable (one changed lexicon
word changes the hash); A7 (Lex Rand) is its randomised remedy.
Time O(total tokens); memory O(vocabulary).

References
----------
A. Chowdhury, O. Frieder, D. Grossman, M. C. McCabe, "Collection statistics for fast
duplicate document detection", *ACM TOIS* 20(2), 2002.
Seed 004_c0888cd231dfb92b.txt (I-Match).
"""

from __future__ import annotations

from dedup.base import (
    EMPTY,
    Corpus,
    NearDuplicateMethod,
    Signatures,
    keys_array,
    sha1_key,
)
from dedup.lexicon import Lexicon


def imatch_lexicon(lexicon: Lexicon, *, min_df: int, max_df: float) -> set[str]:
    """Words with ``min_df <= df <= max_df · N`` (the I-Match IDF filter)."""
    limit = max_df * lexicon.n_documents
    return {w for w, i in lexicon.vocabulary.items() if min_df <= lexicon.df[i] <= limit}


def imatch_key(words: set[str], lexicon: set[str]) -> int | None:
    """SHA-1 key of the sorted document words in the lexicon (``None`` when none is)."""
    kept = sorted(words & lexicon)
    return sha1_key(" ".join(kept)) if kept else None


class IMatchMethod(NearDuplicateMethod):
    """I-Match: SHA-1 of the document's lexicon words.

    Parameters
    ----------
    min_df : int, default 2
    max_df : float, default 0.5
        Largest document frequency kept, as a fraction of the documents.
    stem : bool, default True
    """

    name = "i-match"
    label = "I-Match"
    reference = "seed 004; Chowdhury et al. 2002"

    def __init__(self, *, min_df: int = 2, max_df: float = 0.5, stem: bool = True) -> None:
        self.min_df = min_df
        self.max_df = max_df
        self.stem = stem

    def _validate(self) -> None:
        self._check(self.min_df >= 1, f"min_df must be >= 1, got {self.min_df}")
        self._check(0 < self.max_df <= 1, f"max_df must lie in (0, 1], got {self.max_df}")

    def signatures(self, corpus: Corpus) -> Signatures:
        tokens = corpus.tokens(stem=self.stem, drop_stopwords=True)
        lexicon = imatch_lexicon(
            Lexicon.from_tokens(tokens), min_df=self.min_df, max_df=self.max_df
        )
        feats = []
        for toks in tokens:
            key = imatch_key(set(toks), lexicon)
            feats.append(EMPTY if key is None else keys_array([key]))
        return Signatures(feats)
