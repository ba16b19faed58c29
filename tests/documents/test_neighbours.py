"""What the viewer shows around a document: related documents (nearest chunk centroids),
backlinks, and one chunk's preview; each only among what the caller may see."""

from __future__ import annotations

import uuid

import httpx
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.accounts import Account, make_account


async def _create(client: httpx.AsyncClient, who: Account, **fields: object) -> str:
    body = {"title": "T", "visibility": "org", **fields}
    reply = await client.post("/api/documents", json=body, headers=who.bearer)
    assert reply.status_code == 201, reply.text
    return str(reply.json()["id"])


async def test_related_documents_are_ordered_by_centroid_similarity_and_exclude_the_document(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    editor = await make_account(conn, "editor")
    base = await _create(
        client, editor, title="Postgres vacuum", content="postgres vacuum autovacuum tuning bloat"
    )
    near = await _create(
        client, editor, title="Vacuum tips", content="postgres vacuum autovacuum bloat thresholds"
    )
    far = await _create(
        client, editor, title="Coffee", content="espresso grinder beans roast crema water"
    )
    reply = await client.get(f"/api/documents/{base}/related", headers=editor.bearer)
    assert reply.status_code == 200
    ids = [item["id"] for item in reply.json()]
    assert base not in ids
    assert ids.index(near) < ids.index(far)
    similarities = [item["similarity"] for item in reply.json()]
    assert similarities == sorted(similarities, reverse=True)


async def test_related_and_backlinks_leave_out_another_persons_private_documents(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    alice = await make_account(conn, "editor")
    bob = await make_account(conn, "editor")
    target = await _create(client, alice, title="Target", content="kubernetes ingress nginx tls")
    link = f"See [the target](/documents/{target}) for kubernetes ingress nginx tls."
    public = await _create(client, bob, title="Public link", content=link)
    private = await _create(
        client, bob, title="Private link", content=link + " secret", visibility="private"
    )

    as_alice = {
        "related": await client.get(f"/api/documents/{target}/related", headers=alice.bearer),
        "backlinks": await client.get(f"/api/documents/{target}/backlinks", headers=alice.bearer),
    }
    for name, reply in as_alice.items():
        assert reply.status_code == 200, name
        ids = {item["id"] for item in reply.json()}
        assert public in ids, name
        assert private not in ids, name

    as_bob = await client.get(f"/api/documents/{target}/backlinks", headers=bob.bearer)
    assert {item["id"] for item in as_bob.json()} == {public, private}


async def test_a_document_out_of_sight_has_no_neighbours_to_show(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    alice = await make_account(conn, "editor")
    bob = await make_account(conn, "viewer")
    hidden = await _create(client, alice, content="private notes", visibility="private")
    for path in (f"/api/documents/{hidden}/related", f"/api/documents/{hidden}/backlinks"):
        reply = await client.get(path, headers=bob.bearer)
        assert reply.status_code == 404
        assert reply.json()["error"]["code"] == "not_found"
    missing = await client.get(f"/api/documents/{uuid.uuid4()}/related", headers=alice.bearer)
    assert missing.status_code == 404


async def test_a_chunk_preview_names_its_document_and_heading_path_only_for_those_who_may_see_it(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    alice = await make_account(conn, "editor")
    bob = await make_account(conn, "viewer")
    content = "# Deploy\n\n## Rollback\n\nRun make rollback to go back.\n"
    shared = await _create(client, alice, title="Runbook", content=content)
    hidden = await _create(client, alice, content=content + "x", visibility="private")
    chunk = (await client.get(f"/api/documents/{shared}/chunks", headers=alice.bearer)).json()[-1]
    secret = (await client.get(f"/api/documents/{hidden}/chunks", headers=alice.bearer)).json()[0]

    reply = await client.get(f"/api/chunks/{chunk['id']}", headers=bob.bearer)
    assert reply.status_code == 200
    preview = reply.json()
    assert preview["document_id"] == shared
    assert preview["title"] == "Runbook"
    assert preview["workspace"] == "default"
    assert preview["heading_path"] == ["Deploy", "Rollback"]
    assert preview["text"] == chunk["text"]

    for chunk_id in (secret["id"], str(uuid.uuid4())):
        refused = await client.get(f"/api/chunks/{chunk_id}", headers=bob.bearer)
        assert refused.status_code == 404
        assert refused.json()["error"]["code"] == "not_found"


async def test_the_sign_in_options_say_first_run_until_an_account_exists(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    await conn.exec_driver_sql("DELETE FROM users")
    first = (await client.get("/api/auth/options")).json()
    assert first == {"first_run": True, "signup_open": True, "oidc": False}
    await make_account(conn, "admin")
    later = (await client.get("/api/auth/options")).json()
    assert later == {"first_run": False, "signup_open": False, "oidc": False}
