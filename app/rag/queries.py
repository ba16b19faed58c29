"""SQL of retrieval: writing a document's chunks with their lexemes and BM25 postings, keeping the
corpus statistics, and the hybrid search statement (DESIGN.md §4, docs/adr/0004).

The text search configuration, BM25's k1 and b, and the fusion parameters are module constants
chosen by measurement on SciFact (docs/BENCHMARKS.md)."""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import numpy as np
from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    Text,
    bindparam,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import UUID as PG_UUID
from sqlalchemy.sql.elements import TextClause

from app.db.engine import ReadConnection, WriteConnection
from app.rag import identifiers
from app.rag.schemas import SearchHit

# Stemmed English lexemes for both ingest and queries (the two must match).
TS_CONFIG = "english"
# The k1 and b of each posting's write-time impact, which only orders a lexeme's postings for the
# per-lexeme cut (ADR 0004). The scores use the query-time values of `retrieval.Tuning`
# (ADR 0014); within one lexeme the order barely moves with them, and changing these would
# rewrite every posting.
BM25_K1 = 0.9
BM25_B = 0.4
# pgvector's bounds for hnsw.ef_search are 1..1000. The floor grows with the corpus, so that the
# index (ef_construction 200, migration 0010) keeps returning 95% of the exact top 10: at a
# million synthetic chunks it returned 95.1% with 600 candidates, 95.6% with 650 and 96.0% with
# 700 (93.0% with 400) (docs/BENCHMARKS.md). One candidate per HNSW_CHUNKS_PER_CANDIDATE chunks,
# between the two.
HNSW_EF_SEARCH_MIN = 200
HNSW_EF_SEARCH_MAX = 1000
HNSW_CHUNKS_PER_CANDIDATE = 1500


@dataclass(frozen=True, slots=True)
class ChunkRow:
    ordinal: int
    heading_path: Sequence[str]
    text: str
    start: int
    end: int
    token_count: int
    embedding: np.ndarray
    page: int | None = None


def _tsv(
    title_words: str,
    title_wholes: str,
    head_words: str,
    head_wholes: str,
    body_words: str,
    body_wholes: str,
) -> str:
    """The lexemes of a chunk, as SQL: title (weight A), heading path (B) and text, each as
    `identifiers.lexable` rewrites it (words for the parser, and whole identifiers as a
    tsvector literal), from the SQL expressions given."""

    def field(words: str, wholes: str) -> str:
        return (
            f"(to_tsvector('{TS_CONFIG}', CAST({words} AS text)) "
            f"|| CAST(CAST({wholes} AS text) AS tsvector))"
        )

    return (
        f"setweight({field(title_words, title_wholes)}, 'A') "
        f"|| setweight({field(head_words, head_wholes)}, 'B') "
        f"|| {field(body_words, body_wholes)}"
    )


def _lexed_field(prefix: str, text: str) -> dict[str, str]:
    lexed = identifiers.lexable(text)
    # Camel-case words as written after the text's own words: the parser keeps them whole.
    return {
        f"{prefix}_words": f"{lexed.words}\n{lexed.joined}" if lexed.joined else lexed.words,
        f"{prefix}_wholes": identifiers.tsvector_literal(lexed.wholes),
    }


@dataclass(frozen=True, slots=True)
class DocumentChunks:
    """A document's chunks as `WRITE_CHUNKS` writes them; `counted` (an `org` document's): with
    their share of the BM25 statistics."""

    document_id: UUID
    workspace_id: UUID
    private_owner_id: UUID | None
    title: str
    rows: Sequence[ChunkRow]
    counted: bool


def _chunk_columns(documents: Sequence[DocumentChunks]) -> dict[str, Any]:
    """`WRITE_CHUNKS`' parameters: each field of the chunks as one array, their document's with
    them, their fields lexed (`identifiers`), their vectors as one flat array of the model's
    dimension each."""
    columns: dict[str, list[Any]] = {name: [] for name in _CHUNK_ARRAYS}
    for document in documents:
        title = _lexed_field("title", document.title)
        for row in document.rows:
            head = _lexed_field("head", " ".join(row.heading_path))
            body = _lexed_field("body", row.text)
            for name, value in (
                ("document_ids", document.document_id),
                ("workspace_ids", document.workspace_id),
                ("private_owner_ids", document.private_owner_id),
                ("counted", document.counted),
                ("title_words", title["title_words"]),
                ("title_wholes", title["title_wholes"]),
                ("ordinals", row.ordinal),
                # JSON: a PostgreSQL array of arrays must be rectangular, and paths differ.
                ("heading_paths", json.dumps(list(row.heading_path))),
                ("bodies", row.text),
                ("starts", row.start),
                ("ends", row.end),
                ("token_counts", row.token_count),
                ("pages", row.page),
                ("head_words", head["head_words"]),
                ("head_wholes", head["head_wholes"]),
                ("body_words", body["body_words"]),
                ("body_wholes", body["body_wholes"]),
            ):
                columns[name].append(value)
    vectors = np.stack([row.embedding for document in documents for row in document.rows]).astype(
        np.float32, copy=False
    )
    return columns | {"embeddings": vectors.ravel().tolist(), "dim": vectors.shape[1]}


