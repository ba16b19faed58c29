"""Sources kept in sync, over real HTTP and MCP against a running Corpus, with git repositories
and folders the tests make (issue #35, "Done when")."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import subprocess
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from app import housekeeping
from app.config import Settings
from app.db.engine import Database
from app.documents.convert import Converted
from app.documents.worker import Converter
from app.errors import Conflict
from app.sources.sync import Syncer
from tests.accounts import Account
from tests.mcp.conftest import mcp_client
from tests.running import Running, run_fresh_corpus
from tests.support import eventually


class Repo:
    """A git repository in a folder, committed to with fixed, increasing dates."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.commits = 0
        path.mkdir(parents=True)
        self.git("init", "--quiet", "--initial-branch=main")

    def git(self, *args: str) -> str:
        when = f"2026-01-{1 + self.commits:02d}T12:00:00+00:00"
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "T",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "T",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "GIT_AUTHOR_DATE": when,
            "GIT_COMMITTER_DATE": when,
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": str(self.path),
        }
        done = subprocess.run(
            ["git", *args], cwd=self.path, env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    def write(self, path: str, content: str | bytes) -> None:
        target = self.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)

    def commit(self, message: str) -> str:
        self.git("add", "--all")
        self.git("commit", "--quiet", "-m", message)
        self.commits += 1
        return self.git("rev-parse", "HEAD")


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sources")


@pytest.fixture(scope="module")
async def corpus(server_url: str, data_dir: Path, roots: Path) -> AsyncIterator[Running]:
    async with run_fresh_corpus(
        server_url,
        data_dir,
        "corpus_sources",
        source_roots=[str(roots)],
        # The context block searches every workspace; answers are extractive (no model).
        routing_mode="all-allowed",
        answer_provider="none",
    ) as running:
        yield running


@pytest.fixture(scope="module")
async def admin(corpus: Running) -> Account:
    return await corpus.account("admin")


async def _workspace(http: httpx.AsyncClient) -> str:
    slug = f"src-{uuid.uuid4().hex[:8]}"
    reply = await http.post("/api/workspaces", json={"slug": slug, "title": "Synced"})
    assert reply.status_code == 201, reply.text
    return slug


async def _add(http: httpx.AsyncClient, slug: str, **body: Any) -> dict[str, Any]:
    reply = await http.post(f"/api/workspaces/{slug}/sources", json=body)
    assert reply.status_code == 201, reply.text
    source: dict[str, Any] = reply.json()
    return source


async def _sync(http: httpx.AsyncClient, source_id: str) -> dict[str, Any]:
    reply = await http.post(f"/api/sources/{source_id}/sync", timeout=120)
    assert reply.status_code == 200, reply.text
    run: dict[str, Any] = reply.json()
    return run


def _counts(run: dict[str, Any]) -> tuple[int, ...]:
    return tuple(run[name] for name in ("added", "updated", "removed", "unchanged", "failed"))


async def _provenance(http: httpx.AsyncClient, document_id: str) -> dict[str, Any]:
    reply = await http.get(f"/api/documents/{document_id}/provenance")
    assert reply.status_code == 200, reply.text
    found: dict[str, Any] = reply.json()
    return found


async def _documents(http: httpx.AsyncClient, slug: str) -> dict[str | None, dict[str, Any]]:
    """The workspace's documents by their source (a synced one's path)."""
    reply = await http.get("/api/documents", params={"workspace": slug, "limit": 200})
    assert reply.status_code == 200
    return {doc["source"]: doc for doc in reply.json()["items"]}


async def _search(http: httpx.AsyncClient, slug: str, query: str) -> set[str]:
    reply = await http.post(
        "/api/search", json={"query": query, "workspaces": [slug], "mode": "keyword"}
    )
    assert reply.status_code == 200, reply.text
    return {hit["document_id"] for hit in reply.json()["hits"]}


