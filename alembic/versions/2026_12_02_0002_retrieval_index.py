"""retrieval index: chunk rows carry their workspace and private owner, BM25 postings carry
impact, tf and length, and the corpus statistics of BM25 (docs/adr/0004).

The new NOT NULL columns have no defaults: no release wrote chunks before this revision.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02 15:05:35.980177
"""

from collections.abc import Sequence

import pgvector.sqlalchemy
import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ = pgvector.sqlalchemy  # autogenerate may emit pgvector types


def upgrade() -> None:
    op.create_table(
        "corpus_stats",
        sa.Column("id", sa.Integer(), server_default="1", nullable=False),
        sa.Column("chunk_count", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("lexeme_total", sa.BigInteger(), server_default="0", nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_corpus_stats_single_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_corpus_stats")),
    )
    op.create_table(
        "lexeme_stats",
        sa.Column("lexeme", sa.Text(), nullable=False),
        sa.Column("df", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("lexeme", name=op.f("pk_lexeme_stats")),
    )
    # Postings are derived data, read by (lexeme, impact) and deleted by chunk: the primary key's
    # index would only slow ingest down.
    op.drop_constraint("pk_chunk_terms", "chunk_terms", type_="primary")
    op.add_column("chunk_terms", sa.Column("workspace_id", sa.UUID(), nullable=False))
    op.add_column("chunk_terms", sa.Column("private_owner_id", sa.UUID(), nullable=True))
    op.add_column("chunk_terms", sa.Column("dl", sa.Integer(), nullable=False))
    op.add_column("chunk_terms", sa.Column("impact", sa.Float(), nullable=False))
    op.create_index(
        "ix_chunk_terms_lexeme_impact",
        "chunk_terms",
        ["lexeme", sa.literal_column("impact DESC")],
        unique=False,
        postgresql_include=["chunk_id", "workspace_id", "private_owner_id", "tf", "dl"],
    )
    op.add_column("chunks", sa.Column("workspace_id", sa.UUID(), nullable=False))
    op.add_column("chunks", sa.Column("private_owner_id", sa.UUID(), nullable=True))
    op.create_index(op.f("ix_chunks_workspace_id"), "chunks", ["workspace_id"], unique=False)
    op.create_foreign_key(
        op.f("fk_chunks_workspace_id_workspaces"),
        "chunks",
        "workspaces",
        ["workspace_id"],
        ["id"],
        ondelete="CASCADE",
    )
    op.execute("INSERT INTO corpus_stats (id) VALUES (1)")


def downgrade() -> None:
    op.drop_constraint(op.f("fk_chunks_workspace_id_workspaces"), "chunks", type_="foreignkey")
    op.drop_index(op.f("ix_chunks_workspace_id"), table_name="chunks")
    op.drop_column("chunks", "private_owner_id")
    op.drop_column("chunks", "workspace_id")
    op.drop_index(
        "ix_chunk_terms_lexeme_impact",
        table_name="chunk_terms",
        postgresql_include=["chunk_id", "workspace_id", "private_owner_id", "tf", "dl"],
    )
    op.drop_column("chunk_terms", "impact")
    op.drop_column("chunk_terms", "dl")
    op.drop_column("chunk_terms", "private_owner_id")
    op.drop_column("chunk_terms", "workspace_id")
    op.create_primary_key("pk_chunk_terms", "chunk_terms", ["lexeme", "chunk_id"])
    op.drop_table("lexeme_stats")
    op.drop_table("corpus_stats")