# A posting per (lexeme, chunk) of the chunks `{chunks}` names, with its write-time impact.
_POSTINGS = """
INSERT INTO chunk_terms (lexeme, chunk_id, workspace_id, private_owner_id, tf, dl, impact)
SELECT t.lexeme, c.id, c.workspace_id, c.private_owner_id,
       cardinality(t.positions), c.lexeme_count,
       cardinality(t.positions) * (:k1 + 1) / (cardinality(t.positions) +
         :k1 * (1 - :b + :b * c.lexeme_count / greatest(coalesce(s.avgdl, c.lexeme_count), 1)))
FROM {chunks} CROSS JOIN LATERAL unnest(c.tsv) AS t
CROSS JOIN (SELECT lexeme_total::float8 / nullif(chunk_count, 0) AS avgdl
            FROM corpus_stats) AS s"""

# The chunks' fields as `WRITE_CHUNKS` takes them, one array each (`_chunk_columns`), with the
# SQL type of each.
_CHUNK_ARRAYS = {
    "document_ids": "uuid[]",
    "workspace_ids": "uuid[]",
    "private_owner_ids": "uuid[]",
    "counted": "boolean[]",
    "title_words": "text[]",
    "title_wholes": "text[]",
    "ordinals": "int[]",
    "heading_paths": "text[]",
    "bodies": "text[]",
    "starts": "int[]",
    "ends": "int[]",
    "token_counts": "int[]",
    "pages": "int[]",
    "head_words": "text[]",
    "head_wholes": "text[]",
    "body_words": "text[]",
    "body_wholes": "text[]",
}
_UNNESTED = ", ".join(f"CAST(:{name} AS {kind})" for name, kind in _CHUNK_ARRAYS.items())
_LEXED = ("title_words", "title_wholes", "head_words", "head_wholes", "body_words", "body_wholes")
_TSV = _tsv(*(f"r.{name}" for name in _LEXED))

# Documents' chunks, their lexemes and length, their postings and the share of the BM25
# statistics of those `counted`, in one statement: the chunks come as arrays, one per field,
# each chunk with its document's fields. A statement per table cost a folder walk a round trip
# each per file, and a statement per document one per file: about a core-second per 1,000
# files in the socket's `send` alone on the machine whose two cores the local model needs
# (issue #33); a walk writes the files ready together in one. Each chunk's length is counted
# from its lexemes as it is written. The document frequencies are upserted in a WITH clause the
# main query does not read, which PostgreSQL runs after it: a writer locks the corpus's row
# (the main UPDATE) before any lexeme, so writers queue on that row, and a transaction of two
# such statements (an edit, a walk's group with one) cannot deadlock with another writer
# (tests/rag/test_statistics_lock.py). Keep the main query off `frequencies`.
WRITE_CHUNKS = text(
    f"""
WITH given AS (
  SELECT r.*, {_TSV} AS tsv
  FROM unnest({_UNNESTED})
       WITH ORDINALITY AS r({", ".join(_CHUNK_ARRAYS)}, n)
),
written AS (
  INSERT INTO chunks (document_id, workspace_id, private_owner_id, ordinal, heading_path, text,
                      start_offset, end_offset, token_count, embedding, page, tsv, lexeme_count)
  SELECT g.document_ids, g.workspace_ids, g.private_owner_ids, g.ordinals,
         ARRAY(SELECT jsonb_array_elements_text(CAST(g.heading_paths AS jsonb))),
         g.bodies, g.starts, g.ends, g.token_counts,
         CAST((CAST(:embeddings AS real[]))[(g.n - 1) * :dim + 1 : g.n * :dim] AS vector),
         g.pages, g.tsv,
         coalesce((SELECT sum(cardinality(t.positions)) FROM unnest(g.tsv) AS t), 0)
  FROM given g
  RETURNING id, workspace_id, private_owner_id, tsv, lexeme_count, document_id
),
counted AS (
  SELECT w.* FROM written w
  JOIN (SELECT DISTINCT document_ids FROM given WHERE counted) AS d
    ON d.document_ids = w.document_id
),
postings AS ({_POSTINGS.format(chunks="written c")}),
frequencies AS (
  INSERT INTO lexeme_stats (lexeme, df)
  SELECT t.lexeme, count(*) FROM counted c CROSS JOIN LATERAL unnest(c.tsv) AS t
  GROUP BY t.lexeme ORDER BY t.lexeme
  ON CONFLICT (lexeme) DO UPDATE SET df = lexeme_stats.df + EXCLUDED.df
)
UPDATE corpus_stats SET chunk_count = chunk_count + d.n, lexeme_total = lexeme_total + d.total
FROM (SELECT count(*) AS n, coalesce(sum(lexeme_count), 0) AS total FROM counted) AS d
WHERE d.n > 0"""
).bindparams(bindparam("k1", type_=Float()), bindparam("b", type_=Float()))


async def insert_chunks(conn: WriteConnection, documents: Sequence[DocumentChunks]) -> None:
    """Insert documents' chunks, their lexemes and their postings; those `counted` (`org`
    documents'), with their share of the BM25 statistics too."""
    documents = [document for document in documents if document.rows]
    if not documents:
        return
    # Lexing every chunk is CPU work over the whole document: in a thread, as its chunking is,
    # so a large upload does not hold the event loop.
    values = await asyncio.to_thread(_chunk_columns, documents)
    await conn.execute(WRITE_CHUNKS, values | {"k1": BM25_K1, "b": BM25_B})


