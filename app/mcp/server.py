"""The MCP server: stateless streamable HTTP at /mcp with JSON replies, authenticated through
our authorization server (OAuth access tokens) and our API keys, plus the SDK's OAuth routes
(RFC 8414 and RFC 9728 metadata, /register, /authorize, /token, /revoke).

DESIGN.md mounts the SDK's Starlette app at `/` after every other route; we route each of its
paths to it instead, before the web app's catch-all, so that `/` stays the web app's and the
SDK's middleware (bearer authentication) still wraps every one of its routes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mcp.server import MCPServer
from mcp.server.auth.settings import (
    AuthSettings,
    ClientRegistrationOptions,
    RevocationOptions,
)
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from app.config import Settings
from app.mcp import tools
from app.mcp.edges import OAuthEdges
from app.mcp.provider import CorpusAuthProvider
from app.mcp.tasks import LegacyResearchTasks, ResearchTasks
from app.middleware import UnavailableMiddleware, body_limit
from app.oauth import service as oauth
from app.oauth.documents import ClientDocuments
from app.resources import Resources

INSTRUCTIONS = (
    "Corpus is your team's knowledge base. Search it (search_docs) before answering questions "
    "about the team's systems, read whole documents with read_document, and upload what you "
    "learn (upload_document) so the next agent finds it."
)


@dataclass(frozen=True)
class McpDoor:
    server: MCPServer
    routes: list[BaseRoute]


def build(
    settings: Settings, resources: Callable[[], Resources], documents: ClientDocuments
) -> McpDoor:
    """The MCP server and the routes that reach it. `resources` is read per call (the lifespan
    opens them after the app is built); `documents` fetches clients' metadata documents."""
    issuer = settings.public_url.rstrip("/")
    resource = f"{issuer}/mcp"
    provider = CorpusAuthProvider(resources, issuer=issuer, resource=resource, documents=documents)
    server = MCPServer(
        "Corpus",
        instructions=INSTRUCTIONS,
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(issuer),
            resource_server_url=AnyHttpUrl(resource),
            required_scopes=[oauth.SCOPE],
            validate_token_resource=True,
            client_registration_options=ClientRegistrationOptions(
                enabled=settings.oauth_registration == "open",
                valid_scopes=[oauth.SCOPE],
                default_scopes=[oauth.SCOPE],
            ),
            revocation_options=RevocationOptions(enabled=True),
        ),
        # deep_research as a task for the 2026-07-28 clients that declare the extension, and
        # for the 2025-11-25 clients that ask for one (that revision's own tasks).
        extensions=[ResearchTasks(resources)],
        middleware=[LegacyResearchTasks(resources)],
    )
    tools.register(server, resources)
    asgi: Starlette = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        # Ours (app.middleware) is enforced first; the SDK's own default (4 MiB) would refuse
        # an upload of CORPUS_MAX_UPLOAD_MB as base64.
        max_request_body_size=body_limit(settings, "POST", "/mcp").max_bytes,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=settings.allowed_hosts,
            allowed_origins=settings.allowed_origins,
        ),
    )
    # Inside the SDK's own error middleware, which would answer an outage with a plain 500.
    asgi.add_middleware(UnavailableMiddleware)
    guarded = OAuthEdges(
        asgi,
        resource=resource,
        issuer=oauth.issuer_id(issuer),
        public_url=issuer,
        register_rate=settings.register_rate_per_address,
        documents=documents,
    )
    paths = [route.path for route in asgi.routes if isinstance(route, Route)]
    routes: list[BaseRoute] = [Route(path, endpoint=guarded) for path in paths]
    if settings.oauth_registration == "closed":
        routes.append(Route("/register", endpoint=_registration_closed, methods=["POST"]))
    return McpDoor(server=server, routes=routes)


async def _registration_closed(_request: Request) -> JSONResponse:
    # Without this the web app's catch-all would answer; a client deserves an OAuth error.
    return JSONResponse(
        {
            "error": "access_denied",
            "error_description": "dynamic client registration is closed on this server; "
            "ask an admin for an API key",
        },
        status_code=403,
    )
