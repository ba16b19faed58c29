"""Partial updates (PATCH): a field left out keeps its value, and null is accepted only where it
means something."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from app.errors import ValidationFailed


def changes(update: BaseModel, *, required: Iterable[str]) -> frozenset[str]:
    """The names of the fields the caller set (their values are the model's).

    Raises:
        ValidationFailed: null for one of `required`, the fields that must keep a value (a
            typed client may send null for "unset", which the model cannot refuse alone).
    """
    names = frozenset(update.model_fields_set)
    for field in required:
        if field in names and getattr(update, field) is None:
            raise ValidationFailed(f"{field}: may not be null")
    return names
