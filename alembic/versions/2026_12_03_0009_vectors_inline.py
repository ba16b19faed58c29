"""vectors inline: `chunks.embedding` with storage MAIN instead of pgvector's EXTERNAL, so a
chunk's vector stays in its row rather than in the TOAST table whenever the row fits a page.

A chunk row is about 3.5 KB (a 384-dimension vector is 1.5 KB, its text and lexemes the rest):
over the 2 KB TOAST threshold, PostgreSQL moved the vector out first, and every candidate the
dense half read back from the HNSW scan cost a TOAST index lookup and another page to compute
its similarity. With MAIN the text and lexemes go out instead (they compress; vectors do not),
and 100 candidates cost about 0.4 ms instead of 1–8 (docs/BENCHMARKS.md). MAIN, not PLAIN: a
large model's vector (3,072 dimensions is 12 KB) still may not fit a page, and then it is
stored out of line rather than failing the insert.

The setting applies to rows written from now on; existing rows move when they are next written
(an edit, `corpus reembed`) or at once with `VACUUM FULL chunks` (which locks the table while
it rewrites it and its indexes). Instant: no rewrite here.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 20:20:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE MAIN")


def downgrade() -> None:
    op.execute("ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE EXTERNAL")