# The postings of a document's chunks as the table holds them (after their lexemes were
# rewritten).
POSTINGS = text(
    _POSTINGS.format(chunks="chunks c") + "\nWHERE c.document_id = :document_id"
).bindparams(bindparam("k1", type_=Float()), bindparam("b", type_=Float()))


async def _write_postings(conn: WriteConnection, document_id: UUID) -> None:
    await conn.execute(POSTINGS, {"document_id": document_id, "k1": BM25_K1, "b": BM25_B})


# Both statistics in one statement (a round trip fewer for every document edited or deleted):
# the document frequencies from the chunks' own lexemes (one per posting), and the corpus's
# chunk count and total length. The corpus's row is locked first, as in `WRITE_CHUNKS`.
ADJUST_STATISTICS = text(
    "WITH frequencies AS ("
    "  INSERT INTO lexeme_stats (lexeme, df) "
    "  SELECT t.lexeme, :sign * count(*) "
    "  FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) AS t "
    "  WHERE c.document_id = :document_id "
    "  GROUP BY t.lexeme ORDER BY t.lexeme "
    "  ON CONFLICT (lexeme) DO UPDATE SET df = lexeme_stats.df + EXCLUDED.df) "
    "UPDATE corpus_stats SET "
    "  chunk_count = chunk_count + :sign * d.n, "
    "  lexeme_total = lexeme_total + :sign * d.total "
    "FROM (SELECT count(*) AS n, coalesce(sum(lexeme_count), 0) AS total "
    "      FROM chunks WHERE document_id = :document_id) AS d"
)


async def adjust_statistics(conn: WriteConnection, document_id: UUID, sign: int) -> None:
    """Add (sign 1) or remove (sign -1) a document's chunks to the BM25 statistics.

    Only `org` documents count; the caller decides. The corpus's row is locked before any
    lexeme (`WRITE_CHUNKS`' comment), so concurrent writers cannot deadlock on them.
    """
    await conn.execute(ADJUST_STATISTICS, {"document_id": document_id, "sign": sign})


async def delete_chunks(conn: WriteConnection, document_id: UUID) -> None:
    """Delete a document's chunks (their postings go with them)."""
    await conn.execute(
        text("DELETE FROM chunks WHERE document_id = :document_id"), {"document_id": document_id}
    )


# A chunk's lexemes written anew from its title, heading path and text: on a title change, and
# by the migration that re-lexed every chunk when identifiers joined the lexemes (0016).
RELEX = text(
    "UPDATE chunks SET tsv = "
    + _tsv(
        ":title_words",
        ":title_wholes",
        ":head_words",
        ":head_wholes",
        ":body_words",
        ":body_wholes",
    )
    + " WHERE id = :b_chunk_id"
)
CHUNKS_TO_RELEX = text(
    "SELECT c.id, c.heading_path, c.text FROM chunks c WHERE c.document_id = :document_id"
)
# A chunk's length (BM25's) again, once its lexemes were rewritten (`RELEX`); the postings, which
# carry it, are written after it.
LEXEME_COUNTS = text(
    "UPDATE chunks SET lexeme_count = coalesce("
    "  (SELECT sum(cardinality(t.positions)) FROM unnest(chunks.tsv) AS t), 0) "
    "WHERE document_id = :document_id"
)
DELETE_POSTINGS = text(
    "DELETE FROM chunk_terms WHERE chunk_id IN "
    "(SELECT id FROM chunks WHERE document_id = :document_id)"
)


def relex_values(title: str, rows: Sequence[Any]) -> list[dict[str, Any]]:
    """`RELEX`'s parameters for a document's chunks (rows of `CHUNKS_TO_RELEX`)."""
    title_lexed = _lexed_field("title", title)
    return [
        {"b_chunk_id": row.id}
        | title_lexed
        | _lexed_field("head", " ".join(row.heading_path))
        | _lexed_field("body", row.text)
        for row in rows
    ]


async def rewrite_lexemes(conn: WriteConnection, document_id: UUID, title: str) -> None:
    """Recompute a document's lexemes and postings after a title change (no re-embedding)."""
    params = {"document_id": document_id}
    await conn.execute(DELETE_POSTINGS, params)
    rows = (await conn.execute(CHUNKS_TO_RELEX, params)).all()
    if rows:
        await conn.execute(RELEX, relex_values(title, rows))
    await conn.execute(LEXEME_COUNTS, params)
    await _write_postings(conn, document_id)


async def set_private_owner(
    conn: WriteConnection, document_id: UUID, private_owner_id: UUID | None
) -> None:
    """Copy a document's visibility onto its chunks and postings."""
    params = {"document_id": document_id, "owner": private_owner_id}
    await conn.execute(
        text(
            "UPDATE chunks SET private_owner_id = CAST(:owner AS uuid) "
            "WHERE document_id = :document_id"
        ),
        params,
    )
    await conn.execute(
        text(
            "UPDATE chunk_terms SET private_owner_id = CAST(:owner AS uuid) WHERE chunk_id IN "
            "(SELECT id FROM chunks WHERE document_id = :document_id)"
        ),
        params,
    )


