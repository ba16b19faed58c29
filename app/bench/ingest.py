"""`corpus ingest`: a folder walk into the corpus, one transaction per file, skipping files
whose content is unchanged."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.access.principal import LOCAL_ADMIN
from app.config import Settings
from app.db.engine import Database
from app.documents import service as documents_service
from app.documents.schemas import Visibility
from app.documents.worker import Converter
from app.errors import AppError
from app.rag.embeddings.base import Embedder
from app.workspaces import service as workspaces_service


@dataclass
class IngestReport:
    counts: Counter[str] = field(default_factory=Counter)
    chunks: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    # Set when the walk created its workspace, which the command then says.
    created_workspace: str | None = None


async def ingest_paths(
    db: Database,
    embedder: Embedder,
    settings: Settings,
    converter: Converter,
    files: Sequence[Path],
    *,
    workspace: str,
    visibility: Visibility,
    tags: list[str],
    advance: Callable[[str], None],
) -> IngestReport:
    report = IngestReport()
    async with db.write() as conn:
        _id, created = await workspaces_service.ensure_workspace(conn, LOCAL_ADMIN, workspace)
    if created:
        report.created_workspace = workspace
    for path in files:
        try:
            data = path.read_bytes()
            async with db.write() as conn:
                outcome, document = await documents_service.ingest_file(
                    conn,
                    LOCAL_ADMIN,
                    embedder,
                    settings,
                    converter=converter,
                    data=data,
                    source=str(path.resolve()),
                    workspace=workspace,
                    visibility=visibility,
                    tags=tags,
                )
            report.counts[outcome] += 1
            report.chunks += document.chunk_count if outcome != "unchanged" else 0
            advance(f"{outcome}: {path.name}")
        except (AppError, OSError) as exc:
            report.counts["failed"] += 1
            report.failures.append((str(path), getattr(exc, "message", str(exc))))
            advance(f"failed: {path.name}")
    return report
