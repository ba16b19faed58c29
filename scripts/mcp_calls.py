"""Call MCP tools with the MCP SDK's own client, as an agent would: the browser tests' check
that a key minted and copied in the web app works at /mcp (frontend/e2e/app.test.mjs).

    .venv/bin/python scripts/mcp_calls.py URL 'Authorization: Bearer ck_...' < calls.json

`calls.json` is a list of `{"name", "arguments"}`; the script prints one JSON object: `{"calls":
[{"is_error", "text", "structured"}, ...]}`, or `{"refused": status}` when the server refused
the credential before any tool ran (a revoked key: 401).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import TextContent


async def run(url: str, header: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    name, _, value = header.partition(":")
    http = create_mcp_http_client(headers={name.strip(): value.strip()})
    # The SDK's client reports a refused credential as an error response without its status:
    # the status is read from the wire.
    statuses: list[int] = []

    async def record(response: httpx.Response) -> None:
        statuses.append(response.status_code)

    http.event_hooks["response"].append(record)
    results = []
    try:
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            for call in calls:
                result = await client.call_tool(call["name"], call.get("arguments", {}))
                text = "".join(c.text for c in result.content if isinstance(c, TextContent))
                results.append(
                    {
                        "is_error": result.is_error,
                        "text": text,
                        "structured": result.structured_content,
                    }
                )
    except Exception:
        refused = sorted({status for status in statuses if status in (401, 403)})
        if not results and refused:
            return {"refused": refused[0]}
        raise
    return {"calls": results}


def main() -> None:
    url, header = sys.argv[1], sys.argv[2]
    calls = json.load(sys.stdin)
    sys.stdout.write(json.dumps(asyncio.run(run(url, header, calls))) + "\n")


if __name__ == "__main__":
    main()
