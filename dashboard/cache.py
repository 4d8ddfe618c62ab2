"""The dashboard's plumbing: engines in ``st.cache_resource``, query results in
``st.cache_data``, and :func:`cached`, which turns a reader of :mod:`store` into a cached
reader of the dashboard.

Every cached function takes the database URL as its first parameter (never a global),
reads through a read-only engine and the queries of :mod:`store` (parameterised SQL
only), and returns plain values or pandas frames, which Streamlit can copy out of its
cache. What each page reads is in its module of :mod:`dashboard.readers`; the analyst's
writes (:mod:`dashboard.writes`) go through :mod:`store` on a separate read-write engine
and clear the cached results.

Cached results live for :data:`TTL_SECONDS` at most, until the sidebar's *Reload data*,
or until the data change: every script run calls :func:`follow_changes`, which reads the
database's data version (:func:`store.freshness.data_version`, at most once per
:data:`CHECK_SECONDS`) and forgets every cached result when it differs from the version
the cache was filled at. A change from the command line (``webometrics category set``,
``analyse``) therefore shows on the next interaction after at most
:data:`CHECK_SECONDS`; the sidebar says when the data were last read.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import importlib
import inspect
import threading
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

import pandas as pd
import streamlit as st
from sqlalchemy import Engine

from core.settings import Settings, load_settings
from store import freshness, open_database

P = ParamSpec("P")
R = TypeVar("R")

TTL_SECONDS = 600


def settings() -> Settings:
    """The settings, from ``WEBOMETRICS_CONFIG`` / ``WEBOMETRICS_DB_URL`` set by
    ``webometrics dashboard`` (or the defaults and ``./webometrics.toml``)."""
    return load_settings()


@st.cache_resource(show_spinner=False)
def read_engine(url: str) -> Engine:
    """A read-only engine for ``url`` whose schema is at head (made once per URL)."""
    return open_database(url, read_only=True)


@st.cache_resource(show_spinner=False)
def write_engine(url: str) -> Engine:
    """A read-write engine for ``url``: only the category override uses it."""
    return open_database(url)


WARM_IMPORTS = ("scipy.stats", "networkx", "pyvis.network", "altair")
WARM_THREAD = "webometrics-warm-imports"


@st.cache_resource(show_spinner=False)
def warm_imports() -> threading.Thread:
    """Import the libraries some pages need (:data:`WARM_IMPORTS`: scipy.stats alone
    takes 2 s) in a background thread, once per server, while the analyst reads the
    first page; a page that needs one before it is done waits on Python's import lock as
    it would have without this."""

    def run() -> None:
        for name in WARM_IMPORTS:
            importlib.import_module(name)

    thread = threading.Thread(target=run, name=WARM_THREAD, daemon=True)
    thread.start()
    return thread


def frame(rows: Iterable[Any], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A DataFrame of dataclass rows (or tuples with ``columns``)."""
    rows = list(rows)
    if rows and dataclasses.is_dataclass(rows[0]):
        return pd.DataFrame([dataclasses.asdict(r) for r in rows])
    if not rows and columns is None:
        return pd.DataFrame()
    return pd.DataFrame(rows, columns=list(columns) if columns is not None else None)


def frame_of(row: type, rows: Sequence[Any]) -> pd.DataFrame:
    """A DataFrame of ``rows``, instances of the dataclass ``row``: its columns are the
    dataclass's fields even when there is no row (a page can filter an empty frame)."""
    if rows:
        return frame(rows)
    return pd.DataFrame(columns=[f.name for f in dataclasses.fields(row)])


def reload(url: str | None = None) -> None:
    """Forget every cached query result (not the engines); with ``url``, its data are
    read anew from now (:func:`follow_changes` restarts its clock)."""
    st.cache_data.clear()
    if url is not None:
        data_clock(url).version = None


CHECK_SECONDS = 5  # how often the data version is read: the longest a change waits


@dataclasses.dataclass
class DataClock:
    """The data version the cached results of one database were read at, and when they
    were last forgotten (``read_at``: every result shown was read since)."""

    version: str | None = None
    read_at: dt.datetime | None = None
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


@st.cache_resource(show_spinner=False)
def data_clock(url: str) -> DataClock:
    """The :class:`DataClock` of ``url``, one per server (shared by every session)."""
    return DataClock()


@st.cache_data(ttl=CHECK_SECONDS, show_spinner=False)
def data_version(url: str) -> str:
    """The database's data version (:func:`store.freshness.data_version`), read at most
    once per :data:`CHECK_SECONDS`."""
    return freshness.data_version(read_engine(url))


def follow_changes(url: str) -> DataClock:
    """Forget every cached result when the data version of ``url`` changed since they
    were read (a stage or an analyst wrote, from this dashboard or the command line);
    returns the clock, whose ``read_at`` the sidebar shows."""
    clock = data_clock(url)
    now = data_version(url)
    with clock.lock:
        if clock.version != now:
            if clock.version is not None:
                st.cache_data.clear()
            clock.version = now
            clock.read_at = dt.datetime.now(dt.UTC)
    return clock


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def staleness(url: str, version: str) -> freshness.Staleness | None:
    """What changed since the figures were computed (:func:`store.freshness.staleness`),
    ``None`` while they are fresh; read once per data ``version``."""
    return freshness.staleness(read_engine(url))


