"""Read transactions are read only, on the request's connection and on a side one, and the
pool hands the connection back able to write."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.db.engine import Database
from tests.support import migrated_database


async def test_reads_refuse_writes_and_leave_the_connection_writable(
    server_url: str, data_dir: Path
) -> None:
    db = Database(await migrated_database(server_url, data_dir, "corpus_read_only"))
    try:
        async with db.read() as conn:
            assert (
                await conn.scalar(text("SELECT current_setting('transaction_read_only')")) == "on"
            )
            with pytest.raises(DBAPIError, match="read-only transaction"):
                await conn.execute(text("CREATE TABLE scratch_note (line text)"))
        async with db.side_reads.reserve() as side:
            assert side is not None
            async with side() as conn:
                with pytest.raises(DBAPIError, match="read-only transaction"):
                    await conn.execute(text("CREATE TABLE scratch_note (line text)"))
        # The same pooled connection (the most recent first), writable again.
        async with db.write() as conn:
            await conn.execute(text("CREATE TABLE scratch_note (line text)"))
        async with db.read() as conn:
            assert await conn.scalar(text("SELECT count(*) FROM scratch_note")) == 0
    finally:
        await db.dispose()
