"""Shapes shared by every domain."""

from __future__ import annotations

from typing import Annotated, Any, Generic, TypeVar

from pydantic import AfterValidator, BaseModel, Strict

T = TypeVar("T")


def _refuse_nul(value: str) -> str:
    # PostgreSQL's text cannot hold U+0000: refused here, with a message that says so, rather
    # than failing in the database after the work (an embedding, say) was done.
    if "\x00" in value:
        raise ValueError("must not contain the NUL character (U+0000)")
    return value


# For every text field of an input: `Annotated[str, ..., NoNul]`, or PlainText for free text.
NoNul = AfterValidator(_refuse_nul)
PlainText = Annotated[str, NoNul]


# Numbers and flags of an input are what JSON says they are: `"10"`, `true` and `10.0` are not
# the integer 10, nor `"false"` or `0` a flag (pydantic's lax mode would take them, and a
# client's mistake would pass unseen). For JSON bodies and tool arguments, not query strings,
# which are all text.
JsonInt = Annotated[int, Strict()]
JsonBool = Annotated[bool, Strict()]


def omit_null_defaults(schema: dict[str, Any]) -> None:
    """A model's `json_schema_extra` for partial updates: a field that may be left out but not
    null is documented without its Python default of None (null is not one of its values)."""
    for field in schema.get("properties", {}).values():
        if field.get("default", ...) is None and "anyOf" not in field:
            del field["default"]


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
