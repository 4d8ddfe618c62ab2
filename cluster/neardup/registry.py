"""The registry of near-duplicate methods: name → class, in the order of the table.

>>> from cluster.neardup.registry import METHODS, get_method
>>> "a12-3plus5" in METHODS and "minhash-lsh" in METHODS
True
>>> get_method("simhash", k=2).k
2
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from cluster.neardup.base import NearDuplicateMethod
from cluster.neardup.decomposition import DecompositionMethod
from cluster.neardup.descr_words import DescrWordsMethod
from cluster.neardup.heavy_sent import HeavySentMethod
from cluster.neardup.imatch import IMatchMethod
from cluster.neardup.keywords import (
    KeywordConMethod,
    KeywordConWeightMethod,
    KeywordDescriptionMethod,
    KeywordSortMethod,
    KeywordSortWeightMethod,
)
from cluster.neardup.lex_rand import LexRandMethod
from cluster.neardup.log_shingles import LogShinglesMethod
from cluster.neardup.long_sent import LongSentMethod
from cluster.neardup.md5 import Md5Method
from cluster.neardup.megashingles import MegashingleMethod
from cluster.neardup.minhash_lsh import MinHashLshMethod
from cluster.neardup.opt_freq import OptFreqMethod
from cluster.neardup.random_projection import RandomProjectionMethod
from cluster.neardup.simhash import SimHashMethod
from cluster.neardup.sketches import MinInNMethod, NMinMethod
from cluster.neardup.spotsigs import SpotSigsMethod
from cluster.neardup.supershingles import Broder6x14Method, Broder14x6Method
from cluster.neardup.tf import TfMethod
from cluster.neardup.tfidf import TfIdfMethod
from cluster.neardup.tfridf import TfRidfMethod
from cluster.neardup.three_plus_five import ThreePlusFiveMethod
from webometrics.exceptions import ParameterError

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
