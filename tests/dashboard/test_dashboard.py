"""The dashboard: figures and composition of what the caller may see, 30 days of use, the
agents' activity for admins, the activity feed, and gaps that are real gaps, dismissed by
admins."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.accounts import Account, authorize, make_account


async def _add(client: httpx.AsyncClient, title: str, content: str, **extra: Any) -> str:
    reply = await client.post("/api/documents", json={"title": title, "content": content, **extra})
    assert reply.status_code == 201, reply.text
    document_id: str = reply.json()["id"]
    return document_id


async def _get(client: httpx.AsyncClient, path: str, **params: Any) -> Any:
    reply = await client.get(path, params=params)
    assert reply.status_code == 200, reply.text
    return reply.json()


def _as(client: httpx.AsyncClient, account: Account) -> None:
    client.headers.update(account.bearer)


async def test_figures_and_composition_count_only_what_the_caller_may_see(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    editor = await authorize(client, conn, "editor")
    before = await _get(client, "/api/dashboard")
    await _add(client, "Runbook", "# Deploy\n\nRoll back with make rollback.", tags=["ops"])
    await _add(
        client, "Secret plan", "Private words.", tags=["ops", "secret"], visibility="private"
    )
    mine = await _get(client, "/api/dashboard")
    assert mine["figures"]["documents"] == before["figures"]["documents"] + 2
    assert mine["figures"]["chunks"] >= before["figures"]["chunks"] + 2
    tags = {t["tag"]: t["documents"] for t in mine["by_tag"]}
    assert tags["secret"] == 1
    today = datetime.now(UTC).date().isoformat()
    assert len(mine["days"]) == 30
    assert mine["days"][-1]["day"] == today
    assert mine["days"][-1]["uploads"] >= 2
    # Agents are administered: not a viewer's or an editor's to see.
    assert mine["agents"] == []

    viewer = await make_account(conn, "viewer")
    _as(client, viewer)
    theirs = await _get(client, "/api/dashboard")
    assert theirs["figures"]["documents"] == mine["figures"]["documents"] - 1
    assert "secret" not in {t["tag"] for t in theirs["by_tag"]}
    feed = await _get(client, "/api/dashboard/activity")
    assert "Secret plan" not in [item["subject"] for item in feed["items"]]
    assert "Runbook" in [item["subject"] for item in feed["items"] if item["kind"] == "upload"]
    _as(client, editor)
    feed = await _get(client, "/api/dashboard/activity")
    assert "Secret plan" in [item["subject"] for item in feed["items"]]


async def test_searches_and_questions_are_counted_by_day_the_callers_own_unless_admin(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    viewer = await authorize(client, conn, "viewer")
    start = (await _get(client, "/api/dashboard"))["days"][-1]
    await client.post("/api/search", json={"query": "rollback"})
    await client.post("/api/search", json={"query": "retries"})
    today = (await _get(client, "/api/dashboard"))["days"][-1]
    assert today["searches"] == start["searches"] + 2

    other = await make_account(conn, "viewer")
    _as(client, other)
    assert (await _get(client, "/api/dashboard"))["days"][-1]["searches"] == 0
    feed = await _get(client, "/api/dashboard/activity")
    assert [i for i in feed["items"] if i["kind"] == "search"] == []

    admin = await make_account(conn, "admin")
    _as(client, admin)
    everyone = (await _get(client, "/api/dashboard"))["days"][-1]
    assert everyone["searches"] >= today["searches"]
    feed = await _get(client, "/api/dashboard/activity")
    searched = [(i["actor"], i["subject"]) for i in feed["items"] if i["kind"] == "search"]
    assert (viewer.user.email, "rollback") in searched


async def test_admins_see_each_agents_activity_and_its_calls(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    agent = await make_account(conn, "editor", kind="agent")
    _as(client, agent)
    await client.post("/api/search", json={"query": "rollback"})
    await client.post("/api/search", json={"query": "retries"})
    # A write through the agent's key is audited: a call too.
    await _add(client, "Agent's note", "Written by an agent.")
    admin = await make_account(conn, "admin")
    _as(client, admin)
    agents = (await _get(client, "/api/dashboard"))["agents"]
    [row] = [a for a in agents if a["id"] == str(agent.user.id)]
    assert (row["kind"], row["keys"], row["searches"], row["questions"]) == ("account", 1, 2, 0)
    assert row["calls"] == 3
    feed = await _get(client, "/api/dashboard/activity")
    assert ("key_minted", agent.user.email) in [(i["kind"], i["actor"]) for i in feed["items"]]


async def _gaps(client: httpx.AsyncClient) -> list[str]:
    return [g["question"] for g in (await _get(client, "/api/gaps"))["items"]]


async def test_a_search_emptied_by_its_filters_is_not_a_gap_but_an_unanswerable_one_is(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    await authorize(client, conn, "admin")
    await _add(client, "Rollback", "Rollback the deploy with make rollback.")
    filtered = await client.post(
        "/api/search", json={"query": "rollback the deploy", "tags": ["nosuchtag"]}
    )
    assert filtered.json()["hits"] == []
    await client.post("/api/search", json={"query": "purple elephant carburetor sonnet"})
    gaps = await _gaps(client)
    assert "purple elephant carburetor sonnet" in gaps
    assert "rollback the deploy" not in gaps


async def test_a_dismissed_gap_goes_until_it_is_asked_again(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    await authorize(client, conn, "admin")
    question = "kubernetes ingress certificate renewal"
    await client.post("/api/search", json={"query": question})
    await client.post("/api/search", json={"query": "Kubernetes  ingress certificate renewal"})
    # Two wordings, one gap (case and spaces aside), named by one of them.
    [named] = [g for g in await _gaps(client) if " ".join(g.lower().split()) == question]

    reply = await client.post("/api/gaps/dismiss", json={"question": named})

    assert reply.status_code == 204
    assert [g for g in await _gaps(client) if " ".join(g.lower().split()) == question] == []
    again = await client.post("/api/gaps/dismiss", json={"question": named})
    assert (again.status_code, again.json()["error"]["code"]) == (404, "not_found")


async def test_gap_dismissal_is_for_admins_and_refuses_bad_input(
    client: httpx.AsyncClient, conn: AsyncConnection
) -> None:
    await authorize(client, conn, "editor")
    refused = await client.post("/api/gaps/dismiss", json={"question": "anything"})
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "forbidden")
    await authorize(client, conn, "admin")
    for body in ({}, {"question": ""}, {"question": "x", "extra": 1}, {"question": 3}):
        reply = await client.post("/api/gaps/dismiss", json=body)
        assert (reply.status_code, reply.json()["error"]["code"]) == (422, "validation_error")
