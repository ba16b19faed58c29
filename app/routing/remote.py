"""Searching a remote workspace: another Corpus, or any server that speaks the Anvil contract
(`POST {base}/v1/knowledge/search` with the workspace's own bearer). Transient failures (5xx
and network errors) are retried with exponential backoff and jitter, all inside the fan-out's
deadline; anything else fails at once, an address the rules refuse included."""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

import httpx

from app.kit.addresses import AddressRefused
from app.routing.context import Passage

logger = logging.getLogger(__name__)

TRIES = 3
FIRST_BACKOFF_S = 0.25
# Each wait is its exponential step plus up to this share of it, so that replicas retrying
# the same endpoint spread out.
JITTER = 0.25
# A remote answer larger than this is refused unread: top-k passages never need more.
MAX_ANSWER_BYTES = 4 * 1024 * 1024


class RemoteFailed(Exception):
    """The remote workspace did not answer usefully; the message is the failure's reason."""


def backoff_s(attempt: int, rand: Callable[[], float] = random.random) -> float:
    """The wait before retry `attempt` (0 for the first retry): 250 ms, 500 ms, ... plus jitter."""
    step = FIRST_BACKOFF_S * float(2**attempt)
    return step + step * JITTER * rand()


def _uuid(value: Any) -> UUID | None:
    try:
        return UUID(str(value))
    except ValueError:
        return None


def _passages(body: Any, workspace: str, license_id: str, top_k: int) -> list[Passage]:
    results = body.get("results") if isinstance(body, dict) else None
    if not isinstance(results, list):
        raise RemoteFailed("the remote answer has no results list")
    passages: list[Passage] = []
    for item in results[:top_k]:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            continue
        score = item.get("score")
        passages.append(
            Passage(
                workspace=workspace,
                license=license_id,
                title=str(item.get("title") or workspace),
                text=item["text"],
                score=float(score) if isinstance(score, int | float) else None,
                document_id=_uuid(item.get("document_id")),
                chunk_id=_uuid(item.get("chunk_id")),
            )
        )
    return passages


async def _post(
    client: httpx.AsyncClient,
    url: str,
    payload: dict[str, Any],
    headers: dict[str, str],
    timeout_s: float,
) -> tuple[int, bytes]:
    """The status and body of one POST, the body read only up to MAX_ANSWER_BYTES.

    Raises:
        httpx.TransportError: the network failed. RemoteFailed: the answer is too large.
    """
    async with client.stream(
        "POST", url, json=payload, headers=headers, timeout=httpx.Timeout(timeout_s)
    ) as response:
        if response.status_code >= 300:
            return response.status_code, b""
        content = bytearray()
        async for piece in response.aiter_bytes():
            content += piece
            if len(content) > MAX_ANSWER_BYTES:
                raise RemoteFailed(f"the remote answer is over {MAX_ANSWER_BYTES:,} bytes")
        return response.status_code, bytes(content)


async def search(
    client: httpx.AsyncClient,
    *,
    base_url: str,
    bearer: str | None,
    workspace: str,
    license_id: str,
    query: str,
    top_k: int,
    deadline: float,
) -> list[Passage]:
    """The remote workspace's passages for `query`; `deadline` is on the loop's clock.

    Raises:
        RemoteFailed: every try failed, a 4xx, or an answer we cannot read.
    """
    loop = asyncio.get_running_loop()
    if "@" in urlsplit(base_url).netloc:
        # Saved before URLs with credentials were refused: httpx would send them.
        raise RemoteFailed("its URL carries credentials: set it again without them")
    url = f"{base_url.rstrip('/')}/v1/knowledge/search"
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    reason = "not tried"
    for attempt in range(TRIES):
        remaining = deadline - loop.time()
        if remaining <= 0:
            break
        try:
            status, content = await _post(
                client, url, {"query": query, "top_k": top_k}, headers, remaining
            )
        except AddressRefused as exc:
            raise RemoteFailed(f"refused: {exc}") from None
        except httpx.TransportError as exc:
            reason = f"network error ({type(exc).__name__})"
        else:
            if status < 300:
                try:
                    body = json.loads(content)
                except ValueError:
                    raise RemoteFailed("the remote answer is not JSON") from None
                return _passages(body, workspace, license_id, top_k)
            reason = f"the remote answered {status}"
            if status < 500:
                raise RemoteFailed(reason)
        if attempt + 1 < TRIES:
            wait = backoff_s(attempt)
            if loop.time() + wait >= deadline:
                break
            logger.info("remote %s: %s; retrying in %.0f ms", workspace, reason, wait * 1000)
            await asyncio.sleep(wait)
    raise RemoteFailed(f"{reason} after {attempt + 1} tries")
