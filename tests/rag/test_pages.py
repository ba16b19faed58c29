"""A chunk's page: the page of a converted PDF that holds most of it."""

from __future__ import annotations

import uuid

from app.asking.extractive import answer
from app.rag.index import page_of
from app.rag.schemas import SearchHit


def test_a_chunk_is_on_the_page_that_holds_most_of_it() -> None:
    starts = [0, 100, 100, 250]  # page 2 is empty: it starts where page 3 does
    assert page_of(0, 80, starts) == 1
    # An overlap reaching back onto page 1 does not move a chunk that is mostly on page 3.
    assert page_of(90, 200, starts) == 3
    assert page_of(60, 110, starts) == 1
    assert page_of(240, 400, starts) == 4
    assert page_of(0, 10, []) is None


def test_a_citation_of_a_passage_names_its_page() -> None:
    hit = SearchHit(
        chunk_id=uuid.uuid4(),
        document_id=uuid.uuid4(),
        title="Manual",
        workspace="default",
        heading_path=[],
        text="Turn the valve twice.",
        vec_rank=None,
        kw_rank=1,
        similarity=None,
        score=1.0,
        matched_terms=["valv"],
        page=2,
    )
    cited = answer([hit], mode="keyword", question="valve")
    assert [citation.page for citation in cited.citations] == [2]
