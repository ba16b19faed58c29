"""Searching a remote workspace: another Corpus, or any server that speaks the Anvil contract
(`POST {base}/v1/knowledge/search` with the workspace's own bearer). Transient failures (5xx
and network errors) are retried with exponential backoff and jitter, all inside the fan-out's
deadline; anything else fails at once, an address the rules refuse included.

What the remote answers is its server's word, shown to every reader of the workspace: its
passages name no document or chunk here (their ids are dropped: the remote's own mean nothing
here, and could be a local document's), their titles are one line of plain text and their
texts are bounded, with no control characters (docs/SECURITY.md, "Remote workspaces")."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import re
import unicodedata
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from app.kit.addresses import AddressRefused
from app.kit.types import MAX_TITLE_CHARS
from app.routing.context import Passage

logger = logging.getLogger(__name__)

TRIES = 3
FIRST_BACKOFF_S = 0.25
# Each wait is its exponential step plus up to this share of it, so that replicas retrying
# the same endpoint spread out.
JITTER = 0.25
# A remote answer larger than this is refused unread: top-k passages never need more.
MAX_ANSWER_BYTES = 4 * 1024 * 1024
# A remote passage's title, as long as a local document's may be, and its text: a chunk here is
# far shorter, and the context block clips each passage to a quarter of its budget anyway.
MAX_REMOTE_TITLE_CHARS = MAX_TITLE_CHARS
MAX_REMOTE_TEXT_CHARS = 10_000
# Markup's delimiters, shown as the look-alike angle quotes: `<script>` reads as ‹script›.
_UNMARKED = str.maketrans({"<": "\u2039", ">": "\u203a"})
_SPACES = re.compile(r"\s+")


class RemoteFailed(Exception):
    """The remote workspace did not answer usefully; the message is the failure's reason."""


def backoff_s(attempt: int, rand: Callable[[], float] = random.random) -> float:
    """The wait before retry `attempt` (0 for the first retry): 250 ms, 500 ms, ... plus jitter."""
    step = FIRST_BACKOFF_S * float(2**attempt)
    return step + step * JITTER * rand()


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def plain_title(value: object, fallback: str) -> str:
    """One line of plain text: every control, format (bidi, zero-width), surrogate, private or
    unassigned character and line separator becomes a space, white space runs become one
    space, `<` and `>` become `‹` and `›`, and the whole is cut to MAX_REMOTE_TITLE_CHARS;
    `fallback` when nothing is left (or the title is not text)."""
    if not isinstance(value, str):
        return fallback
    # Cut before the character pass: a remote's reply may be megabytes, read on the event loop.
    value = value[: 4 * MAX_REMOTE_TITLE_CHARS]
    spaced = "".join(" " if unicodedata.category(c)[0] in "CZ" and c != " " else c for c in value)
    title = _SPACES.sub(" ", spaced).strip().translate(_UNMARKED)
    return _clip(title, MAX_REMOTE_TITLE_CHARS) if title else fallback


def plain_text(value: str) -> str:
    """The passage without control, format or surrogate characters (newlines and tabs stay),
    cut to MAX_REMOTE_TEXT_CHARS. Markup stays text: every door already serves passages as
    text, local ones included."""
    # Cut before the character pass (removals only shorten it): a remote's reply may be
    # megabytes, read on the event loop.
    value = value[: 2 * MAX_REMOTE_TEXT_CHARS].replace("\r\n", "\n")
    kept = "".join(
        c for c in value if c in "\n\t" or unicodedata.category(c) not in {"Cc", "Cf", "Cs"}
    )
    return _clip(kept, MAX_REMOTE_TEXT_CHARS)


def _score(value: object) -> float | None:
    # JSON's `true` is an int to Python, and its parser reads NaN and Infinity.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    score = float(value)
    return score if math.isfinite(score) else None


def _passages(body: Any, workspace: str, license_id: str, top_k: int) -> list[Passage]:
    results = body.get("results") if isinstance(body, dict) else None
    if not isinstance(results, list):
        raise RemoteFailed("the remote answer has no results list")
    passages: list[Passage] = []
    for item in results[:top_k]:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            continue
        passages.append(
            # No document_id or chunk_id: see the module's docstring.
            Passage(
                workspace=workspace,
                license=license_id,
                title=plain_title(item.get("title"), workspace),
                text=plain_text(item["text"]),
                score=_score(item.get("score")),
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
