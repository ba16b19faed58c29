"""SQL expressions more than one domain's queries build the same way."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, func, literal, or_
from sqlalchemy.dialects.postgresql import INTERVAL

# Last-seen and last-used times are written at most this often, so that a busy client does
# not turn every read into a write.
TOUCH_EVERY = "1 minute"


def interval(value: str) -> ColumnElement[Any]:
    """A PostgreSQL interval from its text ("14 days"), as a bound parameter."""
    return literal(value).cast(INTERVAL)


def stale(column: Any) -> ColumnElement[bool]:
    """The timestamp is unset or older than TOUCH_EVERY: time to write it again."""
    return or_(column.is_(None), column < func.now() - interval(TOUCH_EVERY))
