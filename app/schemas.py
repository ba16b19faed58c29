"""Shapes shared by every domain."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ErrorDetail(BaseModel):
    code: str
    message: str
    details: Any = None


class ErrorBody(BaseModel):
    """API.md's error body: `{"error": {"code", "message", "details"?}}`."""

    error: ErrorDetail
