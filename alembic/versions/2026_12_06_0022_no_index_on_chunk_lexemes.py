"""The GIN index on `chunks.tsv` goes: no statement reads through it (the keyword half reads the
postings, `chunk_terms`; a quoted phrase is tested on each candidate row, by id), and keeping it
cost a folder walk about half a core-second of PostgreSQL per 1,000 SciFact abstracts, on a
machine whose cores the local model needs (issue #33), besides its disk, WAL and the pending
list autovacuum merges.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06 15:00:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_chunks_tsv")


def downgrade() -> None:
    op.create_index("ix_chunks_tsv", "chunks", ["tsv"], unique=False, postgresql_using="gin")
