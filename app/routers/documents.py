"""Documents: add (JSON or a file upload), read, list, edit, delete, and their chunks."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote
from uuid import UUID

from fastapi import APIRouter, Query, Request, Response, status
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.datastructures import UploadFile

from app.access.principal import Principal
from app.deps import (
    PRINCIPAL_ERRORS,
    AppEmbedder,
    AppSettings,
    CurrentPrincipal,
    ReadConn,
    ShortTx,
    WriteConn,
    get_resources,
)
from app.documents import service as documents_service
from app.documents.files import sample_files
from app.documents.schemas import (
    Chunk,
    ChunkPreview,
    Document,
    DocumentCreate,
    DocumentCreated,
    DocumentFilters,
    DocumentUpdate,
    DocumentWithContent,
    LinkingDocument,
    OutgoingLink,
    RelatedDocument,
    SampleLoaded,
    TagList,
    Visibility,
)
from app.errors import (
    Forbidden,
    NotFound,
    TooLarge,
    Unavailable,
    UnsupportedMediaType,
    ValidationFailed,
)
from app.kit.types import Slug, Tag, Title
from app.schemas import Page, PlainText
from app.sources import service as sources_service
from app.sources.schemas import SyncedDocument

router = APIRouter(prefix="/api/documents", tags=["documents"], responses=PRINCIPAL_ERRORS)
chunks_router = APIRouter(prefix="/api/chunks", tags=["documents"], responses=PRINCIPAL_ERRORS)
tags_router = APIRouter(prefix="/api/tags", tags=["documents"], responses=PRINCIPAL_ERRORS)

_ERRORS: dict[int | str, dict[str, Any]] = {
    403: Forbidden.openapi(),
    404: NotFound.openapi(),
    413: TooLarge.openapi(),
    415: UnsupportedMediaType.openapi(),
    422: ValidationFailed.openapi(),
}

# The request body is JSON or multipart; FastAPI declares one body per route, so the schema of
# both is written out here for the OpenAPI document and the typed web client.
_CREATE_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": DocumentCreate.model_json_schema()},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary"},
                        "title": {"type": "string"},
                        "workspace": {"type": "string"},
                        "visibility": {"type": "string", "enum": ["org", "private"]},
                        "tags": {"type": "string", "description": "comma-separated"},
                        "source": {
                            "type": "string",
                            "description": "where the file came from (a path: relative links "
                            "in it resolve from its folder); default its name",
                        },
                        "replace": {
                            "type": "boolean",
                            "description": "update your document uploaded from the same source "
                            "in the workspace (a new version) instead of adding another",
                        },
                    },
                }
            },
        },
    }
}


class UploadFields(BaseModel):
    """The form fields that come with an uploaded file."""

    model_config = ConfigDict(extra="forbid")

    title: Title | None = None
    workspace: Slug | None = None
    visibility: Visibility = "org"
    tags: list[Tag] = Field(default_factory=list)
    source: str | None = Field(default=None, max_length=2000)
    replace: bool = False

    @field_validator("tags", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            return [tag for tag in value.split(",") if tag.strip()]
        return value


_UPDATE_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": DocumentUpdate.model_json_schema()}},
    }
}


def _may_write(principal: Principal) -> None:
    """Checked before the body is read: a caller who may not write documents never gets an
    upload spooled to disk or a document's worth of JSON parsed (the service checks again; this
    is about the bytes).

    Raises:
        Forbidden: the role may not add or edit documents.
    """
    principal.require("documents.write", "your role may not add, edit or delete documents")


def _invalid(exc: ValidationError, where: str) -> RequestValidationError:
    """A pydantic error of a body parsed by hand, in FastAPI's shape (the 422 handler's input)."""
    errors = [{**err, "loc": (where, *err["loc"])} for err in exc.errors(include_url=False)]
    return RequestValidationError(errors)


@router.post(
    "",
    response_model=DocumentCreated,
    status_code=status.HTTP_201_CREATED,
    operation_id="createDocument",
    responses={
        **_ERRORS,
        200: {
            "model": DocumentCreated,
            "description": "identical content (`unchanged`), or a new version (`replaced`)",
        },
    },
    openapi_extra=_CREATE_BODY,
)
async def create_document(
    request: Request,
    response: Response,
    principal: CurrentPrincipal,
    transaction: ShortTx,
    embedder: AppEmbedder,
    settings: AppSettings,
) -> DocumentCreated:
    """Add a document from JSON `{title, content, ...}` or an uploaded file (multipart)."""
    _may_write(principal)
    content_type = request.headers.get("content-type", "")
    # app.middleware bounds the body (CORPUS_MAX_UPLOAD_MB) while it is read here; the
    # service opens the request's one transaction once the document is ready.
    document: DocumentCreate | documents_service.FileUpload
    if content_type.startswith("multipart/form-data"):
        async with request.form(max_files=1, max_fields=10) as form:
            upload = form.get("file")
            if not isinstance(upload, UploadFile):
                raise ValidationFailed("file: a multipart upload needs a `file` part")
            fields = {k: v for k, v in form.items() if k != "file" and isinstance(v, str)}
            try:
                parsed = UploadFields.model_validate(fields)
            except ValidationError as exc:
                raise _invalid(exc, "body") from exc
            document = documents_service.FileUpload(
                data=await upload.read(settings.max_upload_bytes + 1),
                filename=upload.filename,
                content_type=upload.content_type,
                **parsed.model_dump(),
            )
    elif content_type.startswith("application/json") or not content_type:
        try:
            document = DocumentCreate.model_validate_json(await request.body())
        except ValidationError as exc:
            raise _invalid(exc, "body") from exc
    else:
        raise UnsupportedMediaType("send JSON or multipart/form-data with a `file` part")
    created = await documents_service.upload(
        transaction, principal, embedder, settings, get_resources(request).converter, document
    )
    if created.unchanged or created.replaced:
        response.status_code = status.HTTP_200_OK
    return created


@router.post(
    "/sample",
    response_model=SampleLoaded,
    operation_id="loadSampleDocuments",
    responses={403: Forbidden.openapi(), 503: Unavailable.openapi()},
)
async def load_sample_documents(
    request: Request,
    principal: CurrentPrincipal,
    conn: WriteConn,
    embedder: AppEmbedder,
    settings: AppSettings,
) -> SampleLoaded:
    """Admins: load the sample documents (the project's own docs) into workspace `sample`, as
    `corpus seed` does; a second load changes nothing."""
    files = sample_files()
    if files is None:
        raise Unavailable("the sample documents are not installed beside this server")
    return await documents_service.load_sample(
        conn, principal, embedder, settings, get_resources(request).converter, files
    )


@router.get("", response_model=Page[SyncedDocument], operation_id="listDocuments")
async def list_documents(
    principal: CurrentPrincipal,
    conn: ReadConn,
    filters: Annotated[DocumentFilters, Query()],
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Page[SyncedDocument]:
    """List the documents the caller may see, newest change first; a synced one carries its
    path, commit and `stale` flag."""
    return await sources_service.list_documents(
        conn, principal, filters, limit=limit, cursor=cursor
    )


@router.get(
    "/{document_id}",
    response_model=DocumentWithContent,
    operation_id="getDocument",
    responses={404: NotFound.openapi()},
)
async def get_document(
    document_id: UUID, principal: CurrentPrincipal, conn: ReadConn
) -> DocumentWithContent:
    """Get one document the caller may see, with its content."""
    document = await documents_service.get(conn, principal, document_id)
    if document is None:
        raise NotFound("document not found")
    return document


@router.patch(
    "/{document_id}",
    response_model=Document,
    operation_id="updateDocument",
    responses=_ERRORS,
    openapi_extra=_UPDATE_BODY,
)
async def update_document(
    document_id: UUID,
    request: Request,
    principal: CurrentPrincipal,
    conn: WriteConn,
    embedder: AppEmbedder,
    settings: AppSettings,
) -> Document:
    """Edit a document's title, tags, visibility or content (new content is re-indexed)."""
    _may_write(principal)
    # Parsed here, after the role check: FastAPI reads a declared body before any dependency,
    # and a document's body may be as large as an upload.
    content_type = request.headers.get("content-type", "")
    if content_type and not content_type.startswith("application/json"):
        raise UnsupportedMediaType("send the changes as JSON")
    try:
        data = DocumentUpdate.model_validate_json(await request.body())
    except ValidationError as exc:
        raise _invalid(exc, "body") from exc
    return await documents_service.update(conn, principal, embedder, settings, document_id, data)


@router.delete(
    "/{document_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    operation_id="deleteDocument",
    responses={403: Forbidden.openapi(), 404: NotFound.openapi()},
)
async def delete_document(document_id: UUID, principal: CurrentPrincipal, conn: WriteConn) -> None:
    """Delete a document and its chunks."""
    await documents_service.delete(conn, principal, document_id)


@router.get(
    "/{document_id}/chunks",
    response_model=list[Chunk],
    operation_id="listDocumentChunks",
    responses={404: NotFound.openapi()},
)
async def list_chunks(
    document_id: UUID, principal: CurrentPrincipal, conn: ReadConn
) -> list[Chunk]:
    """The chunks of a document, in order, with their offsets (the viewer draws seams)."""
    return await documents_service.chunks(conn, principal, document_id)


@router.get(
    "/{document_id}/related",
    response_model=list[RelatedDocument],
    operation_id="listRelatedDocuments",
    responses={404: NotFound.openapi()},
)
async def list_related(
    document_id: UUID,
    principal: CurrentPrincipal,
    conn: ReadConn,
    limit: Annotated[int, Query(ge=1, le=50)] = 5,
) -> list[RelatedDocument]:
    """The documents nearest to this one by the centroid of their chunks."""
    return await documents_service.related(conn, principal, document_id, limit=limit)


@router.get(
    "/{document_id}/original",
    operation_id="getDocumentOriginal",
    response_class=Response,
    responses={
        200: {"content": {"application/pdf": {}}, "description": "The file as it was uploaded."},
        404: NotFound.openapi(),
    },
)
async def get_original(document_id: UUID, principal: CurrentPrincipal, conn: ReadConn) -> Response:
    """The file an uploaded document (a PDF) was converted from, byte for byte; 404 when the
    document is not visible to the caller or keeps no original."""
    found = await documents_service.original(conn, principal, document_id)
    return Response(
        content=found.data,
        media_type=found.media_type,
        headers={"Content-Disposition": _attachment(found.filename, found.media_type)},
    )


def _attachment(filename: str | None, media_type: str) -> str:
    """A Content-Disposition that downloads under the uploaded name: an ASCII fallback, and the
    name itself percent-encoded (RFC 6266), so no name can break the header."""
    name = filename or ("document.pdf" if media_type == "application/pdf" else "document")
    fallback = "".join(
        c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name
    )
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


@router.get(
    "/{document_id}/backlinks",
    response_model=list[LinkingDocument],
    operation_id="listBacklinks",
    responses={404: NotFound.openapi()},
)
async def list_backlinks(
    document_id: UUID,
    principal: CurrentPrincipal,
    conn: ReadConn,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> list[LinkingDocument]:
    """The documents that link to this one: by its address, or by the path it came from."""
    return await documents_service.backlinks(conn, principal, document_id, limit=limit)


@router.get(
    "/{document_id}/links",
    response_model=list[OutgoingLink],
    operation_id="listDocumentLinks",
    responses={404: NotFound.openapi()},
)
async def list_links(
    document_id: UUID, principal: CurrentPrincipal, conn: ReadConn
) -> list[OutgoingLink]:
    """The links in this document to others, each with the document it reaches (or null)."""
    return await documents_service.outgoing_links(conn, principal, document_id)


@chunks_router.get(
    "/{chunk_id}",
    response_model=ChunkPreview,
    operation_id="getChunk",
    responses={404: NotFound.openapi()},
)
async def get_chunk(chunk_id: UUID, principal: CurrentPrincipal, conn: ReadConn) -> ChunkPreview:
    """One chunk with its document's title and workspace (what a citation shows)."""
    preview = await documents_service.chunk_preview(conn, principal, chunk_id)
    if preview is None:
        raise NotFound("chunk not found")
    return preview


@tags_router.get("", response_model=TagList, operation_id="listTags")
async def list_tags(
    principal: CurrentPrincipal,
    conn: ReadConn,
    q: Annotated[
        PlainText | None,
        Query(max_length=64, description="Only tags that contain this (ignoring case)."),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 100,
) -> TagList:
    """The tags of the documents you may see, the most used first, with how many carry each."""
    return TagList(items=await documents_service.tags(conn, principal, limit=limit, q=q))
