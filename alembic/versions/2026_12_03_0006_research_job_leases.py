"""research job leases: a deep research run stored as a job is held by the process running it,
which renews a lease while it works, so that a job whose process died is seen as such by any
replica and marked failed with a reason, instead of staying `running` forever.

Two nullable columns and one with a constant default on a table that is empty until this
revision's code runs: no rewrite.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03 17:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("research_jobs", sa.Column("worker", sa.Text(), nullable=True))
    op.add_column(
        "research_jobs",
        sa.Column(
            "lease_expires_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
    )
    op.add_column(
        "research_jobs", sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True)
    )
    op.create_index(
        "ix_research_jobs_running_lease_expires_at",
        "research_jobs",
        ["lease_expires_at"],
        unique=False,
        postgresql_where=sa.text("status = 'running'"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_research_jobs_running_lease_expires_at",
        table_name="research_jobs",
        postgresql_where=sa.text("status = 'running'"),
    )
    op.drop_column("research_jobs", "heartbeat_at")
    op.drop_column("research_jobs", "lease_expires_at")
    op.drop_column("research_jobs", "worker")
