"""runs keep their scope: a chat and a research job record the workspace binding and persona
they were made under, so that a key bound to one workspace sees only those made under its own
binding; a chat's assistant message records every chunk its run read, so that a follow-up knows
what its history was drawn from; and a note an agent saved records the chunks it was drawn from.

Nullable columns, and arrays with a constant default: no rewrite, no long lock.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06 00:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UUIDS = postgresql.ARRAY(postgresql.UUID(as_uuid=True))


def upgrade() -> None:
    for table in ("chats", "research_jobs"):
        op.add_column(table, sa.Column("workspace_scope", sa.Text(), nullable=True))
        op.add_column(table, sa.Column("persona", sa.Text(), nullable=True))
    op.add_column(
        "chat_messages",
        sa.Column("read_chunks", _UUIDS, server_default=sa.text("'{}'"), nullable=False),
    )
    op.add_column("documents", sa.Column("derived_from", _UUIDS, nullable=True))


def downgrade() -> None:
    op.drop_column("documents", "derived_from")
    op.drop_column("chat_messages", "read_chunks")
    for table in ("research_jobs", "chats"):
        op.drop_column(table, "persona")
        op.drop_column(table, "workspace_scope")
