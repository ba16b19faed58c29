"""Partial updates (PATCH): a field left out keeps its value, and null is accepted only where it
means something."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from app.errors import ValidationFailed


def changes(update: BaseModel, *, required: Iterable[str]) -> dict[str, Any]:
    """The fields the caller set, by name.

    Raises:
        ValidationFailed: null for one of `required`, the fields that must keep a value (a
            typed client may send null for "unset", which the model cannot refuse alone).
    """
    values = update.model_dump(exclude_unset=True)
    for field in required:
        if field in values and values[field] is None:
            raise ValidationFailed(f"{field}: may not be null")
    return values
