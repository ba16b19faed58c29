"""An index on documents by workspace, owner and source: a file's document is found by where it
came from (a re-upload that replaces it, `corpus ingest` of a folder), and that lookup read
every document of the owner in the workspace, so a walk's cost grew with the corpus (issue
#33).

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06 09:30:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        op.f("ix_documents_workspace_id_owner_id_source"),
        "documents",
        ["workspace_id", "owner_id", "source"],
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_documents_workspace_id_owner_id_source"), table_name="documents")
