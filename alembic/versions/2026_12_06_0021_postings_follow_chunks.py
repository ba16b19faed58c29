"""A chunk's postings are deleted with it by a statement trigger, not a foreign key: the key
checked every posting written (a hundred or so per chunk, each a lookup of its chunk with a
row lock), a third of the postings' cost and a core-second per 1,000 SciFact abstracts on a
machine whose cores the local model needs (issue #33, ADR 0038).

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06 12:00:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE FUNCTION delete_chunk_postings() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM chunk_terms t USING deleted_chunks d WHERE t.chunk_id = d.id;
            RETURN NULL;
        END
        $$
        """
    )
    # Statement-level, with the deleted rows as a table: a document's or a workspace's
    # cascade deletes its chunks in one statement, and their postings go in one more.
    op.execute(
        "CREATE TRIGGER chunks_delete_postings AFTER DELETE ON chunks "
        "REFERENCING OLD TABLE AS deleted_chunks "
        "FOR EACH STATEMENT EXECUTE FUNCTION delete_chunk_postings()"
    )
    op.drop_constraint("fk_chunk_terms_chunk_id_chunks", "chunk_terms", type_="foreignkey")


def downgrade() -> None:
    op.execute(
        "DELETE FROM chunk_terms t "
        "WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.id = t.chunk_id)"
    )
    op.create_foreign_key(
        "fk_chunk_terms_chunk_id_chunks",
        "chunk_terms",
        "chunks",
        ["chunk_id"],
        ["id"],
        ondelete="CASCADE",
    )
    op.execute("DROP TRIGGER chunks_delete_postings ON chunks")
    op.execute("DROP FUNCTION delete_chunk_postings()")
