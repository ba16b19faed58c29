"""Shapes of what searching keeps: the documentation gaps."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel


class Gap(BaseModel):
    """Questions of similar wording that found nothing: how often, by how many people."""

    question: str
    count: int
    people: int
    last_asked_at: datetime
    examples: list[str]


class Gaps(BaseModel):
    items: list[Gap]
