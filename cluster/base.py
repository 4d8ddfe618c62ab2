"""The one base of the estimators: parameters by introspection, constraints checked at fit.

scikit-learn's estimator contract (``BaseEstimator``; Buitinck et al. 2013) in a few
lines, for the clusterers of :mod:`cluster` and the near-duplicate methods of
:mod:`dedup`:

- ``__init__`` takes keyword-only parameters and stores each under its own name, nothing
  else; its defaults come from :mod:`core.defaults`, so an estimator made with no
  arguments is the one the command line runs;
- :meth:`Estimator.get_params`, :meth:`~Estimator.set_params` and ``repr`` read the
  parameters from the signature of ``__init__`` (never a hand-kept list);
- :meth:`Estimator.check_params`, called first by ``fit``, checks every parameter against
  the class's ``_parameter_constraints`` (any one of a parameter's constraints accepts it)
  and then the estimator's own rules between parameters (``_validate``); a bad value is a
  :class:`~core.exceptions.ParameterError` that names the parameter, what it must be and
  what it got;
- :meth:`Estimator.from_settings` builds an estimator from the typed settings
  (:class:`core.settings.Settings`) through the class's ``_settings_keys``
  (``parameter -> "section.key"``), with overrides.

The constraints are small objects: :class:`Interval` (integers or real numbers between
bounds), :class:`Options` (a closed vocabulary of :mod:`core.choices`, or ``None``) and
:class:`Predicate`; :data:`SEED` is the one seed rule of the project (an integer in
``0 .. core.defaults.SEED_LIMIT - 1``) and :func:`is_int` the one integer test (numpy
integers count, ``bool`` does not).

Examples
--------
>>> class Model(Estimator):
...     _parameter_constraints = {"k": [Interval(int, 1, None)], "mode": [Options(("a", "b"))]}
...     def __init__(self, *, k: int = 3, mode: str = "a") -> None:
...         self.k = k
...         self.mode = mode
>>> Model(k=5)
Model(k=5, mode='a')
>>> Model().set_params(mode="b").get_params()
{'k': 3, 'mode': 'b'}
>>> Model(k=0).check_params()
Traceback (most recent call last):
...
core.exceptions.ParameterError: k must be an integer >= 1, got 0
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self

import numpy as np

from core import defaults as D
from core.exceptions import ParameterError

if TYPE_CHECKING:
    from core.settings import Settings

__all__ = [
    "NONE",
    "N_JOBS",
    "POSITIVE",
    "SEED",
    "THRESHOLD",
    "Constraint",
    "Constraints",
    "Estimator",
    "Interval",
    "Options",
    "Predicate",
    "check_param",
    "check_seed",
    "clone",
    "is_int",
    "is_real",
]


def is_int(value: object) -> bool:
    """Whether ``value`` is an integer (Python or numpy), ``bool`` excluded.

    >>> is_int(3), is_int(np.int64(3)), is_int(True), is_int(3.0)
    (True, True, False, False)
    """
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def is_real(value: object) -> bool:
    """Whether ``value`` is a real number (int, float or numpy), ``bool`` excluded."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


class Constraint(Protocol):
    """What a parameter may be: true for an allowed value; ``str`` says what is allowed."""

    def __call__(self, value: Any) -> bool: ...


@dataclass(frozen=True)
class Interval:
    """Numbers between bounds: ``kind`` ``int`` (integers) or ``float`` (any real number).

    ``closed`` says which bounds belong to the interval: ``"both"``, ``"left"``,
    ``"right"`` or ``"neither"``; ``None`` is an open end. ``label`` replaces the text
    of the message.

    >>> str(Interval(float, 0, 1, closed="neither")), str(Interval(int, 1, 4096))
    ('in (0, 1)', 'an integer in 1..4096')
    """

    kind: type
    low: float | None
    high: float | None
    closed: str = "both"
    label: str | None = None

    def __call__(self, value: Any) -> bool:
        if not (is_int(value) if self.kind is int else is_real(value)):
            return False
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and (value < self.low if left else value <= self.low):
            return False
        return not (self.high is not None and (value > self.high if right else value >= self.high))

    def __str__(self) -> str:
        if self.label is not None:
            return self.label
        lo, hi = self.low, self.high
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.kind is int:
            if lo is not None and hi is not None and left and right:
                return f"an integer in {lo:g}..{hi:g}"
            what = "an integer"
        elif lo is not None and hi is not None:
            return f"in {'[' if left else '('}{lo:g}, {hi:g}{']' if right else ')'}"
        else:
            what = "a number"
        bounds = []
        if lo is not None:
            bounds.append(f"{'>=' if left else '>'} {lo:g}")
        if hi is not None:
            bounds.append(f"{'<=' if right else '<'} {hi:g}")
        return " ".join([what, " and ".join(bounds)]) if bounds else what