# --- search ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchParams:
    """Everything the hybrid statement needs, scope included."""

    query: str
    embedding: np.ndarray | None  # None: keyword only
    use_keyword: bool
    caller_id: UUID | None
    workspace_ids: Sequence[UUID] | None  # None: every workspace
    tags: Sequence[str] | None
    phrases: Sequence[str]
    limit: int
    dense_depth: int
    keyword_depth: int
    postings_per_term: int
    min_similarity: float
    min_coverage: float
    # The dense share's factor (`retrieval.Tuning.named_dense_factor`: less for a query that
    # names an identifier); the share itself follows the halves' confidence (`_FUSE_HYBRID`).
    dense_factor: float = 1.0
    k1: float = BM25_K1
    b: float = BM25_B
    repeats: bool = True
    coverage_terms: int = 1000
    postings_by_idf: bool = False
    # "Ask about this doc": only these documents' chunks (None: any document).
    document_ids: Sequence[UUID] | None = None
    # Only chunks of documents a source flagged may be stale (True), or of the others (False).
    stale: bool | None = None


# Who may see a chunk: `org`, or private and the caller's own; and the workspace allowlist.
_SCOPE = (
    "(x.private_owner_id IS NULL OR x.private_owner_id = CAST(:caller AS uuid)) "
    "AND (CAST(:workspaces AS uuid[]) IS NULL OR x.workspace_id = ANY(CAST(:workspaces AS uuid[])))"
)

_DENSE = f"""
dense AS (
  -- Equals share a rank (the same text is the same vector): the order among them is the
  -- result's (`_result`), and a rank must not say otherwise.
  SELECT id, 1 - distance AS similarity, rank() OVER (ORDER BY distance) AS rank
  FROM (
    -- The distance once per row: where the planner scans every chunk (a small corpus), each
    -- computation reads the row's vector again.
    SELECT x.id, x.embedding <=> CAST(:embedding AS vector) AS distance
    FROM chunks x
    WHERE {_SCOPE}
      AND (CAST(:documents AS uuid[]) IS NULL OR x.document_id = ANY(CAST(:documents AS uuid[])))
    ORDER BY x.embedding <=> CAST(:embedding AS vector)
    LIMIT :dense_depth
  ) candidates
  -- A zero vector (text without a word, for some embedders) is at distance NaN from
  -- everything, and PostgreSQL ranks NaN above every number: it must not pass the floor.
  WHERE distance <> 'NaN'::float8 AND 1 - distance >= :min_similarity
)"""

# BM25 over the postings: for each query lexeme, its top postings by impact (an index range
# scan), scored with the current statistics; any lexeme may match (an OR, not an AND).
_KEYWORD = f"""
stats AS (
  SELECT greatest(chunk_count, 1)::float8 AS n,
         coalesce(lexeme_total::float8 / nullif(chunk_count, 0), 1) AS avgdl
  FROM corpus_stats
),
terms AS (
  SELECT q.lexeme, idf, q.covers,
         -- BM25's numerator, constant per lexeme: a word the query repeats weighs as often as
         -- it is said, as in Lucene's BM25.
         idf * (CASE WHEN :repeats THEN cardinality(q.positions) ELSE 1 END) * (:k1 + 1)
           AS weight,
         -- How many of its postings a lexeme contributes: all up to the cut for the query's
         -- rarest, fewer for common ones, whose postings are many and each worth little.
         CASE WHEN :postings_by_idf
              THEN greatest(ceil(:postings_per_term * idf / nullif(max(idf) OVER (), 0)), 1)
              ELSE :postings_per_term END::int AS postings
  FROM (
    SELECT q.lexeme, q.positions, q.covers,
           ln(1 + (s.n - least(coalesce(ls.df, 0), s.n) + 0.5)
                  / (least(coalesce(ls.df, 0), s.n) + 0.5)) AS idf
    FROM (
      SELECT w.lexeme, w.positions, true AS covers
      FROM unnest(to_tsvector('{TS_CONFIG}', :query_words)) AS w
      UNION ALL
      -- An identifier's written forms (identifiers.lexable): they raise an exact match, and a
      -- hit is judged by the query's words alone, so a name the corpus never saw whole does
      -- not sink the pages that have its parts.
      SELECT n.lexeme, n.positions, false
      FROM unnest(to_tsvector('{TS_CONFIG}', :query_joined)
                  || CAST(:query_wholes AS tsvector)) AS n
      WHERE n.lexeme <> ALL (tsvector_to_array(to_tsvector('{TS_CONFIG}', :query_words)))
    ) q
    CROSS JOIN stats s
    LEFT JOIN lexeme_stats ls ON ls.lexeme = q.lexeme
  ) q
),
-- The idf mass a hit is asked to cover: the query's rarest few lexemes', not a whole
-- paragraph's (which no passage covers).
coverage_mass AS (
  SELECT nullif(sum(idf), 0) AS mass
  FROM (SELECT idf FROM terms WHERE covers ORDER BY idf DESC LIMIT :coverage_terms) rarest
),
-- The length normalisation's two constants, so each posting costs one division.
norm AS (
  SELECT :k1 * (1 - :b) AS base, :k1 * :b / avgdl AS per_lexeme FROM stats
),
keyword_scores AS (
  SELECT p.chunk_id,
         sum(t.weight * p.tf / (p.tf + norm.base + norm.per_lexeme * p.dl)) AS bm25,
         coalesce(least(sum(t.idf) FILTER (WHERE t.covers)
                        / (SELECT mass FROM coverage_mass), 1), 0) AS coverage
  FROM terms t
  CROSS JOIN norm
  CROSS JOIN LATERAL (
    SELECT x.chunk_id, x.tf, x.dl
    FROM chunk_terms x
    WHERE x.lexeme = t.lexeme AND {_SCOPE}
    ORDER BY x.impact DESC
    LIMIT t.postings
  ) p
  GROUP BY p.chunk_id
),
-- The top chunks first (a top-N sort), then their ranks: numbering every matching chunk
-- sorted thousands of them in full. Equal scores share a rank, as in the dense half.
keyword AS (
  SELECT id, coverage, bm25, rank() OVER (ORDER BY bm25 DESC) AS rank
  FROM (
    SELECT chunk_id AS id, coverage, bm25
    FROM keyword_scores
    ORDER BY bm25 DESC, chunk_id
    LIMIT :keyword_depth
  ) best
),
-- The query's attainable BM25: every lexeme's numerator, the score of a chunk that said each
-- without end; the fusion weighs the keyword half by how much of it its best hit reaches.
attainable AS (SELECT sum(weight) AS bm25 FROM terms)"""

