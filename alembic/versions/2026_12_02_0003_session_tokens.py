"""session tokens: a session row is found by the sha256 of the token its cookie carries.

No release wrote sessions before this revision, so the NOT NULL column needs no default.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02 18:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("sessions", sa.Column("token_sha256", sa.Text(), nullable=False))
    op.create_unique_constraint(op.f("uq_sessions_token_sha256"), "sessions", ["token_sha256"])


def downgrade() -> None:
    op.drop_constraint(op.f("uq_sessions_token_sha256"), "sessions", type_="unique")
    op.drop_column("sessions", "token_sha256")
