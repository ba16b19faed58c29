"""SQL of `corpus bench`: a bulk load that skips what a restore would rebuild once at the end,
and exact versus approximate nearest neighbours."""

from __future__ import annotations

from uuid import UUID

import numpy as np
from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.engine import ReadConnection, WriteConnection
from app.rag import queries as rag_queries

_NEAREST = text("SELECT id FROM chunks ORDER BY embedding <=> :v LIMIT :k").bindparams(
    bindparam("v", type_=Vector())
)


async def product_ef_search(conn: ReadConnection) -> int:
    """The candidates the product's dense half keeps for a top 10 on this corpus: the bare
    query is measured with the same, so the two differ only by what the product adds around
    the index."""
    return await rag_queries.size_vector_search(conn, 10)


async def default_workspace(conn: ReadConnection) -> UUID:
    workspace: UUID = (
        await conn.execute(text("SELECT id FROM workspaces WHERE slug = 'default'"))
    ).scalar_one()
    return workspace


async def chunk_count(conn: ReadConnection) -> int:
    count: int = (await conn.execute(text("SELECT count(*) FROM chunks"))).scalar_one()
    return count


async def drop_vector_index(conn: WriteConnection) -> None:
    await conn.execute(text("DROP INDEX ix_chunks_embedding_hnsw"))


async def insert_synthetic_document(conn: WriteConnection, workspace: UUID, title: str) -> UUID:
    result = await conn.execute(
        text(
            "INSERT INTO documents (workspace_id, title, content, content_sha256) "
            "VALUES (:w, :t, '', md5(:t)) RETURNING id"
        ),
        {"w": workspace, "t": title},
    )
    document_id: UUID = result.scalar_one()
    return document_id


async def rebuild_index_and_statistics(conn: WriteConnection) -> None:
    """The HNSW index built in one pass, and the BM25 statistics counted from the postings."""
    # The graph in memory while it builds (a million 384-dimension chunks need about 2 GB;
    # past maintenance_work_mem the build slows several times), with two parallel workers.
    await conn.execute(text("SET LOCAL maintenance_work_mem = '4GB'"))
    await conn.execute(text("SET LOCAL max_parallel_maintenance_workers = 2"))
    await rag_queries.create_vector_index(conn)
    await conn.execute(text("TRUNCATE lexeme_stats"))
    await conn.execute(
        text(
            "INSERT INTO lexeme_stats (lexeme, df) "
            "SELECT lexeme, count(*) FROM chunk_terms GROUP BY lexeme"
        )
    )
    await conn.execute(
        text(
            "UPDATE corpus_stats SET chunk_count = s.n, lexeme_total = s.total "
            "FROM (SELECT count(*) AS n, sum(lexeme_count) AS total FROM chunks) AS s"
        )
    )


async def vacuum_analyze(engine: AsyncEngine) -> None:
    """VACUUM outside a transaction: the visibility map lets postings be read index-only, and
    autovacuum will not wake up in the middle of the measurements."""
    async with engine.connect() as raw:
        autocommit = await raw.execution_options(isolation_level="AUTOCOMMIT")
        await autocommit.execute(text("VACUUM ANALYZE"))


async def nearest(
    conn: ReadConnection, vector: np.ndarray, k: int, *, ef_search: int | None
) -> set[UUID]:
    """The k nearest chunks: through the HNSW index with `ef_search` candidates, or exactly
    (a sequential scan) when `ef_search` is None."""
    if ef_search is None:
        await conn.execute(text("SET LOCAL enable_indexscan = off"))
    else:
        await conn.execute(text(f"SET LOCAL hnsw.ef_search = {int(ef_search)}"))
    return {row.id for row in await conn.execute(_NEAREST, {"v": vector, "k": k})}
