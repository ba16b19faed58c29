"""The extractive answer reads as an answer: one notice, then each passage quoted in whole
sentences around what it matched, Markdown kept, cited by its key."""

from __future__ import annotations

import uuid

from app.asking import extractive
from app.rag.schemas import SearchHit

CHUNK = (
    "the previous section, cut mid-sentence. # Retries\n\n"
    "The HTTP client retries transient 5xx errors three times with exponential backoff "
    "starting at 200 ms. Timeouts are not retried.\n\n"
    "```sh\nexport KEY_ID=abc\n```\n\n"
    "Unrelated words about caching follow here. More of them, to fill the chunk. "
    "And the chunk is cut in the mid"
)


def _hit(text: str, title: str = "Retry policy", matched: list[str] | None = None) -> SearchHit:
    return SearchHit(
        chunk_id=uuid.uuid4(),
        document_id=uuid.uuid4(),
        title=title,
        workspace="default",
        heading_path=["Retries"],
        text=text,
        vec_rank=1,
        kw_rank=None,
        similarity=0.8,
        score=0.03,
        matched_terms=matched or [],
    )


def test_a_quote_is_whole_sentences_around_the_matched_words() -> None:
    quoted = extractive.quote(CHUNK, {"backoff", "retries"}, budget=130)
    assert quoted.startswith("The HTTP client retries")
    assert quoted.endswith("Timeouts are not retried.")


def test_a_quote_leaves_out_fragments_at_the_chunks_cuts_and_its_headings() -> None:
    quoted = extractive.quote(CHUNK, {"caching", "backoff"}, budget=10_000)
    assert "the previous section" not in quoted
    assert "cut in the mid" not in quoted
    assert "# Retries" not in quoted
    assert "```sh\nexport KEY_ID=abc\n```" in quoted


def test_the_answer_says_once_that_no_model_answered_and_cites_each_passage() -> None:
    hits = [_hit(CHUNK), _hit("Search results are cached for ten minutes.", title="Caching")]
    answer = extractive.answer(hits, mode="fast", question="How do retries back off?")
    assert answer.answer.count("no answer model is configured") == 1
    assert "ANSWER_PROVIDER" in answer.answer
    assert [c.key for c in answer.citations] == ["[1]", "[2]"]
    assert "[1] **Retry policy** — Retries\n\n> The HTTP client retries" in answer.answer
    assert "[2] **Caching** — Retries" in answer.answer
    assert "> export KEY_ID=abc" in answer.answer


def test_a_heading_path_that_starts_with_the_title_says_the_title_once() -> None:
    hit = _hit("Search results are cached for ten minutes.", title="Retries")
    answer = extractive.answer([hit], mode="fast", question="cache")
    assert "[1] **Retries**\n\n> Search results" in answer.answer


def test_with_nothing_found_the_answer_says_so_without_the_notice() -> None:
    answer = extractive.answer([], mode="fast", question="Kubernetes?")
    assert answer.answer == extractive.NOTHING
    assert answer.citations == []