async def test_a_git_source_syncs_a_commit_that_edits_renames_and_deletes_to_exactly_that(
    corpus: Running, admin: Account, roots: Path
) -> None:
    repo = Repo(roots / "docs-repo")
    repo.write("docs/alpha.md", "# Alpha\n\nAlpha explains the quokka deployment.\n")
    beta = "# Beta\n\nBeta covers the wombat rollout in detail.\n\n" + "".join(
        f"- Step {n} of the rollout.\n" for n in range(1, 9)
    )
    repo.write("docs/beta.md", beta)
    repo.write("docs/gamma.md", "# Gamma\n\nGamma documents the platypus migration.\n")
    repo.write("src/app.py", "def main():\n    return 1\n")
    first = repo.commit("docs")
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        slug = await _workspace(http)
        uploaded = await http.post(
            "/api/documents",
            json={"title": "Upload", "content": "An upload about the platypus.", "workspace": slug},
        )
        assert uploaded.status_code == 201
        source = await _add(http, slug, kind="git", location=str(repo.path))

        run = await _sync(http, source["id"])
        assert run["status"] == "succeeded"
        assert run["commit"] == first
        assert _counts(run) == (3, 0, 0, 0, 0)
        before = await _documents(http, slug)
        assert set(before) == {"docs/alpha.md", "docs/beta.md", "docs/gamma.md", None}
        beta_id = before["docs/beta.md"]["id"]
        gamma_id = before["docs/gamma.md"]["id"]
        assert await _search(http, slug, "platypus migration") >= {gamma_id}
        provenance = await _provenance(http, beta_id)
        assert (provenance["path"], provenance["commit"]) == ("docs/beta.md", first)
        assert provenance["commit_date"].startswith("2026-01-01")

        repo.write("docs/alpha.md", "# Alpha\n\nAlpha now explains the echidna deployment.\n")
        (repo.path / "docs/beta.md").rename(repo.path / "docs/renamed-beta.md")
        repo.write("docs/renamed-beta.md", beta.replace("in detail", "in great detail"))
        (repo.path / "docs/gamma.md").unlink()
        second = repo.commit("edit, rename, delete")

        run = await _sync(http, source["id"])
        assert (run["status"], run["commit"]) == ("succeeded", second)
        assert _counts(run) == (0, 2, 1, 0, 0)
        after = await _documents(http, slug)
        assert set(after) == {"docs/alpha.md", "docs/renamed-beta.md", None}
        # The renamed file kept its document, at a new version, with its new path.
        renamed = after["docs/renamed-beta.md"]
        assert (renamed["id"], renamed["version"]) == (beta_id, 2)
        assert (await _provenance(http, beta_id))["path"] == "docs/renamed-beta.md"
        assert (await http.get(f"/api/documents/{gamma_id}")).status_code == 404
        assert await _search(http, slug, "echidna deployment") == {after["docs/alpha.md"]["id"]}
        # The deleted file is gone from every door; the upload stays.
        assert gamma_id not in await _search(http, slug, "platypus migration")
        assert after[None]["id"] == uploaded.json()["id"]
        async with mcp_client(corpus.mcp_url, admin.key) as client:
            result = await client.call_tool(
                "search_docs", {"query": "platypus migration", "workspaces": [slug]}
            )
        assert result.is_error is False
        assert result.structured_content is not None
        hits = result.structured_content["hits"]
        assert gamma_id not in {hit["document_id"] for hit in hits}
        assert uploaded.json()["id"] in {hit["document_id"] for hit in hits}

        # Nothing changed: nothing is read or written.
        run = await _sync(http, source["id"])
        assert _counts(run) == (0, 0, 0, 2, 0)
        runs = (await http.get(f"/api/sources/{source['id']}/runs")).json()["items"]
        assert [r["trigger"] for r in runs] == ["manual"] * 3


