"""Policy in three layers, later wins (DESIGN.md §5): the built-in table (`builtin`), the policy
file (`CORPUS_POLICY_FILE`), then what admins set (the `personas` table). Pure functions over
those layers: which persona a request runs as, and which workspaces it searches in what order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.config import RoutingMode
from app.errors import ValidationFailed
from app.kit.types import SLUG_PATTERN
from app.routing import builtin
from app.routing.schemas import LicenseEntry, LicenseSource, PersonaEntry, Policy
from app.workspaces.schemas import LICENSE_PATTERN

_SLUG = re.compile(SLUG_PATTERN)
_LICENSE = re.compile(LICENSE_PATTERN)
FILE_VERSION = 1


class PolicyFileInvalid(ValidationFailed):
    """The policy file cannot be used; the message names the file and the line."""


@dataclass(frozen=True, slots=True)
class FilePolicy:
    personas: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    licenses: Mapping[str, str] = field(default_factory=dict)


NO_FILE = FilePolicy()


def _line_of(text: str, needle: str) -> int:
    """The 1-based line where `needle` (a JSON key or value, quoted) first appears, else 1."""
    quoted = json.dumps(needle)
    for number, line in enumerate(text.splitlines(), start=1):
        if quoted in line:
            return number
    return 1


def parse_file(text: str, name: str = "policy file") -> FilePolicy:
    """The policy file's layer.

    Raises:
        PolicyFileInvalid: not JSON, or not `{"version": 1, "personas": {slug: [workspace, ...]},
            "licenses": {workspace: spdx}}`; the message names the line.
    """

    def refuse(line: int, problem: str) -> PolicyFileInvalid:
        return PolicyFileInvalid(f"CORPUS_POLICY_FILE {name}, line {line}: {problem}")

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise refuse(exc.lineno, f"not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise refuse(1, "must be a JSON object")
    unknown = sorted(set(data) - {"version", "personas", "licenses"})
    if unknown:
        raise refuse(_line_of(text, unknown[0]), f"unknown key {unknown[0]!r}")
    if data.get("version") != FILE_VERSION:
        raise refuse(_line_of(text, "version"), f'"version" must be {FILE_VERSION}')
    personas_raw = data.get("personas", {})
    licenses_raw = data.get("licenses", {})
    if not isinstance(personas_raw, dict):
        raise refuse(_line_of(text, "personas"), '"personas" must be an object')
    if not isinstance(licenses_raw, dict):
        raise refuse(_line_of(text, "licenses"), '"licenses" must be an object')
    personas: dict[str, tuple[str, ...]] = {}
    for slug, workspaces in personas_raw.items():
        if not _SLUG.match(slug):
            raise refuse(_line_of(text, slug), f"persona {slug!r} is not a slug")
        if not isinstance(workspaces, list) or not all(isinstance(w, str) for w in workspaces):
            raise refuse(_line_of(text, slug), f"persona {slug!r} must list workspace slugs")
        for workspace in workspaces:
            if not _SLUG.match(workspace):
                raise refuse(_line_of(text, workspace), f"{workspace!r} is not a workspace slug")
        personas[slug] = tuple(dict.fromkeys(workspaces))
    licenses: dict[str, str] = {}
    for workspace, spdx in licenses_raw.items():
        if not _SLUG.match(workspace):
            raise refuse(_line_of(text, workspace), f"{workspace!r} is not a workspace slug")
        if not isinstance(spdx, str) or not _LICENSE.match(spdx):
            raise refuse(
                _line_of(text, workspace), f"{workspace!r}: the license must be an SPDX id"
            )
        licenses[workspace] = spdx
    return FilePolicy(personas=personas, licenses=licenses)


def load_file(path: Path | None) -> FilePolicy:
    """The policy file's layer, read once at start-up; no file, no layer.

    Raises:
        PolicyFileInvalid: unreadable or invalid.
    """
    if path is None:
        return NO_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyFileInvalid(f"CORPUS_POLICY_FILE {path}: cannot read it ({exc})") from None
    return parse_file(text, str(path))


@dataclass(frozen=True, slots=True)
class Layers:
    """Everything the effective policy is made of."""

    mode: RoutingMode
    default_persona: str | None
    file: FilePolicy
    # Persona overrides an admin set (the `personas` table).
    admin: Mapping[str, tuple[str, ...]]
    # The workspaces that exist, with the license an admin set on each (None: from policy).
    workspaces: Mapping[str, str | None]


def personas(layers: Layers) -> dict[str, PersonaEntry]:
    """Each persona's workspaces and the layer they came from (later layers win whole lists)."""
    merged: dict[str, PersonaEntry] = {}
    if layers.mode != "custom":
        for slug, workspaces in builtin.PERSONAS.items():
            merged[slug] = PersonaEntry(workspaces=list(workspaces), source="builtin")
    for slug, workspaces in layers.file.personas.items():
        merged[slug] = PersonaEntry(workspaces=list(workspaces), source="file")
    for slug, workspaces in layers.admin.items():
        merged[slug] = PersonaEntry(workspaces=list(workspaces), source="admin")
    return merged


