"""The context block: the license footnote's rules, eviction under a small budget, and clipping
(table-driven, no database)."""

from __future__ import annotations

import pytest

from app.routing.context import (
    FOOTNOTE_LEAD,
    Passage,
    build,
    clip,
    footnote,
    per_chunk_budget,
    tokens,
)


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        ([], ""),
        (
            [("mira_knowledge", "PROPRIETARY"), ("devops-handbook", "PROPRIETARY")],
            "PROPRIETARY (mira_knowledge, devops-handbook).",
        ),
        (
            [
                ("engineering-standards", "PROPRIETARY"),
                ("security_baseline", "CC-BY-SA-4.0"),
                ("engineering-standards", "PROPRIETARY"),
            ],
            "CC-BY-SA-4.0 (security_baseline).",
        ),
        (
            [("framework_nestjs", "MIT"), ("framework_nestjs", "MIT")],
            "MIT (framework_nestjs).",
        ),
        (
            [
                ("framework_nestjs", "MIT"),
                ("framework_prisma", "Apache-2.0"),
                ("framework_nextjs", "MIT"),
            ],
            "MIT (framework_nestjs, framework_nextjs); Apache-2.0 (framework_prisma).",
        ),
    ],
    ids=["none", "all proprietary", "mixed", "one license", "several"],
)
def test_the_footnote_groups_sources_by_license_leaving_proprietary_out_unless_alone(
    sources: list[tuple[str, str]], expected: str
) -> None:
    assert footnote(sources) == (FOOTNOTE_LEAD + expected if expected else "")


def _passage(name: str, score: float | None, chars: int = 200) -> Passage:
    return Passage(workspace="ws", license="MIT", title=name, text="x" * chars, score=score)


@pytest.mark.parametrize(
    ("budget", "kept"),
    [
        (2000, ["a", "b", "c", "d"]),
        (69, ["a", "b", "c", "d"]),
        (68, ["a", "b", "c"]),
        (54, ["a", "b"]),
        (41, ["a"]),
    ],
)
def test_the_lowest_scored_passages_are_evicted_first_until_the_block_fits(
    budget: int, kept: list[str]
) -> None:
    # 40 characters each (10 tokens): none is clipped at these budgets.
    passages = [
        _passage("c", 0.2, 40),
        _passage("a", 0.9, 40),
        _passage("d", 0.1, 40),
        _passage("b", 0.5, 40),
    ]
    block = build(passages, budget)
    assert all(p.text == "x" * 40 for p in block.passages)
    assert [p.title for p in block.passages] == kept
    assert block.tokens == tokens(block.text) <= budget
    assert block.text.startswith("[1] a (ws)\n")
    assert block.text.endswith(FOOTNOTE_LEAD + "MIT (ws).")


def test_without_scores_from_every_source_the_persona_s_order_stands() -> None:
    passages = [_passage("first", None, 40), _passage("second", 0.9, 40), _passage("third", 0.1)]
    assert [p.title for p in build(passages, 54).passages] == ["first", "second"]


def test_a_last_passage_too_long_for_the_budget_is_clipped_to_fit_or_dropped() -> None:
    block = build([_passage("a", 0.9, chars=4000)], 60)
    assert [p.title for p in block.passages] == ["a"]
    assert block.tokens <= 60
    assert block.passages[0].text.endswith("…")
    assert build([_passage("a", 0.9, chars=4000)], 20).passages == []


def test_each_passage_is_clipped_to_its_share_of_the_budget() -> None:
    block = build([_passage("a", 0.9, chars=10_000), _passage("b", 0.8, chars=40)], 2000)
    first, second = block.passages
    assert tokens(first.text) <= per_chunk_budget(2000) == 500
    assert second.text == "x" * 40


@pytest.mark.parametrize(
    ("text", "max_tokens", "expected"),
    [
        ("short enough", 10, "short enough"),
        ("one two three four five six seven", 5, "one two three four…"),
        ("x" * 30, 5, "x" * 19 + "…"),
    ],
)
def test_clipping_cuts_at_a_word_boundary_when_one_is_near(
    text: str, max_tokens: int, expected: str
) -> None:
    assert clip(text, max_tokens) == expected
    assert len(clip(text, max_tokens)) <= max_tokens * 4
