"""The interim sign-in page's own script: where it sends the browser after signing in. Run in
Node (which the web app's build needs anyway) with the page's URL, as a browser would."""

from __future__ import annotations

import json
import shutil
import subprocess
from urllib.parse import quote

import pytest

from app.routers.pages import _LOGIN_SCRIPT

ORIGIN = "https://kb.example.com"


def _safe_next(next_value: str | None) -> str:
    """`safeNext` as the page computes it for `/login?next=<next_value>`."""
    # The lines before the form handler; they read only `location`.
    setup = _LOGIN_SCRIPT.split('document.getElementById("form")')[0]
    search = "" if next_value is None else "?next=" + quote(next_value, safe="")
    program = (
        f"const location = new URL({json.dumps(ORIGIN + '/login' + search)});\n"
        f"{setup}\nprocess.stdout.write(safeNext);"
    )
    node = shutil.which("node")
    assert node is not None, "Node.js is needed (make setup checks for it)"
    done = subprocess.run([node, "-e", program], capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.parametrize(
    ("next_value", "expected"),
    [
        (None, "/"),
        ("/oauth/consent?tx=abc", "/oauth/consent?tx=abc"),
        ("/documents", "/documents"),
        ("//evil.example/login", "/"),
        ("/\\evil.example/login", "/"),
        ("/\t/evil.example/login", "/"),
        ("https://evil.example/login", "/"),
        ("javascript:alert(1)", "/"),
    ],
)
def test_after_signing_in_the_browser_goes_only_to_a_page_of_this_site(
    next_value: str | None, expected: str
) -> None:
    assert _safe_next(next_value) == expected
