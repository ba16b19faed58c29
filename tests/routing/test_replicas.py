"""Two servers on one database, as two replicas behind a proxy: a write through one drops the
cached context in the other, through PostgreSQL's LISTEN/NOTIFY."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import httpx

from app.config import Settings
from tests.running import run_corpus
from tests.support import (
    TEST_SECRET,
    child_env,
    eventually,
    free_port,
    migrated_database,
    start_corpus,
    wait_until_ready,
)

STOP_TIMEOUT_S = 20
WORD = "zqreplica"


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def test_a_write_through_one_server_drops_the_cached_context_in_another(
    settings: Settings, server_url: str, data_dir: Path, tmp_path: Path
) -> None:
    database_url = await migrated_database(server_url, data_dir, "corpus_replicas")
    port = free_port()
    env = child_env(
        DATABASE_URL=database_url,
        CORPUS_DATA_DIR=str(tmp_path / "var"),
        EMBEDDINGS_PROVIDER="hash",
        SECRET_KEY=TEST_SECRET,
        CORPUS_PUBLIC_URL=f"http://127.0.0.1:{port}",
    )
    log = tmp_path / "serve.log"
    process = start_corpus(["serve", "--port", str(port)], env, log)
    try:
        async with run_corpus(data_dir, database_url) as here:
            editor = await here.account("editor")
            await asyncio.to_thread(
                wait_until_ready, f"http://127.0.0.1:{port}/readyz", process, log
            )
            query: dict[str, Any] = {"query": f"{WORD} failover", "top_k": 10}
            async with (
                httpx.AsyncClient(base_url=here.url, headers=editor.bearer, timeout=30) as one,
                httpx.AsyncClient(
                    base_url=f"http://127.0.0.1:{port}", headers=editor.bearer, timeout=30
                ) as other,
            ):
                first = await one.post(
                    "/api/documents",
                    json={"title": "Failover", "content": f"# Failover\n\n{WORD} failover drill."},
                )
                assert first.status_code == 201
                cold = (await other.post("/api/context", json=query)).json()
                warm = (await other.post("/api/context", json=query)).json()
                assert (cold["cache_hit"], warm["cache_hit"]) == (False, True)
                assert [s["document_id"] for s in warm["sources"]] == [first.json()["id"]]

                second = await one.post(
                    "/api/documents",
                    json={"title": "Promote", "content": f"# Promote\n\n{WORD} failover promote."},
                )
                assert second.status_code == 201
                seen: dict[str, Any] = {}

                async def dropped() -> bool:
                    seen.update((await other.post("/api/context", json=query)).json())
                    return seen["cache_hit"] is False

                await eventually(dropped, "the other server drops its cached context", within_s=15)
    finally:
        _stop(process)
    assert {s["document_id"] for s in seen["sources"]} == {
        first.json()["id"],
        second.json()["id"],
    }
