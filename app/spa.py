"""The web app: files from the SPA's build, and index.html for every other non-API path so the
client-side router can take it (history fallback)."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, Response

from app.errors import NotFound, Unavailable

# Paths owned by the server, where an unknown path is an error rather than a page of the app.
API_PREFIXES = ("api", "v1", "mcp", ".well-known")


def _is_api(path: str) -> bool:
    head = path.split("/", 1)[0]
    return head in API_PREFIXES


def register_spa(app: FastAPI, static_dir: Path) -> None:
    """Serve `static_dir` at `/` with history fallback; register after every API route."""
    root = static_dir.resolve()

    @app.api_route("/{path:path}", methods=["GET", "HEAD"], include_in_schema=False)
    async def spa(path: str) -> Response:
        if _is_api(path):
            raise NotFound(f"no route for /{path}")
        candidate = (root / path).resolve()
        if path and candidate.is_file() and candidate.is_relative_to(root):
            # Vite fingerprints everything under assets/, so those may be cached for good.
            immutable = candidate.parent == root / "assets"
            cache = "public, max-age=31536000, immutable" if immutable else "no-cache"
            return FileResponse(candidate, headers={"Cache-Control": cache})
        index = root / "index.html"
        if not index.is_file():
            raise Unavailable(f"the web app is not built ({index} is missing); run `make build`")
        return FileResponse(index, headers={"Cache-Control": "no-cache"})
