"""Citations are checked, not trusted: every `[n]` of an answer must name a chunk this run
retrieved and that the caller may read now; any other key is removed from the text, and the
trace says so. Each kept citation links to its chunk in the web app."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from uuid import UUID

from app.agents.run import Retrieved
from app.agents.schemas import Citation

# [3], and lists like [3, 5] or [3][5].
_KEYS = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


def keys_in(text: str) -> list[int]:
    """The citation keys of a text, in order of first appearance."""
    seen: dict[int, None] = {}
    for match in _KEYS.finditer(text):
        for part in match.group(1).split(","):
            seen.setdefault(int(part), None)
    return list(seen)


@dataclass(frozen=True)
class Checked:
    text: str
    citations: list[Citation]
    # Why each removed key went: "[7]: not retrieved in this run".
    removed: list[str]


def check(text: str, retrieved: dict[int, Retrieved], readable: Collection[UUID]) -> Checked:
    """The answer with only the keys that resolve to a retrieved chunk the caller may read."""
    removed: dict[int, str] = {}
    for key in keys_in(text):
        entry = retrieved.get(key)
        if entry is None:
            removed[key] = "not retrieved in this run"
        elif entry.chunk_id not in readable:
            removed[key] = "not readable by you"

    def keep(match: re.Match[str]) -> str:
        kept = [p.strip() for p in match.group(1).split(",") if int(p) not in removed]
        return f"[{', '.join(kept)}]" if kept else ""

    cleaned = _KEYS.sub(keep, text)
    # A removed key leaves "claim ." or a double space behind.
    cleaned = re.sub(r"[ \t]+([.,;:!?])", r"\1", cleaned)
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned).strip()
    citations = []
    for key in keys_in(cleaned):
        entry = retrieved[key]
        citations.append(
            Citation.of(
                key,
                document_id=entry.document_id,
                chunk_id=entry.chunk_id,
                title=entry.title,
                heading_path=entry.heading_path,
                text=entry.text,
                workspace=entry.workspace,
                page=entry.page,
            )
        )
    return Checked(
        text=cleaned,
        citations=citations,
        removed=[f"[{key}]: {why}" for key, why in removed.items()],
    )
