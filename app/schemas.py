"""Shapes shared by every domain."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T")


class ErrorDetail(BaseModel):
    code: str
    message: str
    details: Any = None


class ErrorBody(BaseModel):
    """API.md's error body: `{"error": {"code", "message", "details"?}}`."""

    error: ErrorDetail


class Page(BaseModel, Generic[T]):
    """One page of a list: `{"items": [...], "next_cursor": str | null}`."""

    items: list[T]
    next_cursor: str | None = None
