"""calls name their agent: an audit entry, a question and a document record the API key or the
OAuth client a person's call came through (null for a browser session or the command line), so
that what an agent did can be told from what the person did.

Nullable columns without defaults: no rewrite, no long lock. No foreign keys: a record keeps
naming the key or client after it is revoked or deleted.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 03:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLES = ("audit_log", "questions", "documents")


def upgrade() -> None:
    for table in _TABLES:
        op.add_column(
            table, sa.Column("agent_key_id", postgresql.UUID(as_uuid=True), nullable=True)
        )
        op.add_column(table, sa.Column("agent_client_id", sa.Text(), nullable=True))


def downgrade() -> None:
    for table in reversed(_TABLES):
        op.drop_column(table, "agent_client_id")
        op.drop_column(table, "agent_key_id")
