"""Where a folder walk's CPU goes, apart from the model: `corpus ingest` of a collection's first
documents as Markdown files, with the configured model's vectors served from a cache (filled by
the first run), and the CPU each kind of process spent, read from /proc.

    CORPUS_DATA_DIR=var/eval .venv/bin/python scripts/ingest_cpu.py \
        --data ../shared/bench-data/scifact --files 1000

Prints one JSON object: wall seconds, chunks, and core-seconds of this process (chunking,
lexing, the SQL client; its cache lookups too), of its conversion workers and of the embedded
PostgreSQL server (a server at DATABASE_URL is not on this machine's books). On a machine whose
cores the local model needs, these are what keep `corpus ingest` under the model's own rate
(issue #33: the walk reaches the model's rate less what they take of its cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import tempfile
import time
from pathlib import Path

from app.bench import evaluation, load
from app.bench.cache import CachingEmbedder
from app.config import get_settings
from app.db import embedded
from app.rag.embeddings import make_embedder

_TICKS = os.sysconf("SC_CLK_TCK")


def _postgres_seconds(postmaster: int) -> float:
    """CPU seconds of the postmaster and its live children (a walk's backends stay open)."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(entry) == postmaster or int(fields[1]) == postmaster:
            total += (int(fields[11]) + int(fields[12])) / _TICKS
    return total


def _own_seconds() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # workers, once reaped
    return me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime


async def main(folder: Path, files: int) -> None:
    settings = get_settings()
    if settings.database_url:
        raise SystemExit("this measures the embedded server: unset DATABASE_URL")
    embedder = CachingEmbedder(
        make_embedder(settings), settings.data_dir / "cache" / "ingest_cpu.sqlite"
    )
    documents = [evaluation.title_and_text(d) for d in evaluation.load_dataset(folder).corpus]
    try:
        async with evaluation.throwaway_database(settings, "corpus_ingest_cpu") as db:
            with tempfile.TemporaryDirectory(prefix="corpus-ingest-cpu-") as tmp:
                paths = load.markdown_files(documents[:files], Path(tmp))
                pid_file = settings.data_dir / embedded.PG_DIRNAME / "postmaster.pid"
                postmaster = int(pid_file.read_text().split()[0])
                postgres, (own, workers) = _postgres_seconds(postmaster), _own_seconds()
                started = time.perf_counter()
                report = await load.walk(db, settings, embedder, paths)
                wall = time.perf_counter() - started
                postgres = _postgres_seconds(postmaster) - postgres
                own_after, workers_after = _own_seconds()  # the walk's workers are reaped
        print(
            json.dumps(
                {
                    "provider": f"{embedder.provider}:{embedder.model}",
                    "documents": len(paths),
                    "chunks": report.chunks,
                    "wall_s": round(wall, 1),
                    "cpu_s": {
                        "this process": round(own_after - own, 1),
                        "conversion workers": round(workers_after - workers, 1),
                        "postgresql": round(postgres, 1),
                    },
                }
            )
        )
    finally:
        await embedder.aclose()
        embedded.release(settings.data_dir)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--files", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main(args.data, args.files))
