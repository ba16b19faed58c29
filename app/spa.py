"""The web app: files from the SPA's build, and index.html for every other non-API path so the
client-side router can take it (history fallback)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, HTMLResponse, Response
from starlette.routing import BaseRoute, Match
from starlette.types import Scope

from app.errors import MethodNotAllowed, NotFound, Unavailable

CATCH_ALL = "/{path:path}"
_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")

# Paths owned by the server, where an unknown path is an error rather than a page of the app.
API_PREFIXES = ("api", "v1", "mcp", ".well-known")


def is_api_path(path: str) -> bool:
    """Whether `path` (with or without its leading slash) is under a prefix the server owns."""
    head = path.lstrip("/").split("/", 1)[0]
    return head in API_PREFIXES


def page_headers(*, cache: str) -> dict[str, str]:
    """The protections of every file of the web app we serve (its `index.html` at every path,
    sign-in and consent included, and each file of the build by its own name: `/index.html`
    would be the page unprotected, and an SVG is a document too): only scripts from our origin
    run, no other site may frame the page, where a hidden overlay could click it through, and
    no browser guesses a type other than the one sent. Styles may be inline: the web app's
    components set some, and a style cannot run code."""
    policy = (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    )
    return {
        "Content-Security-Policy": policy,
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": cache,
    }


# The API reference: Swagger UI from the web app's build (`swagger-ui/`, copied there from the
# pinned `swagger-ui-dist` by frontend/vite.config.ts), never from a CDN, so that it works with
# no internet and every request stays on this server (its policy forbids any other origin).
_API_DOCS_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Corpus API</title>
<link rel="icon" type="image/svg+xml" href="/favicon.svg">
<link rel="stylesheet" href="/swagger-ui/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/swagger-ui/swagger-ui-bundle.js"></script>
<script src="/swagger-ui/init.js"></script>
</body>
</html>
"""


def register_api_docs(app: FastAPI) -> None:
    """Serve the API reference at `/docs` from this server's own files (FastAPI's default page
    loads Swagger UI from a CDN, and is blank offline)."""

    @app.get("/docs", include_in_schema=False)
    async def api_docs() -> HTMLResponse:
        return HTMLResponse(_API_DOCS_PAGE, headers=page_headers(cache="no-cache"))


def allowed_methods(routes: Iterable[BaseRoute], path: str) -> list[str]:
    """Every method some route serves at `path`, asked of each route as the router would ask
    it (Starlette answers a wrong method with the first matching route's methods only, and
    the catch-all below would turn it into a 404)."""
    allowed = []
    candidates = [route for route in routes if getattr(route, "path", None) != CATCH_ALL]
    for method in _METHODS:
        scope: Scope = {"type": "http", "path": path, "root_path": "", "method": method}
        if any(route.matches(scope)[0] == Match.FULL for route in candidates):
            allowed.append(method)
    return allowed


def register_spa(app: FastAPI, static_dir: Path) -> None:
    """Serve `static_dir` at `/` with history fallback; register after every API route."""
    root = static_dir.resolve()

    @app.api_route(CATCH_ALL, methods=["GET", "HEAD"], include_in_schema=False)
    async def spa(path: str) -> Response:
        if is_api_path(path):
            methods = allowed_methods(app.router.routes, f"/{path}")
            if methods:
                raise MethodNotAllowed(
                    f"/{path} accepts {', '.join(methods)}", headers={"Allow": ", ".join(methods)}
                )
            raise NotFound(f"no route for /{path}")
        candidate = (root / path).resolve()
        if path and candidate.is_file() and candidate.is_relative_to(root):
            # Vite fingerprints everything under assets/, so those may be cached for good.
            immutable = candidate.parent == root / "assets"
            cache = "public, max-age=31536000, immutable" if immutable else "no-cache"
            return FileResponse(candidate, headers=page_headers(cache=cache))
        index = root / "index.html"
        if not index.is_file():
            raise Unavailable(f"the web app is not built ({index} is missing); run `make build`")
        return FileResponse(index, headers=page_headers(cache="no-cache"))
