"""chunks.page and document_originals: a chunk of a PDF knows its page, and an uploaded PDF is
kept as sent, to download from the viewer (issue #33).

`chunks.page` is a nullable column without a default: a catalog change, no rewrite. The
originals sit in a table of their own, so that reading a document never drags its file along.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06 07:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("chunks", sa.Column("page", sa.Integer(), nullable=True))
    op.create_table(
        "document_originals",
        sa.Column(
            "document_id",
            sa.UUID(as_uuid=True),
            sa.ForeignKey("documents.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("media_type", sa.Text(), nullable=False),
        sa.Column("filename", sa.Text(), nullable=True),
        sa.Column("data", sa.LargeBinary(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("document_originals")
    op.drop_column("chunks", "page")
