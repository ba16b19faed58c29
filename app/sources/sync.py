"""A source's sync: what changed since the last one, written file by file (docs/adr/0035).

A sync compares the source as it is now (a folder's files and the sha256 of their bytes; a git
commit's tree and its blob ids) with what the last sync left (`source_documents`), so it reads
only the files that changed: a new file is added, a changed one updated, a deleted one's
document removed with its chunks, and a renamed one (`git diff -M` between the last synced
commit and the new one; in a folder, the same bytes under a new path) keeps its document with a
new path and a new version. Documents that did not come from this source are never read or
written. Each file is one transaction; one that fails to convert or index fails alone and is
reported, and is tried again at the next sync (its hash is not recorded).

Two processes never sync one source at once: the sync takes the source's lease in PostgreSQL
and renews it after every file; a process that dies leaves a lease that expires.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any
from uuid import UUID

from app.access.principal import LOCAL_ADMIN
from app.config import Settings
from app.db.engine import Database
from app.documents import service as documents_service
from app.documents.worker import Converter
from app.errors import AppError, Conflict, NotFound
from app.kit.secrets import SecretBox, new_token
from app.rag.embeddings.base import Embedder
from app.sources import files, git, queries, stale
from app.sources.schemas import RunTrigger, SourceRun

logger = logging.getLogger(__name__)

# A sync renews its lease after every file; one file (a large PDF through the model) takes well
# under this.
LEASE_S = 300.0

_INTERRUPTED = "the sync was interrupted"

Progress = Callable[[int, int, str], None]


def _no_progress(_done: int, _total: int, _label: str) -> None:
    return None


@dataclass
class _Report:
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("added", "updated", "removed", "unchanged", "failed"), 0
        )
    )
    failures: list[dict[str, str]] = field(default_factory=list)

    def fail(self, path: str, reason: str) -> None:
        self.counts["failed"] += 1
        self.failures.append({"path": path, "reason": reason})


@dataclass(frozen=True, slots=True)
class _Write:
    """A file to write: its path now, its hash, and the document it was before (if any)."""

    path: str
    file_hash: str
    document_id: UUID | None
    outcome: str


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """The source as it is now, and how to read one of its files."""

    files: dict[str, str]
    read: Callable[[str, str], Any]
    commit: str | None = None
    renames: dict[str, str] = field(default_factory=dict)
    mirror: Path | None = None
    reader: git.BlobReader | None = None


@dataclass(frozen=True)
class Syncer:
    """What a sync needs from the process."""

    db: Database
    embedder: Embedder
    settings: Settings
    converter: Converter
    box: SecretBox
    lease_s: float = LEASE_S

    async def sync(
        self, source_id: UUID, trigger: RunTrigger, progress: Progress = _no_progress
    ) -> SourceRun:
        """Sync the source now and return its run's report (and, when a push came in while it
        ran, sync again before returning).

        Raises:
            NotFound: no such source. Conflict: a sync of it is running (here or elsewhere).
        """
        run = await self._sync(source_id, trigger, progress, request=False)
        if run is None:
            raise Conflict("a sync of this source is running; see its runs")
        return run

    async def request(self, source_id: UUID, trigger: RunTrigger) -> SourceRun | None:
        """Sync the source now (a push's, the schedule's); when a sync of it is running, here or
        in another process, record that one is wanted instead, and its holder syncs again when
        it ends, so the push is never lost. None: recorded.

        Raises:
            NotFound: no such source.
        """
        return await self._sync(source_id, trigger, _no_progress, request=True)

    async def _sync(
        self, source_id: UUID, trigger: RunTrigger, progress: Progress, *, request: bool
    ) -> SourceRun | None:
        owner = new_token("sync_")
        async with self.db.write() as conn:
            row = await queries.get_source(conn, source_id)
            if row is None:
                raise NotFound("source not found")
            if not await queries.take_lease(conn, source_id, owner, self.lease_s, request=request):
                return None
            run_id = await queries.insert_run(conn, source_id, trigger)
        first = run_id
        while True:
            again = await self._one(row, owner, run_id, trigger, progress)
            if again is None:
                break
            row, run_id = again
        async with self.db.read() as conn:
            run = await queries.get_run(conn, first)
        assert run is not None
        return run

    async def _one(
        self,
        row: queries.SourceRow,
        owner: str,
        run_id: UUID,
        trigger: RunTrigger,
        progress: Progress,
    ) -> tuple[queries.SourceRow, UUID] | None:
        """One run under the lease; the source and the next run when one was requested while
        it ran."""
        report = _Report()
        try:
            commit = await self._run(row, owner, report, progress)
        except asyncio.CancelledError:
            await self._finish(
                row, owner, run_id, report, trigger=trigger, commit=None, error=_INTERRUPTED
            )
            raise
        except Exception as exc:
            # The run fails whole (the repository cannot be fetched, the folder is gone): say
            # why in its report. A driver's message could quote parameters, so only ours.
            reason = str(exc) if isinstance(exc, git.GitError | OSError | AppError) else None
            logger.warning("sync of source %s failed: %s", row.id, type(exc).__name__)
            return await self._finish(
                row,
                owner,
                run_id,
                report,
                trigger=trigger,
                commit=None,
                error=reason or f"the sync failed ({type(exc).__name__})",
            )
        return await self._finish(
            row, owner, run_id, report, trigger=trigger, commit=commit, error=None
        )

    async def forget(self, source_id: UUID) -> None:
        """Delete a removed source's git mirror (a later sync of a source by that id, which
        cannot happen, would fetch it again)."""
        await asyncio.to_thread(git.remove_mirror, self.settings.data_dir, source_id)

    async def _finish(
        self,
        row: queries.SourceRow,
        owner: str,
        run_id: UUID,
        report: _Report,
        *,
        trigger: RunTrigger,
        commit: str | None,
        error: str | None,
    ) -> tuple[queries.SourceRow, UUID] | None:
        """Record the run and end the sync (a run that succeeded also moves the source to its
        commit); when a sync was requested while it ran, keep the lease and start the next run
        in the same transaction."""
        async with self.db.write() as conn:
            await queries.finish_run(
                conn,
                run_id,
                status="succeeded" if error is None else "failed",
                commit=commit,
                counts=report.counts,
                failures=report.failures,
                error=error,
            )
            again = await queries.end_sync(
                conn,
                row.id,
                owner,
                seconds=self.lease_s,
                succeeded=error is None,
                last_commit=commit,
                # A process that stops hands the request on: the next sync takes it up.
                keep=error != _INTERRUPTED,
            )
            found = await queries.get_source(conn, row.id) if again else None
            if found is None:
                return None
            return found, await queries.insert_run(conn, row.id, trigger)

    async def _snapshot(self, row: queries.SourceRow) -> _Snapshot:
        if row.kind == "folder":
            root = Path(row.location)
            found = await asyncio.to_thread(files.folder_snapshot, root, row.include, row.exclude)

            async def read_file(path: str, _hash: str) -> bytes:
                return await asyncio.to_thread(files.read_folder_file, root, path)

            return _Snapshot(files=found, read=read_file)
        mirror = git.mirror_path(self.settings.data_dir, row.id)
        secret = None
        if row.secret_encrypted is not None:
            secret = self.box.open(row.secret_encrypted)
            if secret is None:
                raise git.GitError("the source's secret was sealed under another SECRET_KEY")
        commit = await git.fetch(mirror, row.location, row.branch, git.Access(secret))
        tree = await git.tree(mirror, commit)
        selected = {
            path: blob
            for path, blob in tree.items()
            if files.selected(path, row.include, row.exclude)
        }
        renames: dict[str, str] = {}
        last = row.last_commit
        if last is not None and last != commit and await git.has_commit(mirror, last):
            renames = await git.renames(mirror, last, commit)
        reader = git.BlobReader(mirror)

        async def read_blob(_path: str, blob: str) -> bytes:
            return await reader.read(blob)

        return _Snapshot(
            files=selected,
            read=read_blob,
            commit=commit,
            renames=renames,
            mirror=mirror,
            reader=reader,
        )

    async def _run(
        self, row: queries.SourceRow, owner: str, report: _Report, progress: Progress
    ) -> str | None:
        snapshot = await self._snapshot(row)
        try:
            return await self._apply(row, owner, snapshot, report, progress)
        finally:
            if snapshot.reader is not None:
                await snapshot.reader.aclose()

    async def _apply(
        self,
        row: queries.SourceRow,
        owner: str,
        snapshot: _Snapshot,
        report: _Report,
        progress: Progress,
    ) -> str | None:
        async with self.db.read() as conn:
            known = {synced.path: synced for synced in await queries.synced_files(conn, row.id)}
        current = snapshot.files
        gone = [path for path in known if path not in current]
        new = [path for path in current if path not in known]
        writes: list[_Write] = []
        # Renamed files keep their documents: git's pairing first (it sees edits too), then
        # the same bytes under a new path.
        by_hash = {current[path]: path for path in new}
        renamed: set[str] = set()
        for old in gone:
            target = snapshot.renames.get(old)
            if target is None or target not in new or target in renamed:
                target = by_hash.get(known[old].file_hash)
            if target is not None and target not in renamed:
                renamed.add(target)
                writes.append(_Write(target, current[target], known[old].document_id, "updated"))
        kept = {write.document_id for write in writes}
        removed = [path for path in gone if known[path].document_id not in kept]
        for path in new:
            if path not in renamed:
                writes.append(_Write(path, current[path], None, "added"))
        for path, synced in known.items():
            if path in current and current[path] != synced.file_hash:
                writes.append(_Write(path, current[path], synced.document_id, "updated"))
        report.counts["unchanged"] = sum(
            1 for path, synced in known.items() if current.get(path) == synced.file_hash
        )

        history = await self._history(row, snapshot, [w.path for w in writes])
        total = len(writes) + len(removed)
        done = 0
        for write in writes:
            await self._write(row, owner, snapshot, write, history, report)
            done += 1
            progress(done, total, write.path)
        for path in removed:
            async with self.db.write() as conn:
                # Deleted by someone since: gone either way.
                with contextlib.suppress(NotFound):
                    await documents_service.delete(conn, LOCAL_ADMIN, known[path].document_id)
                await queries.renew_lease(conn, row.id, owner, self.lease_s)
            report.counts["removed"] += 1
            done += 1
            progress(done, total, path)
        if snapshot.commit is not None and history is not None:
            await self._flag_unchanged(row, history, {w.path for w in writes})
        return snapshot.commit

    async def _history(
        self, row: queries.SourceRow, snapshot: _Snapshot, written: list[str]
    ) -> _History | None:
        """For git: each written file's last change, and the commits staleness reads."""
        if snapshot.commit is None or snapshot.mirror is None:
            return None
        mirror, commit = snapshot.mirror, snapshot.commit
        changes = await git.last_changes(mirror, commit, written)
        dates = [date for _sha, date in changes.values()]
        fresh: set[str] | None = None
        if row.last_commit and await git.has_commit(mirror, row.last_commit):
            fresh = await git.ancestors(mirror, commit, row.last_commit)
            if fresh:
                dates.append(await git.commit_date(mirror, row.last_commit))
        since = min(dates) - timedelta(seconds=1) if dates else None
        commits = await git.commits_since(mirror, commit, since) if dates else []
        return _History(changes=changes, commits=commits, fresh=fresh)

    def _is_document(self, row: queries.SourceRow) -> Callable[[str], bool]:
        return lambda path: files.selected(path, row.include, row.exclude)

    async def _write(
        self,
        row: queries.SourceRow,
        owner: str,
        snapshot: _Snapshot,
        write: _Write,
        history: _History | None,
        report: _Report,
    ) -> None:
        try:
            data = await snapshot.read(write.path, write.file_hash)
            converted = await documents_service.convert(
                LOCAL_ADMIN,
                self.settings,
                self.converter,
                documents_service.FileUpload(
                    data=data,
                    filename=PurePosixPath(write.path).name,
                    content_type=None,
                    workspace=row.workspace,
                    source=write.path,
                ),
            )
            commit, date = (None, None)
            if history is not None and write.path in history.changes:
                commit, date = history.changes[write.path]
            # In a thread: the names come from regular expressions over a file someone else
            # wrote, and the findings walk every later commit's changed lines.
            named, flags = await asyncio.to_thread(
                _judge, converted.document.content, history, commit, date, self._is_document(row)
            )
            async with self.db.write() as conn:
                document = await documents_service.write_synced(
                    conn,
                    LOCAL_ADMIN,
                    self.embedder,
                    self.settings,
                    document_id=write.document_id,
                    converted=converted,
                )
                await queries.write_link(
                    conn,
                    document_id=document.id,
                    source_id=row.id,
                    path=write.path,
                    file_hash=write.file_hash,
                    commit=commit,
                    commit_date=date,
                    names=named,
                    stale=flags,
                )
                await queries.renew_lease(conn, row.id, owner, self.lease_s)
        except (AppError, OSError, git.GitError, UnicodeError) as exc:
            report.fail(write.path, getattr(exc, "message", None) or str(exc))
            return
        report.counts[write.outcome] += 1

    async def _flag_unchanged(
        self, row: queries.SourceRow, history: _History, written: set[str]
    ) -> None:
        """Flag the documents this sync did not write when a new commit changed code they
        name (the written ones were judged against every commit after their own)."""
        if not history.fresh:
            return
        is_document = self._is_document(row)
        for commit in history.commits:
            if commit.sha not in history.fresh:
                continue
            paths, identifiers = stale.commit_names(commit, is_document)
            if not paths and not identifiers:
                continue
            async with self.db.write() as conn:
                # A document this sync did not write last changed at or before the last synced
                # commit, so every new commit comes after it.
                candidates = await queries.candidates_naming(
                    conn, row.id, sorted(paths | identifiers)
                )
                for candidate in candidates:
                    if candidate.path in written:
                        continue
                    if any(flag.get("commit") == commit.sha for flag in candidate.stale):
                        continue
                    found = stale.finding(commit, candidate.names, is_document)
                    if found is not None:
                        flags = sorted([*candidate.stale, found], key=lambda f: str(f["date"]))
                        await queries.set_stale(conn, candidate.document_id, flags)


