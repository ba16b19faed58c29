"""Workspaces: list, create and change them (admins), and resolve which of them a caller's
search covers or a new document goes to. A key bound to one workspace sees and writes that one
only; a remote workspace's URL is shown to admins only, and its bearer to no one."""

from __future__ import annotations

from uuid import UUID

from app.access.principal import Principal
from app.audit import service as audit
from app.db.engine import ReadConnection, WriteConnection
from app.errors import Conflict, Forbidden, NotFound, ValidationFailed
from app.kit.addresses import PRIVATE_KINDS, AddressRefused, AddressRules
from app.kit.secrets import SecretBox
from app.kit.updates import changes
from app.workspaces import queries
from app.workspaces.schemas import Workspace, WorkspaceCreate, WorkspaceTarget, WorkspaceUpdate

# Where a document goes when its writer names no workspace; the migrations create it.
DEFAULT_WORKSPACE = "default"


def _shown(principal: Principal, workspace: Workspace) -> Workspace:
    """A remote workspace's URL is for admins: to others it would map the network behind the
    server (docs/SECURITY.md, "Remote workspaces")."""
    if workspace.remote_url is None or principal.shown("workspaces.manage"):
        return workspace
    return workspace.model_copy(update={"remote_url": None})


async def list_workspaces(conn: ReadConnection, principal: Principal) -> list[Workspace]:
    """Every workspace the caller may see: all of them (their names are not secret; their
    private documents are not counted), or a bound key's own. Only admins see remote URLs."""
    found = await queries.list_workspaces(conn, scope=principal.workspace_scope)
    return [_shown(principal, workspace) for workspace in found]


def _audited(workspace: Workspace) -> dict[str, str | None]:
    """The fields an audit entry shows of a workspace (never its bearer)."""
    return {
        "title": workspace.title,
        "description": workspace.description,
        "license": workspace.license,
        "tier": workspace.tier,
        "remote_url": workspace.remote_url,
    }


def _sealed(box: SecretBox | None, token: str | None) -> bytes | None:
    if token is None:
        return None
    if box is None:
        raise ValidationFailed("remote_token: this server cannot store secrets here")
    return box.seal(token)


async def _check_remote(addresses: AddressRules | None, url: str | None) -> None:
    """Raises:
    ValidationFailed: the rules refuse the URL's host, as resolved now (the connection
    checks again).
    """
    if url is None:
        return
    try:
        await (addresses or AddressRules()).check_url(url)
    except AddressRefused as exc:
        hint = ""
        if exc.kind in PRIVATE_KINDS:
            hint = " (allowed only with CORPUS_REMOTE_ALLOW_PRIVATE=true)"
        raise ValidationFailed(
            f"remote_url: {exc}{hint}", details=[{"loc": ["body", "remote_url"]}]
        ) from None


async def create_workspace(
    conn: WriteConnection,
    principal: Principal,
    data: WorkspaceCreate,
    *,
    box: SecretBox | None = None,
    addresses: AddressRules | None = None,
) -> Workspace:
    """A new workspace; a remote one's bearer is sealed with `box`, its URL checked against
    `addresses` (the strict rules when None).

    Raises:
        Forbidden: not an admin. Conflict: the slug is taken. ValidationFailed: the remote
        URL's host is refused.
    """
    principal.require(
        "workspaces.manage", "only admins create workspaces, and not with a key bound to one"
    )
    await _check_remote(addresses, data.remote_url)
    sealed = _sealed(box, data.remote_token)
    if not await queries.insert_workspace(conn, data, remote_token_encrypted=sealed):
        raise Conflict(f"a workspace named {data.slug!r} already exists")
    created = await queries.get_workspace(conn, data.slug)
    assert created is not None
    await audit.record(
        conn,
        principal,
        "workspace.create",
        target_type="workspace",
        target_id=created.slug,
        after=_audited(created),
    )
    return created


async def update_workspace(
    conn: WriteConnection,
    principal: Principal,
    slug: str,
    data: WorkspaceUpdate,
    *,
    box: SecretBox | None = None,
    addresses: AddressRules | None = None,
) -> Workspace:
    """Change a workspace's fields; a new remote URL is checked as at creation.

    Raises:
        Forbidden: not an admin. NotFound: no such workspace. ValidationFailed: the remote
        URL's host is refused.
    """
    principal.require(
        "workspaces.manage", "only admins change workspaces, and not with a key bound to one"
    )
    await _check_remote(addresses, data.remote_url)
    sealed = _sealed(box, data.remote_token)
    before = await queries.get_workspace(conn, slug)
    # `license: null` is meaningful ("from policy"), so explicitly set fields are all applied.
    if changes(data, required=("title", "description", "tier")) and not (
        await queries.update_workspace(conn, slug, data, remote_token_encrypted=sealed)
    ):
        raise NotFound(f"no workspace named {slug!r}")
    workspace = await queries.get_workspace(conn, slug)
    if workspace is None or before is None:
        raise NotFound(f"no workspace named {slug!r}")
    old, new = _audited(before), _audited(workspace)
    changed = {key for key in new if old[key] != new[key]}
    if changed or "remote_token" in data.model_fields_set:
        await audit.record(
            conn,
            principal,
            "workspace.update",
            target_type="workspace",
            target_id=slug,
            before={key: old[key] for key in changed},
            # The bearer itself is never recorded, only that it changed.
            after={key: new[key] for key in changed}
            | ({"remote_token": "changed"} if "remote_token" in data.model_fields_set else {}),
        )
    return workspace


