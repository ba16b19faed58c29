"""The clean-up the lifespan runs: expired sessions, consent transactions, codes and tokens are
deleted; live rows, and spent refresh tokens that have not expired (they catch reuse), stay."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import subprocess
import sys
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from app import housekeeping
from app.asking import records
from app.asking import service as asking_service
from app.db.engine import Database, ReadConnection, WriteConnection
from app.db.tables import oauth_authorizations, oauth_clients, oauth_codes, oauth_tokens, sessions
from app.main import create_app
from app.oauth import service as oauth
from app.sessions import service as sessions_service
from tests import support
from tests.accounts import make_account
from tests.support import eventually, lifespan, make_settings, migrated_database

# The column each table's seeded rows are told apart by.
KEYS = {
    "sessions": sessions.c.token_sha256,
    "oauth_authorizations": oauth_authorizations.c.id,
    "oauth_codes": oauth_codes.c.code_sha256,
    "oauth_tokens": oauth_tokens.c.token_sha256,
}


@dataclass(frozen=True)
class Seeded:
    """Rows of one account and client: `expired` must go, `live` must stay."""

    expired: str
    live: str
    spent: str  # a refresh token already rotated, not yet expired

    @property
    def expected_after_pruning(self) -> dict[str, set[str]]:
        return {
            "sessions": {self.live},
            "oauth_authorizations": {self.live},
            "oauth_codes": {self.live},
            "oauth_tokens": {self.live, self.spent},
        }


async def seed(conn: AsyncConnection) -> Seeded:
    account = await make_account(conn, "editor")
    user_id = account.user.id
    suffix = uuid.uuid4().hex[:12]
    seeded = Seeded(f"expired-{suffix}", f"live-{suffix}", f"spent-{suffix}")
    client_id = f"client-{suffix}"
    await conn.execute(
        insert(oauth_clients).values(
            client_id=client_id, client_name="Seed", redirect_uris=[], metadata={}
        )
    )
    now = datetime.now(UTC)
    rows: list[tuple[str, datetime, datetime | None]] = [
        (seeded.expired, now - timedelta(minutes=1), None),
        (seeded.live, now + timedelta(hours=1), None),
    ]
    owned: dict[str, Any] = {"client_id": client_id, "user_id": user_id, "scopes": []}
    for key, expires_at, _ in rows:
        await conn.execute(
            insert(sessions).values(user_id=user_id, token_sha256=key, expires_at=expires_at)
        )
        await conn.execute(
            insert(oauth_authorizations).values(
                id=key, client_id=client_id, params={}, expires_at=expires_at
            )
        )
        await conn.execute(
            insert(oauth_codes).values(
                code_sha256=key,
                code_challenge="challenge",
                redirect_uri="http://127.0.0.1/callback",
                redirect_uri_provided_explicitly=True,
                expires_at=expires_at,
                **owned,
            )
        )
    rows.append((seeded.spent, now + timedelta(days=1), now))
    for key, expires_at, used_at in rows:
        await conn.execute(
            insert(oauth_tokens).values(
                token_sha256=key,
                kind="refresh",
                family_id=uuid.uuid4(),
                expires_at=expires_at,
                used_at=used_at,
                **owned,
            )
        )
    return seeded


async def present(conn: AsyncConnection | ReadConnection, seeded: Seeded) -> dict[str, set[str]]:
    """The seeded rows still in each table."""
    mine = [seeded.expired, seeded.live, seeded.spent]
    return {
        table: set((await conn.execute(select(key).where(key.in_(mine)))).scalars())
        for table, key in KEYS.items()
    }


async def test_pruning_deletes_expired_rows_and_keeps_live_ones_and_spent_refresh_tokens(
    conn: AsyncConnection,
) -> None:
    seeded = await seed(conn)
    assert (await present(conn, seeded))["oauth_tokens"] == {
        seeded.expired,
        seeded.live,
        seeded.spent,
    }
    write = WriteConnection(ReadConnection(conn))

    sessions_pruned = await sessions_service.prune_expired(write)
    counts = await oauth.prune_expired(write)

    assert await present(conn, seeded) == seeded.expected_after_pruning
    # Other tests' rows are not visible here (each runs in its own transaction), so at least
    # ours were counted.
    assert sessions_pruned >= 1
    assert set(counts) == {"oauth_authorizations", "oauth_codes", "oauth_tokens", "oauth_clients"}
    # The seeded client is new: it stays although nobody approved it (yet).
    assert all(count >= 1 for table, count in counts.items() if table != "oauth_clients")


async def test_the_running_app_prunes_at_start(
    server_url: str, data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = await migrated_database(server_url, data_dir, "corpus_housekeeping")
    db = Database(url)
    try:
        async with db.write() as conn:
            seeded = await seed(conn)
        app = create_app(make_settings(data_dir, database_url=url))
        with caplog.at_level(logging.INFO, logger=housekeeping.__name__):
            async with lifespan(app):

                async def pruned() -> bool:
                    async with db.read() as conn:
                        return await present(conn, seeded) == seeded.expected_after_pruning

                await eventually(pruned, "the lifespan's first run prunes", within_s=10)
        async with db.read() as reader:
            assert await present(reader, seeded) == seeded.expected_after_pruning
        [logged] = [r.getMessage() for r in caplog.records if r.name == housekeeping.__name__]
        assert logged == (
            "pruned expired rows: sessions 1, oauth_authorizations 1, oauth_codes 1, oauth_tokens 1"
        )
    finally:
        await db.dispose()


async def test_a_failed_run_is_logged_without_its_message_and_retried(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Nothing listens on port 9 of 127.0.0.1: every run fails to connect.
    db = Database("postgresql+asyncpg://corpus:hunter2-secret@127.0.0.1:9/corpus")
    try:
        with caplog.at_level(logging.WARNING, logger=housekeeping.__name__):
            task = asyncio.create_task(housekeeping.run(db, interval_s=0.05))

            async def failed_twice() -> bool:
                return len(caplog.records) >= 2

            await eventually(failed_twice, "two failed runs logged", within_s=5)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    finally:
        await db.dispose()
    messages = [r.getMessage() for r in caplog.records if r.name == housekeeping.__name__]
    assert len(messages) >= 2
    assert all(m.startswith("pruning expired rows failed (") for m in messages)
    assert not any("hunter2" in m for m in messages)


async def test_a_restart_fails_the_research_jobs_of_this_hosts_dead_processes_at_once(
    server_url: str, data_dir: Path
) -> None:
    url = await migrated_database(server_url, data_dir, "corpus_dead_jobs")
    db = Database(url)
    # A process that has exited: its pid is free (a killed `corpus serve`, as far as its jobs
    # can tell).
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host = socket.gethostname()
    try:
        async with db.write() as conn:
            owner = await make_account(conn, "viewer")
            principal = await support.key_principal(conn, owner.key)
            assert principal is not None
            # Leases far from running out: only the processes' deaths can end these jobs.
            dead = await records.create_job(
                conn, principal, "Rollbacks?", worker=f"{host}:{gone.pid}", lease_s=600
            )
            live = await records.create_job(
                conn, principal, "Retries?", worker=f"{host}:{os.getpid()}", lease_s=600
            )
            elsewhere = await records.create_job(
                conn, principal, "Restores?", worker=f"other-{host}:{gone.pid}", lease_s=600
            )
        counts = await housekeeping.prune_expired(db)
        assert counts["research jobs of dead processes"] == 1
        async with db.write() as conn:
            states = {}
            for job in (dead, live, elsewhere):
                found = await asking_service.get_job(conn, principal, job)
                states[job] = (found.status, found.error)
        assert states == {
            dead: ("failed", records.DIED),
            live: ("running", None),
            elsewhere: ("running", None),
        }
    finally:
        await db.dispose()
