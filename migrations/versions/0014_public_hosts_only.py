"""links to hosts off the public web are not external

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25

A university page that links to ``http://intranet/``, ``http://10.0.0.1/admin`` or
``http://localhost:8080/`` reaches no site of its web environment; the crawler never
fetches them (:mod:`crawler.safety`), yet every such link was stored ``external`` and
each host counted as an external domain of ``unknown`` category (in the demo, seven of the
ten domains the four universities share most). The crawler now stores them with
``external = false`` (:func:`core.domains.is_public_host`); this revision does the same
for the links stored before, removes their hosts' outgoing ``environment`` rows, and
marks the dashboard's aggregates stale (``agg_state`` emptied: the next ``webometrics
analyse`` rebuilds them; until then the views are read).

Downgrade marks every link external again (as every link was before); the removed
environment rows come back with the next crawl of the run's universities.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from core.domains import is_public_host

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHUNK = 500  # hosts per UPDATE (bound parameters)


def _not_public(conn: sa.Connection, sql: str) -> list[str]:
    return [h for (h,) in conn.execute(sa.text(sql)) if h is not None and not is_public_host(h)]


def upgrade() -> None:
    conn = op.get_bind()
    hosts = _not_public(conn, "SELECT DISTINCT target_host FROM link WHERE external")
    update = sa.text("UPDATE link SET external = false WHERE target_host IN :hosts").bindparams(
        sa.bindparam("hosts", expanding=True)
    )
    for i in range(0, len(hosts), CHUNK):
        conn.execute(update, {"hosts": hosts[i : i + CHUNK]})
    domains = _not_public(
        conn, "SELECT DISTINCT domain FROM environment WHERE direction = 'outgoing'"
    )
    delete = sa.text(
        "DELETE FROM environment WHERE direction = 'outgoing' AND domain IN :domains"
    ).bindparams(sa.bindparam("domains", expanding=True))
    for i in range(0, len(domains), CHUNK):
        conn.execute(delete, {"domains": domains[i : i + CHUNK]})
    if hosts or domains:
        conn.execute(sa.text("DELETE FROM agg_state"))


def downgrade() -> None:
    op.execute("UPDATE link SET external = true WHERE NOT external")
