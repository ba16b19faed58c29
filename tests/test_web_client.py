"""The web app's typed client is generated from frontend/openapi.json; that copy must be the
document the app serves, so the client cannot drift from the server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.main import create_app
from tests.support import PROJECT_ROOT, make_settings

COMMITTED = PROJECT_ROOT / "frontend" / "openapi.json"


def _differences(committed: Any, served: Any, where: str = "") -> list[str]:
    """Where two JSON values differ, as paths like `/paths//healthz/get/operationId`."""
    if isinstance(committed, dict) and isinstance(served, dict):
        return [
            found
            for key in sorted(committed.keys() | served.keys())
            for found in (
                _differences(committed.get(key), served.get(key), f"{where}/{key}")
                if key in committed and key in served
                else [f"{where}/{key}"]
            )
        ]
    return [] if committed == served else [where or "/"]


def test_the_committed_openapi_document_is_the_one_the_app_serves(tmp_path: Path) -> None:
    served = json.loads(json.dumps(create_app(make_settings(tmp_path)).openapi()))
    committed = json.loads(COMMITTED.read_text(encoding="utf-8"))
    stale = _differences(committed, served)
    assert stale == [], (
        "frontend/openapi.json is stale; run `make openapi` and commit both files it writes: "
        + ", ".join(stale[:10])
    )
