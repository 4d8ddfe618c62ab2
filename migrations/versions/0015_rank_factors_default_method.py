"""rank factors read the activity clustering, the default, before any other method

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26

``v_rank_factors`` (revision 0009) took the clusters of a university's **newest**
clustering of the run and direction, of any method. An analyst who runs the paper's
method once for comparison (``webometrics cluster --method paper``) after the pipeline's
activity clustering therefore replaced the groups the page and the correlations read: on
the local test web, where the paper's single link at its threshold keeps every site apart,
``n_clusters`` fell to 0 for every university and the correlations of the group counts
became undefined. The view now takes the newest clustering whose ``algorithm`` is
``activity`` (``webometrics run`` and ``webometrics cluster``'s default), and the newest
of any method only where there is none; ``clustering_id`` says which, as before.
``agg_v_rank_factors`` (revision 0010: the same SQL over the saved aggregates) follows.

Downgrade puts revision 0009's and 0010's SQL back.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from migrations.revisions import revision_module

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: the clustering method the views prefer: the default of ``[cluster] method``
PREFERRED = "activity"

_NEWEST = "ORDER BY created_at DESC, clustering_id DESC"
_COLUMNS = """SELECT DISTINCT clustering_id, run_id, university_id, direction, unit,
                       created_at"""


def _preferring(body: str) -> str:
    """Revision 0009's SQL of ``v_rank_factors`` choosing the preferred method first."""
    out = body.replace(_COLUMNS, _COLUMNS.replace("created_at", "created_at, algorithm"))
    out = out.replace(
        _NEWEST,
        f"ORDER BY CASE WHEN algorithm = '{PREFERRED}' THEN 0 ELSE 1 END, "
        "created_at DESC, clustering_id DESC",
    )
    assert out.count("algorithm") == 2, "revision 0009's v_rank_factors changed"
    return out


def _old() -> dict[str, str]:
    """``v_rank_factors`` of revision 0009 and ``agg_v_rank_factors`` of revision 0010."""
    old = dict(revision_module("0009_rank_factors.py")._views())
    agg = dict(revision_module("0010_dashboard_aggregates.py")._views())
    return {
        "v_rank_factors": old["v_rank_factors"],
        "agg_v_rank_factors": agg["agg_v_rank_factors"],
    }


def _replace(views: dict[str, str]) -> None:
    for name in views:
        op.execute(f"DROP VIEW IF EXISTS {name}")
    for name, body in views.items():
        op.execute(f"CREATE VIEW {name} AS {body.strip()}")


def upgrade() -> None:
    _replace({name: _preferring(body) for name, body in _old().items()})


def downgrade() -> None:
    _replace(_old())
