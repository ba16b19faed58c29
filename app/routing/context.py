"""The context block for a system prompt (DESIGN.md §5): passages clipped to a per-chunk
budget, the lowest-ranked evicted first until the block fits the token budget, each with its
citation key, and a footnote that groups the sources by license."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from uuid import UUID

from app.routing.builtin import PROPRIETARY

FOOTNOTE_LEAD = "Sources retrieved via Corpus. License attributions: "
ELLIPSIS = "…"
# A clipped passage shorter than this says too little to be worth its key and header.
MIN_CLIP_TOKENS = 8


@dataclass(frozen=True, slots=True)
class Passage:
    """One retrieved chunk, from a local or a remote workspace. `document_id` and `chunk_id`
    name a local chunk; a remote workspace's passage has neither (`remote._passages`)."""

    workspace: str
    license: str
    title: str
    text: str
    score: float | None
    document_id: UUID | None = None
    chunk_id: UUID | None = None
    heading_path: tuple[str, ...] = ()
    # A synced document whose named code changed in later commits (issue #35).
    stale: bool = False


@dataclass(frozen=True, slots=True)
class Block:
    text: str
    passages: list[Passage]  # in key order: passages[0] is [1]
    tokens: int


def tokens(text: str) -> int:
    """API.md counts tokens as ceil(characters / 4): no tokenizer ships with Corpus."""
    return math.ceil(len(text) / 4)


def per_chunk_budget(budget: int) -> int:
    """No passage may take more than a quarter of the block, so at least four fit."""
    return max(MIN_CLIP_TOKENS, budget // 4)


def clip(text: str, max_tokens: int) -> str:
    """`text` within `max_tokens`, cut at a word boundary where one is near, marked with an
    ellipsis."""
    limit = max_tokens * 4
    if len(text) <= limit:
        return text
    cut = text[: max(0, limit - len(ELLIPSIS))]
    space = cut.rfind(" ")
    if space > len(cut) * 3 // 4:
        cut = cut[:space]
    return cut.rstrip() + ELLIPSIS


def footnote(sources: Sequence[tuple[str, str]]) -> str:
    """The license footnote for (workspace, license) pairs in rank order: one group per license
    in order of first appearance, its workspaces likewise. Proprietary workspaces are left out
    unless they are the only sources; no sources, no footnote."""
    if not sources:
        return ""
    open_sources = [(w, lic) for w, lic in sources if lic != PROPRIETARY]
    shown = open_sources or list(sources)
    groups: dict[str, list[str]] = {}
    for workspace, license_id in shown:
        members = groups.setdefault(license_id, [])
        if workspace not in members:
            members.append(workspace)
    parts = [f"{license_id} ({', '.join(members)})" for license_id, members in groups.items()]
    return FOOTNOTE_LEAD + "; ".join(parts) + "."


def ranked(passages: Sequence[Passage]) -> list[Passage]:
    """Best first: by score when every source gave one; otherwise scores cannot be compared,
    and the order given stands (the fan-out gives the persona's priority order, each
    workspace's best first)."""
    if any(p.score is None for p in passages):
        return list(passages)
    return sorted(passages, key=lambda p: -(p.score or 0.0))


def _entry(key: int, passage: Passage) -> str:
    where = " › ".join([passage.workspace, *passage.heading_path])
    # An agent reading the block must know as well as a person reading the viewer.
    warning = " [may be stale: code it names changed since]" if passage.stale else ""
    return f"[{key}] {passage.title} ({where}){warning}\n{passage.text}"


def _render(passages: Sequence[Passage]) -> str:
    parts = [_entry(i, p) for i, p in enumerate(passages, start=1)]
    note = footnote([(p.workspace, p.license) for p in passages])
    return "\n\n".join([*parts, note]) if parts else ""


def build(passages: Sequence[Passage], budget: int) -> Block:
    """The block: each passage clipped to the per-chunk budget, then the lowest-ranked evicted
    until the whole (footnote included) fits `budget` tokens. A last passage that still does
    not fit is clipped further, or dropped when too little of it would remain."""
    limit = per_chunk_budget(budget)
    kept = [replace(p, text=clip(p.text, limit)) for p in ranked(passages)]
    text = _render(kept)
    while kept and tokens(text) > budget:
        if len(kept) == 1:
            overhead = tokens(_render([replace(kept[0], text="")]))
            room = budget - overhead - 1
            if room < MIN_CLIP_TOKENS:
                kept = []
            else:
                kept = [replace(kept[0], text=clip(kept[0].text, room))]
                text = _render(kept)
                break
        else:
            kept.pop()
        text = _render(kept)
    return Block(text=text, passages=kept, tokens=tokens(text))
