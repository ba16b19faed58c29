"""Stand-ins for the embedding tests: a scripted provider API, and a sleep that only records.

The server speaks just enough HTTP/1.1 for httpx and google-genai, on 127.0.0.1 and on the
test's own event loop (asyncio streams: no thread, no startup wait). Queued replies are used
first, in order, then the handler answers from the request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # the parsed JSON body, or None


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None
    drop: bool = False  # close the connection without answering (a network failure)
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Request], Reply]


def _unscripted(request: Request) -> Reply:
    return Reply(500, {"error": {"message": f"no script for {request.method} {request.path}"}})


@dataclass
class ScriptedServer:
    handler: Handler = _unscripted
    requests: list[Request] = field(default_factory=list)
    _queue: deque[Reply] = field(default_factory=deque)
    _server: asyncio.Server | None = None
    _connections: dict[asyncio.Task[None], asyncio.StreamWriter] = field(default_factory=dict)

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    def enqueue(self, *replies: Reply) -> None:
        """Answer the next requests with `replies`, in order, before the handler."""
        self._queue.extend(replies)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        # Closing a connection ends its handler (its reader sees the end of the stream); a
        # cancelled handler would make asyncio log an error instead.
        for writer in self._connections.values():
            writer.close()
        await asyncio.gather(*self._connections)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        try:
            while request := await self._read(reader):
                self.requests.append(request)
                reply = self._queue.popleft() if self._queue else self.handler(request)
                if reply.drop:
                    break
                body = json.dumps(reply.body).encode()
                head = (
                    f"HTTP/1.1 {reply.status} {HTTPStatus(reply.status).phrase}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                    + "".join(f"{name}: {value}\r\n" for name, value in reply.headers.items())
                    + "\r\n"
                )
                writer.write(head.encode() + body)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._connections.pop(task, None)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    @staticmethod
    async def _read(reader: asyncio.StreamReader) -> Request | None:
        line = await reader.readline()
        if not line.strip():
            return None
        method, path, _ = line.decode().split(" ", 2)
        headers: dict[str, str] = {}
        while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = header.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        return Request(method, path, headers, json.loads(raw) if raw else None)


class SleepRecorder:
    """Stands in for asyncio.sleep: retries back off without the test waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
