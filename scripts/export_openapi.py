"""Write the app's OpenAPI document to frontend/openapi.json, the source of the web app's typed
client (`npm run api:generate` turns it into frontend/src/lib/api/schema.d.ts).

    .venv/bin/python scripts/export_openapi.py      # or `make openapi`, which runs both steps

The document is the one `GET /openapi.json` serves, built without starting the lifespan: no
database, no secret file. tests/test_openapi.py fails while the committed copy is stale.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from app.config import Settings
from app.main import create_app

TARGET = Path(__file__).resolve().parent.parent / "frontend" / "openapi.json"


def openapi_document(data_dir: Path) -> dict[str, Any]:
    """The document as served. No setting changes it; these only keep the build from touching a
    real data folder or generating a secret."""
    settings = Settings(
        _env_file=None,
        data_dir=data_dir,
        embeddings_provider="hash",
        secret_key=SecretStr("export-openapi-placeholder-secret-0123456789"),
    )
    return create_app(settings).openapi()


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    with tempfile.TemporaryDirectory() as data_dir:
        text = render(openapi_document(Path(data_dir)))
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
