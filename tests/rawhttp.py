"""HTTP/1.1 by hand, for what a well-behaved client library will not send: a declared length
with no body behind it, a chunked body that goes on until the server answers, raw bytes in a
path."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# Long enough for a slow machine; a server that waits for a body never sent fails here.
ANSWER_TIMEOUT_S = 20.0


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    # Request body bytes handed to the socket before the answer came, of `total` (streamed
    # requests only).
    sent: int = 0
    total: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.body)


async def _read_answer(reader: asyncio.StreamReader) -> Answer:
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    for line in lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await reader.readexactly(length)
    return Answer(status=int(status_line.split()[1]), headers=headers, body=body)


def _head(method: str, target: str, host: str, headers: dict[str, str]) -> bytes:
    lines = [
        f"{method} {target} HTTP/1.1",
        f"Host: {host}",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def send_head(
    base_url: str, method: str, target: str, headers: dict[str, str], body: bytes = b""
) -> Answer:
    """Send a request head (and `body`, if any) as given, and read the answer. `target` goes on
    the request line unchanged, so it may carry bytes a URL library would refuse or rewrite."""
    netloc = urlsplit(base_url).netloc
    host, port = netloc.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(_head(method, target, netloc, headers) + body)
        await writer.drain()
        return await asyncio.wait_for(_read_answer(reader), ANSWER_TIMEOUT_S)
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def stream_until_answered(
    base_url: str,
    method: str,
    path: str,
    headers: dict[str, str],
    *,
    first: bytes,
    filler: bytes,
    cap: int,
    last: bytes = b"",
) -> Answer:
    """Send a chunked body — `first`, then `filler` again and again up to `cap` bytes, then
    `last` — while waiting for the answer; stop sending as soon as it comes or the server
    closes. `Answer.sent` says how much of the body was handed over by then."""
    netloc = urlsplit(base_url).netloc
    host, port = netloc.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    answer = asyncio.create_task(_read_answer(reader))
    sent = 0

    def chunk(data: bytes) -> bytes:
        return f"{len(data):x}\r\n".encode() + data + b"\r\n"

    try:
        writer.write(_head(method, path, netloc, {**headers, "Transfer-Encoding": "chunked"}))
        pieces = [first]
        while sent + len(first) + len(filler) * len(pieces) < cap:
            pieces.append(filler)
        for piece in [*pieces, last, b""]:
            if answer.done():
                break
            writer.write(chunk(piece) if piece else b"0\r\n\r\n")
            draining = asyncio.ensure_future(writer.drain())
            await asyncio.wait({draining, answer}, return_when=asyncio.FIRST_COMPLETED)
            if not draining.done():
                draining.cancel()
                break
            if draining.exception() is not None:
                break  # the server closed the connection: the answer is on its way
            sent += len(piece)
        result = await asyncio.wait_for(answer, ANSWER_TIMEOUT_S)
        result.sent = sent
        result.total = sum(len(piece) for piece in [*pieces, last])
        return result
    finally:
        answer.cancel()
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