@dataclass(frozen=True)
class Options:
    """One of a closed set of values (a vocabulary of :mod:`core.choices`, or ``None``).

    >>> str(Options(("a", "b"))), str(Options(("auto",))), str(Options((None,)))
    ('one of a, b', "'auto'", 'None')
    """

    values: tuple[Any, ...]

    def __call__(self, value: Any) -> bool:
        return any(value is v or (type(value) is type(v) and value == v) for v in self.values)

    def __str__(self) -> str:
        if len(self.values) == 1:
            return repr(self.values[0])
        return f"one of {', '.join(str(v) for v in self.values)}"


@dataclass(frozen=True)
class Predicate:
    """Values for which ``test`` is true, described by ``description``."""

    test: Callable[[Any], bool]
    description: str

    def __call__(self, value: Any) -> bool:
        return bool(self.test(value))

    def __str__(self) -> str:
        return self.description


SEED = Interval(int, 0, D.SEED_LIMIT - 1, label="an integer in 0..2**31-1")
"""The one seed rule: an integer in ``0 .. SEED_LIMIT - 1`` (every generator seeded here)."""

N_JOBS = Predicate(lambda v: is_int(v) and v != 0, "a non-zero integer (-1: every core)")
"""Threads or processes, joblib's convention (``-1`` every core, ``-2`` all but one)."""

NONE = Options((None,))
"""``None`` allowed (an optional parameter)."""

POSITIVE = Interval(int, 1, None)
"""An integer >= 1 (a count, a size)."""

THRESHOLD = Interval(float, 0, 1, closed="neither")
"""A similarity threshold, in the open interval (0, 1)."""


def check_param(name: str, value: Any, constraints: Sequence[Constraint]) -> None:
    """Raise :class:`~core.exceptions.ParameterError` unless one constraint allows ``value``.

    >>> check_param("rows", 0, [Interval(int, 1, None)])
    Traceback (most recent call last):
    ...
    core.exceptions.ParameterError: rows must be an integer >= 1, got 0
    """
    if not any(c(value) for c in constraints):
        allowed = " or ".join(str(c) for c in constraints)
        raise ParameterError(f"{name} must be {allowed}, got {value!r}")


def check_seed(seed: Any) -> int:
    """``seed`` as an ``int`` when it follows the one seed rule (:data:`SEED`), else a
    :class:`~core.exceptions.ParameterError`."""
    check_param("seed", seed, [SEED])
    return int(seed)


Constraints = Mapping[str, Sequence[Constraint]]
"""Parameter → its constraints (any one allows a value)."""


