"""`corpus backup` and `corpus restore`, run for real: pg_dump and psql from the embedded
PostgreSQL package, a backup taken while a server writes, restored into a fresh data folder."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import sys
import tarfile
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from app.db import embedded, scratch
from app.ops.backup import DUMP, MANIFEST
from tests.running import run_corpus, run_fresh_corpus
from tests.support import (
    PROJECT_ROOT,
    child_env,
    eventually,
    migrated_database,
    run_corpus_here,
)

SEED = {
    "Deploying": "Ship a release with make release, then watch the error rate for an hour.",
    "On-call": "The on-call engineer answers pages within fifteen minutes, day and night.",
    "Backups": "Nightly backups go to object storage; restores are rehearsed every quarter.",
    "Caching": "Search results are cached per persona for ten minutes, then evicted.",
}
QUERIES = ["how do I ship a release", "who answers pages", "restores rehearsed", "cache eviction"]


async def _rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            return [tuple(row) for row in await conn.execute(text(sql))]
    finally:
        await engine.dispose()


async def _searches(http: httpx.AsyncClient) -> dict[str, list[tuple[str, str, float]]]:
    results = {}
    for query in QUERIES:
        reply = await http.post("/api/search", json={"query": query, "tags": ["seed"]})
        assert reply.status_code == 200, reply.text
        results[query] = [
            (hit["document_id"], hit["chunk_id"], round(hit["score"], 9))
            for hit in reply.json()["hits"]
        ]
    return results


@asynccontextmanager
async def _fresh_data_dir() -> AsyncIterator[Path]:
    # Under /tmp, not pytest's folder: the server's system user must reach it (conftest.py).
    path = Path(tempfile.mkdtemp(prefix="corpus-restore-test-", dir="/tmp"))
    try:
        yield path
    finally:
        await asyncio.to_thread(embedded.release, path)
        await asyncio.to_thread(embedded.stop_server, path)
        shutil.rmtree(path, ignore_errors=True)


async def _corpus(args: list[str], **env: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        *args,
        cwd=PROJECT_ROOT,
        env=child_env(EMBEDDINGS_PROVIDER="hash", **env),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=180)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_a_backup_taken_under_writes_restores_into_a_fresh_data_folder_that_searches_alike(
    server_url: str, data_dir: Path, tmp_path: Path
) -> None:
    backup = tmp_path / "corpus.backup"
    async with run_fresh_corpus(server_url, data_dir, "backup") as running:
        editor = await running.account("editor")
        async with httpx.AsyncClient(
            base_url=running.url, headers=editor.bearer, timeout=30
        ) as http:
            for title, content in SEED.items():
                made = await http.post(
                    "/api/documents", json={"title": title, "content": content, "tags": ["seed"]}
                )
                assert made.status_code == 201, made.text

            acknowledged: list[str] = []
            attempted: set[str] = set()
            stop = asyncio.Event()

            async def write() -> None:
                n = 0
                while not stop.is_set():
                    n += 1
                    title = f"load {n}"
                    attempted.add(title)
                    content = f"Written under load, number {n}: " + "words of filler " * 40
                    made = await http.post(
                        "/api/documents",
                        json={"title": title, "content": content, "tags": ["load"]},
                    )
                    assert made.status_code == 201, made.text
                    acknowledged.append(title)

            writer = asyncio.create_task(write())
            try:
                await _until(lambda: len(acknowledged) >= 3, "writes under way")
                before = len(acknowledged)
                code, out, err = await _corpus(
                    ["backup", str(backup)],
                    DATABASE_URL=running.settings.database_url,
                    CORPUS_DATA_DIR=str(tmp_path / "var"),
                )
                assert code == 0, err
                assert "backed up" in out
                # The writes went on while the dump was read.
                await _until(lambda: len(acknowledged) > before, "writes after the backup")
            finally:
                stop.set()
                await writer
            expected = await _searches(http)
            assert all(expected.values())

    manifest = _member_json(backup)
    assert manifest["embedding"] == {"provider": "hash", "model": "hash-384", "dim": 384}

    async with _fresh_data_dir() as fresh:
        code, out, err = await _corpus(["restore", str(backup)], CORPUS_DATA_DIR=str(fresh))
        assert code == 0, err
        assert out.startswith("restored ")
        url = await asyncio.to_thread(embedded.start, fresh)
        restored_docs = await _rows(
            url,
            "SELECT d.title, count(c.id), coalesce(max(c.ordinal) + 1, 0) FROM documents d "
            "LEFT JOIN chunks c ON c.document_id = d.id GROUP BY d.id",
        )
        # One snapshot: every restored document has all of its chunks, the load's documents
        # are ones the writer sent, and the manifest counts what was restored.
        assert all(0 < chunks == ordinals for _, chunks, ordinals in restored_docs)
        loaded = {title for title, *_ in restored_docs if title.startswith("load ")}
        assert loaded <= attempted
        assert len(loaded) >= 3
        assert manifest["documents"] == len(restored_docs)
        async with (
            run_corpus(fresh, url) as restored,
            httpx.AsyncClient(base_url=restored.url, headers=editor.bearer, timeout=30) as http,
        ):
            assert await _searches(http) == expected


async def _until(condition: Any, what: str, within_s: float = 60) -> None:
    async def holds() -> bool:
        return bool(condition())

    await eventually(holds, what, within_s=within_s)


# --- refusals: in this process, against databases of their own ---------------------------------


@pytest.fixture
def quiet_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The commands' data folder: a test's own, so no developer's generated key is read."""
    monkeypatch.setenv("CORPUS_DATA_DIR", str(tmp_path / "var"))
    return tmp_path / "var"


