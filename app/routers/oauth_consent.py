"""The person's side of OAuth: the consent an MCP client asks for (API.md, "OAuth"), and the
clients a person has connected (API.md, "People")."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, status

from app.deps import (
    PRINCIPAL_ERRORS,
    AppSettings,
    CurrentPrincipal,
    PrimaryReadConn,
    ReadConn,
    SessionPrincipal,
    WriteConn,
)
from app.errors import Forbidden, NotFound
from app.oauth import service as oauth
from app.oauth.schemas import ConnectionList, ConsentAnswer, ConsentRedirect, ConsentRequest

router = APIRouter(tags=["oauth"], responses=PRINCIPAL_ERRORS)


Tx = Annotated[str, Path(min_length=8, max_length=100)]
_ERRORS: dict[int | str, dict[str, Any]] = {403: Forbidden.openapi(), 404: NotFound.openapi()}


@router.get(
    "/api/oauth/consent/{tx}",
    response_model=ConsentRequest,
    operation_id="getConsent",
    responses=_ERRORS,
)
async def get_consent(
    tx: Tx,
    principal: CurrentPrincipal,
    conn: PrimaryReadConn,  # the transaction was stored by /authorize a moment ago
) -> ConsentRequest:
    """What an MCP client asks for: its name, where the answer goes, and what it could do."""
    return await oauth.consent_request(conn, principal, tx)


@router.post(
    "/api/oauth/consent/{tx}",
    response_model=ConsentRedirect,
    operation_id="answerConsent",
    responses=_ERRORS,
)
async def answer_consent(
    tx: Tx,
    answer: ConsentAnswer,
    principal: CurrentPrincipal,
    conn: WriteConn,
    settings: AppSettings,
) -> ConsentRedirect:
    """Approve or deny; the browser then goes to `redirect_to` (the client's redirect URI)."""
    redirect_to = await oauth.answer_consent(
        conn, principal, tx, approve=answer.approve, issuer=oauth.issuer_id(settings.public_url)
    )
    return ConsentRedirect(redirect_to=redirect_to)


@router.get(
    "/api/me/connections",
    response_model=ConnectionList,
    operation_id="listConnections",
    tags=["me"],
)
async def list_connections(principal: CurrentPrincipal, conn: ReadConn) -> ConnectionList:
    """The OAuth clients you have authorised."""
    return ConnectionList(items=await oauth.connections(conn, principal))


@router.delete(
    # `:path`: a metadata document client's id is a URL, slashes and all.
    "/api/me/connections/{client_id:path}",
    status_code=status.HTTP_204_NO_CONTENT,
    operation_id="deleteConnection",
    tags=["me"],
    responses={404: NotFound.openapi()},
)
async def delete_connection(
    client_id: Annotated[str, Path(max_length=2000)], principal: SessionPrincipal, conn: WriteConn
) -> None:
    """Disconnect a client, signed in with a session (not a key): its tokens stop working."""
    await oauth.disconnect(conn, principal, client_id)
