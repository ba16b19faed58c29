"""The agents' shapes: the modes a run resolves to, what it may write, the events it emits as it
goes (steps and tokens), and the citations it checks. Asking's API (`app.asking.schemas`) is
built of them."""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel

from app.search.schemas import chunk_url

# How a question is asked to be answered; `auto` picks for the question.
AskMode = Literal["auto", "fast", "deep"]
# The modes a run resolves to.
RunMode = Literal["fast", "deep"]

# What a run may write, as the asker allows it for that run (never the model): nothing; notes
# private to the asker; or notes visible to the organisation when everything the run read is.
Writes = Literal["off", "private", "org"]


class Step(BaseModel):
    """A tool call, a delegation or a budget hit, as it happens."""

    kind: str
    label: str
    detail: str = ""


class TokenEvent(BaseModel):
    text: str


# How much of a cited chunk a citation quotes.
SNIPPET_CHARS = 500


class Citation(BaseModel):
    key: str
    document_id: UUID
    chunk_id: UUID
    title: str
    heading_path: list[str]
    snippet: str
    url: str
    # The cited document's workspace (empty in answers kept before citations named it).
    workspace: str = ""
    # Where a synced document came from (issue #35): its path in its source, the commit and
    # date of its last change, the file's web page when its host has one, and whether code it
    # names changed since. Null and false for any other document.
    source_path: str | None = None
    commit: str | None = None
    commit_date: datetime | None = None
    source_url: str | None = None
    stale: bool = False
    # The cited passage's page in a converted PDF (from 1): shown as "p. 12". Null otherwise.
    page: int | None = None

    @classmethod
    def of(
        cls,
        key: int,
        *,
        document_id: UUID,
        chunk_id: UUID,
        title: str,
        heading_path: list[str],
        text: str,
        workspace: str,
        page: int | None = None,
    ) -> Citation:
        """The citation `[key]` of a chunk: its snippet, and the link to it in the web app."""
        return cls(
            key=f"[{key}]",
            document_id=document_id,
            chunk_id=chunk_id,
            title=title,
            heading_path=heading_path,
            snippet=text[:SNIPPET_CHARS],
            url=chunk_url(document_id, chunk_id),
            workspace=workspace,
            page=page,
        )