async def _migrated(server_url: str, data_dir: Path) -> str:
    return await migrated_database(server_url, data_dir, "restore")


async def _titles(url: str) -> list[str]:
    return [row[0] for row in await _rows(url, "SELECT title FROM documents ORDER BY title")]


async def _add_document(url: str, title: str) -> None:
    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            workspace = (
                await conn.execute(text("SELECT id FROM workspaces WHERE slug = 'default'"))
            ).scalar_one()
            await conn.execute(
                text(
                    "INSERT INTO documents (workspace_id, title, content, content_sha256) "
                    "VALUES (:w, :t, 'text', md5(:t))"
                ),
                {"w": workspace, "t": title},
            )
    finally:
        await engine.dispose()


def _here(args: list[str], url: str) -> tuple[int, str]:
    done = run_corpus_here(args, url)
    return done.returncode, done.stdout + done.stderr


@pytest.fixture
async def source(server_url: str, data_dir: Path, quiet_data_dir: Path, tmp_path: Path) -> Path:
    """A backup of a database holding one document, "kept"."""
    url = await _migrated(server_url, data_dir)
    await _add_document(url, "kept")
    path = tmp_path / "source.backup"
    code, output = await asyncio.to_thread(_here, ["backup", str(path)], url)
    assert code == 0, output
    return path


async def test_a_restore_refuses_a_database_that_holds_data_and_replaces_it_with_force(
    source: Path, server_url: str, data_dir: Path
) -> None:
    target = await _migrated(server_url, data_dir)
    await _add_document(target, "there before")

    code, output = await asyncio.to_thread(_here, ["restore", str(source)], target)
    assert code == 1
    assert "--force" in output
    assert await _titles(target) == ["there before"]

    code, output = await asyncio.to_thread(_here, ["restore", "--force", str(source)], target)
    assert code == 0, output
    assert await _titles(target) == ["kept"]


async def test_a_restore_into_an_empty_database_needs_no_force(
    source: Path, server_url: str
) -> None:
    name = f"restore_empty_{source.stat().st_ino}"
    target = await scratch.create_database(server_url, name)
    code, output = await asyncio.to_thread(_here, ["restore", str(source)], target)
    assert code == 0, output
    assert await _titles(target) == ["kept"]


