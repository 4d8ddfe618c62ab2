"""Rows to tables: :func:`to_frame` turns a list of the row dataclasses of
:mod:`store.analytics` into a ``pandas.DataFrame``; :func:`row_fields` names a row type's
columns (for empty tables).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, fields, is_dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def to_frame(rows: Sequence[Any], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A ``pandas.DataFrame`` of a list of the row dataclasses :mod:`store.analytics` returns.

    Tuple fields become ``"; "``-joined strings. ``columns`` keeps (and orders) a subset.
    An empty list gives an empty frame with ``columns`` (or none).

    Examples
    --------
    >>> from store.analytics.environment import EnvironmentRow
    >>> to_frame([EnvironmentRow(1, 2, "U", "X", "citing", "crawl", "a.org", 3, 3, "en", None)],
    ...          ["university", "domain", "pages"])
      university domain  pages
    0          U  a.org      3
    """
    import pandas as pd

    records = []
    for r in rows:
        if not is_dataclass(r):
            raise TypeError(f"to_frame expects dataclass rows, got {type(r).__name__}")
        rec = asdict(r)  # type: ignore[arg-type]
        records.append(
            {k: "; ".join(map(str, v)) if isinstance(v, tuple) else v for k, v in rec.items()}
        )
    if not records:
        return pd.DataFrame(columns=list(columns or ()))
    frame = pd.DataFrame.from_records(records)
    return frame[list(columns)] if columns is not None else frame


def row_fields(row_type: type) -> list[str]:
    """The field names of a row dataclass of :mod:`store.analytics` (for empty tables)."""
    return [f.name for f in fields(row_type)]
