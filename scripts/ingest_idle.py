"""Where the cores go while `corpus ingest` walks a collection's first documents, beside the
configured model alone on the same chunks: the walk in three parts, each after the model alone
on its chunks in calls of 16 (as `corpus bench` runs them), and for each run the machine's idle
core-seconds (/proc/stat), the CPU of this process's threads by kind and of the embedded
PostgreSQL server.

    CORPUS_DATA_DIR=var/eval .venv/bin/python scripts/ingest_idle.py \
        --data ../shared/bench-data/scifact --files 1000

Prints one JSON object per run. On two cores the walk reaches the model's rate less what its
other work takes of them and less the time the cores stand idle (issue #33, ADR 0040).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path

from app.bench import evaluation, load
from app.config import get_settings
from app.db import embedded
from app.documents import service as documents_service
from app.documents.convert import to_markdown
from app.rag.embeddings import make_embedder
from app.rag.embeddings.local import LocalEmbedder

_TICKS = os.sysconf("SC_CLK_TCK")


def _idle_seconds() -> float:
    """Core-seconds the machine has stood idle (or waited for I/O) since boot."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return (int(fields[4]) + int(fields[5])) / _TICKS


def _cpu(stat: str) -> float:
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _threads(model: set[int]) -> dict[str, float]:
    """This process's CPU seconds: the model's threads, the event loop's, and the others'."""
    seconds = {"model_threads": 0.0, "event_loop": 0.0, "other_threads": 0.0}
    for entry in os.listdir("/proc/self/task"):
        try:
            stat = Path(f"/proc/self/task/{entry}/stat").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        tid = int(entry)
        kind = "model_threads" if tid in model else "event_loop" if tid == os.getpid() else None
        seconds[kind or "other_threads"] += _cpu(stat)
    return seconds


def _postgres_seconds(postmaster: int) -> float:
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        if postmaster in (int(entry), parent):
            total += _cpu(stat)
    return total


async def main(folder: Path, files: int) -> None:
    settings = get_settings()
    if settings.database_url:
        raise SystemExit("this measures the embedded server: unset DATABASE_URL")
    embedder = make_embedder(settings)
    documents = [evaluation.title_and_text(d) for d in evaluation.load_dataset(folder).corpus]
    model_threads: set[int] = set()
    if isinstance(embedder, LocalEmbedder):
        await embedder.warm()
        # The threads the model runs on (before ADR 0040 it ran on asyncio's thread pool).
        workers = getattr(embedder, "_workers", [])
        model_threads = {worker.native_id or 0 for worker in workers}
    try:
        async with evaluation.throwaway_database(settings, "corpus_ingest_idle") as db:
            pid_file = settings.data_dir / embedded.PG_DIRNAME / "postmaster.pid"
            postmaster = int(pid_file.read_text().split()[0])
            with tempfile.TemporaryDirectory(prefix="corpus-ingest-idle-") as tmp:
                paths = load.markdown_files(documents[:files], Path(tmp))
                texts: list[list[str]] = []
                for path in paths:
                    converted = to_markdown(
                        path.read_bytes(), filename=path.name, content_type=None
                    )
                    title = converted.title or path.stem
                    chunked = await documents_service.chunked(embedder, title, converted.markdown)
                    texts.append(chunked.texts)

                async def measured(what: str, run: Awaitable[object], chunks: int) -> None:
                    threads, idle = _threads(model_threads), _idle_seconds()
                    postgres, started = _postgres_seconds(postmaster), time.perf_counter()
                    await run
                    wall = time.perf_counter() - started
                    after = _threads(model_threads)
                    row = {
                        "run": what,
                        "chunks": chunks,
                        "wall_s": round(wall, 2),
                        "chunks_per_s": round(chunks / wall, 1),
                        "idle_core_s": round(_idle_seconds() - idle, 2),
                        "postgresql_cpu_s": round(_postgres_seconds(postmaster) - postgres, 2),
                    }
                    row |= {f"{k}_cpu_s": round(after[k] - threads[k], 2) for k in after}
                    print(json.dumps(row), flush=True)

                async def model_alone(part: range) -> None:
                    batch = [text for i in part for text in texts[i]]
                    for start in range(0, len(batch), load.MODEL_BATCH):
                        await embedder.embed_passages(batch[start : start + load.MODEL_BATCH])

                size = -(-len(paths) // load.INGEST_PARTS)
                parts = [range(s, min(s + size, len(paths))) for s in range(0, len(paths), size)]
                for part in parts:
                    chunks = sum(len(texts[i]) for i in part)
                    await measured("model alone", model_alone(part), chunks)
                    part_paths = [paths[i] for i in part]
                    await measured("walk", load.walk(db, settings, embedder, part_paths), chunks)
                last = parts[-1]
                await measured("model alone", model_alone(last), sum(len(texts[i]) for i in last))
    finally:
        await embedder.aclose()
        embedded.release(settings.data_dir)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--files", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main(args.data, args.files))
