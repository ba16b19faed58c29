"""Sources: admins add, change, pause and remove them; anyone who may read a synced document
may see where it came from and whether it may be stale; a push webhook is checked here.

A source reads a folder of the server, or a git repository by URL or local path. Where it may
point is checked when it is kept: a folder (and a repository by path or file://) must lie under
CORPUS_SOURCE_ROOTS, an http(s) URL must pass the address rules remote workspaces follow."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

from app.access.principal import Principal
from app.audit import service as audit
from app.config import Settings
from app.db.engine import ReadConnection, WriteConnection
from app.documents import service as documents_service
from app.documents.schemas import Document, DocumentFilters
from app.errors import Conflict, Forbidden, NotFound, ValidationFailed
from app.kit.addresses import AddressRefused, AddressRules
from app.kit.secrets import SecretBox, new_token
from app.kit.updates import changes
from app.schemas import Page
from app.sources import queries
from app.sources.schemas import (
    KnowledgeSource,
    Provenance,
    SourceCreate,
    SourceRun,
    SourceUpdate,
    StaleCommit,
    StaleDocument,
    SyncedDocument,
)
from app.workspaces import service as workspaces_service

_SCP_LIKE = re.compile(r"^[\w.\-]+@[\w.\-]+:(?!//)[^\s]+$")
_REFUSAL = "only admins may manage sources"


def require_manager(principal: Principal) -> None:
    """Raises:
    Forbidden: the caller may not manage sources (admins only).
    """
    principal.require("workspaces.manage", _REFUSAL)


def webhook_url(settings: Settings, source_id: UUID) -> str:
    return f"{settings.public_url.rstrip('/')}/api/sources/{source_id}/webhook"


def _shown(row: queries.SourceRow, settings: Settings, box: SecretBox) -> KnowledgeSource:
    return KnowledgeSource(
        id=row.id,
        workspace=row.workspace,
        kind=row.kind,  # type: ignore[arg-type]  # the table's check holds it to the two kinds
        location=row.location,
        branch=row.branch,
        include=row.include,
        exclude=row.exclude,
        has_secret=row.secret_encrypted is not None,
        paused=row.paused,
        schedule_minutes=row.schedule_minutes,
        last_commit=row.last_commit,
        last_synced_at=row.last_synced_at,
        syncing=row.syncing,
        document_count=row.document_count,
        webhook_url=webhook_url(settings, row.id),
        webhook_secret=box.open(row.webhook_secret_encrypted),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _audited(row: queries.SourceRow | SourceCreate) -> dict[str, Any]:
    """What an audit entry shows of a source (never its secrets)."""
    return {
        "kind": row.kind,
        "location": row.location,
        "branch": row.branch,
        "include": list(row.include),
        "exclude": list(row.exclude),
        "paused": row.paused,
        "schedule_minutes": row.schedule_minutes,
    }


def _under_roots(settings: Settings, path: str) -> None:
    """Raises:
    ValidationFailed: the path is relative, or outside every CORPUS_SOURCE_ROOTS folder.
    """
    if not Path(path).is_absolute():
        raise ValidationFailed("location: give an absolute path")
    resolved = Path(path).resolve()
    roots = [Path(root).resolve() for root in settings.source_roots]
    if not any(resolved == root or root in resolved.parents for root in roots):
        raise ValidationFailed(
            "location: the server reads folders only under CORPUS_SOURCE_ROOTS"
            + (" (none are set)" if not roots else "")
        )


def _split(location: str) -> tuple[str, str]:
    """A URL's host part and path.

    Raises:
        ValidationFailed: it does not parse (`https://[`).
    """
    try:
        parts = urlsplit(location)
        return parts.netloc, parts.path
    except ValueError:
        raise ValidationFailed("location: not a URL that parses") from None


async def _check_location(
    settings: Settings, addresses: AddressRules | None, kind: str, location: str
) -> None:
    """Raises:
    ValidationFailed: where the source may not point.
    """
    if kind == "folder":
        _under_roots(settings, location)
        return
    if location.startswith("file://"):
        _under_roots(settings, _split(location)[1])
        return
    if location.startswith("/"):
        _under_roots(settings, location)
        return
    if location.startswith(("https://", "http://")):
        if "@" in _split(location)[0]:
            raise ValidationFailed("location: no credentials in the URL; give them as secret")
        try:
            await (addresses or AddressRules()).check_url(location)
        except AddressRefused as exc:
            raise ValidationFailed(f"location: {exc}") from None
        return
    if location.startswith("ssh://") or _SCP_LIKE.match(location):
        return
    raise ValidationFailed(
        "location: a git repository is an https://, ssh://, user@host:path or file:// URL, or "
        "an absolute path"
    )


def _check_kind(kind: str, branch: str | None, secret: str | None) -> None:
    if kind == "folder" and (branch is not None or secret is not None):
        raise ValidationFailed("branch, secret: a folder has neither; they are for git")


async def _row(conn: ReadConnection, source_id: UUID) -> queries.SourceRow:
    row = await queries.get_source(conn, source_id)
    if row is None:
        raise NotFound("source not found")
    return row


async def _workspace(conn: ReadConnection, slug: str) -> UUID:
    workspace_id = await workspaces_service.workspace_id(conn, slug)
    if workspace_id is None:
        raise NotFound("workspace not found")
    return workspace_id


async def list_sources(
    conn: ReadConnection, principal: Principal, slug: str, *, settings: Settings, box: SecretBox
) -> list[KnowledgeSource]:
    """The workspace's sources (admins).

    Raises:
        Forbidden, NotFound: no such workspace.
    """
    principal.require("workspaces.manage", _REFUSAL)
    workspace_id = await _workspace(conn, slug)
    return [_shown(row, settings, box) for row in await queries.list_sources(conn, workspace_id)]


async def get_source(
    conn: ReadConnection,
    principal: Principal,
    source_id: UUID,
    *,
    settings: Settings,
    box: SecretBox,
) -> KnowledgeSource:
    """Raises:
    Forbidden, NotFound.
    """
    principal.require("workspaces.manage", _REFUSAL)
    return _shown(await _row(conn, source_id), settings, box)


async def create_source(
    conn: WriteConnection,
    principal: Principal,
    slug: str,
    data: SourceCreate,
    *,
    settings: Settings,
    box: SecretBox,
    addresses: AddressRules | None = None,
) -> KnowledgeSource:
    """Add a source to a workspace (admins); its first sync is the caller's next step.

    Raises:
        Forbidden. NotFound: no such workspace. ValidationFailed: where it may not point.
        Conflict: the workspace has a source at that location.
    """
    principal.require("workspaces.manage", _REFUSAL)
    workspace_id = await _workspace(conn, slug)
    _check_kind(data.kind, data.branch, data.secret)
    await _check_location(settings, addresses, data.kind, data.location)
    source_id = await queries.insert_source(
        conn,
        workspace_id=workspace_id,
        kind=data.kind,
        location=data.location,
        branch=data.branch,
        include=data.include,
        exclude=data.exclude,
        secret_encrypted=None if data.secret is None else box.seal(data.secret),
        webhook_secret_encrypted=box.seal(new_token("whs_")),
        paused=data.paused,
        schedule_minutes=data.schedule_minutes,
    )
    if source_id is None:
        raise Conflict("this workspace already has a source at that location")
    await audit.record(
        conn,
        principal,
        "source.create",
        target_type="source",
        target_id=source_id,
        after=_audited(data),
    )
    return _shown(await _row(conn, source_id), settings, box)


async def update_source(
    conn: WriteConnection,
    principal: Principal,
    source_id: UUID,
    data: SourceUpdate,
    *,
    settings: Settings,
    box: SecretBox,
    addresses: AddressRules | None = None,
) -> KnowledgeSource:
    """Change, pause or resume a source (admins). A new location or branch starts over at the
    next sync: files no longer there are removed, the rest compared by content.

    Raises:
        Forbidden, NotFound, ValidationFailed, Conflict (another source at that location).
    """
    principal.require("workspaces.manage", _REFUSAL)
    before = await _row(conn, source_id)
    names = changes(data, required=("location", "include", "exclude", "paused"))
    values: dict[str, Any] = {
        name: getattr(data, name)
        for name in ("location", "branch", "include", "exclude", "paused", "schedule_minutes")
        if name in names
    }
    if "secret" in names:
        values["secret_encrypted"] = None if data.secret is None else box.seal(data.secret)
    branch = values.get("branch", before.branch)
    _check_kind(before.kind, branch, data.secret if "secret" in names else None)
    if "location" in values:
        await _check_location(settings, addresses, before.kind, values["location"])
    moved = values.get("location", before.location) != before.location
    if moved or values.get("branch", before.branch) != before.branch:
        # Another repository's commits say nothing of this one's diff.
        values["last_commit"] = None
    if values and not await queries.update_source(conn, source_id, **values):
        raise Conflict("this workspace already has a source at that location")
    after = await _row(conn, source_id)
    await audit.record(
        conn,
        principal,
        "source.update",
        target_type="source",
        target_id=source_id,
        before=_audited(before),
        after=_audited(after) | ({"secret": "changed"} if "secret" in names else {}),
    )
    return _shown(after, settings, box)


async def delete_source(conn: WriteConnection, principal: Principal, source_id: UUID) -> int:
    """Remove a source with the documents it synced (admins); returns how many went.

    Raises:
        Forbidden, NotFound. Conflict: a sync of it is running.
    """
    principal.require("workspaces.manage", _REFUSAL)
    row = await _row(conn, source_id)
    if row.syncing:
        raise Conflict("a sync of this source is running; remove it when the sync ends")
    synced = await queries.synced_files(conn, source_id)
    for file in synced:
        await documents_service.delete(conn, principal, file.document_id)
    await queries.delete_source(conn, source_id)
    await audit.record(
        conn,
        principal,
        "source.delete",
        target_type="source",
        target_id=source_id,
        before=_audited(row) | {"documents": len(synced)},
    )
    return len(synced)


async def runs(
    conn: ReadConnection, principal: Principal, source_id: UUID, *, limit: int
) -> list[SourceRun]:
    """The source's last runs, newest first (admins).

    Raises:
        Forbidden, NotFound.
    """
    principal.require("workspaces.manage", _REFUSAL)
    await _row(conn, source_id)
    return await queries.list_runs(conn, source_id, limit=limit)


def _web_url(location: str, branch: str | None, commit: str | None, path: str) -> str | None:
    """The file on its forge's web page (GitHub, GitLab and Gitea share the shape closely
    enough), for an https URL; None for a folder, a path or ssh."""
    if not location.startswith("https://"):
        return None
    base = location.removesuffix("/").removesuffix(".git")
    ref = commit or branch or "HEAD"
    marker = "/-/blob/" if "gitlab" in urlsplit(location).netloc else "/blob/"
    return f"{base}{marker}{ref}/{path}"


def _stale_commits(flags: list[dict[str, Any]]) -> list[StaleCommit]:
    return [StaleCommit.model_validate(flag) for flag in flags]


async def provenances(
    conn: ReadConnection, principal: Principal, document_ids: Sequence[UUID]
) -> dict[UUID, Provenance]:
    """Where each of the synced documents among `document_ids` came from (those the caller may
    see); the others are left out."""
    principal.require("search", "your role may not read documents")
    rows = await queries.provenance(conn, document_ids, scope=principal.workspace_scope)
    return {
        row.document_id: Provenance(
            document_id=row.document_id,
            source_id=row.source_id,
            kind=row.kind,  # type: ignore[arg-type]  # the table's check holds it
            location=row.location,
            branch=row.branch,
            path=row.path,
            commit=row.commit,
            commit_date=row.commit_date,
            url=_web_url(row.location, row.branch, row.commit, row.path),
            stale=bool(row.stale),
            stale_commits=_stale_commits(row.stale),
        )
        for row in rows
    }


async def with_provenance(
    conn: ReadConnection, principal: Principal, found: Sequence[Document]
) -> list[SyncedDocument]:
    """The documents, each synced one with its path, commit, commit date and stale flag (one
    lookup by key for all of them)."""
    known = await provenances(conn, principal, [document.id for document in found])
    return [
        SyncedDocument.model_validate(
            document.model_dump()
            | (
                {}
                if document.id not in known
                else {
                    "source_path": known[document.id].path,
                    "commit": known[document.id].commit,
                    "commit_date": known[document.id].commit_date,
                    "stale": known[document.id].stale,
                }
            )
        )
        for document in found
    ]


async def list_documents(
    conn: ReadConnection,
    principal: Principal,
    filters: DocumentFilters,
    *,
    limit: int,
    cursor: str | None,
) -> Page[SyncedDocument]:
    """A page of the documents the caller may see, each synced one with its path, commit and
    stale flag: what both doors list, so that a list shows the flag its `stale` filter reads."""
    page = await documents_service.list_documents(
        conn, principal, filters, limit=limit, cursor=cursor
    )
    items = await with_provenance(conn, principal, page.items)
    return Page[SyncedDocument](items=items, next_cursor=page.next_cursor)


async def provenance(
    conn: ReadConnection, principal: Principal, document_id: UUID
) -> Provenance | None:
    """Where the document came from; None when no source synced it.

    Raises:
        NotFound: no such document, or not visible to the caller.
    """
    await documents_service.require_visible(conn, principal, [document_id])
    return (await provenances(conn, principal, [document_id])).get(document_id)


async def stale_documents(
    conn: ReadConnection, principal: Principal, *, workspace: str | None, limit: int
) -> list[StaleDocument]:
    """The documents the caller may see that may be stale."""
    principal.require("search", "your role may not read documents")
    rows = await queries.stale_documents(
        conn, workspace=workspace, scope=principal.workspace_scope, limit=limit
    )
    return [
        StaleDocument(
            document_id=row.document_id,
            title=row.title,
            workspace=row.workspace,
            path=row.path,
            commit_date=row.commit_date,
            stale_commits=_stale_commits(row.stale),
        )
        for row in rows
    ]


async def due_sources(conn: ReadConnection) -> list[UUID]:
    """The sources whose schedule says a sync is due (the process's own work: no caller)."""
    return await queries.due_sources(conn)


async def fail_abandoned_runs(conn: WriteConnection) -> int:
    """Runs whose process died, marked failed (the housekeeping's): returns how many."""
    return await queries.fail_abandoned_runs(conn)


def _signed(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _verified(secret: str, headers: Mapping[str, str], body: bytes) -> bool:
    """GitHub signs the body as `X-Hub-Signature-256: sha256=<hex>`, Gitea as
    `X-Gitea-Signature: <hex>` (HMAC-SHA256 with the secret); GitLab sends the secret itself as
    `X-Gitlab-Token`. Compared in constant time."""
    github = headers.get("x-hub-signature-256")
    if github is not None:
        return hmac.compare_digest(github.encode(), f"sha256={_signed(secret, body)}".encode())
    gitea = headers.get("x-gitea-signature")
    if gitea is not None:
        return hmac.compare_digest(gitea.encode(), _signed(secret, body).encode())
    gitlab = headers.get("x-gitlab-token")
    if gitlab is not None:
        return hmac.compare_digest(gitlab.encode(), secret.encode())
    return False


async def check_push(
    conn: ReadConnection,
    source_id: UUID,
    headers: Mapping[str, str],
    body: bytes,
    *,
    box: SecretBox,
) -> bool:
    """Check a push webhook's signature; True when it should start a sync (a push to the
    source's branch, or to any branch when it follows the default one; not while paused).

    Raises:
        Forbidden: no such source, or the signature does not verify (the same answer, so a
        caller cannot learn which sources exist).
    """
    row = await queries.get_source(conn, source_id)
    secret = None if row is None else box.open(row.webhook_secret_encrypted)
    if row is None or secret is None or not _verified(secret, headers, body):
        raise Forbidden("the webhook's signature does not verify")
    if row.paused or row.kind != "git":
        return False
    try:
        event = json.loads(body)
    except ValueError:
        return True
    ref = event.get("ref") if isinstance(event, dict) else None
    return row.branch is None or ref is None or ref == f"refs/heads/{row.branch}"
