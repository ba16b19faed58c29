"""The extractive answer: with no answer model configured (or when a run must stop before the
model can answer), a question is answered with the passages that answer it best, cited, and the
reply says so."""

from __future__ import annotations

from collections.abc import Sequence

from app.asking.schemas import Answer, Citation
from app.rag.schemas import SearchHit

NOTE = (
    "Extractive answer: no answer model is configured on this server (ANSWER_PROVIDER), so "
    "these are the passages that answer the question best, cited."
)
NOTHING = (
    "The corpus has nothing that answers this question; it was recorded as a documentation gap."
)
# How many passages an answer cites.
PASSAGES = 5


def answer(hits: Sequence[SearchHit], *, mode: str) -> Answer:
    """The answer the hits make, best first, each cited by its `[n]` key."""
    citations = [
        Citation.of(
            i,
            document_id=hit.document_id,
            chunk_id=hit.chunk_id,
            title=hit.title,
            heading_path=hit.heading_path,
            text=hit.text,
        )
        for i, hit in enumerate(hits, start=1)
    ]
    if citations:
        passages = "\n\n".join(f"{c.key} {c.title}: {c.snippet}" for c in citations)
        text = f"{NOTE}\n\n{passages}"
    else:
        text = NOTHING
    return Answer(answer=text, citations=citations, mode=mode, extractive=True)
