"""`corpus ingest`'s pipeline: chunks of several files share an embedding call, the files
embedded together share a transaction, each file is written whole or not at all, and a file that
fails fails alone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

from app.bench import ingest, load
from app.bench.ingest import IngestReport, ingest_paths
from app.config import Settings
from app.db.engine import Database
from app.documents.convert import Converted
from app.documents.worker import Converter
from app.rag.embeddings.base import EmbeddingError
from app.rag.embeddings.hash import HashEmbedder
from tests.support import eventually, make_settings, migrated_database


class CountingConverter(Converter):
    """Sets `ahead` once `count` files are converted."""

    def __init__(self, settings: Settings, count: int) -> None:
        super().__init__(settings)
        self.ahead = asyncio.Event()
        self._left = count

    async def to_markdown(
        self, data: bytes, *, filename: str | None, content_type: str | None
    ) -> Converted:
        converted = await super().to_markdown(data, filename=filename, content_type=content_type)
        self._left -= 1
        if self._left <= 0:
            self.ahead.set()
        return converted


class RecordingEmbedder(HashEmbedder):
    """Hash vectors; records each call's texts, and fails any call holding a poisoned one. Its
    first call waits until `ahead` is set: a model busy with one file while others convert."""

    def __init__(self, ahead: asyncio.Event) -> None:
        super().__init__()
        self.calls: list[list[str]] = []
        self._ahead = ahead

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not self.calls:
            await self._ahead.wait()
        self.calls.append(list(texts))
        if any("nightshade" in t for t in texts):
            raise EmbeddingError("the provider refused a text")
        return await super().embed_passages(texts)


@dataclass
class Pipeline:
    """A walk's parts on a database of its own: the model waits inside its first call until
    `converted` files are converted (`CountingConverter`, `RecordingEmbedder`)."""

    db: Database
    settings: Settings
    converter: CountingConverter
    embedder: RecordingEmbedder

    async def walk(
        self, files: Sequence[Path], advance: Callable[[str], None] = lambda _label: None
    ) -> IngestReport:
        return await ingest_paths(
            self.db,
            self.embedder,
            self.settings,
            self.converter,
            files,
            workspace="default",
            visibility="org",
            tags=[],
            advance=advance,
        )


@asynccontextmanager
async def pipeline(
    settings: Settings, server_url: str, data_dir: Path, name: str, converted: int
) -> AsyncIterator[Pipeline]:
    url = await migrated_database(server_url, data_dir, name)
    db = Database(url)
    walk_settings = make_settings(settings.data_dir, database_url=url)
    converter = CountingConverter(walk_settings, converted)
    try:
        yield Pipeline(db, walk_settings, converter, RecordingEmbedder(converter.ahead))
    finally:
        await converter.aclose()
        await db.dispose()


async def test_files_share_embedding_calls_and_a_failing_file_fails_alone(
    settings: Settings,
    server_url: str,
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The planner's statistics are refreshed after 4 files written, then after 8 (not 16); the
    # files are written three at most to a transaction, so no group passes both.
    monkeypatch.setattr(ingest, "ANALYZE_AFTER", 4)
    monkeypatch.setattr(ingest, "WRITE_GROUP", 3)
    files = []
    for i in range(12):
        path = tmp_path / f"note-{i:02d}.md"
        path.write_text(f"# Note {i}\n\nHeron {i} nests by the estuary in spring.\n")
        files.append(path)
    poisoned = tmp_path / "poisoned.md"
    poisoned.write_text("# Poisoned\n\nDeadly nightshade grows by the wall.\n")
    empty = tmp_path / "empty.md"
    empty.write_text("   \n")
    missing = tmp_path / "missing.md"
    walk = [*files[:5], empty, missing, *files[5:], poisoned]

    labels: list[str] = []
    async with pipeline(settings, server_url, data_dir, "corpus_ingest_pipeline", 10) as walks:
        db, embedder = walks.db, walks.embedder
        report = await walks.walk(walk, labels.append)

        async def analyzed_twice() -> bool:
            async with db.read() as conn:
                count = await conn.execute(
                    text(
                        "SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'documents'"
                    )
                )
                return bool(count.scalar_one() == 2)

        await eventually(analyzed_twice, "documents analyzed after 4 and 8 files")
        async with db.read() as conn:
            titles = sorted(
                row.title for row in await conn.execute(text("SELECT title FROM documents"))
            )
            stats = (await conn.execute(text("SELECT chunk_count FROM corpus_stats"))).one()
            chunks = (await conn.execute(text("SELECT count(*) AS n FROM chunks"))).one()
        again = await walks.walk(files, labels.append)
        # A copy under another name holds a document's very content: not added twice. A new
        # file beside it is.
        copy = tmp_path / "copy-of-note-00.md"
        copy.write_bytes(files[0].read_bytes())
        fresh = tmp_path / "fresh.md"
        fresh.write_text("# Fresh\n\nA spoonbill sweeps the shallows.\n")
        moved = await walks.walk([copy, fresh], labels.append)

    assert report.counts["added"] == 12
    assert report.counts["failed"] == 3
    assert sorted(Path(source).name for source, _ in report.failures) == [
        "empty.md",
        "missing.md",
        "poisoned.md",
    ]
    assert titles == sorted(f"Note {i}" for i in range(12))
    # Each file was written whole, and counted once in the statistics.
    assert stats.chunk_count == chunks.n == report.chunks
    assert len(labels) == 15 + 12 + 2
    # The good files' chunks went to the model in fewer calls than there are files: a call
    # spans files (the poisoned file's batch failed, and each of its files was tried alone).
    good = [call for call in embedder.calls if not any("nightshade" in t for t in call)]
    assert any(len({t.split("\n")[0] for t in call}) > 1 for call in good)
    # Unchanged files are neither embedded nor written again.
    assert again.counts["unchanged"] == 12
    assert again.counts["added"] == again.counts["failed"] == 0
    assert (moved.counts["unchanged"], moved.counts["added"]) == (1, 1)


async def test_an_embedding_call_stops_short_of_a_batch_rather_than_pass_it(
    settings: Settings,
    server_url: str,
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Six files of two chunks each (a title, a section): a call of five texts holds two files,
    # and the third waits for the next call rather than make a call of six, which the model
    # would run as a pass of five and a pass of one.
    monkeypatch.setattr(ingest, "EMBED_BATCH", 5)
    files = []
    for i in range(6):
        path = tmp_path / f"bird-{i}.md"
        path.write_text(f"# Bird {i}\n\n## Herons\n\nHeron {i} nests by the estuary.\n")
        files.append(path)
    async with pipeline(settings, server_url, data_dir, "corpus_ingest_batches", 6) as walks:
        report = await walks.walk(files)
        calls = walks.embedder.calls
        async with walks.db.read() as conn:
            transactions = (
                await conn.execute(text("SELECT count(DISTINCT xmin::text) FROM documents"))
            ).scalar_one()

    assert report.counts["added"] == 6
    # The writer waited for more files than a call holds (`WRITE_AT_LEAST`, or the walk's end):
    # the six files of three calls were written in one transaction.
    assert transactions == 1
    # The first call may go before the rest are converted (it waits inside the model until
    # all six are); every later one finds the other files ready, and takes two of them.
    assert sum(map(len, calls)) == 12
    assert max(map(len, calls)) == 4


def notes(folder: Path, title: str, count: int, line: str) -> list[Path]:
    """`count` Markdown files, the i-th titled `{title} {i}` and saying `line` with its i."""
    paths = []
    for i in range(count):
        path = folder / f"{title.lower()}-{i}.md"
        path.write_text(f"# {title} {i}\n\n{line.format(i=i)}\n")
        paths.append(path)
    return paths


async def test_files_embedded_together_are_written_in_one_transaction_each_whole(
    settings: Settings, server_url: str, data_dir: Path, tmp_path: Path
) -> None:
    # Eight files, two of them the same text, one a long one of several chunks: the model
    # waits in its first call until all are converted, so the next call embeds the rest and
    # the writer finds them ready together.
    files = notes(tmp_path, "Note", 6, "Egret {i} fishes the tide pools at dawn.")
    twin = tmp_path / "twin.md"
    twin.write_bytes(files[2].read_bytes())
    long = tmp_path / "long.md"
    sections = "\n\n".join(
        f"## Part {p}\n\n" + " ".join(f"Curlew {p} probes mud flat {w}." for w in range(60))
        for p in range(2)
    )
    long.write_text(f"# Long\n\n{sections}\n")
    walk = [*files, twin, long]
    async with pipeline(settings, server_url, data_dir, "corpus_ingest_group", len(walk)) as walks:
        report = await walks.walk(walk)
        async with walks.db.read() as conn:
            documents = (
                await conn.execute(
                    text("SELECT id, title, content, xmin::text AS tx FROM documents")
                )
            ).all()
            strays = (
                await conn.execute(
                    text(
                        "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id "
                        "WHERE strpos(d.content, c.text) = 0"
                    )
                )
            ).scalar_one()
            per_document: dict[str, int] = dict(
                (
                    await conn.execute(
                        text(
                            "SELECT d.title, count(c.id) FROM documents d "
                            "JOIN chunks c ON c.document_id = d.id GROUP BY d.title"
                        )
                    )
                ).all()
            )
            stats = (await conn.execute(text("SELECT chunk_count FROM corpus_stats"))).one()
            postings = (
                await conn.execute(text("SELECT count(DISTINCT chunk_id) FROM chunk_terms"))
            ).scalar_one()
        calls = walks.embedder.calls

    # A transaction for each call at most (a row's xmin is the transaction that inserted it):
    # the files embedded together were written together.
    assert len({row.tx for row in documents}) <= len(calls) < len(documents)
    # The twin holds a file's very content: unchanged, as one after the other would have it.
    assert (report.counts["added"], report.counts["unchanged"]) == (7, 1)
    assert sorted(row.title for row in documents) == sorted(
        [*(f"Note {i}" for i in range(6)), "Long"]
    )
    # Each chunk went to its own document, each document's chunks all written and counted.
    assert strays == 0
    assert per_document["Long"] > 1
    assert sum(per_document.values()) == report.chunks == stats.chunk_count == postings


async def test_a_group_with_a_file_that_fails_when_written_writes_the_others_alone(
    settings: Settings, server_url: str, data_dir: Path, tmp_path: Path
) -> None:
    # A second walk finds one file changed to a text the model refuses: its update embeds
    # when written, and fails there, inside the group's transaction. The group rolls back and
    # each file is written again alone: the new files and the other update land.
    first = notes(tmp_path, "Old", 3, "A godwit {i} rests on one leg.")
    async with pipeline(settings, server_url, data_dir, "corpus_ingest_group_fail", 3) as walks:
        await walks.walk(first)
        first[0].write_text("# Old 0\n\nDeadly nightshade grows by the wall.\n")
        first[1].write_text("# Old 1\n\nA godwit rests on both legs now.\n")
        fresh = notes(tmp_path, "New", 3, "A knot {i} turns with the flock.")
        report = await walks.walk([*first, *fresh])
        async with walks.db.read() as conn:
            contents: dict[str, str] = dict(
                (await conn.execute(text("SELECT title, content FROM documents"))).all()
            )
            stats = (await conn.execute(text("SELECT chunk_count FROM corpus_stats"))).one()
            chunks = (await conn.execute(text("SELECT count(*) FROM chunks"))).scalar_one()

    assert [Path(source).name for source, _ in report.failures] == ["old-0.md"]
    assert (report.counts["added"], report.counts["updated"]) == (3, 1)
    assert report.counts["unchanged"] == 1
    assert "godwit 0 rests" in contents["Old 0"]  # the failed update left its document
    assert "both legs" in contents["Old 1"]
    assert {f"New {i}" for i in range(3)} <= contents.keys()
    assert stats.chunk_count == chunks


class OverlapRecorder(HashEmbedder):
    """Hash vectors; each call waits until another call is running beside it (or 30 s pass),
    and `most` records the most calls that were ever in flight together."""

    def __init__(self) -> None:
        super().__init__()
        self.running = self.most = 0
        self._company = asyncio.Event()

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.running += 1
        self.most = max(self.most, self.running)
        if self.running > 1:
            self._company.set()
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._company.wait(), 30)
            return await super().embed_passages(texts)
        finally:
            self.running -= 1


async def test_the_next_embedding_call_goes_while_one_runs(
    settings: Settings,
    server_url: str,
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A call per file: the second file's call starts while the first's runs, so the model's
    # threads go on to its texts as the first call's last runs (issue #33).
    monkeypatch.setattr(ingest, "EMBED_BATCH", 2)
    files = notes(tmp_path, "Stint", 6, "A stint {i} runs ahead of the wave.")
    url = await migrated_database(server_url, data_dir, "corpus_ingest_overlap")
    db, embedder = Database(url), OverlapRecorder()
    try:
        report = await load.walk(
            db, make_settings(settings.data_dir, database_url=url), embedder, files
        )
    finally:
        await db.dispose()

    assert report.counts["added"] == 6
    assert embedder.most == ingest.EMBED_CALLS == 2


class CallSizes(HashEmbedder):
    """The hash embedder, noting the size of each call of passages in order."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.sizes.append(len(texts))
        return await super().embed_passages(texts)