def _member_json(backup: Path) -> dict[str, Any]:
    with tarfile.open(backup) as archive:
        manifest: dict[str, Any] = json.loads(archive.extractfile(MANIFEST).read())  # type: ignore[union-attr]
    return manifest


def _rewritten(
    source: Path, dest: Path, manifest: dict[str, Any] | None, dump: bytes | None
) -> Path:
    """A copy of the backup with its manifest or its dump replaced."""
    with tarfile.open(source) as archive:
        members = {name: archive.extractfile(name).read() for name in archive.getnames()}  # type: ignore[union-attr]
    if manifest is not None:
        members[MANIFEST] = json.dumps(manifest).encode()
    if dump is not None:
        members[DUMP] = dump
    with tarfile.open(dest, "w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return dest


async def test_a_restore_whose_dump_fails_midway_changes_nothing_even_with_force(
    source: Path, server_url: str, data_dir: Path, tmp_path: Path
) -> None:
    with tarfile.open(source) as archive:
        dump = archive.extractfile(DUMP).read()  # type: ignore[union-attr]
    # The dump's table of contents stays readable, its data does not.
    broken = _rewritten(source, tmp_path / "broken.backup", None, dump[: len(dump) // 2])
    target = await _migrated(server_url, data_dir)
    await _add_document(target, "there before")

    code, output = await asyncio.to_thread(_here, ["restore", "--force", str(broken)], target)
    assert code == 1, output
    assert await _titles(target) == ["there before"]


async def test_a_restore_refuses_a_backup_of_another_embedding_model_unless_told_to_reembed(
    source: Path, server_url: str, data_dir: Path, tmp_path: Path
) -> None:
    manifest = _member_json(source)
    manifest["embedding"] = {"provider": "openai", "model": "text-embedding-3-small", "dim": 1536}
    other = _rewritten(source, tmp_path / "other.backup", manifest, None)
    target = await _migrated(server_url, data_dir)
    await _add_document(target, "there before")

    code, output = await asyncio.to_thread(_here, ["restore", "--force", str(other)], target)
    assert code == 1
    assert "--reembed" in output
    assert await _titles(target) == ["there before"]

    code, output = await asyncio.to_thread(
        _here, ["restore", "--force", "--reembed", str(other)], target
    )
    assert code == 0, output
    assert "re-embedded" in output
    assert await _titles(target) == ["kept"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        (b"just some text, not an archive\n", "not a Corpus backup"),
        (b"", "not a Corpus backup"),
    ],
)
async def test_a_restore_refuses_what_is_not_a_backup_and_changes_nothing(
    content: bytes | None,
    expected: str,
    server_url: str,
    data_dir: Path,
    tmp_path: Path,
    quiet_data_dir: Path,
) -> None:
    path = tmp_path / "input"
    if content is not None:
        path.write_bytes(content)
    target = await _migrated(server_url, data_dir)
    await _add_document(target, "there before")
    code, output = await asyncio.to_thread(_here, ["restore", "--force", str(path)], target)
    assert code == 2
    assert expected in output
    assert await _titles(target) == ["there before"]


async def test_a_restore_refuses_a_backup_of_a_newer_schema(
    source: Path, server_url: str, data_dir: Path, tmp_path: Path
) -> None:
    manifest = _member_json(source)
    manifest["revision"] = "9999"
    newer = _rewritten(source, tmp_path / "newer.backup", manifest, None)
    target = await scratch.create_database(server_url, f"restore_newer_{tmp_path.stat().st_ino}")
    code, output = await asyncio.to_thread(_here, ["restore", str(newer)], target)
    assert code == 2
    assert "newer" in output
    assert await _rows(target, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == [
        (0,)
    ]


async def test_a_backup_never_overwrites_a_file(
    source: Path, server_url: str, data_dir: Path
) -> None:
    before = source.read_bytes()
    url = await _migrated(server_url, data_dir)
    code, output = await asyncio.to_thread(_here, ["backup", str(source)], url)
    assert code == 2
    assert "exists" in output
    assert source.read_bytes() == before
