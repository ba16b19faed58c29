"""Types every door and domain reads the same way: slugs (workspaces, personas), tags and
titles (documents, workspaces)."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from app.schemas import NoNul

# Lower-case, URL-safe, 2 to 64 characters. The `workspaces` table checks the same pattern.
SLUG_PATTERN = r"^[a-z0-9][a-z0-9_-]{1,63}$"

Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN)]
# Tags are compared lower-cased and travel comma-separated in forms, so they hold no comma
# and no space.
Tag = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, to_lower=True, min_length=1, max_length=64, pattern=r"^[^,\s]+$"
    ),
    NoNul,
]

MAX_TITLE_CHARS = 500
Title = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TITLE_CHARS), NoNul
]