async def test_a_file_that_fails_is_reported_and_the_rest_lands(
    corpus: Running, admin: Account, roots: Path
) -> None:
    folder = roots / "folder-with-a-bad-file"
    (folder / "guides").mkdir(parents=True)
    (folder / "guides/good.md").write_text("# Good\n\nThe kookaburra guide.\n")
    (folder / "guides/broken.pdf").write_bytes(b"%PDF-1.4 not really a pdf")
    (folder / "guides/empty.md").write_text("   \n")
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        slug = await _workspace(http)
        source = await _add(http, slug, kind="folder", location=str(folder))
        run = await _sync(http, source["id"])
        assert run["status"] == "succeeded"
        assert _counts(run) == (1, 0, 0, 0, 2)
        assert {f["path"] for f in run["failures"]} == {"guides/broken.pdf", "guides/empty.md"}
        assert set(await _documents(http, slug)) == {"guides/good.md"}
        # A failed file is tried again at the next sync; fixed, it lands.
        (folder / "guides/empty.md").write_text("# Empty no more\n\nThe dingo page.\n")
        run = await _sync(http, source["id"])
        assert _counts(run) == (1, 0, 0, 1, 1)
        # A folder's rename is the same bytes under a new path: the document stays.
        good_id = (await _documents(http, slug))["guides/good.md"]["id"]
        (folder / "guides/good.md").rename(folder / "guides/better.md")
        run = await _sync(http, source["id"])
        assert _counts(run) == (0, 1, 0, 1, 1)
        assert (await _documents(http, slug))["guides/better.md"]["id"] == good_id


async def test_a_folder_outside_the_roots_is_refused_and_nothing_is_kept(
    corpus: Running, admin: Account
) -> None:
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        slug = await _workspace(http)
        for body in (
            {"kind": "folder", "location": "/etc"},
            {"kind": "git", "location": "/etc"},
            {"kind": "git", "location": "file:///etc"},
            {"kind": "git", "location": "ext::sh -c touch% /tmp/pwned"},
            {"kind": "folder", "location": "relative/path"},
        ):
            reply = await http.post(f"/api/workspaces/{slug}/sources", json=body)
            assert reply.status_code == 422, body
            assert reply.json()["error"]["code"] == "validation_error"
        assert (await http.get(f"/api/workspaces/{slug}/sources")).json()["items"] == []


def _github(secret: str, body: bytes) -> dict[str, str]:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature-256": f"sha256={digest}", "X-GitHub-Event": "push"}


async def test_a_push_webhook_with_a_good_signature_syncs_and_a_bad_one_changes_nothing(
    corpus: Running, admin: Account, roots: Path
) -> None:
    repo = Repo(roots / "hooked")
    repo.write("README.md", "# Hooked\n\nThe first version of the numbat notes.\n")
    repo.commit("first")
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        slug = await _workspace(http)
        source = await _add(http, slug, kind="git", location=str(repo.path), branch="main")
        secret = source["webhook_secret"]
        assert source["webhook_url"].endswith(f"/api/sources/{source['id']}/webhook")
        hook = f"/api/sources/{source['id']}/webhook"
        body = json.dumps({"ref": "refs/heads/main"}).encode()
        async with httpx.AsyncClient(base_url=corpus.url) as anonymous:
            for headers in (
                _github("not the secret", body),
                {"X-Gitea-Signature": "00" * 32},
                {"X-Gitlab-Token": "not the secret"},
                {},
            ):
                refused = await anonymous.post(hook, content=body, headers=headers)
                assert refused.status_code == 403
                assert refused.json()["error"]["code"] == "forbidden"
            unknown = await anonymous.post(
                f"/api/sources/{uuid.uuid4()}/webhook", content=body, headers=_github(secret, body)
            )
            assert unknown.status_code == 403
            assert (await http.get(f"/api/sources/{source['id']}/runs")).json()["items"] == []

            # A push to another branch is heard, and starts nothing.
            other = json.dumps({"ref": "refs/heads/feature"}).encode()
            reply = await anonymous.post(hook, content=other, headers=_github(secret, other))
            assert (reply.status_code, reply.json()) == (202, {"syncing": False})

            reply = await anonymous.post(hook, content=body, headers=_github(secret, body))
            assert (reply.status_code, reply.json()) == (202, {"syncing": True})

            async def synced(count: int) -> bool:
                runs = (await http.get(f"/api/sources/{source['id']}/runs")).json()["items"]
                return len(runs) == count and runs[0]["status"] == "succeeded"

            await eventually(lambda: synced(1), "the webhook's sync")
            assert set(await _documents(http, slug)) == {"README.md"}

            # GitLab sends the secret; Gitea signs as GitHub does, without the prefix.
            repo.write("README.md", "# Hooked\n\nThe second version of the numbat notes.\n")
            repo.commit("second")
            reply = await anonymous.post(hook, content=body, headers={"X-Gitlab-Token": secret})
            assert reply.status_code == 202
            await eventually(lambda: synced(2), "GitLab's sync")
            gitea = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
            reply = await anonymous.post(hook, content=body, headers={"X-Gitea-Signature": gitea})
            assert reply.status_code == 202
            await eventually(lambda: synced(3), "Gitea's sync")
        runs = (await http.get(f"/api/sources/{source['id']}/runs")).json()["items"]
        assert [(r["trigger"], r["updated"]) for r in runs] == [
            ("webhook", 0),
            ("webhook", 1),
            ("webhook", 0),
        ]


