"""`corpus ingest` of a collection's first documents as Markdown files, beside the configured
model alone on the very same chunks in batches of 16: the part of `corpus bench --data` that
measures ingest, without the rest of the bench (its search latencies take many minutes more).

    CORPUS_DATA_DIR=var/eval .venv/bin/python scripts/measure_ingest.py \
        --data ../shared/bench-data/scifact --files 1000

Prints one JSON object: chunks per second of each, and the share of the model's rate the
product reached (the issue's bar: at least 0.9).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path

from app.bench import evaluation, load
from app.config import get_settings
from app.db import embedded
from app.rag.embeddings import make_embedder


async def main(folder: Path, files: int) -> None:
    settings = get_settings()
    dataset = evaluation.load_dataset(folder)
    embedder = make_embedder(settings)
    await embedder.embed_query("warm up")  # a local model loads on first use
    documents = [evaluation.title_and_text(doc) for doc in dataset.corpus[:files]]
    try:
        async with evaluation.throwaway_database(settings, "corpus_measure_ingest") as db:
            with tempfile.TemporaryDirectory(prefix="corpus-ingest-files-") as tmp:
                report = await load.measure_ingest_files(
                    db, settings, embedder, documents, Path(tmp)
                )
        print(json.dumps({"provider": f"{embedder.provider}:{embedder.model}", **report}))
    finally:
        await embedder.aclose()
        if not settings.database_url:
            embedded.release(settings.data_dir)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--files", type=int, default=load.MODEL_INGEST_FILES)
    args = parser.parse_args()
    asyncio.run(main(args.data, args.files))