# --- cached readers: one line per store reader --------------------------------------------


def row_type(reader: Callable[..., Any]) -> type:
    """The dataclass of the rows ``reader`` returns, from its annotation ``list[Row]``.

    Raises
    ------
    TypeError
        The annotation is not a list of dataclass instances: pass ``row=`` to
        :func:`cached`, or use :func:`cached_value`.
    """
    name = f"{reader.__module__}.{reader.__qualname__}"
    try:
        returns = typing.get_type_hints(reader).get("return")
    except NameError as exc:  # an annotation only importable while type checking
        raise TypeError(f"{name}: its return annotation does not resolve ({exc}); "
                        "pass row= to cached()") from exc  # fmt: skip
    args = typing.get_args(returns)
    if typing.get_origin(returns) is list and args and dataclasses.is_dataclass(args[0]):
        return typing.cast("type", args[0])
    raise TypeError(
        f"{name} returns {returns}, not list[<dataclass>]: pass row= to cached(), or "
        "use cached_value() for a reader of plain values"
    )


def _cached_call(
    reader: Callable[..., Any],
    convert: Callable[[Any], Any],
    kind: str,
    ttl: int,
    returns: Any = inspect.Signature.empty,
) -> Callable[..., Any]:
    """``reader`` as ``call(url, *args, **kwargs)``: the arguments bound to the reader's
    own signature (defaults filled in, so a positional and a keyword call share one cached
    result), read through :func:`read_engine`, converted and cached in ``st.cache_data``
    under the reader's own name and ``kind`` (Streamlit keys a cache by module and
    qualified name)."""
    signature = inspect.signature(reader)
    _engine, *params = signature.parameters.values()
    own = signature.replace(parameters=params)

    def read(url: str, arguments: tuple[tuple[str, Any], ...]) -> Any:
        return convert(reader(read_engine(url), **dict(arguments)))

    read.__module__ = reader.__module__
    read.__qualname__ = f"{kind}.{reader.__qualname__}"
    read_cached = st.cache_data(ttl=ttl, show_spinner=False)(read)

    @functools.wraps(reader)
    def call(url: str, /, *args: Any, **kwargs: Any) -> Any:
        bound = own.bind(*args, **kwargs)
        bound.apply_defaults()
        return read_cached(url, tuple(bound.arguments.items()))

    url = inspect.Parameter("url", inspect.Parameter.POSITIONAL_ONLY, annotation=str)
    if returns is inspect.Signature.empty:
        returns = signature.return_annotation
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[url, *params], return_annotation=returns
    )
    return call


def cached(
    reader: Callable[Concatenate[Engine, P], Sequence[Any]],
    *,
    row: type | None = None,
    ttl: int = TTL_SECONDS,
) -> Callable[Concatenate[str, P], pd.DataFrame]:
    """A store reader ``reader(engine, **params) -> list[Row]`` as the dashboard's cached
    reader ``reader(url, **params) -> DataFrame``.

    The result reads through the read-only engine of ``url`` (:func:`read_engine`), is
    cached in ``st.cache_data`` for ``ttl`` seconds and forgotten with every other cached
    result when the data change (:func:`follow_changes`) or on *Reload data*
    (:func:`reload`); its columns are the fields of ``Row`` even when no row is found.

    Parameters
    ----------
    reader : callable
        A reader of :mod:`store` whose first parameter is the engine and whose return
        annotation is ``list[Row]`` with ``Row`` a dataclass.
    row : type, optional
        The row dataclass, when the annotation does not name it.
    ttl : int
        Seconds a result lives at most (:data:`TTL_SECONDS`).

    Returns
    -------
    callable
        ``(url, *args, **kwargs) -> pandas.DataFrame``, with the reader's own parameters
        after ``url`` (its name and docstring too).

    Raises
    ------
    TypeError
        When made: ``row`` not given and the reader's annotation names no dataclass.

    Examples
    --------
    >>> from store import queries
    >>> list_crawl_runs = cached(queries.list_crawl_runs)
    >>> list(inspect.signature(list_crawl_runs).parameters)
    ['url']
    """
    rows_of = row or row_type(reader)
    convert = functools.partial(frame_of, rows_of)
    return _cached_call(reader, convert, "cached", ttl, returns=pd.DataFrame)


def cached_value(
    reader: Callable[Concatenate[Engine, P], R], *, ttl: int = TTL_SECONDS
) -> Callable[Concatenate[str, P], R]:
    """A store reader of plain values (a list of names, a mapping, bytes, one summary
    row) as a cached reader of the dashboard: like :func:`cached`, the value as returned.

    Examples
    --------
    >>> from store import queries
    >>> document_languages = cached_value(queries.document_languages)
    >>> document_languages.__name__
    'document_languages'
    """
    return _cached_call(reader, _same, "cached_value", ttl)


def _same(value: R) -> R:
    return value
