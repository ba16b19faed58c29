"""The routing settings at work: the policy file's layer, `custom` mode, the default persona, and
`corpus serve` refusing an invalid policy file with its line named."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from app.config import Settings
from tests.running import run_fresh_corpus
from tests.support import run_corpus_here

POLICY = {
    "version": 1,
    "personas": {"newcomer": ["default", "onboarding"]},
    "licenses": {"default": "CC-BY-4.0"},
}


async def test_custom_mode_routes_by_the_file_alone_and_falls_back_to_the_default_persona(
    settings: Settings, server_url: str, data_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(POLICY, indent=2))
    async with run_fresh_corpus(
        server_url,
        data_dir,
        "corpus_policy_file",
        policy_file=path,
        routing_mode="custom",
        default_persona="newcomer",
    ) as corpus:
        editor = await corpus.account("editor")
        async with httpx.AsyncClient(base_url=corpus.url, headers=editor.bearer) as http:
            added = await http.post(
                "/api/documents",
                json={"title": "Welcome", "content": "# Welcome\n\nzqwelcome first steps."},
            )
            assert added.status_code == 201
            policy = (await http.get("/api/policy")).json()
            block = (await http.post("/api/context", json={"query": "zqwelcome steps"})).json()
    assert policy["routing_mode"] == "custom"
    assert policy["default_persona"] == "newcomer"
    assert policy["personas"] == {
        "newcomer": {"workspaces": ["default", "onboarding"], "source": "file"}
    }
    assert policy["licenses"]["default"] == {"license": "CC-BY-4.0", "source": "file"}
    assert policy["missing_workspaces"] == ["onboarding"]
    assert (block["persona"], block["workspaces"]) == ("newcomer", ["default"])
    assert block["block"].endswith("License attributions: CC-BY-4.0 (default).")


def test_serve_refuses_an_invalid_policy_file_naming_its_line(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "policy.json"
    path.write_text('{\n  "version": 1,\n  "personas": {"hiroshi": "web_platform"}\n}\n')
    monkeypatch.setenv("CORPUS_POLICY_FILE", str(path))
    monkeypatch.setenv("CORPUS_DATA_DIR", str(tmp_path / "var"))
    result = run_corpus_here(["serve", "--port", "1"], settings.database_url)
    assert result.returncode == 2
    assert f"{path}, line 3:" in result.stderr
    assert "Corpus is serving" not in result.stdout
