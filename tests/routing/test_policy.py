"""The policy's layers, persona resolution and routing, and the policy file's refusals:
table-driven, over the pure functions (no database)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.config import RoutingMode
from app.errors import ValidationFailed
from app.main import create_app
from app.routing import builtin
from app.routing.policy import (
    NO_FILE,
    FilePolicy,
    Layers,
    PolicyFileInvalid,
    effective,
    license_of,
    parse_file,
    resolve_persona,
    route,
)
from tests.support import make_settings

FILE = FilePolicy(
    personas={"hiroshi": ("framework_prisma",), "newcomer": ("onboarding",)},
    licenses={"framework_prisma": "MIT", "onboarding": "CC-BY-4.0"},
)
EXISTING = {
    "framework_nestjs": None,
    "framework_nextjs": None,
    "framework_prisma": None,
    "web_platform": "CC0-1.0",  # an admin set it on the workspace
    "onboarding": None,
}


def _layers(
    mode: RoutingMode = "persona-routed",
    file: FilePolicy = NO_FILE,
    admin: dict[str, tuple[str, ...]] | None = None,
    workspaces: dict[str, str | None] | None = None,
) -> Layers:
    return Layers(
        mode=mode,
        default_persona=None,
        file=file,
        admin=admin or {},
        workspaces=EXISTING if workspaces is None else workspaces,
    )


# --- precedence -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("layers", "persona", "workspaces", "source"),
    [
        (_layers(), "hiroshi", list(builtin.PERSONAS["hiroshi"]), "builtin"),
        (_layers(file=FILE), "hiroshi", ["framework_prisma"], "file"),
        (_layers(file=FILE), "newcomer", ["onboarding"], "file"),
        (
            _layers(file=FILE, admin={"hiroshi": ("framework_nestjs",)}),
            "hiroshi",
            ["framework_nestjs"],
            "admin",
        ),
        (_layers(admin={"pugi": ()}), "pugi", [], "admin"),
        (_layers(mode="custom", file=FILE), "newcomer", ["onboarding"], "file"),
    ],
)
def test_a_later_layer_replaces_a_persona_s_list_and_says_where_it_came_from(
    layers: Layers, persona: str, workspaces: list[str], source: str
) -> None:
    entry = effective(layers).personas[persona]
    assert (entry.workspaces, entry.source) == (workspaces, source)


def test_custom_mode_leaves_the_built_in_table_out() -> None:
    personas = effective(_layers(mode="custom", file=FILE)).personas
    assert set(personas) == {"hiroshi", "newcomer"}
    assert "sigma" in effective(_layers(file=FILE)).personas


@pytest.mark.parametrize(
    ("mode", "file", "workspace", "license_id", "source"),
    [
        ("persona-routed", NO_FILE, "framework_prisma", "Apache-2.0", "builtin"),
        ("persona-routed", FILE, "framework_prisma", "MIT", "file"),
        ("persona-routed", FILE, "web_platform", "CC0-1.0", "admin"),
        ("persona-routed", NO_FILE, "onboarding", "PROPRIETARY", "default"),
        ("persona-routed", NO_FILE, "engineering-standards", "PROPRIETARY", "builtin"),
        ("custom", NO_FILE, "framework_prisma", "PROPRIETARY", "default"),
        ("all-allowed", NO_FILE, "db_vector", "PostgreSQL", "builtin"),
    ],
)
def test_a_workspace_s_license_comes_from_the_highest_layer_that_sets_it(
    mode: RoutingMode, file: FilePolicy, workspace: str, license_id: str, source: str
) -> None:
    entry = license_of(_layers(mode=mode, file=file), workspace)
    assert (entry.license, entry.source) == (license_id, source)


def test_the_built_in_table_ships_sixteen_personas_and_twenty_licenses() -> None:
    assert len(builtin.PERSONAS) == 16
    assert len(builtin.LICENSES) == 20
    policy = effective(_layers())
    assert policy.licenses["framework_mastra"].license == "Apache-2.0"


def test_workspaces_named_by_policy_but_absent_are_reported_not_refused() -> None:
    policy = effective(_layers())
    assert "a11y_baseline" in policy.missing_workspaces
    assert "framework_prisma" not in policy.missing_workspaces
    routed = route(_layers(), "hiroshi", list(EXISTING), merged=policy.personas)
    assert routed.missing == []
    routed = route(_layers(), "pugi", list(EXISTING), merged=policy.personas)
    assert (routed.workspaces, routed.missing) == (
        ["web_platform"],
        ["ui_registry", "a11y_baseline"],
    )


# --- resolution and routing -----------------------------------------------------------------

KNOWN = {"hiroshi", "pugi", "sigma"}


@pytest.mark.parametrize(
    ("explicit", "bound", "default", "resolved"),
    [
        ("pugi", "hiroshi", "sigma", "pugi"),
        (None, "hiroshi", "sigma", "hiroshi"),
        (None, None, "sigma", "sigma"),
        (None, None, None, None),
        (None, "retired", "sigma", "sigma"),  # a stale binding is passed over
        (None, "retired", "gone", None),
    ],
)
def test_the_persona_is_the_argument_else_the_binding_else_the_default(
    explicit: str | None, bound: str | None, default: str | None, resolved: str | None
) -> None:
    assert resolve_persona(KNOWN, explicit=explicit, bound=bound, default=default) == resolved


def test_an_unknown_explicit_persona_is_refused() -> None:
    with pytest.raises(ValidationFailed) as refused:
        resolve_persona(KNOWN, explicit="nobody", bound="pugi", default=None)
    assert refused.value.code == "validation_error"


@pytest.mark.parametrize(
    ("mode", "persona", "visible", "searched"),
    [
        # The persona's order, narrowed to what the caller may see.
        (
            "persona-routed",
            "hiroshi",
            ["framework_nextjs", "framework_prisma", "framework_nestjs", "web_platform"],
            ["framework_nestjs", "framework_nextjs", "framework_prisma", "web_platform"],
        ),
        ("persona-routed", "hiroshi", ["framework_prisma"], ["framework_prisma"]),
        ("persona-routed", None, ["a", "b"], ["a", "b"]),
        ("all-allowed", "hiroshi", ["a", "framework_prisma"], ["a", "framework_prisma"]),
    ],
)
def test_the_searched_workspaces_are_the_persona_s_within_what_the_caller_may_see(
    mode: RoutingMode, persona: str | None, visible: list[str], searched: list[str]
) -> None:
    layers = _layers(mode=mode)
    assert route(layers, persona, visible, merged=effective(layers).personas).workspaces == searched


# --- the policy file ------------------------------------------------------------------------

VALID = """{
  "version": 1,
  "personas": {"hiroshi": ["framework_prisma", "framework_prisma", "web_platform"]},
  "licenses": {"framework_prisma": "MIT"}
}
"""


def test_a_valid_policy_file_is_read_in_order_without_repeats() -> None:
    parsed = parse_file(VALID)
    assert parsed.personas == {"hiroshi": ("framework_prisma", "web_platform")}
    assert parsed.licenses == {"framework_prisma": "MIT"}


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{\n  "version": 1,\n  "personas": {,}\n}', 3),  # not JSON
        ('{\n  "version": 2\n}', 2),
        ('{\n  "version": 1,\n  "persona": {}\n}', 3),  # unknown key
        ('{\n  "version": 1,\n  "personas": {\n    "Bad Name": []\n  }\n}', 4),
        ('{\n  "version": 1,\n  "personas": {\n    "p": ["ok", "NOT OK"]\n  }\n}', 4),
        ('{\n  "version": 1,\n  "licenses": {\n    "w": "MIT OR GPL"\n  }\n}', 4),
        ("[1]", 1),
    ],
)
def test_an_invalid_policy_file_is_refused_naming_its_line(text: str, line: int) -> None:
    with pytest.raises(PolicyFileInvalid) as refused:
        parse_file(text, "policy.json")
    assert refused.value.code == "validation_error"
    assert f"policy.json, line {line}:" in refused.value.message


def test_an_invalid_policy_file_stops_start_up(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text('{"version": 1,\n "personas": []}\n')
    settings = make_settings(tmp_path, policy_file=path)
    with pytest.raises(PolicyFileInvalid):
        create_app(settings)