async def test_two_processes_syncing_one_source_at_once_do_the_work_once(
    corpus: Running, admin: Account, roots: Path
) -> None:
    repo = Repo(roots / "contended")
    for number in range(12):
        repo.write(f"notes/n{number}.md", f"# Note {number}\n\nNote {number} of the bilby.\n")
    repo.commit("notes")
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        slug = await _workspace(http)
        source = await _add(http, slug, kind="git", location=str(repo.path))
    resources = corpus.app.state.resources
    # A second process: its own pool, its own syncer, the same database.
    other_db = Database(corpus.settings.database_url)
    try:
        other = Syncer(
            db=other_db,
            embedder=resources.embedder,
            settings=corpus.settings,
            converter=resources.converter,
            box=resources.box,
        )
        results = await asyncio.gather(
            resources.syncs.syncer.sync(uuid.UUID(source["id"]), "manual"),
            other.sync(uuid.UUID(source["id"]), "manual"),
            return_exceptions=True,
        )
    finally:
        await other_db.dispose()
    runs = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, BaseException)]
    assert all(isinstance(r, Conflict) for r in refused), refused
    assert sum(run.added for run in runs) == 12
    async with corpus.db.read() as conn:
        count = await conn.scalar(
            text(
                "SELECT count(*) FROM documents d JOIN workspaces w ON w.id = d.workspace_id "
                "WHERE w.slug = :slug"
            ),
            {"slug": slug},
        )
    assert count == 12


async def test_a_document_whose_named_code_changed_later_is_flagged_until_it_is_updated(
    corpus: Running, admin: Account, roots: Path
) -> None:
    repo = Repo(roots / "stale")
    guide = (
        "# Config\n\nCall `load_config` in `src/config.py` to read the settings.\n\n"
        "```python\nsettings = load_config(path)\n```\n"
    )
    repo.write("docs/config.md", guide)
    repo.write("docs/other.md", "# Other\n\nNothing about code, only the quoll.\n")
    repo.write("src/config.py", "def load_config(path):\n    return {}\n")
    repo.commit("config")
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        slug = await _workspace(http)
        source = await _add(http, slug, kind="git", location=str(repo.path))
        await _sync(http, source["id"])
        documents = await _documents(http, slug)
        config_id = documents["docs/config.md"]["id"]
        assert (await _provenance(http, config_id))["stale"] is False

        repo.write("src/config.py", "def load_config(path, strict=True):\n    return {}\n")
        changed = repo.commit("load_config is strict")
        await _sync(http, source["id"])
        provenance = await _provenance(http, config_id)
        assert provenance["stale"] is True
        [flag] = provenance["stale_commits"]
        assert flag["commit"] == changed
        assert flag["paths"] == ["src/config.py"]
        assert flag["identifiers"] == ["load_config"]
        other = await _provenance(http, documents["docs/other.md"]["id"])
        assert other["stale"] is False
        stale = (await http.get("/api/sources/stale", params={"workspace": slug})).json()
        assert [item["document_id"] for item in stale["items"]] == [config_id]
        await _flagged_at_every_door(corpus, admin, http, slug, config_id, stale=True)

        repo.write("docs/config.md", guide.replace("read the settings", "read strict settings"))
        repo.commit("the guide follows")
        await _sync(http, source["id"])
        assert (await _provenance(http, config_id))["stale"] is False
        stale = (await http.get("/api/sources/stale", params={"workspace": slug})).json()
        assert stale["items"] == []
        await _flagged_at_every_door(corpus, admin, http, slug, config_id, stale=False)


