"""Helpers shared by tests: settings, scratch databases, server processes."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from app.config import Settings
from app.db import scratch

TEST_SECRET = "test-secret-key-that-is-long-enough-0123456789"
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    """Settings for tests: no .env file, the hash embedder, a fixed secret."""
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "embeddings_provider": "hash",
        "secret_key": TEST_SECRET,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


async def new_database(server_url: str, name: str) -> str:
    """Create an empty database on the server; return its URL."""
    return await scratch.create_database(server_url, name)


def create_database(server_url: str, name: str) -> str:
    """`new_database` for synchronous code."""
    return asyncio.run(new_database(server_url, name))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def child_env(**settings: str) -> dict[str, str]:
    """The environment of a `corpus` child process: ours, minus any Corpus settings, plus these."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CORPUS_", "DATABASE_", "EMBEDDINGS_", "SECRET_KEY"))
    }
    env.update(settings)
    return env


def start_corpus(
    args: list[str], env: dict[str, str], log: Path, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """Run `corpus ARGS` as a child process, its output going to `log`."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "app.cli", *args],
            env=env,
            cwd=cwd or PROJECT_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def wait_until_ready(
    url: str, process: subprocess.Popen[bytes], log: Path, timeout_s: float = 60
) -> httpx.Response:
    """Poll `url` until it answers 200; fail early if the process exits."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"corpus exited with {process.returncode}:\n{log.read_text()}")
        try:
            response = httpx.get(url, timeout=2)
            if response.status_code == 200:
                return response
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} not ready after {timeout_s}s:\n{log.read_text()}")