_COLUMNS = """
SELECT c.id AS chunk_id, c.document_id, d.title, w.slug AS workspace, c.heading_path, c.text,
       c.page,
       f.vec_rank, f.kw_rank, f.similarity, f.score,
       ARRAY(SELECT m.lexeme FROM unnest(c.tsv) AS m
             WHERE m.lexeme = ANY(q.lexemes) ORDER BY m.lexeme) AS matched_terms"""

_JOINS = """
CROSS JOIN (SELECT tsvector_to_array(to_tsvector('{config}', :query_words)
                                     || to_tsvector('{config}', :query_joined)
                                     || CAST(:query_wholes AS tsvector)) AS lexemes) AS q
JOIN chunks c ON c.id = f.id{rescope}
JOIN documents d ON d.id = c.document_id
JOIN workspaces w ON w.id = c.workspace_id""".replace("{config}", TS_CONFIG)

# With filters on the document (tags, "ask about this doc") or the text (quoted phrases), the
# candidates are joined and filtered before the best are taken.
_FILTERED = """
WHERE (CAST(:tags AS text[]) IS NULL OR d.tags && CAST(:tags AS text[]))
  AND (CAST(:documents AS uuid[]) IS NULL OR c.document_id = ANY(CAST(:documents AS uuid[])))
  AND (CAST(:stale AS boolean) IS NULL
       OR EXISTS (SELECT 1 FROM source_documents sd
                  WHERE sd.document_id = c.document_id AND jsonb_array_length(sd.stale) > 0)
          = CAST(:stale AS boolean))
  AND NOT EXISTS (SELECT 1 FROM unnest(CAST(:phrases AS text[])) AS p(phrase)
                  WHERE NOT c.tsv @@ phraseto_tsquery('{config}', p.phrase))
ORDER BY f.score DESC, f.similarity DESC NULLS LAST, d.created_at, c.ordinal, c.id
LIMIT :limit""".replace("{config}", TS_CONFIG)


def _result(*, with_filters: bool, rescope: bool) -> str:
    """The statement's end: the best fused candidates joined to their text and document.

    Without filters the best are taken first and only they are joined. With `rescope`, each hit
    passes the caller's scope again: the halves were read apart (ADR 0015), each within the
    scope at its own moment, and the text is read now.
    """
    # Equal fused scores are common (rank 3 in one half only, in either half), and the random
    # chunk id that broke them changed the top 10 from one ingest of a corpus to the next:
    # SciFact hybrid 0.7205-0.7238 nDCG@10 over three runs of the same code. The vector match's
    # similarity breaks them first; it is the finer of the two halves' evidence. Then the older
    # document, and the chunk's place in it: near-copies (one README vendored in two packages)
    # score alike in both halves, and their ids moved codedocs' keyword nDCG@10 between 0.9179
    # and 0.9180 from one ingest to the next.
    joins = _JOINS.replace("{rescope}", " AND " + _SCOPE.replace("x.", "c.") if rescope else "")
    if with_filters:
        return _COLUMNS + "\nFROM fused f" + joins + _FILTERED
    return (
        _COLUMNS
        + "\nFROM (SELECT * FROM fused ORDER BY score DESC, similarity DESC NULLS LAST, id "
        + "LIMIT :limit) f"
        + joins
        + "\nORDER BY f.score DESC, f.similarity DESC NULLS LAST, d.created_at, c.ordinal, c.id"
    )


# Each half's score scaled to its own candidates (the similarity from the list's worst to its
# best; BM25 as a share of the best), then weighed: a half whose best stands far above the rest
# keeps that lead; a candidate missing from a half scores 0 there. A lone candidate, or a list of
# equals, is its half's best: 1. The dense half's share is how sure it is, times what the
# keyword half leaves open (`retrieval.Tuning`): its best similarity above the floor as a share
# of the most it could be, times 1 minus the keyword half's best BM25 as a share of the query's
# attainable BM25. A half with no candidate is sure of nothing: all the weight goes to the
# other's list, and the score of a hit that is best in both halves stays 1.
_FUSE_HYBRID = """
dense_range AS (SELECT min(similarity) AS lo, max(similarity) AS hi FROM dense),
keyword_best AS (SELECT max(bm25) AS hi FROM keyword),
share AS (
  SELECT CASE WHEN kb.hi IS NULL THEN 1
              ELSE :dense_factor
                   * greatest(coalesce(dr.hi, :min_similarity) - :min_similarity, 0)
                   / greatest(1 - :min_similarity, 1e-9)
                   * (1 - coalesce(least(kb.hi / nullif(a.bm25, 0), 1), 0)) END AS dense
  FROM dense_range dr CROSS JOIN keyword_best kb CROSS JOIN attainable a
),
fused AS (
  SELECT coalesce(d.id, k.id) AS id, d.rank AS vec_rank, k.rank AS kw_rank, d.similarity,
         s.dense * coalesce((d.similarity - dr.lo) / nullif(dr.hi - dr.lo, 0),
                            CASE WHEN d.id IS NULL THEN 0 ELSE 1 END)
           + (1 - s.dense) * coalesce(k.bm25 / nullif(kb.hi, 0), 0) AS score
  FROM dense d FULL OUTER JOIN keyword k ON k.id = d.id
  CROSS JOIN dense_range dr CROSS JOIN keyword_best kb CROSS JOIN share s
  WHERE d.id IS NOT NULL OR k.coverage >= :min_coverage
)"""