def _judge(
    content: str,
    history: _History | None,
    commit: str | None,
    date: datetime | None,
    is_document: Callable[[str], bool],
) -> tuple[list[str], list[dict[str, Any]]]:
    """The code names a file's text mentions, and the later commits that changed them."""
    named = stale.names(content)
    if history is None:
        return named, []
    return named, stale.findings(history.commits, named, commit, date, is_document)


@dataclass(frozen=True, slots=True)
class _History:
    # Each written file's last change: path -> (commit, date).
    changes: dict[str, tuple[str, datetime]]
    # The commits after the oldest of those (and after the last synced commit), newest first.
    commits: list[git.Commit]
    # The commits new since the last sync; None on a first sync (or after a force push).
    fresh: set[str] | None


class Syncs:
    """The syncs this process runs in the background (a webhook's, the schedule's). A push that
    arrives while its source syncs, here or in another process, is recorded on the source, and
    the sync running it syncs again when it ends, so the newest commit is never left behind."""

    def __init__(self, syncer: Syncer) -> None:
        self.syncer = syncer
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, source_id: UUID, trigger: RunTrigger) -> None:
        task = asyncio.create_task(self._run(source_id, trigger), name=f"sync {source_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, source_id: UUID, trigger: RunTrigger) -> None:
        try:
            await self.syncer.request(source_id, trigger)
        except NotFound:
            pass  # it was removed
        except Exception as exc:
            logger.warning("sync of source %s failed: %s", source_id, type(exc).__name__)

    async def aclose(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
