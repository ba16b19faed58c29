"""The capability table is the authority: every action it declares is checked by a service,
through `Principal.require`, and no service decides by role another way."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

from app.access.capabilities import Action

APP = Path(__file__).resolve().parents[2] / "app"


def _service_modules() -> list[Path]:
    # Routing's policy administration is a service beside routing's (its layer "service : admin").
    return sorted([*APP.glob("**/service.py"), APP / "routing" / "admin.py"])


def _required_actions(module: Path) -> set[str]:
    """The actions a module passes to `<principal>.require(...)`."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "require"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return found


def test_every_declared_action_is_required_by_a_service() -> None:
    assert _service_modules()
    required = set().union(*(_required_actions(module) for module in _service_modules()))
    declared = set(get_args(Action))
    assert declared - required == set(), "declared actions no service checks"
    assert required - declared == set(), "checked actions the table does not declare"


def _is_principal(node: ast.expr, attribute: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "principal"
        and node.attr == attribute
    )


def test_services_check_roles_only_through_the_table() -> None:
    # `principal.role` compared by hand, or `principal.can(...)` deciding quietly, would bypass
    # `require` and its refusal. What a reply shows to some callers only is `principal.shown`,
    # named so that a reader sees it narrows a reply and decides nothing.
    for module in _service_modules():
        where = module.relative_to(APP.parent)
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                assert not any(_is_principal(o, "role") for o in operands), (
                    f"{where}:{node.lineno} compares the role by hand"
                )
            if isinstance(node, ast.Call):
                assert not _is_principal(node.func, "can"), (
                    f"{where}:{node.lineno} checks a capability without require()"
                )
