"""gap dismissals: an admin dismisses a documentation gap, and the questions of its wordings
asked until then stop counting towards the gaps (asked again later, it comes back).

A new, empty table: no lock on anything in use.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 03:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "gap_dismissals",
        # A wording as the gaps compare them: lower-cased, spaces trimmed and collapsed.
        sa.Column("wording", sa.Text(), nullable=False),
        sa.Column(
            "dismissed_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("dismissed_by", postgresql.UUID(as_uuid=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["dismissed_by"],
            ["users.id"],
            name=op.f("fk_gap_dismissals_dismissed_by_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("wording", name=op.f("pk_gap_dismissals")),
    )


def downgrade() -> None:
    op.drop_table("gap_dismissals")
