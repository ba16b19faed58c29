"""Time a git source's sync: a repository of a few thousand Markdown files, synced cold, then
again after one commit that edits, renames and deletes ten files (issue #35).

    .venv/bin/python scripts/bench_sources.py [--files 3000] [--provider hash]

The repository is generated in a temporary folder (no network), with a history of a few
commits so that the stale flags have something to read; a throwaway database on the configured
server (the embedded one unless DATABASE_URL is set) gets a workspace and the source, and the
product's own sync (`app.sources.sync.Syncer`) runs twice. `--provider hash` (the default) times
the sync itself: reading, converting, chunking, writing, the BM25 statistics, the stale flags;
`--provider local` adds the model's embedding of every chunk. Prints one JSON object. Not part
of `make test`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, get_args

from app.access.principal import LOCAL_ADMIN
from app.bench.evaluation import throwaway_database
from app.config import EmbeddingsProvider, Settings
from app.documents.worker import Converter
from app.kit.secrets import SecretBox
from app.rag.embeddings import make_embedder
from app.sources import service as sources_service
from app.sources.schemas import SourceCreate
from app.sources.sync import Syncer
from app.workspaces import service as workspaces_service
from app.workspaces.schemas import WorkspaceCreate

_VOCABULARY = (
    "deploy rollback release cluster queue worker index shard replica backup restore migrate "
    "schema token session cache budget latency throughput incident runbook alert metric trace"
)
WORDS = _VOCABULARY.split()


def _git(repo: Path, *args: str, when: int) -> None:
    stamp = f"2026-03-{1 + when:02d}T12:00:00+00:00"
    env = {
        # git needs the PATH it runs by; the rest is fixed so the history is the same each run.
        "PATH": os.environ["PATH"],  # noqa: TID251
        "GIT_AUTHOR_NAME": "Bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "Bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": stamp,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _page(rng: random.Random, number: int) -> str:
    sections = []
    for section in range(4):
        words = " ".join(rng.choice(WORDS) for _ in range(120))
        sections.append(f"## Part {section}\n\n{words.capitalize()}.\n")
    code = f"```python\nresult = handler_{number % 50}(config)\n```\n"
    return f"# Page {number}\n\nSee `src/module_{number % 50}.py`.\n\n{code}\n" + "\n".join(
        sections
    )


def make_repository(root: Path, files: int) -> Path:
    rng = random.Random(35)
    repo = root / "docs-repo"
    (repo / "src").mkdir(parents=True)
    _git(repo, "init", "--quiet", "--initial-branch=main", when=0)
    for module in range(50):
        (repo / "src" / f"module_{module}.py").write_text(
            f"def handler_{module}(config):\n    return config\n"
        )
    for number in range(files):
        folder = repo / "docs" / f"area-{number % 40}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"page-{number}.md").write_text(_page(rng, number))
    _git(repo, "add", "--all", when=0)
    _git(repo, "commit", "--quiet", "-m", "pages", when=0)
    # Code changes after the pages: some of them go stale.
    for module in range(0, 50, 10):
        (repo / "src" / f"module_{module}.py").write_text(
            f"def handler_{module}(config, strict=True):\n    return config\n"
        )
    _git(repo, "commit", "--quiet", "-am", "strict handlers", when=1)
    return repo


def change_ten(repo: Path) -> None:
    """A commit touching ten files: six edits, two renames, two deletions."""
    pages = sorted((repo / "docs").rglob("*.md"))
    for page in pages[:6]:
        page.write_text(page.read_text() + "\n## Update\n\nA new paragraph about the replica.\n")
    for page in pages[6:8]:
        page.rename(page.with_name(f"renamed-{page.name}"))
    for page in pages[8:10]:
        page.unlink()
    _git(repo, "add", "--all", when=2)
    _git(repo, "commit", "--quiet", "-m", "ten files", when=2)


async def measure(files: int, provider: EmbeddingsProvider) -> dict[str, Any]:
    settings = Settings(embeddings_provider=provider)
    with tempfile.TemporaryDirectory(prefix="corpus-bench-sources-") as folder:
        root = Path(folder)
        started = time.perf_counter()
        repo = make_repository(root, files)
        generated_s = time.perf_counter() - started
        settings = Settings(
            embeddings_provider=provider, source_roots=[str(root)], data_dir=settings.data_dir
        )
        box = SecretBox(settings.resolved_secret_key())
        embedder = make_embedder(settings)
        converter = Converter(settings)
        try:
            async with throwaway_database(settings, "corpus_bench_sources") as db:
                async with db.write() as conn:
                    await workspaces_service.create_workspace(
                        conn, LOCAL_ADMIN, WorkspaceCreate(slug="bench", title="Bench")
                    )
                    source = await sources_service.create_source(
                        conn,
                        LOCAL_ADMIN,
                        "bench",
                        SourceCreate(kind="git", location=str(repo)),
                        settings=settings,
                        box=box,
                    )
                syncer = Syncer(
                    db=db, embedder=embedder, settings=settings, converter=converter, box=box
                )
                started = time.perf_counter()
                cold = await syncer.sync(source.id, "cli")
                cold_s = time.perf_counter() - started
                change_ten(repo)
                started = time.perf_counter()
                warm = await syncer.sync(source.id, "cli")
                warm_s = time.perf_counter() - started
                started = time.perf_counter()
                idle = await syncer.sync(source.id, "cli")
                idle_s = time.perf_counter() - started
                async with db.read() as reads:
                    stale = await sources_service.stale_documents(
                        reads, LOCAL_ADMIN, workspace="bench", limit=200
                    )
        finally:
            await converter.aclose()
            await embedder.aclose()

    def run(report: Any, seconds: float) -> dict[str, Any]:
        return {
            "seconds": round(seconds, 2),
            "added": report.added,
            "updated": report.updated,
            "removed": report.removed,
            "unchanged": report.unchanged,
            "failed": report.failed,
        }

    return {
        "files": files,
        "provider": provider,
        "generated_s": round(generated_s, 2),
        "cold": run(cold, cold_s),
        "ten_files": run(warm, warm_s),
        "nothing_changed": run(idle, idle_s),
        "stale_documents": len(stale),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--provider", default="hash", choices=get_args(EmbeddingsProvider))
    args = parser.parse_args()
    print(json.dumps(asyncio.run(measure(args.files, args.provider)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
