"""A git repository read through the distribution's `git` command (docs/adr/0035): a bare
mirror per source in the data folder, fetched at each sync; its tree, its renames, its blobs, and
the commits of its history."""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

# Transports a source may use: never `ext::` (it runs a command) or `fd::`.
_PROTOCOLS = "file:git:http:https:ssh"
# A step of a sync that takes longer is stuck (a server that stopped answering).
TIMEOUT_S = 600.0


class GitError(Exception):
    """A git command failed; the message is git's own last lines (no secret is in them: the
    token travels in the environment)."""


@dataclass(frozen=True, slots=True)
class Access:
    """How to reach the repository: a token for HTTPS, or a deploy key for SSH."""

    secret: str | None = None

    @property
    def is_key(self) -> bool:
        return self.secret is not None and self.secret.lstrip().startswith("-----BEGIN")


def _base_env() -> dict[str, str]:
    # Not settings: what any child process inherits, narrowed to what git needs to run.
    inherited = os.environ  # noqa: TID251  # the child's PATH and HOME, not configuration
    keep = {k: v for k, v in inherited.items() if k in {"PATH", "HOME", "LANG", "TMPDIR"}}
    return keep | {
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ALLOW_PROTOCOL": _PROTOCOLS,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_ASKPASS": "/bin/false",
        "SSH_ASKPASS": "/bin/false",
    }


@asynccontextmanager
async def _access_env(access: Access) -> AsyncIterator[dict[str, str]]:
    env = _base_env()
    if access.secret is None:
        yield env
        return
    if not access.is_key:
        # In the environment, not the command line: another user's `ps` must not see it.
        basic = base64.b64encode(f"x-access-token:{access.secret}".encode()).decode()
        env |= {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "http.extraHeader",
            "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
        }
        yield env
        return
    with tempfile.TemporaryDirectory(prefix="corpus-key-") as folder:
        key = Path(folder) / "key"
        key.touch(mode=0o600)
        key.write_text(access.secret.strip() + "\n")
        env["GIT_SSH_COMMAND"] = (
            f"ssh -i {key} -o IdentitiesOnly=yes -o BatchMode=yes "
            "-o StrictHostKeyChecking=accept-new"
        )
        yield env


