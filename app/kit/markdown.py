"""The Markdown a document's title and its chunks' heading paths are read from: ATX headings and
fenced code, as CommonMark has them. One recogniser, so that a file's title (conversion) and the
headings its chunks sit under (chunking) cannot disagree."""

from __future__ import annotations

import re

# An ATX heading may be indented by up to three spaces (a fourth makes it code); its text is
# separated from the hashes by a space or a tab, and a closing run of hashes is not part of it.
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*")
_HEADING_CLOSE = re.compile(r"(?:^|[ \t]+)#+$")
# Fences are recognised at any indentation, so that a fence nested in a list item stays whole.
_FENCE_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*")


def heading(line: str) -> tuple[int, str] | None:
    """(level, text) when the line is an ATX heading, else None."""
    match = _HEADING.fullmatch(line.rstrip())
    if match is None:
        return None
    return len(match.group(1)), _HEADING_CLOSE.sub("", match.group(2) or "").strip()


def fence_opening(line: str) -> str | None:
    """The fence's marker (its run of backticks or tildes) when the line opens a code fence,
    else None. A backtick fence's info string may not contain a backtick (that is inline
    code)."""
    match = _FENCE_OPEN.match(line)
    if match is None:
        return None
    marker = match.group(1)
    if marker[0] == "`" and "`" in match.group(2):
        return None
    return marker


def closes_fence(line: str, marker: str) -> bool:
    """Whether the line closes the fence `marker` opened: the same character, at least as many,
    and nothing else on the line."""
    match = _FENCE_CLOSE.fullmatch(line.rstrip())
    return (
        match is not None and match.group(1)[0] == marker[0] and len(match.group(1)) >= len(marker)
    )


def title(markdown: str) -> str | None:
    """The text of the first level-one heading outside a code fence, if it has any."""
    fence: str | None = None
    for line in markdown.split("\n"):
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
            continue
        fence = fence_opening(line)
        if fence is not None:
            continue
        found = heading(line)
        if found is not None and found[0] == 1 and found[1]:
            return found[1]
    return None
