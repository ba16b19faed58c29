"""Keyset paging: a cursor names the last row of a page by (time, id), so the next page starts
after it however many rows arrive meanwhile (API.md, "Conventions")."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TypeVar
from uuid import UUID

from app.errors import ValidationFailed
from app.schemas import Page

T = TypeVar("T")


def encode_cursor(at: datetime, row_id: UUID) -> str:
    raw = f"{at.isoformat()}|{row_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, UUID]:
    """Raises:
    ValidationFailed: the cursor was not made by `encode_cursor`.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        when, _, ident = raw.partition("|")
        at = datetime.fromisoformat(when)
        if at.tzinfo is None:
            raise ValueError("a cursor's time has a zone")
        # In UTC, as PostgreSQL holds it: a date Python parses may still fall outside that
        # range once its offset is applied (year 0 or 10000), which the driver cannot send.
        return at.astimezone(UTC), UUID(ident)
    except (ValueError, OverflowError, binascii.Error, UnicodeDecodeError) as exc:
        raise ValidationFailed("cursor: not a cursor this server issued") from exc


def keyset_page(
    rows: Sequence[T], limit: int, position: Callable[[T], tuple[datetime, UUID]]
) -> Page[T]:
    """The page of `rows` (fetched with `limit + 1`, so that one more row says another page
    follows) and the cursor of the next page, named by the last row's position."""
    items = list(rows[:limit])
    more = len(rows) > limit
    return Page[T](items=items, next_cursor=encode_cursor(*position(items[-1])) if more else None)
