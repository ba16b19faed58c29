"""Migration 0014 re-lexes the chunks written before identifiers joined the lexemes: their
lexemes, postings and BM25 statistics become what an ingest writes today."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from app.db import migrate
from tests.support import create_database, make_settings

TEXT = "Probe GET /readyz after setting KEY_ID."


async def _old_ingest(url: str) -> None:
    """A chunk as the ingest before 0014 wrote it: the parser's lexemes of the raw text."""
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.execute(
            text(
                "WITH d AS ("
                "  INSERT INTO documents (workspace_id, title, content, content_sha256) "
                "  SELECT id, 'Probes', :body, md5(:body) FROM workspaces WHERE slug = 'default' "
                "  RETURNING id, workspace_id) "
                "INSERT INTO chunks (document_id, workspace_id, ordinal, text, start_offset, "
                "  end_offset, token_count, embedding, tsv) "
                "SELECT d.id, d.workspace_id, 0, :body, 0, length(:body), 10, "
                "  array_fill(0.1, ARRAY[384])::vector, "
                "  setweight(to_tsvector('english', 'Probes'), 'A') "
                "  || to_tsvector('english', :body) "
                "FROM d"
            ),
            {"body": TEXT},
        )
        await conn.execute(
            text(
                "UPDATE chunks SET lexeme_count = (SELECT sum(cardinality(t.positions)) "
                "FROM unnest(tsv) t)"
            )
        )
        await conn.execute(
            text(
                "INSERT INTO chunk_terms (lexeme, chunk_id, workspace_id, tf, dl, impact) "
                "SELECT t.lexeme, c.id, c.workspace_id, cardinality(t.positions), "
                "  c.lexeme_count, 1 FROM chunks c, unnest(c.tsv) t"
            )
        )
        await conn.execute(
            text(
                "INSERT INTO lexeme_stats (lexeme, df) SELECT lexeme, count(*) FROM chunk_terms "
                "GROUP BY lexeme"
            )
        )
        await conn.execute(
            text(
                "UPDATE corpus_stats SET chunk_count = 1, "
                "lexeme_total = (SELECT lexeme_count FROM chunks)"
            )
        )
    await engine.dispose()


async def _state(url: str) -> tuple[set[str], set[str], set[str], tuple[int, int], int]:
    engine = create_async_engine(url)
    async with engine.connect() as conn:
        lexemes = set(
            (await conn.execute(text("SELECT tsvector_to_array(tsv) FROM chunks"))).scalar_one()
        )
        postings = set((await conn.execute(text("SELECT lexeme FROM chunk_terms"))).scalars())
        stats = set(
            (await conn.execute(text("SELECT lexeme FROM lexeme_stats WHERE df > 0"))).scalars()
        )
        corpus = (
            await conn.execute(text("SELECT chunk_count, lexeme_total FROM corpus_stats"))
        ).one()
        length = (await conn.execute(text("SELECT lexeme_count FROM chunks"))).scalar_one()
    await engine.dispose()
    return lexemes, postings, stats, (int(corpus[0]), int(corpus[1])), int(length)


def test_chunks_written_before_are_relexed_with_their_identifiers(
    server_url: str, data_dir: Path
) -> None:
    url = create_database(server_url, f"corpus_relex_{uuid.uuid4().hex[:8]}")
    settings = make_settings(data_dir, database_url=url)
    migrate.upgrade(settings, url, "0011")
    asyncio.run(_old_ingest(url))
    lexemes, *_ = asyncio.run(_state(url))
    assert "/readyz" in lexemes
    assert "readyz" not in lexemes

    migrate.upgrade(settings, url, "0014")

    lexemes, postings, stats, corpus, length = asyncio.run(_state(url))
    assert {"readyz", "key_id", "key", "id", "probe"} <= lexemes
    assert "/readyz" not in lexemes
    assert postings == lexemes
    assert stats == lexemes
    assert corpus == (1, length)
