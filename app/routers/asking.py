"""Asking: `POST /api/ask` streams a run's events (Server-Sent Events), chats keep the history,
and admins read the documentation gaps."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query, Response, status
from sse_starlette import EventSourceResponse, ServerSentEvent

from app.asking import service as asking_service
from app.asking.schemas import (
    EVENT_NAMES,
    AskRequest,
    Chat,
    ChatUpdate,
    ChatWithMessages,
    DoneEvent,
    ErrorEvent,
    ModeEvent,
    Step,
    TokenEvent,
)
from app.deps import (
    PRINCIPAL_ERRORS,
    AnsweringRun,
    AppResources,
    CurrentPrincipal,
    ReadConn,
    WriteConn,
)
from app.errors import Forbidden, NotFound, RateLimited, ValidationFailed
from app.schemas import Page, PlainText
from app.search import service as search_service
from app.search.schemas import Gaps

router = APIRouter(prefix="/api", tags=["asking"], responses=PRINCIPAL_ERRORS)

# The stream's events, each one `data:` line of JSON under its `event:` name; the union is
# the 200 reply's schema, so the typed web client knows every event's shape.
AskEvent = ModeEvent | Step | TokenEvent | DoneEvent | ErrorEvent


@router.post(
    "/ask",
    operation_id="ask",
    response_class=EventSourceResponse,
    # Returned as a response of its own, the stream is not validated against this: it
    # documents the events (`mode`, then `step` and `token`, then `done` or `error`).
    response_model=AskEvent,
    responses={
        200: {
            "description": "The run's events, as Server-Sent Events",
            # One Server-Sent Event: its name, and its data, one line of JSON of that
            # event's model (ModeEvent, Step, TokenEvent, DoneEvent, ErrorEvent).
            "content": {
                "text/event-stream": {
                    "schema": {
                        "type": "object",
                        "required": ["event", "data"],
                        "properties": {
                            "event": {"type": "string", "enum": list(EVENT_NAMES.values())},
                            "data": {
                                "type": "string",
                                "contentMediaType": "application/json",
                                "contentSchema": {
                                    "oneOf": [
                                        {"$ref": f"#/components/schemas/{event.__name__}"}
                                        for event in EVENT_NAMES
                                    ]
                                },
                            },
                        },
                    }
                }
            },
        },
        404: NotFound.openapi(),
        422: ValidationFailed.openapi(),
        429: RateLimited.openapi(),
    },
)
async def ask(
    request: AskRequest,
    principal: CurrentPrincipal,
    resources: AppResources,
    held: AnsweringRun,
) -> EventSourceResponse:
    """Ask a question: the answer streams as it is found, with its steps and citations."""
    asking = resources.asking()
    # Checked, and its chat's history read, before the stream starts: bad input is an HTTP
    # error. Each step of the run opens a short transaction of its own.
    question = await asking_service.prepare(asking, principal, request)
    run = await asking_service.ask_in_chat(asking, resources.jobs, principal, question, held=held)

    async def events() -> AsyncIterator[ServerSentEvent]:
        # sse-starlette cancels this when the client disconnects: that cancels a run the
        # stream holds, and leaves a chat's deep run going (ADR 0030).
        async for event in run:
            yield ServerSentEvent(data=event.model_dump_json(), event=EVENT_NAMES[type(event)])

    return EventSourceResponse(events(), ping=resources.settings.sse_ping_s)


@router.post(
    "/runs/{run_id}/cancel",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    operation_id="cancelRun",
    responses={404: NotFound.openapi()},
)
async def cancel_run(run_id: UUID, principal: CurrentPrincipal, resources: AppResources) -> None:
    """Stop one of your runs that goes on without its stream (a chat's deep run)."""
    await asking_service.cancel_run(resources.asking(), resources.jobs, principal, run_id)


@router.get("/chats", response_model=Page[Chat], operation_id="listChats")
async def list_chats(
    principal: CurrentPrincipal,
    conn: ReadConn,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
    q: Annotated[
        PlainText | None,
        Query(max_length=200, description="Only chats whose title contains this."),
    ] = None,
) -> Page[Chat]:
    """Your chats, the latest used first."""
    return await asking_service.list_chats(conn, principal, limit=limit, cursor=cursor, q=q)


@router.get(
    "/chats/{chat_id}",
    response_model=ChatWithMessages,
    operation_id="getChat",
    responses={404: NotFound.openapi()},
)
async def get_chat(chat_id: UUID, principal: CurrentPrincipal, conn: ReadConn) -> ChatWithMessages:
    """One of your chats, with its messages, citations and traces."""
    return await asking_service.get_chat(conn, principal, chat_id)


@router.patch(
    "/chats/{chat_id}",
    response_model=Chat,
    operation_id="updateChat",
    responses={404: NotFound.openapi(), 422: ValidationFailed.openapi()},
)
async def update_chat(
    chat_id: UUID, update: ChatUpdate, principal: CurrentPrincipal, conn: WriteConn
) -> Chat:
    """Rename one of your chats."""
    return await asking_service.rename_chat(conn, principal, chat_id, update)


@router.delete(
    "/chats/{chat_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    operation_id="deleteChat",
    responses={404: NotFound.openapi()},
)
async def delete_chat(chat_id: UUID, principal: CurrentPrincipal, conn: WriteConn) -> None:
    """Delete one of your chats."""
    await asking_service.delete_chat(conn, principal, chat_id)


@router.get(
    "/gaps",
    response_model=Gaps,
    operation_id="listGaps",
    responses={403: Forbidden.openapi()},
)
async def gaps(principal: CurrentPrincipal, conn: ReadConn, resources: AppResources) -> Gaps:
    """The documentation gaps: questions that found nothing, grouped by similar wording."""
    return await search_service.documentation_gaps(conn, principal, resources.embedder)
