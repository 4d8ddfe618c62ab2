"""The example SQL queries on the analyst views, read from ``store/examples.sql``
(the README shows them; the tests run every one).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SQLExample:
    """One example query of ``store/examples.sql``: its name, description and SQL."""

    name: str
    description: str
    sql: str


def sql_examples() -> list[SQLExample]:
    """The example queries on the analyst views (``store/examples.sql``), in file order.

    Each block starts with ``-- name: <name>``, then comment lines (the description),
    then one statement ending with ``;``.

    Examples
    --------
    >>> [e.name for e in sql_examples()][:2]
    ['table2', 'table3']
    """
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "examples.sql").read_text(encoding="utf-8")
    out: list[SQLExample] = []
    name: str | None = None
    desc: list[str] = []
    body: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("-- name:"):
            name, desc, body = stripped.split(":", 1)[1].strip(), [], []
        elif name is None:
            continue
        elif stripped.startswith("--") and not body:
            desc.append(stripped[2:].strip())
        elif stripped:
            body.append(line.rstrip())
            if stripped.endswith(";"):
                out.append(SQLExample(name, " ".join(desc), "\n".join(body).rstrip(";")))
                name = None
    return out
