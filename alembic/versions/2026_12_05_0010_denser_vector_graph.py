"""denser vector graph: `ix_chunks_embedding_hnsw` rebuilt with ef_construction 200 (was 64).

At a million chunks the graph built with 64 candidates per insert needed ef_search 1,000 (the
largest pgvector allows) to return 95% of the exact top 10, and a bare query then took 47 ms
at the 95th percentile; built with 200 it returns 95.1% at ef_search 600 in 38 ms
(docs/BENCHMARKS.md, ADR 0016). The graph costs more to build, not to store: m stays 16.

The rebuild locks the table against writes while it runs (a million chunks took 931 s here
with 4 GB of maintenance_work_mem, far longer without). An index that already has these
options (rebuilt by hand ahead of the upgrade) is left as it is.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-05 07:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _rebuild(ef_construction: int) -> None:
    wanted = ["m=16", f"ef_construction={ef_construction}"]
    options = (
        op.get_bind()
        .execute(
            sa.text("SELECT reloptions FROM pg_class WHERE relname = 'ix_chunks_embedding_hnsw'")
        )
        .scalar_one_or_none()
    )
    if options is not None and sorted(options) == sorted(wanted):
        return
    op.execute("DROP INDEX IF EXISTS ix_chunks_embedding_hnsw")
    op.execute(
        "CREATE INDEX ix_chunks_embedding_hnsw ON chunks USING hnsw "
        f"(embedding vector_cosine_ops) WITH (m = 16, ef_construction = {ef_construction})"
    )


def upgrade() -> None:
    _rebuild(200)


def downgrade() -> None:
    _rebuild(64)
