"""oauth code reuse and unused clients: a redeemed code stays, marked used with the token family
it issued, so that presenting it again revokes that family (RFC 6749 §4.1.2); a client records
when a person first approved it, so that clients nobody approved can be deleted after a day.

Three nullable columns without defaults and an index on a small table: no rewrite. Clients
registered before this revision get the time of their earliest consent or token, so that
housekeeping does not take an approved one for unused.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03 15:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("oauth_codes", sa.Column("used_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column(
        "oauth_codes", sa.Column("family_id", postgresql.UUID(as_uuid=True), nullable=True)
    )
    op.add_column(
        "oauth_clients", sa.Column("authorized_at", sa.DateTime(timezone=True), nullable=True)
    )
    op.execute(
        "UPDATE oauth_clients c SET authorized_at = first.at FROM ("
        "  SELECT client_id, min(created_at) AS at FROM ("
        "    SELECT client_id, created_at FROM oauth_consents"
        "    UNION ALL SELECT client_id, created_at FROM oauth_tokens"
        "  ) approved GROUP BY client_id"
        ") first WHERE first.client_id = c.client_id"
    )
    op.create_index(
        "ix_oauth_clients_unauthorized_created_at",
        "oauth_clients",
        ["created_at"],
        unique=False,
        postgresql_where=sa.text("authorized_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_oauth_clients_unauthorized_created_at",
        table_name="oauth_clients",
        postgresql_where=sa.text("authorized_at IS NULL"),
    )
    op.drop_column("oauth_clients", "authorized_at")
    op.drop_column("oauth_codes", "family_id")
    op.drop_column("oauth_codes", "used_at")
