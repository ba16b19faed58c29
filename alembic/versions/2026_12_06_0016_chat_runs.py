"""chat runs: a deep run asked in a chat is a research job tied to its chat, so that it goes
on when the page closes and its turn lands in the chat (ADR 0030).

A nullable column without a default (no rewrite) and an index on a table of a few rows per
person's running research.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06 06:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "research_jobs", sa.Column("chat_id", postgresql.UUID(as_uuid=True), nullable=True)
    )
    op.create_foreign_key(
        op.f("fk_research_jobs_chat_id_chats"),
        "research_jobs",
        "chats",
        ["chat_id"],
        ["id"],
        ondelete="CASCADE",
    )
    op.create_index(op.f("ix_research_jobs_chat_id"), "research_jobs", ["chat_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_research_jobs_chat_id"), table_name="research_jobs")
    op.drop_constraint(op.f("fk_research_jobs_chat_id_chats"), "research_jobs", type_="foreignkey")
    op.drop_column("research_jobs", "chat_id")
