"""`auto` mode: deep only on clear signs, and every choice says why."""

from __future__ import annotations

import re

from app.agents.schemas import AskMode, RunMode

_COMPARATIVE = re.compile(
    r"\b(compare[sd]?|comparing|comparison|versus|vs\.?|differences?\s+between|"
    r"trade-?offs?|pros\s+and\s+cons|better\s+than|worse\s+than|which\s+is\s+(better|best)|"
    r"contrast)\b",
    re.IGNORECASE,
)
# A brief this long (in words) is research, not a lookup.
LONG_BRIEF_WORDS = 60


def choose_mode(mode: AskMode, question: str) -> tuple[RunMode, str]:
    """The mode a question runs in, and the reason for it."""
    if mode == "fast":
        return "fast", "fast mode was asked for"
    if mode == "deep":
        return "deep", "deep mode was asked for"
    comparative = _COMPARATIVE.search(question)
    if comparative:
        return "deep", f"auto: comparative wording ({comparative.group(0).lower()!r})"
    asked = question.count("?")
    if asked >= 2:
        return "deep", f"auto: several questions in one ({asked})"
    words = len(question.split())
    if words >= LONG_BRIEF_WORDS:
        return "deep", f"auto: a long brief ({words} words)"
    return "fast", "auto: one direct question"
