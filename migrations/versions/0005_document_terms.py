"""document.terms and document.n_terms: the term counts of a document

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24

Clustering by kind of activity weighs the stemmed 1-word terms of a document (tf-idf)
instead of an unweighted shingle set. The extract stage stores the counts beside the
shingles, so that the cluster stage never tokenises a page again:

- ``terms``: a JSON object term -> count (``JSON`` on PostgreSQL, ``TEXT`` on SQLite), at
  most ``[domain] max_terms`` terms, the most frequent; NULL for the documents built
  before this revision, which ``webometrics extract`` rebuilds;
- ``n_terms``: how many distinct terms are stored (0 for the older documents: the server
  default fills the existing rows).

Both columns are added with ``ALTER TABLE ... ADD COLUMN``, no table copy. The downgrade
drops them in place too (``recreate="never"``, SQLite 3.35 or newer): a batch copy of
``document`` would drop the old table with foreign keys on, and SQLite would carry out
the ``ON DELETE CASCADE`` of the signatures, duplicate and cluster members.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("document", schema=None) as batch_op:
        batch_op.add_column(sa.Column("terms", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("n_terms", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("document", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("n_terms")
        batch_op.drop_column("terms")
