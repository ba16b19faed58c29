"""`auto` picks deep only on clear signs, and says why."""

from __future__ import annotations

import pytest

from app.agents.mode import choose_mode


@pytest.mark.parametrize(
    ("question", "mode", "reason"),
    [
        ("How do I roll back a deploy?", "fast", "auto: one direct question"),
        ("Compare the retry policy and caching", "deep", "auto: comparative wording ('compare')"),
        ("Postgres vs SQLite for tests", "deep", "auto: comparative wording ('vs')"),
        ("How do rollbacks work? Who approves?", "deep", "auto: several questions in one (2)"),
        (" ".join(["word"] * 60), "deep", "auto: a long brief (60 words)"),
    ],
)
def test_auto_picks_deep_only_on_clear_signs_and_says_why(
    question: str, mode: str, reason: str
) -> None:
    assert choose_mode("auto", question) == (mode, reason)


def test_an_asked_mode_is_kept() -> None:
    assert choose_mode("fast", "Compare A and B") == ("fast", "fast mode was asked for")
    assert choose_mode("deep", "Where is it?") == ("deep", "deep mode was asked for")
