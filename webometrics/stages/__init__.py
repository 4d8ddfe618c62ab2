"""The pipeline stages as functions over a database engine and the settings.

One module or package per stage (crawl, extract, dedup, cluster, analyse, and the two
Common Crawl stages citing_graph and citing_index). Each exposes one entry point::

    run(engine, settings, scope=None, *, progress=False) -> <Stage>Result

- ``settings`` (:class:`core.settings.Settings`) carries every tunable value: a command
  line option that overrides a configuration key is applied with
  :meth:`~core.settings.Settings.replace` before the call, never passed beside it;
- ``scope`` (a frozen dataclass of the stage, ``None`` for its default) says what to work
  on: which universities, direction or unit, which input files, and the switches that are
  no configuration key;
- the result is a frozen dataclass deriving from :class:`StageResult`; its fields are the
  stage's statistics, under the names the pipeline run records (:meth:`StageResult.stats`).

The command line and the whole-pipeline run (``webometrics run``) call the same code. A
stage with nothing to work on in its scope raises :class:`core.exceptions.NothingToDoError`.
Every ``run`` carries :func:`refreshes_figures`: when it returns, the figures the dashboard
and the report read are made fresh (:func:`store.aggregates.refresh_if_stale`: nothing to
do when the stage changed none of their inputs).
The algorithms themselves live in ``extract/`` and ``cluster/`` and know no database.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Concatenate, ParamSpec, TypeVar

from sqlalchemy import Engine

__all__ = ["StageResult", "jsonable", "refresh_figures", "refreshes_figures"]

log = logging.getLogger(__name__)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def refresh_figures(engine: Engine, after: str) -> None:
    """Make the figures the dashboard and the report read fresh
    (:func:`store.aggregates.refresh_if_stale`) after ``after`` (a stage, a command)
    stored data, and log what that took."""
    from store import aggregates

    done = aggregates.refresh_if_stale(engine)
    if not done["aggregate_fresh"]:
        log.info("figures refreshed after %s: %s", after, aggregates.describe(done))


def refreshes_figures(
    run: Callable[Concatenate[Engine, _P], _R],
) -> Callable[Concatenate[Engine, _P], _R]:
    """Make a stage's ``run`` refresh the figures (:mod:`store.aggregates`) when it
    returns, so the dashboard and the report show what the stage stored; a stage that
    fails or is interrupted leaves them as they were (the dashboard's banner says what
    changed since, ``webometrics refresh`` computes them)."""

    @functools.wraps(run)
    def wrapper(engine: Engine, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        result = run(engine, *args, **kwargs)
        refresh_figures(engine, run.__module__.rsplit(".", 1)[-1])
        return result

    wrapper.refreshes_figures = True  # type: ignore[attr-defined]  # checked by a test
    return wrapper


@dataclasses.dataclass(frozen=True)
class StageResult:
    """Base of the stages' typed results: a frozen dataclass of statistics."""

    #: fields left out of :meth:`stats` while they are ``None`` (a step that did not run,
    #: a figure only some runs have), as the runs have always recorded them
    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset()

    def stats(self) -> dict[str, Any]:
        """The statistics as JSON values (nested results become dicts), as recorded in a
        :class:`~store.models.PipelineRun`'s stages."""
        value = jsonable(dataclasses.asdict(self))
        assert isinstance(value, dict)
        return {k: v for k, v in value.items() if v is not None or k not in self.OMIT_WHEN_NONE}


def jsonable(value: Any) -> Any:
    """``value`` with mappings, sequences and numpy scalars turned into JSON values.

    >>> import numpy as np
    >>> jsonable({"n": np.int64(3), "ids": (1, 2), 4: None})
    {'n': 3, 'ids': [1, 2], '4': None}
    """
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if hasattr(value, "item"):
        return value.item()
    return str(value)
