"""Links between documents: a relative link in uploaded Markdown reaches the document uploaded
from that path in the same workspace (or from a file of that name), whichever came first, and
counts as its backlink; only among what the caller may see."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncConnection

from app.documents.links import Link, extract, path_of
from tests.accounts import Account, make_account


def test_links_are_read_from_markdown_as_where_they_point() -> None:
    target = uuid.uuid4()
    markdown = f"""# Setup

See [deploy](../ops/deploy.md#rollback "Deploy") and [the runbook](/documents/{target}).
Also [again](../ops/deploy.md#rollback), [spaced](<my notes.md>), [site](https://example.com),
[mail](mailto:a@example.com), [here](#setup), ![diagram](diagram.md) and [root](/README.md).

```
[in a fence](fenced.md)
```

Inline `[code](code.md)` too.

[ref]: %C3%A9t%C3%A9.md
[long]({"é" * 600}.md)
"""
    found = extract(markdown, "guides/setup.md")
    assert found == [
        Link("../ops/deploy.md#rollback", target_path="ops/deploy.md", target_name="deploy.md"),
        Link(f"/documents/{target}", target_id=target),
        Link("my notes.md", target_path="guides/my notes.md", target_name="my notes.md"),
        Link("/README.md", target_path="README.md", target_name="README.md"),
        Link("%C3%A9t%C3%A9.md", target_path="guides/été.md", target_name="été.md"),
    ]


@pytest.mark.parametrize(
    ("source", "path"),
    [
        ("deploy.md", "deploy.md"),
        ("/home/ada/project/docs/a.md", "home/ada/project/docs/a.md"),
        ("./docs/a.md", "docs/a.md"),
        ("https://example.com/a.md", None),
        (None, None),
    ],
)
def test_a_documents_path_is_its_source_normalised(source: str | None, path: str | None) -> None:
    assert path_of(source) == path


async def _upload(
    client: httpx.AsyncClient, who: Account, source: str, content: str, **fields: str
) -> dict[str, Any]:
    reply = await client.post(
        "/api/documents",
        files={"file": (source.rsplit("/", 1)[-1], content.encode(), "text/markdown")},
        data={"source": source, **fields},
        headers=who.bearer,
    )
    assert reply.status_code in (200, 201), reply.text
    body: dict[str, Any] = reply.json()
    return body


async def _links(client: httpx.AsyncClient, who: Account, document_id: str) -> dict[str, Any]:
    reply = await client.get(f"/api/documents/{document_id}/links", headers=who.bearer)
    assert reply.status_code == 200, reply.text
    return {link["href"]: link["document_id"] for link in reply.json()}


async def _backlinks(client: httpx.AsyncClient, who: Account, document_id: str) -> set[str]:
    reply = await client.get(f"/api/documents/{document_id}/backlinks", headers=who.bearer)
    assert reply.status_code == 200, reply.text
    return {item["id"] for item in reply.json()}


async def test_a_relative_link_reaches_a_document_uploaded_after_it_and_is_its_backlink(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    editor = await make_account(conn, "editor")
    workspace = f"links-{uuid.uuid4().hex[:8]}"
    created = await client.post(
        "/api/workspaces",
        json={"slug": workspace, "title": "Links"},
        headers=(await make_account(conn, "admin")).bearer,
    )
    assert created.status_code == 201
    setup = await _upload(
        client,
        editor,
        "guides/setup.md",
        "# Setup\n\nSee [rollback](../ops/deploy.md#rollback) and [gone](missing.md).\n",
        workspace=workspace,
    )
    assert await _links(client, editor, setup["id"]) == {
        "../ops/deploy.md#rollback": None,
        "missing.md": None,
    }
    deploy = await _upload(
        client, editor, "ops/deploy.md", "# Deploy\n\n## Rollback\n\nRun it.\n", workspace=workspace
    )
    # The same path in another workspace is another document.
    elsewhere = await _upload(client, editor, "ops/deploy.md", "# Deploy elsewhere\n\nNo.\n")

    assert await _links(client, editor, setup["id"]) == {
        "../ops/deploy.md#rollback": deploy["id"],
        "missing.md": None,
    }
    assert await _backlinks(client, editor, deploy["id"]) == {setup["id"]}
    assert await _backlinks(client, editor, elsewhere["id"]) == set()

    # A new version without the link is no longer a backlink.
    edited = await client.patch(
        f"/api/documents/{setup['id']}",
        json={"content": "# Setup\n\nNothing linked now.\n"},
        headers=editor.bearer,
    )
    assert edited.status_code == 200
    assert await _links(client, editor, setup["id"]) == {}
    assert await _backlinks(client, editor, deploy["id"]) == set()


async def test_a_flat_upload_finds_its_target_by_file_name_unless_a_document_has_the_path(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    editor = await make_account(conn, "editor")
    readme = await _upload(
        client, editor, "README.md", "# Read me\n\nSee [deploy](docs/deploy-flat.md).\n"
    )
    flat = await _upload(client, editor, "deploy-flat.md", "# Flat deploy\n\nSteps.\n")
    assert await _links(client, editor, readme["id"]) == {"docs/deploy-flat.md": flat["id"]}
    assert await _backlinks(client, editor, flat["id"]) == {readme["id"]}

    exact = await _upload(client, editor, "docs/deploy-flat.md", "# Deploy at its path\n")
    assert await _links(client, editor, readme["id"]) == {"docs/deploy-flat.md": exact["id"]}
    assert await _backlinks(client, editor, exact["id"]) == {readme["id"]}
    assert await _backlinks(client, editor, flat["id"]) == set()


async def test_links_and_backlinks_show_only_documents_the_caller_may_see(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    alice = await make_account(conn, "editor")
    bob = await make_account(conn, "editor")
    target = await _upload(client, alice, "shared/target-vis.md", "# Target\n\nShared.\n")
    secret = await _upload(
        client,
        bob,
        "shared/secret-vis.md",
        "# Secret\n\n[target](target-vis.md)\n",
        visibility="private",
    )
    hidden = await _upload(
        client, bob, "shared/hidden-vis.md", "# Hidden\n\nBob's.\n", visibility="private"
    )
    pointer = await _upload(
        client, alice, "shared/pointer-vis.md", "# Pointer\n\n[hidden](hidden-vis.md)\n"
    )

    assert await _backlinks(client, alice, target["id"]) == set()
    assert await _backlinks(client, bob, target["id"]) == {secret["id"]}
    assert await _links(client, alice, pointer["id"]) == {"hidden-vis.md": None}
    assert await _links(client, bob, pointer["id"]) == {"hidden-vis.md": hidden["id"]}
    refused = await client.get(f"/api/documents/{secret['id']}/links", headers=alice.bearer)
    assert refused.status_code == 404
    assert refused.json()["error"]["code"] == "not_found"
