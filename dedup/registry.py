"""The registry of near-duplicate methods: name → class, in the order of the table.

>>> from dedup.registry import METHODS, get_method
>>> "a12-3plus5" in METHODS and "minhash-lsh" in METHODS
True
>>> get_method("simhash", k=2).k
2
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from core.exceptions import ParameterError
from dedup.base import NearDuplicateMethod
from dedup.decomposition import DecompositionMethod
from dedup.descr_words import DescrWordsMethod
from dedup.heavy_sent import HeavySentMethod
from dedup.imatch import IMatchMethod
from dedup.keywords import (
    KeywordConMethod,
    KeywordConWeightMethod,
    KeywordDescriptionMethod,
    KeywordSortMethod,
    KeywordSortWeightMethod,
)
from dedup.lex_rand import LexRandMethod
from dedup.log_shingles import LogShinglesMethod
from dedup.long_sent import LongSentMethod
from dedup.md5 import Md5Method
from dedup.megashingles import MegashingleMethod
from dedup.minhash_lsh import MinHashLshMethod
from dedup.opt_freq import OptFreqMethod
from dedup.random_projection import RandomProjectionMethod
from dedup.simhash import SimHashMethod
from dedup.sketches import MinInNMethod, NMinMethod
from dedup.spotsigs import SpotSigsMethod
from dedup.supershingles import Broder6x14Method, Broder14x6Method
from dedup.tf import TfMethod
from dedup.tfidf import TfIdfMethod
from dedup.tfridf import TfRidfMethod
from dedup.three_plus_five import ThreePlusFiveMethod

_CLASSES: tuple[type[NearDuplicateMethod], ...] = (
    Md5Method,
    TfMethod,
    TfIdfMethod,
    TfRidfMethod,
    LongSentMethod,
    HeavySentMethod,
    MegashingleMethod,
    LexRandMethod,
    LogShinglesMethod,
    DescrWordsMethod,
    OptFreqMethod,
    DecompositionMethod,
    ThreePlusFiveMethod,
    Broder6x14Method,
    Broder14x6Method,
    IMatchMethod,
    SimHashMethod,
    RandomProjectionMethod,
    SpotSigsMethod,
    KeywordDescriptionMethod,
    KeywordConMethod,
    KeywordSortMethod,
    KeywordConWeightMethod,
    KeywordSortWeightMethod,
    MinHashLshMethod,
    NMinMethod,
    MinInNMethod,
)

METHODS: Mapping[str, type[NearDuplicateMethod]] = MappingProxyType(
    {cls.name: cls for cls in _CLASSES}
)
"""Method name → class (read-only)."""


def get_method(name: str, **params: Any) -> NearDuplicateMethod:
    """A method instance by name with keyword parameters.

    Raises
    ------
    ParameterError
        Unknown name (the message lists the names) or unknown parameter (the message
        lists the method's parameters).
    """
    cls = METHODS.get(name)
    if cls is None:
        raise ParameterError(
            f"unknown near-duplicate method {name!r}; the methods are: {', '.join(METHODS)} "
            "(webometrics dedup --list-methods)"
        )
    unknown = sorted(set(params) - set(cls.param_names()))
    if unknown:
        allowed = ", ".join(cls.param_names()) or "none"
        raise ParameterError(
            f"method {name!r} has no parameter {', '.join(unknown)}; its parameters: {allowed}"
        )
    return cls(**params)


def describe_methods() -> list[dict[str, Any]]:
    """Name, label, input, comparison, reference and default parameters of every method."""
    return [
        {
            "name": cls.name,
            "label": cls.label,
            "input": cls.input,
            "comparison": cls.comparison,
            "reference": cls.reference,
            "params": cls().get_params(),
        }
        for cls in METHODS.values()
    ]
