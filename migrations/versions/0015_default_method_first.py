"""the latest clustering, and the rank factors, are the activity clustering's before any
other method's

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
``agg_v_rank_factors`` (revision 0010: the same SQL over the saved aggregates) follows,
and so does ``v_latest_clustering`` (revision 0008; with ``v_latest_cluster`` on it),
which the example queries and analysts read as *the* clustering of a university and
direction: the dashboard's University page and the report's cluster table open on the
default method's newest clustering too.

Downgrade puts the SQL of revisions 0008, 0009 and 0010 back.
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


def _preferring(name: str, body: str) -> str:
    """An earlier revision's SQL of the view choosing the preferred method first."""
    if name.endswith("v_rank_factors"):  # its list of clusterings lacks the method
        assert body.count(_COLUMNS) == 1, f"revision 0009's {name} changed"
        body = body.replace(_COLUMNS, _COLUMNS.replace("created_at", "created_at, algorithm"))
    assert body.count(_NEWEST) == 1, f"the SQL of {name} changed"
    return body.replace(
        _NEWEST,
        f"ORDER BY CASE WHEN algorithm = '{PREFERRED}' THEN 0 ELSE 1 END, "
        "created_at DESC, clustering_id DESC",
    )


def _old(dialect: str) -> dict[str, str]:
    """The views this revision replaces, in dependency order, as revisions 0008
    (``v_latest_clustering``, ``v_latest_cluster``), 0009 (``v_rank_factors``) and 0010
    (``agg_v_rank_factors``) made them."""
    latest = dict(revision_module("0008_analyst_truth.py")._views(dialect))
    ranks = dict(revision_module("0009_rank_factors.py")._views())
    agg = dict(revision_module("0010_dashboard_aggregates.py")._views())
    return {
        "v_latest_clustering": latest["v_latest_clustering"],
        "v_latest_cluster": latest["v_latest_cluster"],
        "v_rank_factors": ranks["v_rank_factors"],
        "agg_v_rank_factors": agg["agg_v_rank_factors"],
    }


def _replace(views: dict[str, str]) -> None:
    for name in reversed(list(views)):  # dependents first
        op.execute(f"DROP VIEW IF EXISTS {name}")
    for name, body in views.items():
        op.execute(f"CREATE VIEW {name} AS {body.strip()}")


def upgrade() -> None:
    old = _old(op.get_bind().dialect.name)
    _replace({n: b if n == "v_latest_cluster" else _preferring(n, b) for n, b in old.items()})


def downgrade() -> None:
    _replace(_old(op.get_bind().dialect.name))