async def _git(*args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> bytes:
    process = await asyncio.create_subprocess_exec(
        "git",
        *args,
        cwd=cwd,
        env=dict(env) if env is not None else _base_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise GitError(f"git {args[0]} took over {TIMEOUT_S:.0f} s") from None
    if process.returncode != 0:
        lines = err.decode(errors="replace").strip().splitlines()
        raise GitError(" ".join(lines[-3:]) or f"git {args[0]} failed")
    return out


def mirror_path(data_dir: Path, source_id: object) -> Path:
    return data_dir / "sources" / f"{source_id}.git"


def remove_mirror(data_dir: Path, source_id: object) -> None:
    """Delete a removed source's mirror (nothing when there is none)."""
    shutil.rmtree(mirror_path(data_dir, source_id), ignore_errors=True)


async def fetch(mirror: Path, location: str, branch: str | None, access: Access) -> str:
    """Fetch the branch (or the default branch) into the mirror; returns its commit.

    Raises:
        GitError: the repository or branch cannot be read.
    """
    if not (mirror / "HEAD").exists():
        mirror.parent.mkdir(parents=True, exist_ok=True)
        await _git("init", "--bare", "--quiet", str(mirror))
    ref = f"refs/heads/{branch}" if branch else "HEAD"
    async with _access_env(access) as env:
        await _git(
            "fetch", "--quiet", "--no-tags", "--", location, f"+{ref}:refs/corpus/synced",
            cwd=mirror, env=env,
        )  # fmt: skip
    return (await _git("rev-parse", "refs/corpus/synced^{commit}", cwd=mirror)).decode().strip()


async def has_commit(mirror: Path, commit: str) -> bool:
    try:
        await _git("cat-file", "-e", f"{commit}^{{commit}}", cwd=mirror)
    except GitError:
        return False
    return True


async def tree(mirror: Path, commit: str) -> dict[str, str]:
    """Every file of the commit's tree: its path and blob id."""
    out = await _git("ls-tree", "-r", "-z", "--full-tree", commit, cwd=mirror)
    files: dict[str, str] = {}
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, kind, blob = meta.split(b" ")
        # Links and submodules are not files of this repository.
        if kind == b"blob" and mode != b"120000":
            files[path.decode(errors="surrogateescape")] = blob.decode()
    return files


async def renames(mirror: Path, old: str, new: str) -> dict[str, str]:
    """The files renamed between two commits (with or without edits): old path -> new path."""
    out = await _git("diff", "--name-status", "-M", "-z", "-l0", old, new, cwd=mirror)
    fields = out.split(b"\0")
    found: dict[str, str] = {}
    at = 0
    while at < len(fields) and fields[at]:
        status = fields[at].decode()
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                found[fields[at + 1].decode()] = fields[at + 2].decode()
            at += 3
        else:
            at += 2
    return found


class BlobReader:
    """Blobs read through one `git cat-file --batch` process, not one process a file."""

    def __init__(self, mirror: Path) -> None:
        self._mirror = mirror
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()

    async def read(self, blob: str) -> bytes:
        async with self._lock:
            if self._process is None:
                self._process = await asyncio.create_subprocess_exec(
                    "git", "cat-file", "--batch", cwd=self._mirror, env=_base_env(),
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                )  # fmt: skip
            process = self._process
            assert process.stdin is not None
            assert process.stdout is not None
            process.stdin.write(blob.encode() + b"\n")
            await process.stdin.drain()
            header = (await process.stdout.readline()).decode().split()
            if len(header) != 3:
                raise GitError(f"blob {blob} is missing")
            data = await process.stdout.readexactly(int(header[2]) + 1)
            return data[:-1]

    async def aclose(self) -> None:
        if self._process is not None:
            if self._process.stdin is not None:
                self._process.stdin.close()
            await self._process.wait()
            self._process = None


@dataclass(frozen=True, slots=True)
class Commit:
    """A commit as staleness reads it: when, which files it changed, and the identifiers on
    the lines it added or removed in them."""

    sha: str
    date: datetime
    # Each changed file's path and the lines the commit added or removed there.
    changes: dict[str, list[str]] = field(default_factory=dict)
    # The paths it deleted (a rename, read without rename detection, deletes the old path).
    deleted: set[str] = field(default_factory=set)


_MARK = "\x1e"


async def last_changes(
    mirror: Path, commit: str, paths: Iterable[str]
) -> dict[str, tuple[str, datetime]]:
    """The commit (and its date) that last changed each of `paths` at `commit`: one walk of
    the history, newest first, that stops once every path is found."""
    wanted = set(paths)
    found: dict[str, tuple[str, datetime]] = {}
    if not wanted:
        return found
    process = await asyncio.create_subprocess_exec(
        "git", "log", "--no-merges", "--name-only", "-z", f"--format={_MARK}%H %cI", commit,
        cwd=mirror, env=_base_env(),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, limit=2**24,
    )  # fmt: skip
    assert process.stdout is not None
    current: tuple[str, datetime] | None = None
    buffer = b""
    try:
        while wanted:
            chunk = await process.stdout.read(1 << 16)
            if not chunk:
                break
            buffer += chunk
            *complete, buffer = buffer.split(b"\0")
            for token in complete:
                text = token.decode(errors="surrogateescape").lstrip("\n")
                if text.startswith(_MARK):
                    # "<mark>sha date\n" possibly followed by the first path
                    head, _, rest = text[1:].partition("\n")
                    sha, _, date = head.partition(" ")
                    current = (sha, datetime.fromisoformat(date))
                    text = rest
                if text and current is not None and text in wanted:
                    found[text] = current
                    wanted.discard(text)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    return found


async def commits_since(mirror: Path, commit: str, since: datetime | None) -> list[Commit]:
    """The commits reachable from `commit` (newer than `since` when given), newest first in
    topological order (a commit before its parents), each with the files it changed and its
    changed lines (zero lines of context)."""
    args = ["log", "--topo-order", "--no-merges", "-p", "-U0", "--no-color", "--no-ext-diff",
            "--no-renames",
            f"--format={_MARK}%H %cI", commit]  # fmt: skip
    if since is not None:
        args.append(f"--since={since.isoformat()}")
    out = (await _git(*args, cwd=mirror)).decode(errors="replace")
    commits: list[Commit] = []
    for block in out.split(_MARK)[1:]:
        head, _, body = block.partition("\n")
        sha, _, date = head.partition(" ")
        current = Commit(sha=sha, date=datetime.fromisoformat(date))
        lines: list[str] = []
        old_path = ""
        for line in body.splitlines():
            if line.startswith("diff --git "):
                lines, old_path = [], ""
            elif line.startswith("--- a/"):
                old_path = line[6:]
                lines = current.changes.setdefault(old_path, [])
            elif line.startswith("+++ /dev/null"):
                current.deleted.add(old_path)
            elif line.startswith("+++ b/"):
                # A new file has no old path; a renamed one is known by its new one.
                lines = current.changes.setdefault(line[6:], lines)
            elif line.startswith("--- /dev/null"):
                continue
            elif line[:1] in {"+", "-"}:
                lines.append(line[1:])
        commits.append(current)
    return commits


async def commit_date(mirror: Path, commit: str) -> datetime:
    out = await _git("show", "-s", "--format=%cI", commit, cwd=mirror)
    return datetime.fromisoformat(out.decode().strip())


async def ancestors(mirror: Path, new: str, old: str) -> set[str]:
    """The commits reachable from `new` but not from `old`."""
    out = await _git("rev-list", f"{old}..{new}", cwd=mirror)
    return set(out.decode().split())
