"""expiry indexes: the hourly clean-up finds expired consent transactions, codes and tokens by
`expires_at` (sessions had one already).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03 07:00:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("oauth_authorizations", "oauth_codes", "oauth_tokens")


def upgrade() -> None:
    for table in TABLES:
        op.create_index(op.f(f"ix_{table}_expires_at"), table, ["expires_at"], unique=False)


def downgrade() -> None:
    for table in TABLES:
        op.drop_index(op.f(f"ix_{table}_expires_at"), table_name=table)