def license_of(layers: Layers, workspace: str) -> LicenseEntry:
    """A workspace's effective license: set on the workspace, else the file's, else the
    built-in table's (not in `custom` mode), else PROPRIETARY."""
    admin = layers.workspaces.get(workspace)
    if admin is not None:
        return LicenseEntry(license=admin, source="admin")
    if workspace in layers.file.licenses:
        return LicenseEntry(license=layers.file.licenses[workspace], source="file")
    if layers.mode != "custom" and workspace in builtin.LICENSES:
        return LicenseEntry(license=builtin.LICENSES[workspace], source="builtin")
    source: LicenseSource = "default"
    return LicenseEntry(license=builtin.PROPRIETARY, source=source)


def effective(layers: Layers) -> Policy:
    """The effective policy, as `GET /api/policy` shows it."""
    merged = personas(layers)
    named = dict.fromkeys(w for entry in merged.values() for w in entry.workspaces)
    every = dict.fromkeys([*layers.workspaces, *layers.file.licenses, *named])
    if layers.mode != "custom":
        every.update(dict.fromkeys(builtin.LICENSES))
    return Policy(
        routing_mode=layers.mode,
        default_persona=layers.default_persona,
        personas=merged,
        licenses={w: license_of(layers, w) for w in sorted(every)},
        missing_workspaces=sorted(w for w in named if w not in layers.workspaces),
    )


def resolve_persona(
    known: Iterable[str],
    *,
    explicit: str | None,
    bound: str | None,
    default: str | None,
) -> str | None:
    """The persona a request runs as: the explicit argument, else the one bound to the caller
    (the API key's, else the account's default), else CORPUS_DEFAULT_PERSONA. An inherited
    persona the policy no longer knows is passed over, so a stale binding cannot break search.

    Raises:
        ValidationFailed: the explicit persona is unknown.
    """
    names = set(known)
    if explicit is not None:
        if explicit not in names:
            raise ValidationFailed(
                f"persona: no persona named {explicit!r}", details=[{"loc": ["body", "persona"]}]
            )
        return explicit
    for inherited in (bound, default):
        if inherited and inherited in names:
            return inherited
    return None


@dataclass(frozen=True, slots=True)
class Route:
    """What a request searches: workspaces in priority order, and those the persona names that
    do not exist here."""

    workspaces: list[str]
    missing: list[str]


def route(
    layers: Layers,
    persona: str | None,
    visible: Sequence[str],
    *,
    merged: Mapping[str, PersonaEntry],
) -> Route:
    """The persona's workspaces intersected with what the caller may see, in the persona's
    order; every visible workspace with no persona, or in `all-allowed` mode."""
    if persona is None or layers.mode == "all-allowed":
        return Route(workspaces=list(visible), missing=[])
    wanted = merged[persona].workspaces
    seen = set(visible)
    return Route(
        workspaces=[w for w in wanted if w in seen],
        missing=[w for w in wanted if w not in layers.workspaces],
    )
