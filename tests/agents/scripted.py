"""A scripted chat model: the one thing faked, at the model boundary. Each call hands the
messages (and the names of the tools offered) to a responder that returns the reply; the reply
streams word by word, then its tool calls, as a provider's stream would."""

from __future__ import annotations

import inspect
import json
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field


@dataclass
class Call:
    """One model call as the model saw it."""

    messages: list[BaseMessage]
    tools: list[str]

    @property
    def system(self) -> str:
        first = self.messages[0] if self.messages else None
        return str(first.content) if isinstance(first, SystemMessage) else ""

    @property
    def tool_results(self) -> list[str]:
        return [str(m.content) for m in self.messages if isinstance(m, ToolMessage)]

    def keys(self) -> list[int]:
        """The citation keys the tools have handed this conversation so far."""
        found: list[int] = []
        for result in self.tool_results:
            for key in re.findall(r"^\[(\d+)\]", result, flags=re.MULTILINE):
                if int(key) not in found:
                    found.append(int(key))
        return found


Reply = AIMessage | BaseException
Responder = Callable[[Call], Reply | Awaitable[Reply]]


def tool_call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "tool_call"}


def calling(*calls: dict[str, Any], text: str = "") -> AIMessage:
    return AIMessage(content=text, tool_calls=list(calls))


def in_order(*replies: Reply) -> Responder:
    """The replies in turn; the last one again once they run out."""
    queue = list(replies)

    def respond(_call: Call) -> Reply:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return respond


class ScriptedChatModel(BaseChatModel):
    respond: Any  # Responder
    offered: list[str] = Field(default_factory=list)
    calls: list[Call] = Field(default_factory=list)
    # Awaited after the first token of each streamed reply (a test holds the stream there).
    after_first_token: Any = None

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **_kwargs: Any) -> ScriptedChatModel:
        names = [t["function"]["name"] if isinstance(t, dict) else str(t) for t in tools]
        # A shallow copy: the record of calls stays shared.
        return self.model_copy(update={"offered": names})

    async def _reply(self, messages: list[BaseMessage]) -> AIMessage:
        call = Call(messages=list(messages), tools=list(self.offered))
        self.calls.append(call)
        reply = self.respond(call)
        if inspect.isawaitable(reply):
            reply = await reply
        if isinstance(reply, BaseException):
            raise reply
        assert isinstance(reply, AIMessage)
        return reply

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise NotImplementedError("the agents call models asynchronously")

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=await self._reply(messages))])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        reply = await self._reply(messages)
        words = re.split(r"(\s+)", str(reply.content)) if reply.content else []
        for i, word in enumerate(w for w in words if w):
            yield ChatGenerationChunk(message=AIMessageChunk(content=word))
            if i == 0 and self.after_first_token is not None:
                await self.after_first_token()
        if reply.tool_calls:
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        {
                            "name": tc["name"],
                            "args": json.dumps(tc["args"]),
                            "id": tc["id"],
                            "index": i,
                            "type": "tool_call_chunk",
                        }
                        for i, tc in enumerate(reply.tool_calls)
                    ],
                )
            )


@dataclass
class ScriptedModels:
    """The run's models: the scripted one in every role."""

    model: ScriptedChatModel
    provider: str = "scripted"
    roles: list[str] = field(default_factory=list)

    def chat(self, role: str) -> BaseChatModel | None:
        self.roles.append(role)
        return self.model


def scripted(respond: Responder, **options: Any) -> ScriptedModels:
    return ScriptedModels(ScriptedChatModel(respond=respond, **options))
