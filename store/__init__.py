"""Storage: SQLAlchemy 2.0 models, the managed session scope, migrations and read queries.

>>> from store import models
>>> {"university", "page", "cluster", "category_label"} <= set(models.Base.metadata.tables)
True
"""

from __future__ import annotations

from sqlalchemy import Engine

from store.schema import require_current
from store.session import check_connection, make_engine, redact, session_scope


def open_database(url: str, *, read_only: bool = False, check_schema: bool = True) -> Engine:
    """An engine for ``url`` that is reachable and whose schema is at head.

    Raises
    ------
    DatabaseError
        The database cannot be reached.
    SchemaOutOfDateError
        The schema is not at head: run ``webometrics db upgrade``.
    """
    engine = make_engine(url, read_only=read_only)
    check_connection(engine)
    if check_schema:
        require_current(engine)
    return engine


__all__ = ["check_connection", "make_engine", "open_database", "redact", "session_scope"]