async def delete_workspace(conn: WriteConnection, principal: Principal, slug: str) -> None:
    """Delete an empty workspace, recorded in the audit log. One that holds documents, or that
    an unrevoked key is bound to, stays: deleting it would take them along unseen.

    Raises:
        Forbidden: not an admin. NotFound: no such workspace. Conflict: the default workspace,
        or one that holds documents or unrevoked keys.
    """
    principal.require(
        "workspaces.manage", "only admins delete workspaces, and not with a key bound to one"
    )
    if slug == DEFAULT_WORKSPACE:
        raise Conflict("the default workspace stays: documents without a workspace go there")
    workspace = await queries.get_workspace(conn, slug)
    holdings = await queries.workspace_holdings(conn, slug)
    if workspace is None or holdings is None:
        raise NotFound(f"no workspace named {slug!r}")
    document_count, key_count = holdings
    if document_count or key_count:
        raise Conflict(
            f"workspace {slug!r} holds {document_count} document(s) and {key_count} unrevoked "
            "key(s): delete or move the documents and revoke the keys first"
        )
    if not await queries.delete_workspace(conn, slug):
        # A document arrived between the count and the delete.
        raise Conflict(f"workspace {slug!r} is not empty")
    await audit.record(
        conn,
        principal,
        "workspace.delete",
        target_type="workspace",
        target_id=slug,
        before=_audited(workspace),
    )


async def workspace_targets(conn: ReadConnection, principal: Principal) -> list[WorkspaceTarget]:
    """The workspaces the caller may search, with where each lives (for the fan-out): all of
    them, or a bound key's own."""
    return await queries.workspace_targets(conn, scope=principal.workspace_scope)


async def every_workspace_target(conn: ReadConnection) -> list[WorkspaceTarget]:
    """Every workspace with where it lives, for a cache that serves every caller: narrow it to
    one caller with `searchable`."""
    return await queries.workspace_targets(conn, scope=None)


def searchable(principal: Principal, targets: list[WorkspaceTarget]) -> list[WorkspaceTarget]:
    """The workspaces of `targets` the caller may search: all, or a bound key's own."""
    scope = principal.workspace_scope
    return [t for t in targets if scope is None or t.slug == scope]


async def workspace_licenses(conn: ReadConnection) -> dict[str, str | None]:
    """Every workspace's name (names are not secret) and the license an admin set on it (None:
    from policy): what the policy's layers are applied to."""
    return {t.slug: t.license for t in await queries.workspace_targets(conn, scope=None)}


async def workspace_id(conn: ReadConnection, slug: str) -> UUID | None:
    """The id of the workspace with this slug, or None: for binding an API key to it (an
    admin's act; workspaces themselves are visible to every caller)."""
    return (await queries.workspace_ids(conn, [slug])).get(slug)


async def write_target(conn: ReadConnection, principal: Principal, slug: str | None) -> UUID:
    """The id of the workspace a new document goes to: the one named, else the default one; a
    key bound to one workspace writes there only.

    Raises:
        Forbidden: a bound key names another workspace. ValidationFailed: no such workspace.
    """
    scope = principal.workspace_scope
    if scope is not None and slug is not None and slug != scope:
        raise Forbidden(f"this API key may write to workspace {scope!r} only")
    slug = scope or slug or DEFAULT_WORKSPACE
    ids = await queries.workspace_ids(conn, [slug])
    if slug not in ids:
        raise ValidationFailed(
            f"workspace: no workspace named {slug!r} (an admin creates it first, in the web "
            "app's Workspaces or with POST /api/workspaces)",
            details=[{"loc": ["body", "workspace"]}],
        )
    return ids[slug]


async def ensure_workspace(
    conn: WriteConnection, principal: Principal, slug: str
) -> tuple[UUID, bool]:
    """The id of the workspace with this slug, and whether this call created it. A missing one
    is created as `create_workspace` creates any (an admin's act, audited; titled after the
    slug, its license from policy): one rule at every door, which only an operator's folder
    walk asks to apply implicitly (API.md); an upload over HTTP or MCP names an existing one.

    Raises:
        Forbidden: the caller may not create workspaces.
    """
    ids = await queries.workspace_ids(conn, [slug])
    if slug in ids:
        return ids[slug], False
    try:
        created = await create_workspace(
            conn, principal, WorkspaceCreate(slug=slug, title=slug.replace("_", " ").title())
        )
    except Conflict:
        # Another writer created it meanwhile: it exists now, which is all this asks.
        ids = await queries.workspace_ids(conn, [slug])
        return ids[slug], False
    return created.id, True


async def search_scope(
    conn: ReadConnection, principal: Principal, slugs: list[str] | None
) -> list[UUID] | None:
    """The workspaces a search covers, by id: None for every one the caller may see, else the
    ones asked for. A key bound to one workspace searches that one, whatever else it asks for.
    A list that leaves nothing the caller may search (empty, or a bound key's naming only
    others) is refused, by search and ask alike: searching nothing would answer as if the
    workspaces held nothing.

    Raises:
        ValidationFailed: an unbound caller names a workspace that does not exist, or the list
        names no workspace the caller may search.
    """
    wanted = slugs
    scope = principal.workspace_scope
    if scope is not None:
        wanted = [s for s in (slugs if slugs is not None else [scope]) if s == scope]
    if wanted is None:
        return None
    ids = await queries.workspace_ids(conn, wanted)
    unknown = sorted(set(wanted) - set(ids))
    if unknown and slugs is not None and scope is None:
        raise ValidationFailed(f"workspaces: no workspace named {', '.join(unknown)}")
    if slugs is not None and not ids:
        raise ValidationFailed("workspaces: names no workspace you may search")
    return list(ids.values())