_FUSE_DENSE = """
fused AS (
  SELECT id, rank AS vec_rank, NULL::bigint AS kw_rank, similarity,
         similarity AS score
  FROM dense
)"""

# BM25 as a share of the best, as the hybrid scales it: equal scores stay equal, and the result's
# order breaks their tie (`_result`), where a reciprocal rank broke it by the random id.
_FUSE_KEYWORD = """
fused AS (
  SELECT k.id, NULL::bigint AS vec_rank, k.rank AS kw_rank, NULL::float8 AS similarity,
         coalesce(k.bm25 / nullif((SELECT max(bm25) FROM keyword), 0), 0) AS score
  FROM keyword k
  WHERE k.coverage >= :min_coverage
)"""


def _statement(params: SearchParams) -> str:
    parts: list[str] = []
    if params.embedding is not None:
        parts.append(_DENSE)
    if params.use_keyword:
        parts.append(_KEYWORD)
    if params.embedding is not None and params.use_keyword:
        parts.append(_FUSE_HYBRID)
    elif params.embedding is not None:
        parts.append(_FUSE_DENSE)
    else:
        parts.append(_FUSE_KEYWORD)
    return "WITH " + ",".join(parts) + _result(with_filters=filtered(params), rescope=False)


def filtered(params: SearchParams) -> bool:
    """Whether the hits are filtered after ranking (a candidate may be dropped), which makes
    the halves read deeper than the limit."""
    return bool(
        params.tags or params.phrases or params.document_ids is not None or params.stale is not None
    )


# Typed parameters: asyncpg would otherwise infer `:k1` in `tf * (:k1 + 1)` as an integer.
_PARAMETER_TYPES: dict[str, Any] = {
    "caller": PG_UUID(as_uuid=True),
    "workspaces": ARRAY(PG_UUID(as_uuid=True)),
    "documents": ARRAY(PG_UUID(as_uuid=True)),
    "tags": ARRAY(Text),
    "repeats": Boolean(),
    "stale": Boolean(),
    "postings_by_idf": Boolean(),
    "phrases": ARRAY(Text),
    "embedding": Vector(),
    "dense_ids": ARRAY(PG_UUID(as_uuid=True)),
    "keyword_ids": ARRAY(PG_UUID(as_uuid=True)),
    "dense_scores": ARRAY(Float()),
    "keyword_scores": ARRAY(Float()),
    "dense_ranks": ARRAY(BigInteger()),
    "keyword_ranks": ARRAY(BigInteger()),
    "keyword_bm25": ARRAY(Float()),
    **dict.fromkeys(
        ["k1", "b", "dense_factor", "min_similarity", "min_coverage", "keyword_attainable"],
        Float(),
    ),
}


async def size_vector_search(conn: ReadConnection, depth: int) -> int:
    """Prepare this transaction's searches, and return the candidates an HNSW walk of `depth`
    keeps on this corpus (the bench's bare statement uses the same; `retrieval.run` reads the
    corpus's size from it)."""
    # The HNSW scan keeps ef_search candidates: sized to the depth (with fewer than the LIMIT it
    # would iterate, slowly, to fill the rest) and to the corpus (above). And a plan for these
    # very values, every time: after five runs of a prepared statement PostgreSQL may keep a
    # generic plan, which cannot fold the optional filters (`:workspaces IS NULL OR ...`); for
    # the keyword mode it did, and took 10.2 ms at p50 against 4.3 planned afresh (100k chunks,
    # natural queries, docs/BENCHMARKS.md). Both local to the transaction, as every request has
    # its own; read from the statistics row in the same statement, so no extra round trip.
    result = await conn.execute(
        text(
            "SELECT set_config('plan_cache_mode', 'force_custom_plan', true), "
            "set_config('hnsw.ef_search', least(:max, greatest(:depth, :min, "
            "  chunk_count / :per))::text, true) AS ef_search FROM corpus_stats"
        ),
        {
            "depth": depth,
            "min": HNSW_EF_SEARCH_MIN,
            "max": HNSW_EF_SEARCH_MAX,
            "per": HNSW_CHUNKS_PER_CANDIDATE,
        },
    )
    return int(result.one().ef_search)


@functools.cache
def _clause(sql: str) -> TextClause:
    # Once per statement text (a few dozen: modes × filters × halves), not per search: finding
    # the typed parameters scans the whole statement for each name.
    used = [name for name in _PARAMETER_TYPES if re.search(rf":{name}\b", sql)]
    return text(sql).bindparams(*(bindparam(name, type_=_PARAMETER_TYPES[name]) for name in used))


