"""File conversion in worker processes of their own, so that no upload can stall the server.

Converting a file is CPU-bound library code (pypdf, markdownify, python-docx) fed by strangers:
in the server's process it would block the event loop and could take all its memory. Each
conversion therefore runs in a worker process: a fresh interpreter, exec'd (never a fork that
goes on running the server's code, threads and all), that caps its own address space
(CORPUS_CONVERT_MEMORY_MB) and imports only the converters. The parent gives each file a
wall-clock deadline (CORPUS_CONVERT_TIMEOUT_S) and kills the worker when it passes; at most
CORPUS_CONVERT_WORKERS conversions run at once.

Workers are pooled (starting an interpreter and importing the converters costs about half a
second, a round trip to a warm worker well under a millisecond): a worker serves one file at a
time, and one that is killed, crashes or runs out of memory is replaced by a fresh one when next
needed. The pool is a long-lived resource: the lifespan (or the CLI's ingest) owns it and closes
it, killing its workers.

A small Markdown or plain-text file is the exception: converting it is our own decoding and
normalising (`convert.is_text_type`), no parsing library, linear in a size bounded by
IN_PROCESS_MAX_BYTES, so it is converted in a thread of this process. A folder walk is mostly
such files, and each round trip to a worker cost more CPU than the conversion itself (a worker
process and the pipe's copies: 1.3 core-seconds for 1,000 SciFact abstracts on two cores that
the local model needs, issue #33).

The protocol on the worker's stdin and stdout is length-prefixed JSON (the reply is JSON, not a
pickle, so that a worker subverted by its input cannot run code in the server):
request `{filename, content_type, size}` then `size` bytes; reply `{"ok": {...}}` or
`{"error": {"code", "message", "details"}}`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import resource
import struct
import sys
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from app.config import Settings
from app.documents.convert import Converted, Limits, is_text_type, to_markdown
from app.errors import (
    AppError,
    TooLarge,
    Unavailable,
    UnsupportedMediaType,
    ValidationFailed,
)
from app.observe import metrics

logger = logging.getLogger(__name__)

_LENGTH = struct.Struct(">Q")
# The folder holding the `app` package, the worker's working directory (so `-m` finds it).
_ROOT = Path(__file__).resolve().parents[2]
_READY = {"ready": True}
# The largest text file converted in this process: its decoded string, at most four bytes a
# character, stays a few megabytes; a larger one goes to a worker and its memory cap.
IN_PROCESS_MAX_BYTES = 1024 * 1024
_START_TIMEOUT_S = 60
_ERRORS: dict[str, type[AppError]] = {
    error.code: error for error in (TooLarge, UnsupportedMediaType, ValidationFailed)
}


class Converter:
    """A bounded pool of conversion workers (see the module's docstring)."""

    def __init__(self, settings: Settings) -> None:
        self._limits = Limits.from_settings(settings)
        self._timeout_s = settings.convert_timeout_s
        self._memory_mb = settings.convert_memory_mb
        # JSON escapes a character in at most 12 bytes (a surrogate pair); plus the title.
        self._max_reply = 12 * settings.max_document_chars + 64 * 1024
        self._slots = asyncio.Semaphore(settings.convert_workers)
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._closed = False

    async def to_markdown(
        self, data: bytes, *, filename: str | None, content_type: str | None
    ) -> Converted:
        """`app.documents.convert.to_markdown` in a worker, within the deadline.

        Raises:
            UnsupportedMediaType, ValidationFailed, TooLarge: as `to_markdown`; TooLarge also
            when the conversion overruns the deadline or the memory cap.
        """
        if len(data) <= IN_PROCESS_MAX_BYTES and is_text_type(filename, content_type):
            return await asyncio.to_thread(
                to_markdown,
                data,
                filename=filename,
                content_type=content_type,
                limits=self._limits,
            )
        async with self._slots:
            if self._closed:
                raise RuntimeError("the converter is closed")
            worker = self._idle.pop() if self._idle else await self._start()
            self._busy.add(worker)
            healthy = False
            try:
                async with asyncio.timeout(self._timeout_s):
                    reply = await worker.convert(data, filename, content_type, self._max_reply)
                # A worker that ran out of memory exits after its reply: a fresh one follows.
                healthy = worker.alive and reply.get("error", {}).get("code") != "memory"
            except TimeoutError:
                metrics.conversion_failed("timeout")
                raise TooLarge(
                    f"file: converting it took longer than {self._timeout_s:g} s "
                    "(CORPUS_CONVERT_TIMEOUT_S)"
                ) from None
            except (asyncio.IncompleteReadError, ConnectionError, ValueError) as exc:
                # The worker died under the file: out of memory (the cap makes allocation fail,
                # which usually comes back as a reply, but not always) or a crash in C code.
                metrics.conversion_failed("crashed")
                raise ValidationFailed(
                    f"file: the converter stopped on this file (it may need more than "
                    f"{self._memory_mb} MB, CORPUS_CONVERT_MEMORY_MB)"
                ) from exc
            finally:
                self._busy.discard(worker)
                if healthy and not self._closed:
                    self._idle.append(worker)
                else:
                    # A worker cut off mid-file (deadline, cancelled request, crash) is killed,
                    # never left running or reused.
                    await worker.kill()
        return _result(reply, self._memory_mb)

    async def aclose(self) -> None:
        """Kill every worker, idle or busy."""
        self._closed = True
        workers = [*self._idle, *self._busy]
        self._idle.clear()
        await asyncio.gather(*(worker.kill() for worker in workers))

    async def _start(self) -> _Worker:
        return await _Worker.start(self._limits, self._memory_mb, self._timeout_s)


def _result(reply: dict[str, Any], memory_mb: int) -> Converted:
    if "ok" in reply:
        ok = reply["ok"]
        starts = ok.pop("page_starts", None)  # JSON made the tuple a list
        return Converted(**ok, page_starts=None if starts is None else tuple(starts))
    error = reply["error"]
    metrics.conversion_failed(str(error["code"]))
    if error["code"] == "memory":
        raise TooLarge(
            f"file: converting it needs more than {memory_mb} MB of memory "
            "(CORPUS_CONVERT_MEMORY_MB)"
        )
    kind = _ERRORS.get(error["code"], ValidationFailed)
    raise kind(error["message"], details=error.get("details"))


class _Worker:
    """One worker process and its pipes."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process

    @classmethod
    async def start(cls, limits: Limits, memory_mb: int, timeout_s: float) -> _Worker:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "app.documents.worker",
            json.dumps({"limits": asdict(limits), "memory_mb": memory_mb, "timeout_s": timeout_s}),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=_ROOT,
            # None of the server's environment (its secrets) reaches code that parses
            # strangers' files; a session of its own keeps a terminal's Ctrl-C for the server,
            # which then closes the pool.
            env={},
            start_new_session=True,
        )
        worker = cls(process)
        # The worker says it is ready once it has imported the converters, so that their
        # import (about half a second) never counts against a file's deadline.
        try:
            async with asyncio.timeout(_START_TIMEOUT_S):
                ready = await worker._read()
            if ready != _READY:
                raise ValueError(f"a conversion worker started with {ready!r}")
        except BaseException as exc:
            # Cancelled too: a worker nobody holds would wait on its stdin until shutdown.
            await worker.kill()
            if isinstance(exc, TimeoutError | asyncio.IncompleteReadError | ValueError):
                raise Unavailable("the file converter could not start; the log has why") from exc
            raise
        return worker

    @property
    def alive(self) -> bool:
        return self._process.returncode is None

    async def convert(
        self, data: bytes, filename: str | None, content_type: str | None, max_reply: int
    ) -> dict[str, Any]:
        stdin = self._process.stdin
        assert stdin is not None
        _write(stdin, {"filename": filename, "content_type": content_type, "size": len(data)})
        stdin.write(data)
        await stdin.drain()
        return await self._read(max_reply)

    async def _read(self, max_bytes: int = 4096) -> dict[str, Any]:
        stdout = self._process.stdout
        assert stdout is not None
        (size,) = _LENGTH.unpack(await stdout.readexactly(_LENGTH.size))
        if size > max_bytes:
            # Not a reply our worker writes (its Markdown is within the character limit):
            # never buffer what a subverted worker claims.
            raise ConnectionError(f"a conversion worker announced a {size}-byte reply")
        message: dict[str, Any] = json.loads(await stdout.readexactly(size))
        return message

    async def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._process.kill()
        await self._process.wait()


def _write(stream: asyncio.StreamWriter | IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    stream.write(_LENGTH.pack(len(body)) + body)


# --- the worker's side ----------------------------------------------------------------------


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _cap(limit: int, value: int, *, for_good: bool = False) -> None:
    """Lower a resource's soft limit to `value` (and its hard limit too, `for_good`), within
    whatever hard limit the process was given."""
    _soft, hard = resource.getrlimit(limit)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(limit, (value, value if for_good else hard))


def _serve(config: dict[str, Any]) -> None:
    """Convert files from stdin until it closes (the parent went away)."""
    _cap(resource.RLIMIT_AS, config["memory_mb"] * 1024 * 1024, for_good=True)
    limits = Limits(**config["limits"])
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    # Nothing but replies may reach stdout; libraries' warnings and logs go to stderr, quietly.
    sys.stdout = sys.stderr
    warnings.simplefilter("ignore")
    logging.basicConfig(level=logging.ERROR)
    _write(replies, _READY)
    replies.flush()
    while True:
        head = _read_exactly(requests, _LENGTH.size)
        if head is None:
            return
        body = _read_exactly(requests, _LENGTH.unpack(head)[0])
        request = json.loads(body) if body is not None else None
        data = _read_exactly(requests, request["size"]) if request is not None else None
        if request is None or data is None:
            return
        exhausted = False
        # A backstop for the parent's deadline, should the parent die mid-file: the kernel
        # stops a worker that spends more CPU than the deadline on one file.
        used = resource.getrusage(resource.RUSAGE_SELF)
        spent = int(used.ru_utime + used.ru_stime)
        _cap(resource.RLIMIT_CPU, spent + int(config["timeout_s"]) + 2)
        try:
            converted = to_markdown(
                data,
                filename=request["filename"],
                content_type=request["content_type"],
                limits=limits,
            )
            reply: dict[str, Any] = {"ok": asdict(converted)}
        except AppError as exc:
            reply = {"error": {"code": exc.code, "message": exc.message, "details": exc.details}}
        except MemoryError:
            exhausted = True
            reply = {"error": {"code": "memory", "message": ""}}
        except RecursionError:
            reply = {"error": {"code": "validation_error", "message": "file: nested too deeply"}}
        # An uploaded file can make a converter fail in ways nobody listed; to the uploader
        # that is an unreadable file, and the log keeps the cause.
        except Exception as exc:
            logger.exception("conversion failed", exc_info=exc)
            reply = {"error": {"code": "validation_error", "message": "file: could not read it"}}
        del data
        _write(replies, reply)
        replies.flush()
        if exhausted:
            # The heap may be left fragmented near the cap: a fresh worker takes the next file.
            return


if __name__ == "__main__":
    _serve(json.loads(sys.argv[1]))
