"""identifiers in lexemes: every chunk's lexemes and postings written anew, with identifiers
read by `app.rag.identifiers` (docs/adr/0028): `/readyz` gives `readyz`, `app.rag.queries` gives
`app`, `rag`, `queri` and the names `app.rag.queries`, `app.rag`, `rag.queries`, `KEY_ID` the
name `key_id` beside its words. Searches lex their query the same way from this release on, so
lexemes written before it would miss them.

The chunks are re-lexed through the application's own statement (`app.rag.queries.RELEX`), not a
copy: the lexemes must be the ones today's search reads. One document at a time; the BM25
statistics are counted again from the new postings at the end. No schema change: a rollback
keeps the new lexemes, which the old search reads as extra words.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06 03:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.rag import queries

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    conn = op.get_bind()
    documents = conn.execute(
        sa.text(
            "SELECT d.id, d.title FROM documents d "
            "WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = d.id)"
        )
    ).all()
    for document in documents:
        params = {"document_id": document.id}
        rows = conn.execute(queries.CHUNKS_TO_RELEX, params).all()
        conn.execute(queries.RELEX, queries.relex_values(document.title, rows))
        conn.execute(queries.DELETE_POSTINGS, params)
        conn.execute(queries.LEXEME_COUNTS, params)
        conn.execute(queries.POSTINGS, params | {"k1": queries.BM25_K1, "b": queries.BM25_B})
    # Only `org` chunks count (ADR 0004): a private one has an owner.
    op.execute("TRUNCATE lexeme_stats")
    op.execute(
        "INSERT INTO lexeme_stats (lexeme, df) SELECT lexeme, count(*) FROM chunk_terms "
        "WHERE private_owner_id IS NULL GROUP BY lexeme ORDER BY lexeme"
    )
    op.execute(
        "UPDATE corpus_stats SET chunk_count = s.n, lexeme_total = s.total "
        "FROM (SELECT count(*) AS n, coalesce(sum(lexeme_count), 0) AS total FROM chunks "
        "      WHERE private_owner_id IS NULL) AS s"
    )


def downgrade() -> None:
    # The lexemes stay: the search before this revision reads the names as words it never
    # queries, and the parts as words.
    pass