def _prepared(params: SearchParams) -> tuple[str, dict[str, Any]]:
    return _statement(params), _values(params)


def _values(params: SearchParams) -> dict[str, Any]:
    lexed = identifiers.lexable(params.query)
    values: dict[str, Any] = {
        "query_words": lexed.words,
        "query_joined": lexed.joined,
        "query_wholes": identifiers.tsvector_literal(lexed.wholes),
        "caller": params.caller_id,
        "workspaces": list(params.workspace_ids) if params.workspace_ids is not None else None,
        "documents": list(params.document_ids) if params.document_ids is not None else None,
        "limit": params.limit,
        "min_coverage": params.min_coverage,
    }
    if filtered(params):
        values |= {
            "tags": list(params.tags) if params.tags else None,
            "stale": params.stale,
            # As the text was lexed: a quoted identifier is the phrase of its parts.
            "phrases": [identifiers.lexable(phrase).words for phrase in params.phrases],
        }
    if params.embedding is not None:
        values |= {
            "embedding": params.embedding,
            "dense_depth": params.dense_depth,
            "min_similarity": params.min_similarity,
        }
    if params.use_keyword:
        values |= {
            "keyword_depth": params.keyword_depth,
            "postings_per_term": params.postings_per_term,
            "repeats": params.repeats,
            "postings_by_idf": params.postings_by_idf,
            "coverage_terms": params.coverage_terms,
            "k1": params.k1,
            "b": params.b,
        }
    if params.embedding is not None and params.use_keyword:
        values |= {"dense_factor": params.dense_factor}
    return values


async def search(
    conn: ReadConnection, params: SearchParams, *, sized: bool = False
) -> list[SearchHit]:
    """Run the hybrid (or single-mode) search statement within the caller's scope. `sized`:
    the caller has run `size_vector_search` in this transaction already."""
    sql, values = _prepared(params)
    if not sized:
        await size_vector_search(conn, params.dense_depth)
    return _hits(await conn.execute(_clause(sql), values))


def _hits(rows: Any) -> list[SearchHit]:
    return [
        SearchHit(
            chunk_id=row.chunk_id,
            document_id=row.document_id,
            title=row.title,
            workspace=row.workspace,
            heading_path=list(row.heading_path),
            text=row.text,
            vec_rank=row.vec_rank,
            kw_rank=row.kw_rank,
            similarity=row.similarity,
            score=float(row.score),
            matched_terms=list(row.matched_terms),
            page=row.page,
        )
        for row in rows
    ]


# --- the halves apart (ADR 0015) -------------------------------------------------------------
# A hybrid search with a second connection reads its two halves at once, one on each, and fuses
# them in a third statement on the request's connection: the same CTEs and the same fusion as
# the one statement above, so the same hits (tests/rag/test_halves_apart.py).

_DENSE_HALF = "WITH " + _DENSE + "\nSELECT id, similarity AS score, rank FROM dense"
_KEYWORD_HALF = (
    "WITH "
    + _KEYWORD
    + "\nSELECT id, coverage AS score, rank, bm25, (SELECT bm25 FROM attainable) AS attainable "
    + "FROM keyword"
)

_HALVES_GIVEN = """
dense AS (
  SELECT * FROM unnest(CAST(:dense_ids AS uuid[]), CAST(:dense_scores AS float8[]),
                       CAST(:dense_ranks AS bigint[])) AS h(id, similarity, rank)
),
keyword AS (
  SELECT * FROM unnest(CAST(:keyword_ids AS uuid[]), CAST(:keyword_scores AS float8[]),
                       CAST(:keyword_ranks AS bigint[]), CAST(:keyword_bm25 AS float8[]))
    AS h(id, coverage, rank, bm25)
),
attainable AS (SELECT CAST(:keyword_attainable AS float8) AS bm25)"""


@dataclass(frozen=True, slots=True)
class Half:
    """One half's ranking: chunk ids best first, with their similarity (dense) or idf
    coverage (keyword), their ranks, and (keyword) their BM25 scores, which fusion weighs, and
    the query's attainable BM25, which weighs the half."""

    ids: list[UUID]
    scores: list[float]
    ranks: list[int]
    bm25: list[float] = field(default_factory=list)
    attainable: float = 0.0


async def _half(conn: ReadConnection, sql: str, values: dict[str, Any]) -> Half:
    rows = (await conn.execute(_clause(sql), values)).all()
    return Half(
        ids=[row.id for row in rows],
        scores=[float(row.score) for row in rows],
        ranks=[int(row.rank) for row in rows],
        bm25=[float(row.bm25) for row in rows if "bm25" in row._fields],
        attainable=float(rows[0].attainable) if rows and "attainable" in rows[0]._fields else 0.0,
    )


async def dense_half(conn: ReadConnection, params: SearchParams) -> Half:
    """The dense half of a hybrid search, alone, in a transaction whose vector search
    `size_vector_search` has sized (`retrieval.run` sizes it to choose the path)."""
    return await _half(conn, _DENSE_HALF, _values(params))


async def keyword_half(conn: ReadConnection, params: SearchParams) -> Half:
    """The keyword half of a hybrid search, alone."""
    values = _values(params)
    await conn.execute(text("SELECT set_config('plan_cache_mode', 'force_custom_plan', true)"))
    return await _half(conn, _KEYWORD_HALF, values)


