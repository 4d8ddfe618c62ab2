"""Language identification of the main text with a confidence (py3langid).

py3langid is the naive Bayes byte n-gram classifier of langid.py (Lui & Baldwin 2012)
over 97 languages; with ``norm_probs`` the scores are a softmax over the languages,
tempered by the square root of the text length, so the confidence is a probability in
[0, 1]. Only the first ``max_chars`` characters are read (the language of a page's main
text is settled long before): time O(min(n, max_chars)), memory O(1) beyond the model,
which is loaded once per process (~0.1 s).

References
----------
M. Lui, T. Baldwin, *langid.py: An off-the-shelf language identification tool*,
ACL 2012 System Demonstrations.

Examples
--------
>>> identify_language("Санкт-Петербургский государственный университет основан в 1724 году.")[0]
'ru'
>>> lang, score = identify_language("The university was founded in 1636 in Cambridge.")
>>> lang, 0.5 < score <= 1.0
('en', True)
>>> identify_language("   ")
(None, None)
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["identifier", "identify_language"]

MAX_CHARS = 2_000


@functools.cache
def identifier() -> Any:
    """The py3langid identifier (normalised probabilities), loaded once per process."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def identify_language(text: str, max_chars: int = MAX_CHARS) -> tuple[str | None, float | None]:
    """The ISO 639-1 code of the language of ``text`` and its probability.

    Parameters
    ----------
    text : str
        Plain text.
    max_chars : int
        Read only this many characters from the start.

    Returns
    -------
    (str or None, float or None)
        ``(None, None)`` when the text has no letters.
    """
    sample = text[:max_chars]
    if not any(c.isalpha() for c in sample):
        return None, None
    lang, score = identifier().classify(sample)
    return str(lang), round(float(score), 4)
