"""document links: the links in a document's Markdown to other documents, kept as where they
point (a document's id, or a path within the workspace and the file's name), so that a relative
link resolves in the viewer and backlinks are one query that checks visibility itself.

A new table, filled from today's documents by the application's own reading of their Markdown
(`app.documents.links.extract`, one document at a time): links written before this release
count as backlinks at once, not at their document's next version.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06 06:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from app.documents import links

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "document_links",
        sa.Column("document_id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("workspace_id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("href", sa.Text(), nullable=False),
        sa.Column("target_id", postgresql.UUID(as_uuid=True), nullable=True),
        sa.Column("target_path", sa.Text(), nullable=True),
        sa.Column("target_name", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "(target_id IS NULL) <> (target_path IS NULL)",
            name=op.f("ck_document_links_one_target"),
        ),
        sa.ForeignKeyConstraint(
            ["document_id"],
            ["documents.id"],
            name=op.f("fk_document_links_document_id_documents"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_document_links_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("document_id", "href", name=op.f("pk_document_links")),
    )
    op.create_index(
        op.f("ix_document_links_target_id"), "document_links", ["target_id"], unique=False
    )
    op.create_index(
        op.f("ix_document_links_workspace_id_target_path"),
        "document_links",
        ["workspace_id", "target_path"],
        unique=False,
    )
    op.create_index(
        op.f("ix_document_links_workspace_id_target_name"),
        "document_links",
        ["workspace_id", "target_name"],
        unique=False,
    )
    conn = op.get_bind()
    insert = sa.text(
        "INSERT INTO document_links "
        "(document_id, workspace_id, href, target_id, target_path, target_name) "
        "VALUES (:document_id, :workspace_id, :href, :target_id, :target_path, :target_name)"
    )
    ids = conn.execute(sa.text("SELECT id FROM documents ORDER BY id")).scalars().all()
    for document_id in ids:
        row = conn.execute(
            sa.text("SELECT workspace_id, source, content FROM documents WHERE id = :id"),
            {"id": document_id},
        ).one()
        found = links.extract(row.content, row.source)
        if found:
            conn.execute(
                insert,
                [
                    {
                        "document_id": document_id,
                        "workspace_id": row.workspace_id,
                        "href": link.href,
                        "target_id": link.target_id,
                        "target_path": link.target_path,
                        "target_name": link.target_name,
                    }
                    for link in found
                ],
            )


def downgrade() -> None:
    op.drop_table("document_links")
