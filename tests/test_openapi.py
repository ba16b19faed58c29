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


async def test_partial_updates_document_null_only_where_null_means_something(
    client: httpx.AsyncClient,
) -> None:
    spec = (await client.get("/openapi.json")).json()
    schemas = dict(spec["components"]["schemas"])
    # A document edit's body is parsed by the route, after the role check: its schema is inline.
    edit = spec["paths"]["/api/documents/{document_id}"]["patch"]["requestBody"]
    schemas["DocumentUpdate"] = edit["content"]["application/json"]["schema"]

    def takes_null(model: str, field: str) -> bool:
        prop = schemas[model]["properties"][field]
        return any(branch.get("type") == "null" for branch in prop.get("anyOf", []))

    # Leaving a field out keeps it; null would be refused, so the schema does not offer it.
    for model, field in [
        ("DocumentUpdate", "title"),
        ("DocumentUpdate", "tags"),
        ("DocumentUpdate", "content"),
        ("WorkspaceUpdate", "title"),
        ("WorkspaceUpdate", "description"),
        ("UserUpdate", "role"),
        ("UserUpdate", "active"),
    ]:
        assert not takes_null(model, field), (model, field)
        assert "default" not in schemas[model]["properties"][field], (model, field)
    # Null means "from policy" and "no default persona" here.
    assert takes_null("WorkspaceUpdate", "license")
    assert takes_null("UserUpdate", "persona")


async def test_validation_errors_are_documented_in_the_shape_they_are_sent(
    client: httpx.AsyncClient,
) -> None:
    # FastAPI documents its own `{"detail": [...]}` for 422; the API answers API.md's shape.
    spec = (await client.get("/openapi.json")).json()
    refused = [
        op["responses"]["422"]["content"]["application/json"]["schema"]
        for path in spec["paths"].values()
        for op in path.values()
        if "422" in op["responses"]
    ]
    assert refused
    assert all(schema == {"$ref": "#/components/schemas/ErrorBody"} for schema in refused)
    assert "HTTPValidationError" not in spec["components"]["schemas"]
    reply = await client.post("/api/auth/login", json={"email": 1})
    assert reply.status_code == 422
    assert set(reply.json()) == {"error"}


async def test_every_operation_that_takes_a_body_documents_the_body_limit(
    client: httpx.AsyncClient,
) -> None:
    spec = (await client.get("/openapi.json")).json()
    taking = [
        (route, method, op)
        for route, path in spec["paths"].items()
        for method, op in path.items()
        if "requestBody" in op
    ]
    assert taking
    undocumented = [
        f"{method} {route}" for route, method, op in taking if "413" not in op["responses"]
    ]
    assert undocumented == []
    # As sent: over CORPUS_MAX_JSON_KB, in API.md's shape.
    reply = await client.post(
        "/v1/knowledge/search",
        content=b'{"query": "' + b"x" * (1024 * 1024) + b'"}',
        headers={"Content-Type": "application/json"},
    )
    assert reply.status_code == 413
    assert reply.json()["error"]["code"] == "payload_too_large"
