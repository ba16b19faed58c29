"""A small scripted model server on 127.0.0.1 that speaks the streaming wire formats of the
three providers (OpenAI-compatible chat completions, Anthropic messages, Gemini
streamGenerateContent): each request gets the next scripted reply, a tool call or text, sent
in several chunks as the real APIs stream them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass
class Turn:
    """One scripted reply: a tool call (`tool`, `args`) or text (`text`, in `chunks` pieces)."""

    text: str = ""
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class ScriptedServer:
    turns: list[Turn]
    requests: list[dict[str, Any]] = field(default_factory=list)
    # Reply from the request itself instead of in the scripted order (a model that reads what
    # the tools returned): called with each request's body.
    respond: Callable[[dict[str, Any]], Turn] | None = None
    headers: list[dict[str, str]] = field(default_factory=list)
    # Answer every request with this status and an error body instead (a bad key: 401).
    refuse: int | None = None
    # Answer nothing until `released` (a provider that hangs).
    hang: bool = False
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def _next(self, body: dict[str, Any], request: Request) -> Turn:
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if self.respond is not None:
            return self.respond(body)
        return self.turns.pop(0) if len(self.turns) > 1 else self.turns[0]

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._openai, methods=["POST"]),
                Route("/v1/messages", self._anthropic, methods=["POST"]),
                Route("/v1beta/models/{rest:path}", self._gemini, methods=["POST"]),
                Route("/v1/models/{rest:path}", self._gemini, methods=["POST"]),
            ]
        )

    async def _refusal(self) -> Response | None:
        if self.hang:
            await self.released.wait()
        if self.refuse is None:
            return None
        error = {
            "error": {
                "type": "authentication_error",
                "message": "invalid key",
                "code": 401,
                "status": "UNAUTHENTICATED",
            }
        }
        return JSONResponse(error, status_code=self.refuse)

    async def _openai(self, request: Request) -> Response:
        refused = await self._refusal()
        if refused is not None:
            return refused
        turn = self._next(await request.json(), request)

        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            body = {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "scripted",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(body)}\n\n"

        async def stream() -> AsyncIterator[str]:
            if turn.tool:
                arguments = json.dumps(turn.args)
                half = len(arguments) // 2
                yield chunk(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": turn.tool, "arguments": arguments[:half]},
                            }
                        ],
                    }
                )
                yield chunk(
                    {"tool_calls": [{"index": 0, "function": {"arguments": arguments[half:]}}]}
                )
                yield chunk({}, "tool_calls")
            else:
                yield chunk({"role": "assistant", "content": ""})
                for piece in _pieces(turn.text):
                    yield chunk({"content": piece})
                yield chunk({}, "stop")
            yield "data: [DONE]\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def _anthropic(self, request: Request) -> Response:
        refused = await self._refusal()
        if refused is not None:
            return refused
        turn = self._next(await request.json(), request)

        def event(name: str, data: dict[str, Any]) -> str:
            return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"

        async def stream() -> AsyncIterator[str]:
            yield event(
                "message_start",
                {
                    "message": {
                        "id": "msg_1",
                        "type": "message",
                        "role": "assistant",
                        "content": [],
                        "model": "scripted",
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 1, "output_tokens": 1},
                    }
                },
            )
            if turn.tool:
                yield event(
                    "content_block_start",
                    {
                        "index": 0,
                        "content_block": {
                            "type": "tool_use",
                            "id": "toolu_1",
                            "name": turn.tool,
                            "input": {},
                        },
                    },
                )
                yield event(
                    "content_block_delta",
                    {
                        "index": 0,
                        "delta": {
                            "type": "input_json_delta",
                            "partial_json": json.dumps(turn.args),
                        },
                    },
                )
                stop = "tool_use"
            else:
                yield event(
                    "content_block_start",
                    {"index": 0, "content_block": {"type": "text", "text": ""}},
                )
                for piece in _pieces(turn.text):
                    yield event(
                        "content_block_delta",
                        {"index": 0, "delta": {"type": "text_delta", "text": piece}},
                    )
                stop = "end_turn"
            yield event("content_block_stop", {"index": 0})
            yield event(
                "message_delta",
                {
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            )
            yield event("message_stop", {})

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def _gemini(self, request: Request) -> Response:
        refused = await self._refusal()
        if refused is not None:
            return refused
        turn = self._next(await request.json(), request)

        def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> str:
            candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
            if finish:
                candidate["finishReason"] = finish
            return f"data: {json.dumps({'candidates': [candidate]})}\n\n"

        async def stream() -> AsyncIterator[str]:
            if turn.tool:
                yield chunk([{"functionCall": {"name": turn.tool, "args": turn.args}}], "STOP")
            else:
                pieces = _pieces(turn.text)
                for i, piece in enumerate(pieces):
                    yield chunk([{"text": piece}], "STOP" if i == len(pieces) - 1 else None)

        return StreamingResponse(stream(), media_type="text/event-stream")


def _pieces(text: str) -> list[str]:
    words = text.split(" ")
    return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