async def fuse(
    conn: ReadConnection, params: SearchParams, dense: Half, keyword: Half
) -> list[SearchHit]:
    """The hits of a hybrid search from its two halves, read apart: fused, filtered, and joined
    to their text, each within the caller's scope again."""
    values = _values(params) | {
        "dense_ids": dense.ids,
        "dense_scores": dense.scores,
        "dense_ranks": dense.ranks,
        "keyword_ids": keyword.ids,
        "keyword_scores": keyword.scores,
        "keyword_ranks": keyword.ranks,
        "keyword_bm25": keyword.bm25,
        "keyword_attainable": keyword.attainable,
    }
    sql = (
        "WITH "
        + _HALVES_GIVEN
        + ","
        + _FUSE_HYBRID
        + _result(with_filters=filtered(params), rescope=True)
    )
    return _hits(await conn.execute(_clause(sql), values))


async def explain(conn: ReadConnection, params: SearchParams, *, analyze: bool = False) -> str:
    """The plan PostgreSQL chooses for the search statement (tests check the indexes it uses);
    with `analyze`, run, with each node's time and buffers (scripts/explain_search.py)."""
    sql, values = _prepared(params)
    await size_vector_search(conn, params.dense_depth)
    command = "EXPLAIN (ANALYZE, BUFFERS) " if analyze else "EXPLAIN "
    rows = await conn.execute(_clause(command + sql), values)
    return "\n".join(row[0] for row in rows)


async def query_lexemes(conn: ReadConnection, query: str) -> list[str]:
    """The query's lexemes, as the keyword half sees them."""
    lexed = identifiers.lexable(query)
    result = await conn.execute(
        text(
            f"SELECT tsvector_to_array(to_tsvector('{TS_CONFIG}', :words) "
            f"|| to_tsvector('{TS_CONFIG}', :joined) || CAST(:wholes AS tsvector))"
        ),
        {
            "words": lexed.words,
            "joined": lexed.joined,
            "wholes": identifiers.tsvector_literal(lexed.wholes),
        },
    )
    return list(result.scalar_one())


# --- re-embedding -----------------------------------------------------------------------------


async def start_reembedding(conn: WriteConnection, dim: int) -> None:
    """A column for the new vectors next to the old ones, so searches go on meanwhile; an
    interrupted run resumes with the vectors already written."""
    await conn.execute(
        text(f"ALTER TABLE chunks ADD COLUMN IF NOT EXISTS embedding_next vector({int(dim)})")
    )
    # Inline, as migration 0009 keeps `embedding`: the column renamed into its place later.
    await conn.execute(text("ALTER TABLE chunks ALTER COLUMN embedding_next SET STORAGE MAIN"))


async def chunks_to_reembed(
    conn: ReadConnection, limit: int
) -> list[tuple[UUID, str, list[str], str]]:
    rows = await conn.execute(
        text(
            "SELECT c.id, d.title, c.heading_path, c.text FROM chunks c "
            "JOIN documents d ON d.id = c.document_id "
            "WHERE c.embedding_next IS NULL ORDER BY c.id LIMIT :limit"
        ),
        {"limit": limit},
    )
    return [(row.id, row.title, list(row.heading_path), row.text) for row in rows]


async def count_to_reembed(conn: ReadConnection) -> tuple[int, int]:
    """(chunks still to re-embed, all chunks)."""
    row = (
        await conn.execute(
            text("SELECT count(*) FILTER (WHERE embedding_next IS NULL), count(*) FROM chunks")
        )
    ).one()
    return int(row[0]), int(row[1])


async def store_reembedded(conn: WriteConnection, rows: Sequence[tuple[UUID, np.ndarray]]) -> None:
    statement = text("UPDATE chunks SET embedding_next = :v WHERE id = :id").bindparams(
        bindparam("v", type_=Vector())
    )
    await conn.execute(statement, [{"id": chunk_id, "v": vector} for chunk_id, vector in rows])


async def create_vector_index(conn: WriteConnection) -> None:
    """The HNSW index, as migration 0010 defines it (cosine distance, m 16,
    ef_construction 200), built in one pass."""
    await conn.execute(
        text(
            "CREATE INDEX ix_chunks_embedding_hnsw ON chunks USING hnsw "
            "(embedding vector_cosine_ops) WITH (m = 16, ef_construction = 200)"
        )
    )


async def finish_reembedding(conn: WriteConnection, *, provider: str, model: str, dim: int) -> None:
    """Swap the new vectors in, rebuild the HNSW index and record the model, in one
    transaction (the table is locked against writes while the index builds)."""
    await conn.execute(text("LOCK TABLE chunks IN SHARE ROW EXCLUSIVE MODE"))
    await conn.execute(text("DROP INDEX IF EXISTS ix_chunks_embedding_hnsw"))
    await conn.execute(text("ALTER TABLE chunks DROP COLUMN embedding"))
    await conn.execute(text("ALTER TABLE chunks RENAME COLUMN embedding_next TO embedding"))
    await conn.execute(text("ALTER TABLE chunks ALTER COLUMN embedding SET NOT NULL"))
    await create_vector_index(conn)
    await conn.execute(
        text(
            "UPDATE embedding_meta SET provider = :provider, model = :model, dim = :dim, "
            "updated_at = now()"
        ),
        {"provider": provider, "model": model, "dim": dim},
    )
