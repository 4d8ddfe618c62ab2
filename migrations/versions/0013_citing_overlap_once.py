"""v_citing_overlap reads v_citing_source once

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25

Revision 0007's ``v_citing_overlap`` read ``v_citing_source`` twice (once per domain's
source kinds, once per row) and joined the two on university and domain. PostgreSQL
estimates a grouped view's rows badly and joins them in a nested loop: 43 s at 100,000
pages (0.6 s now), the Overview's impact figures whenever the analyse stage's saved copy
(``agg_citing_overlap``) is stale. The view now counts each domain's kinds with a window
over one read of ``v_citing_source`` (a CTE PostgreSQL materialises once); the rows are
the same (tests/store/test_citing_overlap_view.py). SQLite: 16 s → 9 s at 1,000,000 pages.

Downgrade puts revision 0007's SQL back.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from migrations.revisions import revision_module

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

V_CITING_OVERLAP = """
WITH s AS (
    SELECT university_id, university, country, kind, domain, hosts,
           COUNT(*) OVER (PARTITION BY university_id, domain) AS kinds
    FROM v_citing_source
),
t AS (
    SELECT university_id, COUNT(DISTINCT domain) AS domains_all
    FROM s
    GROUP BY university_id
)
SELECT s.university_id AS university_id, s.university AS university,
       s.country AS country, s.kind AS kind,
       COUNT(*) AS domains,
       CAST(SUM(s.hosts) AS BIGINT) AS hosts,
       CAST(SUM(CASE WHEN s.kinds = 1 THEN 1 ELSE 0 END) AS BIGINT) AS only_here,
       MAX(t.domains_all) - COUNT(*) AS missed,
       MAX(t.domains_all) AS domains_all
FROM s
JOIN t ON t.university_id = s.university_id
GROUP BY s.university_id, s.university, s.country, s.kind
"""


def _replace(body: str) -> None:
    op.execute("DROP VIEW IF EXISTS v_citing_overlap")
    op.execute(f"CREATE VIEW v_citing_overlap AS {body.strip()}")


def upgrade() -> None:
    _replace(V_CITING_OVERLAP)


def downgrade() -> None:
    _replace(dict(revision_module("0007_citing_node.py").VIEWS)["v_citing_overlap"])