async def _sse_done(http: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    async with http.stream("POST", "/api/ask", json=body, timeout=60) as response:
        assert response.status_code == 200
        name, data = "message", ""
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                name = line.removeprefix("event:").strip()
            elif line.startswith("data:"):
                data += line.removeprefix("data:").strip()
            elif line == "" and data:
                if name == "done":
                    done: dict[str, Any] = json.loads(data)
                    return done
                name, data = "message", ""
    raise AssertionError("no done event")


async def _flagged_at_every_door(
    corpus: Running,
    admin: Account,
    http: httpx.AsyncClient,
    slug: str,
    document_id: str,
    *,
    stale: bool,
) -> None:
    """The document's stale flag on a REST search hit, an MCP search hit, the context block's
    source (and its text), and an answer's citation."""
    query = "load_config strict settings"
    reply = await http.post("/api/search", json={"query": query, "workspaces": [slug]})
    [hit] = [h for h in reply.json()["hits"] if h["document_id"] == document_id][:1]
    assert (hit["stale"], hit["source_path"]) == (stale, "docs/config.md")
    async with mcp_client(corpus.mcp_url, admin.key) as client:
        result = await client.call_tool("search_docs", {"query": query, "workspaces": [slug]})
        read = await client.call_tool("read_document", {"document_id": document_id})
        listed = await client.call_tool("list_documents", {"workspace": slug})
        flagged = await client.call_tool("list_documents", {"workspace": slug, "stale": True})
    assert result.structured_content is not None
    [mcp_hit] = [h for h in result.structured_content["hits"] if h["document_id"] == document_id][
        :1
    ]
    assert mcp_hit["stale"] is stale
    # MCP's documents carry where they came from, as its hits do.
    assert read.structured_content is not None
    shown = read.structured_content["document"]
    assert (shown["source_path"], shown["stale"]) == ("docs/config.md", stale)
    assert shown["commit"] == mcp_hit["commit"]
    assert shown["commit_date"] is not None
    assert listed.structured_content is not None
    assert flagged.structured_content is not None
    by_path = {doc["source_path"]: doc for doc in listed.structured_content["items"]}
    assert by_path["docs/config.md"] == shown
    assert by_path["docs/other.md"]["stale"] is False
    assert [doc["id"] for doc in flagged.structured_content["items"]] == (
        [document_id] if stale else []
    )
    # And the REST list finds them: `stale=true` those flagged, `stale=false` the others, each
    # carrying the flag and where it came from as MCP's list does.
    everything = {doc["id"] for doc in listed.structured_content["items"]}
    assert len(everything) == 2
    flagged_ids = {document_id} if stale else set()
    for wanted, expected in ((True, flagged_ids), (False, everything - flagged_ids)):
        reply = await http.get(
            "/api/documents", params={"workspace": slug, "stale": str(wanted).lower()}
        )
        assert reply.status_code == 200, reply.text
        assert {doc["id"] for doc in reply.json()["items"]} == expected
        assert all(doc["stale"] is wanted for doc in reply.json()["items"])
    rest_listed = await http.get("/api/documents", params={"workspace": slug})
    assert {doc["id"]: doc for doc in rest_listed.json()["items"]}[document_id] == shown
    refused = await http.get("/api/documents", params={"stale": "perhaps"})
    assert refused.status_code == 422
    # Search narrows to them too, at both doors, in both modes that read the halves.
    for mode in ("hybrid", "keyword"):
        for wanted in (True, False):
            body = {"query": query, "workspaces": [slug], "mode": mode, "stale": wanted}
            reply = await http.post("/api/search", json=body)
            assert reply.status_code == 200, reply.text
            found = {h["document_id"] for h in reply.json()["hits"]}
            assert (document_id in found) is (wanted is stale), (mode, wanted)
            assert all(h["stale"] is wanted for h in reply.json()["hits"]), (mode, wanted)
    async with mcp_client(corpus.mcp_url, admin.key) as client:
        narrowed = await client.call_tool(
            "search_docs", {"query": query, "workspaces": [slug], "stale": True}
        )
    assert narrowed.structured_content is not None
    assert [h["document_id"] for h in narrowed.structured_content["hits"]][:1] == (
        [document_id] if stale else []
    )
    refused = await http.post("/api/search", json={"query": query, "stale": "perhaps"})
    assert refused.status_code == 422
    context = (await http.post("/api/context", json={"query": query, "top_k": 10})).json()
    [source] = [s for s in context["sources"] if s["document_id"] == document_id][:1]
    assert source["stale"] is stale
    assert ("may be stale" in context["block"]) is stale
    done = await _sse_done(http, {"question": query, "workspaces": [slug], "mode": "fast"})
    [citation] = [c for c in done["citations"] if c["document_id"] == document_id][:1]
    assert (citation["stale"], citation["source_path"]) == (stale, "docs/config.md")
    assert citation["commit_date"] is not None


async def test_removing_a_source_removes_its_documents_and_keeps_the_others(
    corpus: Running, admin: Account, roots: Path
) -> None:
    folder = roots / "removable"
    folder.mkdir()
    (folder / "page.md").write_text("# Page\n\nThe pademelon page.\n")
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        slug = await _workspace(http)
        uploaded = await http.post(
            "/api/documents", json={"title": "Kept", "content": "Kept.", "workspace": slug}
        )
        source = await _add(http, slug, kind="folder", location=str(folder))
        await _sync(http, source["id"])
        assert (await http.delete(f"/api/sources/{source['id']}")).status_code == 204
        assert set(await _documents(http, slug)) == {None}
        assert (await _documents(http, slug))[None]["id"] == uploaded.json()["id"]
        assert (await http.get(f"/api/sources/{source['id']}")).status_code == 404


async def test_a_run_whose_process_died_is_marked_failed_and_a_live_one_is_not(
    corpus: Running, admin: Account, roots: Path
) -> None:
    folders = [roots / "died", roots / "alive"]
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        slug = await _workspace(http)
        ids = []
        for folder in folders:
            folder.mkdir()
            ids.append((await _add(http, slug, kind="folder", location=str(folder)))["id"])
        async with corpus.db.write() as conn:
            for source_id in ids:
                await conn.execute(
                    text("INSERT INTO source_runs (source_id, trigger) VALUES (:id, 'manual')"),
                    {"id": source_id},
                )
            # The second one's process still renews its lease.
            await conn.execute(
                text(
                    "UPDATE sources SET lease_owner = 'elsewhere', "
                    "lease_expires_at = now() + interval '5 minutes' WHERE id = :id"
                ),
                {"id": ids[1]},
            )
        counts = await housekeeping.prune_expired(corpus.db)
        assert counts["abandoned source syncs"] >= 1
        [died] = (await http.get(f"/api/sources/{ids[0]}/runs")).json()["items"]
        assert (died["status"], died["finished_at"] is not None) == ("failed", True)
        assert died["error"]
        [alive] = (await http.get(f"/api/sources/{ids[1]}/runs")).json()["items"]
        assert alive["status"] == "running"
        # While the lease is held, a manual sync is refused.
        refused = await http.post(f"/api/sources/{ids[1]}/sync")
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "conflict"


async def test_an_edit_keeps_the_synced_commit_unless_it_moves_and_a_paused_source_ignores_pushes(
    corpus: Running, admin: Account, roots: Path
) -> None:
    repo = Repo(roots / "edited")
    repo.write("guide.md", "# Guide\n\nThe potoroo guide.\n")
    first = repo.commit("guide")
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        slug = await _workspace(http)
        source = await _add(http, slug, kind="git", location=str(repo.path))
        await _sync(http, source["id"])
        path = f"/api/sources/{source['id']}"
        same = await http.patch(path, json={"location": str(repo.path), "schedule_minutes": 30})
        assert same.status_code == 200
        assert (same.json()["last_commit"], same.json()["schedule_minutes"]) == (first, 30)
        moved = await http.patch(path, json={"branch": "main"})
        assert (moved.json()["branch"], moved.json()["last_commit"]) == ("main", None)
        refused = await http.patch(path, json={"location": None})
        assert refused.status_code == 422
        paused = await http.patch(path, json={"paused": True})
        assert paused.json()["paused"] is True
        body = json.dumps({"ref": "refs/heads/main"}).encode()
        async with httpx.AsyncClient(base_url=corpus.url) as anonymous:
            reply = await anonymous.post(
                f"{path}/webhook", content=body, headers=_github(source["webhook_secret"], body)
            )
        assert (reply.status_code, reply.json()) == (202, {"syncing": False})
        audit = (await http.get("/api/audit", params={"target": source["id"]})).json()["items"]
        assert {entry["action"] for entry in audit} == {"source.create", "source.update"}
        assert all("secret" not in json.dumps(entry["after"] or {}) for entry in audit)


class _Held(Converter):
    """The process's converter, held at the gate: a sync that stays in flight until the test
    lets it go."""

    def __init__(self, inner: Converter, settings: Settings) -> None:
        super().__init__(settings)
        self.inner = inner
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def to_markdown(
        self, data: bytes, *, filename: str | None, content_type: str | None
    ) -> Converted:
        self.entered.set()
        await self.gate.wait()
        return await self.inner.to_markdown(data, filename=filename, content_type=content_type)


async def test_a_push_while_another_process_syncs_is_recorded_and_synced_when_that_sync_ends(
    corpus: Running, admin: Account, roots: Path
) -> None:
    repo = Repo(roots / "pushed-during")
    repo.write("guide.md", "# Guide\n\nThe first word on the quokka.\n")
    repo.commit("first")
    resources = corpus.app.state.resources
    async with httpx.AsyncClient(base_url=corpus.url, headers=admin.bearer) as http:
        slug = await _workspace(http)
        source = await _add(http, slug, kind="git", location=str(repo.path), branch="main")
        source_id = uuid.UUID(source["id"])
        # Another process syncs the source, held in its first conversion.
        other_db = Database(corpus.settings.database_url)
        held = _Held(resources.converter, corpus.settings)
        other = Syncer(
            db=other_db,
            embedder=resources.embedder,
            settings=corpus.settings,
            converter=held,
            box=resources.box,
        )
        running = asyncio.create_task(other.sync(source_id, "manual"))
        try:
            # A deadline, not a wait: a sync that never converts fails here, not by hanging.
            async with asyncio.timeout(60):
                await held.entered.wait()
            repo.write("guide.md", "# Guide\n\nThe second word on the wallaroo.\n")
            second = repo.commit("second")
            body = json.dumps({"ref": "refs/heads/main"}).encode()
            async with httpx.AsyncClient(base_url=corpus.url) as anonymous:
                reply = await anonymous.post(
                    f"/api/sources/{source_id}/webhook",
                    content=body,
                    headers=_github(source["webhook_secret"], body),
                )
            assert (reply.status_code, reply.json()) == (202, {"syncing": True})

            async def recorded() -> bool:
                async with corpus.db.read() as conn:
                    requested = await conn.scalar(
                        text("SELECT sync_requested_at FROM sources WHERE id = :id"),
                        {"id": source_id},
                    )
                return requested is not None

            await eventually(recorded, "the push recorded on the source")
            # The push started no run of its own: the holder's is the only one.
            runs = (await http.get(f"/api/sources/{source_id}/runs")).json()["items"]
            assert [run["status"] for run in runs] == ["running"]
            held.gate.set()
            first_run = await running
        finally:
            held.gate.set()
            # The other process's sync ends before its pool goes, whatever failed above.
            await asyncio.gather(running, return_exceptions=True)
            await other_db.dispose()
        assert first_run.added == 1
        runs = (await http.get(f"/api/sources/{source_id}/runs")).json()["items"]
        assert [(run["status"], run["commit"], run["updated"]) for run in runs[:1]] == [
            ("succeeded", second, 1)
        ]
        assert len(runs) == 2
        assert await _search(http, slug, "wallaroo")
        assert not await _search(http, slug, "quokka")
        shown = (await http.get(f"/api/sources/{source_id}")).json()
        assert (shown["last_commit"], shown["syncing"]) == (second, False)
        async with corpus.db.read() as conn:
            assert await conn.scalar(
                text("SELECT sync_requested_at IS NULL FROM sources WHERE id = :id"),
                {"id": source_id},
            )
