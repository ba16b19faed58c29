"""sources.sync_requested_at: a push (or the schedule) that finds a sync running is recorded, and
the sync runs again when it ends (issue #35, docs/adr/0035).

A nullable column without a default: a catalog change, no rewrite of the table.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-06 07:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "sources", sa.Column("sync_requested_at", sa.DateTime(timezone=True), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("sources", "sync_requested_at")
