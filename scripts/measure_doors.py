"""Measure what each door adds to a search (`app.bench.doors`), without the rest of `corpus
bench`: the search service in process against `POST /api/search` and MCP `search_docs` on a
`corpus serve` child process, taking turns query by query, and eight clients of each.

    .venv/bin/python scripts/measure_doors.py [--documents 100] [--queries 300] [--json]

Prints p50/p95/p99 and mean in milliseconds, the door's cost at p50 and the eight clients' rates.
"""

from __future__ import annotations

import argparse
import asyncio
import json

from app.bench import doors
from app.config import Settings
from app.db import embedded


def _positive(value: str) -> int:
    number = int(value) if value.isdigit() else 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of at least 1")
    return number


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=_positive, default=doors.DOCUMENTS)
    parser.add_argument("--queries", type=_positive, default=doors.QUERIES)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    settings = Settings(embeddings_provider="hash")
    with embedded.attached(settings):
        report = asyncio.run(
            doors.measure(settings, documents=args.documents, queries=args.queries)
        )
    if args.json:
        print(json.dumps(report))
        return 0
    print(doors.summary(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