async def test_the_bench_runs_the_model_in_one_call_after_the_walk_and_its_passes(
    settings: Settings, server_url: str, data_dir: Path, tmp_path: Path
) -> None:
    # The measure interleaves the model alone in calls of 16 with the walk's parts;
    # the passes in one call, for information, come after all of it, so that they do not stand
    # between a part of the walk and its passes.
    sections = "\n\n".join(
        f"## Step {j}\n\n" + " ".join(f"word{j}x{k} runs the step" for k in range(30))
        for j in range(20)
    )
    documents = [(f"Runbook {i}", sections) for i in range(load.INGEST_PARTS)]
    url = await migrated_database(server_url, data_dir, "corpus_ingest_one_call")
    db, embedder = Database(url), CallSizes()
    try:
        report = await load.measure_ingest_files(
            db, make_settings(settings.data_dir, database_url=url), embedder, documents, tmp_path
        )
    finally:
        await db.dispose()

    per_part = report["chunks"] // load.INGEST_PARTS
    assert per_part > load.MODEL_BATCH  # a part's one call is told from the calls of 16
    # One call per part, and the last part's once more, last of all; before them the model's
    # last pass in calls of 16 over the last part.
    assert embedder.sizes[-(load.INGEST_PARTS + 1) :] == [per_part] * (load.INGEST_PARTS + 1)
    last_of_sixteen = per_part % load.MODEL_BATCH or load.MODEL_BATCH
    assert embedder.sizes[-(load.INGEST_PARTS + 2)] == last_of_sixteen
