"""The OpenAPI document: served, every reference resolves, stable operation ids (the web app's
typed client is generated from it)."""

from __future__ import annotations

import json
from typing import Any

import httpx


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


async def test_every_reference_in_the_openapi_document_resolves(
    client: httpx.AsyncClient,
) -> None:
    spec = (await client.get("/openapi.json")).json()
    schemas = spec["components"]["schemas"]
    missing = {
        ref
        for ref in _refs(spec)
        if ref.startswith("#/components/schemas/")
        and ref.removeprefix("#/components/schemas/") not in schemas
    }
    assert missing == set(), json.dumps(sorted(missing))


async def test_every_api_operation_has_an_operation_id_and_a_summary(
    client: httpx.AsyncClient,
) -> None:
    spec = (await client.get("/openapi.json")).json()
    operations = [op for path in spec["paths"].values() for op in path.values()]
    assert operations
    ids = [op["operationId"] for op in operations]
    assert len(ids) == len(set(ids))
    assert all(op.get("description") or op.get("summary") for op in operations)