class Estimator:
    """Base of the estimators (see the module docstring).

    Class attributes
    ----------------
    _parameter_constraints : mapping str → sequence of constraints
        What each parameter may be; a parameter without an entry is checked by
        ``_validate`` (or not at all).
    _settings_keys : mapping str → str
        Parameter → ``"section.key"`` of :class:`core.settings.Settings` it is read from
        by :meth:`from_settings`; its default is that setting's (a test pins them).
    _resource_params : tuple of str
        Parameters that change the time, memory or threads used, never the result
        (left out of :meth:`result_params`).
    """

    _parameter_constraints: ClassVar[Constraints] = {}
    _settings_keys: ClassVar[Mapping[str, str]] = {}
    _resource_params: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def param_names(cls) -> list[str]:
        """Names of the keyword parameters of ``__init__``, in order."""
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY]

    def get_params(self, deep: bool = False) -> dict[str, Any]:
        """The parameters of ``__init__`` and their values.

        Parameters
        ----------
        deep : bool, default False
            Also each step's parameters, as ``step__param`` after the step (a parameter
            whose value is an estimator, or a step the estimator builds by default:
            :meth:`_nested`), as scikit-learn's ``Pipeline`` lists them. False by default
            (scikit-learn's default is True) so that the stored parameters of a run and
            ``repr`` stay the estimator's own; :func:`clone` asks for ``deep=False``.
        """
        out = {name: getattr(self, name) for name in self.param_names()}
        if deep:
            for name in list(out):
                step = self._nested(name)
                if step is not None:
                    out.update({f"{name}__{k}": v for k, v in step.get_params(deep=True).items()})
        return out

    def set_params(self, **params: Any) -> Self:
        """Set some parameters (checked at the next ``fit``); return ``self``.

        ``step__param`` sets a parameter of a step (:meth:`_set_nested`), after the
        estimator's own parameters, so ``set_params(step=new, step__param=value)``
        changes the new step.

        Raises
        ------
        ParameterError
            A name that is not a parameter (of the estimator or of the step).
        """
        nested: dict[str, dict[str, Any]] = {}
        own: dict[str, Any] = {}
        for key, value in params.items():
            head, sep, rest = key.partition("__")
            if sep:
                nested.setdefault(head, {})[rest] = value
            else:
                own[key] = value
        self._check_names({**own, **nested})
        for name, value in own.items():
            setattr(self, name, value)
        for name, sub in nested.items():
            self._set_nested(name, sub)
        return self

    def _nested(self, name: str) -> Any:
        """The step behind parameter ``name`` whose parameters :meth:`get_params` lists
        (``None``: not a step): its value when that is an estimator."""
        value = getattr(self, name)
        return value if hasattr(value, "get_params") and not isinstance(value, type) else None

    def _set_nested(self, name: str, params: dict[str, Any]) -> None:
        """Set ``params`` on the step behind parameter ``name``."""
        step = self._nested(name)
        if step is None:
            raise ParameterError(
                f"{name}__{next(iter(params))}: {name} of {type(self).__name__} is "
                f"{getattr(self, name)!r}, not a step with parameters"
            )
        step.set_params(**params)

    def result_params(self) -> dict[str, Any]:
        """:meth:`get_params` without the parameters the result does not depend on."""
        return {k: v for k, v in self.get_params().items() if k not in self._resource_params}

    def check_params(self) -> None:
        """Check every parameter (``fit`` calls it first).

        Raises
        ------
        ParameterError
            The first parameter outside what is allowed, named with what it must be.
        """
        for name, constraints in self._parameter_constraints.items():
            check_param(name, getattr(self, name), constraints)
        self._validate()

    def _validate(self) -> None:
        """The estimator's own rules between parameters; raise :class:`ParameterError`."""

    @classmethod
    def settings_params(cls, settings: Settings) -> dict[str, Any]:
        """The parameters the settings give (through ``_settings_keys``)."""
        out: dict[str, Any] = {}
        for name, key in cls._settings_keys.items():
            section, field = key.split(".")
            out[name] = getattr(getattr(settings, section), field)
        return out

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> Self:
        """The estimator of the settings (e.g. ``[cluster]`` and ``[minhash]``), with
        some parameters overridden.

        Raises
        ------
        ParameterError
            An override that is not a parameter.
        """
        cls._check_names(overrides)
        return cls(**{**cls.settings_params(settings), **overrides})

    @classmethod
    def _check_names(cls, params: Mapping[str, Any]) -> None:
        names = cls.param_names()
        unknown = [k for k in params if k not in names]
        if unknown:
            raise ParameterError(
                f"{', '.join(unknown)}: not a parameter of {cls.__name__} "
                f"(its parameters: {', '.join(names)})"
            )

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"


def clone(estimator: Any) -> Any:
    """A new unfitted estimator with the same parameters (scikit-learn's ``clone``).

    Each parameter that is itself an estimator (a step) is cloned too; other values are
    deep-copied. ``sklearn.base.clone`` gives the same (:meth:`Estimator.get_params`
    takes ``deep``).

    Examples
    --------
    >>> from cluster.weighting import TfidfWeighting
    >>> model = TfidfWeighting(min_df=3)
    >>> copy = clone(model)
    >>> copy, copy is model
    (TfidfWeighting(min_df=3, max_df=0.5), False)
    """
    import copy

    if isinstance(estimator, list | tuple):
        return type(estimator)(clone(e) for e in estimator)
    if not hasattr(estimator, "get_params") or isinstance(estimator, type):
        return copy.deepcopy(estimator)
    params = {k: clone(v) for k, v in estimator.get_params(deep=False).items()}
    return type(estimator)(**params)
