"""The embedded PostgreSQL behind `corpus serve`: started on first use, shared by every process
on the same data folder, stopped with the last one (Ctrl-C included), and not kept alive by a
process that was killed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Awaitable, Iterator
from pathlib import Path

import asyncpg
import httpx
import psutil
import pytest

from app.db import embedded, scratch
from tests.support import (
    PROJECT_ROOT,
    child_env,
    eventually,
    free_port,
    start_corpus,
    wait_until_ready,
)

STOP_TIMEOUT_S = 30


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A data folder of the test's own (not the session's), outside pytest's private folder
    (see tests/conftest.py)."""
    path = Path(tempfile.mkdtemp(prefix="corpus-embedded-", dir="/tmp"))
    yield path / "var"
    shutil.rmtree(path, ignore_errors=True)


def _serve(data_dir: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = child_env(CORPUS_DATA_DIR=str(data_dir), EMBEDDINGS_PROVIDER="hash")
    process = start_corpus(["serve", "--port", str(port)], env, log)
    return process, f"http://127.0.0.1:{port}"


def _interrupt(process: subprocess.Popen[bytes]) -> int:
    process.send_signal(signal.SIGINT)  # what Ctrl-C sends
    return process.wait(timeout=STOP_TIMEOUT_S)


def _wait_gone(pid: int) -> bool:
    with contextlib.suppress(psutil.NoSuchProcess):
        psutil.Process(pid).wait(timeout=STOP_TIMEOUT_S)
    return not psutil.pid_exists(pid)


def test_a_killed_process_does_not_keep_the_database_running(
    data_dir: Path, tmp_path: Path
) -> None:
    # A process that attaches and dies by SIGKILL leaves its pid in the package's handle file.
    script = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from app.db import embedded
        embedded.start(Path({str(data_dir)!r}))
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    killed = subprocess.run(
        [sys.executable, "-c", script], cwd=PROJECT_ROOT, env=child_env(), check=False
    )
    assert killed.returncode == -signal.SIGKILL
    postgres = embedded.server_pid(data_dir)
    assert postgres is not None
    assert json.loads((data_dir / "pg" / ".handle_pids.json").read_text()) != []

    server, url = _serve(data_dir, tmp_path / "serve.log")
    try:
        wait_until_ready(f"{url}/readyz", server, tmp_path / "serve.log")
        assert embedded.server_pid(data_dir) == postgres  # attached, not a second server
        assert _interrupt(server) == 0
    finally:
        if server.poll() is None:
            server.kill()
    assert _wait_gone(postgres), "the dead process's pid kept PostgreSQL running"


def test_two_servers_started_at_once_on_a_fresh_folder_share_one_database_until_the_last_stops(
    data_dir: Path, tmp_path: Path
) -> None:
    # Both find an empty database and migrate it: the advisory lock makes the second wait for
    # the first and then find nothing to do, instead of failing on alembic_version. (A server
    # attaching to a database another process started: the test above.)
    first, first_url = _serve(data_dir, tmp_path / "first.log")
    second, second_url = _serve(data_dir, tmp_path / "second.log")
    try:
        for process, url, log in (
            (first, first_url, tmp_path / "first.log"),
            (second, second_url, tmp_path / "second.log"),
        ):
            assert wait_until_ready(f"{url}/readyz", process, log).json()["status"] == "ready"
        postgres = embedded.server_pid(data_dir)
        assert postgres is not None

        assert _interrupt(second) == 0
        assert httpx.get(f"{first_url}/readyz").json()["status"] == "ready"
        assert psutil.pid_exists(postgres), "the first server is still attached"

        assert _interrupt(first) == 0
        assert _wait_gone(postgres), "Ctrl-C on the last server left PostgreSQL running"
    finally:
        for process in (first, second):
            if process.poll() is None:
                process.kill()
                process.wait()


def test_the_last_process_out_stops_a_server_another_process_restarted(
    data_dir: Path, tmp_path: Path
) -> None:
    first, first_url = _serve(data_dir, tmp_path / "first.log")
    second: subprocess.Popen[bytes] | None = None
    try:
        wait_until_ready(f"{first_url}/readyz", first, tmp_path / "first.log")
        original = embedded.server_pid(data_dir)
        assert original is not None
        # PostgreSQL goes away under the first server (a crash, an operator's pg_ctl stop) ...
        embedded.stop_server(data_dir)
        assert _wait_gone(original)
        # ... and the second server to start brings up a new one, which the first then uses.
        second, second_url = _serve(data_dir, tmp_path / "second.log")
        wait_until_ready(f"{second_url}/readyz", second, tmp_path / "second.log")
        restarted = embedded.server_pid(data_dir)
        assert restarted is not None
        assert restarted != original
        wait_until_ready(f"{first_url}/readyz", first, tmp_path / "first.log")

        assert _interrupt(second) == 0
        assert psutil.pid_exists(restarted), "the first server is still attached"
        assert _interrupt(first) == 0
        assert _wait_gone(restarted), "the last process out left the restarted server running"
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()


def test_server_memory_is_fitted_to_the_machine_within_bounds() -> None:
    gib = 1024**3
    assert embedded.server_settings(24 * gib)["shared_buffers"] == "6144MB"
    assert embedded.server_settings(24 * gib)["effective_cache_size"] == "12288MB"
    assert embedded.server_settings(gib // 4)["shared_buffers"] == "128MB"  # initdb's own
    assert embedded.server_settings(256 * gib)["shared_buffers"] == "16384MB"


def test_a_restarted_server_runs_with_the_fitted_settings_and_autoprewarm(data_dir: Path) -> None:
    async def shown(url: str) -> tuple[str, str]:
        connection = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            buffers = await connection.fetchval("SELECT current_setting('shared_buffers')")
            preloaded = await connection.fetchval(
                "SELECT current_setting('shared_preload_libraries')"
            )
            return str(buffers), str(preloaded)
        finally:
            await connection.close()

    expected = embedded.server_settings(embedded.machine_memory())
    # A fresh folder: initdb and the first start belong to the package, with initdb's settings.
    first = asyncio.run(shown(embedded.start(data_dir)))
    assert first[0] == "128MB"
    embedded.release(data_dir)
    assert embedded.server_pid(data_dir) is None
    # Every later start reads corpus.conf.
    try:
        url = embedded.start(data_dir)
        buffers, preloaded = asyncio.run(shown(url))
        # The bench waits for the reload to end before it measures; here there is little to
        # reload, and it ends at once.
        asyncio.run(
            eventually(lambda: _done(scratch.prewarming(url)), "autoprewarm reloaded", within_s=30)
        )
    finally:
        embedded.release(data_dir)
    assert _megabytes(buffers) == _megabytes(expected["shared_buffers"])
    assert preloaded == "pg_prewarm"


async def _done(prewarming: Awaitable[bool]) -> bool:
    return not await prewarming
    conf = (data_dir / "pg" / "postgresql.conf").read_text().splitlines()
    assert conf.count("include_if_exists = 'corpus.conf'") == 1  # written once, not per start


def _megabytes(setting: str) -> int:
    """PostgreSQL shows 6144MB as `6GB`."""
    number, unit = int(setting[:-2]), setting[-2:]
    return number * {"MB": 1, "GB": 1024}[unit]
