"""Core `Table` definitions of the whole schema (DESIGN.md §3). Alembic owns the schema's history;
these definitions are what queries are written against, and `alembic check` keeps both in step."""

from __future__ import annotations

from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR, UUID

from app.kit.types import SLUG_PATTERN

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


def _id() -> Column[object]:
    return Column(
        "id", UUID(as_uuid=True), primary_key=True, server_default=text("gen_random_uuid()")
    )


def _created_at() -> Column[object]:
    return Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now())


def _agent_columns() -> tuple[Column[object], Column[object]]:
    """The API key or the OAuth client a person's call came through (null for a browser
    session or the command line). No foreign keys: the record outlives the credential."""
    return (
        Column("agent_key_id", UUID(as_uuid=True)),
        Column("agent_client_id", Text),
    )


def _updated_at() -> Column[object]:
    return Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now())


def _texts() -> ARRAY[str]:
    return ARRAY(Text)


def _uuids() -> ARRAY[Any]:
    return ARRAY(UUID(as_uuid=True))


users = Table(
    "users",
    metadata,
    _id(),
    # Stored lower-cased by the people service, so a plain unique index is case-insensitive.
    Column("email", Text, nullable=False),
    Column("display_name", Text, nullable=False, server_default=""),
    Column("password_hash", Text),  # null for agents and OpenID-only people
    Column("role", Text, nullable=False),
    Column("kind", Text, nullable=False, server_default="human"),
    Column("active", Boolean, nullable=False, server_default=text("true")),
    Column("failed_logins", Integer, nullable=False, server_default="0"),
    Column("locked_until", DateTime(timezone=True)),
    Column("must_change_password", Boolean, nullable=False, server_default=text("false")),
    Column("last_seen_at", DateTime(timezone=True)),
    Column("default_persona", Text),
    Column("oidc_subject", Text),
    _created_at(),
    _updated_at(),
    UniqueConstraint("email"),
    CheckConstraint("role IN ('viewer', 'editor', 'admin')", name="role"),
    CheckConstraint("kind IN ('human', 'agent')", name="kind"),
    CheckConstraint("email = lower(email)", name="email_lower"),
)

sessions = Table(
    "sessions",
    metadata,
    _id(),
    Column(
        "user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE"), nullable=False
    ),
    # The cookie carries a random token, signed; only its sha256 is stored, so a copy of the
    # database opens no session.
    Column("token_sha256", Text, nullable=False),
    _created_at(),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Column("last_seen_at", DateTime(timezone=True)),
    UniqueConstraint("token_sha256"),
    Index(None, "user_id"),
    Index(None, "expires_at"),
)

workspaces = Table(
    "workspaces",
    metadata,
    _id(),
    Column("slug", Text, nullable=False),
    Column("title", Text, nullable=False),
    Column("description", Text, nullable=False, server_default=""),
    Column("license", Text),  # SPDX id or PROPRIETARY; null means "from policy"
    Column("tier", Text, nullable=False, server_default="community"),
    Column("remote_url", Text),
    # A remote workspace's bearer must be presented, so it is encrypted, not hashed.
    Column("remote_token_encrypted", LargeBinary),
    _created_at(),
    _updated_at(),
    UniqueConstraint("slug"),
    CheckConstraint(f"slug ~ '{SLUG_PATTERN}'", name="slug"),
    CheckConstraint("tier IN ('core', 'reference', 'community')", name="tier"),
)

api_keys = Table(
    "api_keys",
    metadata,
    _id(),
    Column(
        "user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE"), nullable=False
    ),
    Column("name", Text, nullable=False),
    Column("prefix", Text, nullable=False),
    Column("secret_sha256", Text, nullable=False),
    Column("workspace_id", UUID(as_uuid=True), ForeignKey("workspaces.id", ondelete="CASCADE")),
    Column("persona", Text),
    _created_at(),
    Column("last_used_at", DateTime(timezone=True)),
    Column("revoked_at", DateTime(timezone=True)),
    UniqueConstraint("secret_sha256"),
    Index(None, "user_id"),
)

personas = Table(
    "personas",
    metadata,
    # Admin-set personas only; the built-in table and the policy file are not stored.
    Column("slug", Text, primary_key=True),
    Column("workspaces", _texts(), nullable=False),  # ordered, earlier is higher priority
    Column("updated_by", UUID(as_uuid=True), ForeignKey("users.id", ondelete="SET NULL")),
    _updated_at(),
)

documents = Table(
    "documents",
    metadata,
    _id(),
    Column(
        "workspace_id",
        UUID(as_uuid=True),
        ForeignKey("workspaces.id", ondelete="RESTRICT"),
        nullable=False,
    ),
    Column("owner_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="SET NULL")),
    Column("title", Text, nullable=False),
    Column("source", Text),
    Column("media_type", Text, nullable=False, server_default="text/markdown"),
    Column("visibility", Text, nullable=False, server_default="org"),
    Column("tags", _texts(), nullable=False, server_default="{}"),
    Column("content", Text, nullable=False),
    Column("content_sha256", Text, nullable=False),
    Column("version", Integer, nullable=False, server_default="1"),
    # A note an agent saved: every chunk its run had read (null for everything else).
    Column("derived_from", _uuids()),
    *_agent_columns(),
    _created_at(),
    _updated_at(),
    CheckConstraint("visibility IN ('org', 'private')", name="visibility"),
    Index(None, "workspace_id", "owner_id", "content_sha256"),
    # A file's document, found by where it came from (a re-upload, a folder walk): migration 0020.
    Index(None, "workspace_id", "owner_id", "source"),
    Index(None, "owner_id"),
    Index(None, "tags", postgresql_using="gin"),
    Index(None, "title", postgresql_using="gin", postgresql_ops={"title": "gin_trgm_ops"}),
)

# An uploaded PDF as it was sent, to download from the viewer (issue #33); one per document,
# in a table of its own so that reading a document never reads its file.
document_originals = Table(
    "document_originals",
    metadata,
    Column(
        "document_id",
        UUID(as_uuid=True),
        ForeignKey("documents.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("media_type", Text, nullable=False),
    Column("filename", Text),
    Column("data", LargeBinary, nullable=False),
)

# A folder on the server or a git repository kept in sync with a workspace (issue #35, ADR
# 0035). The sources package is its one writer.
sources = Table(
    "sources",
    metadata,
    _id(),
    Column(
        "workspace_id",
        UUID(as_uuid=True),
        ForeignKey("workspaces.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("kind", Text, nullable=False),
    # A folder's absolute path; a repository's URL or local path.
    Column("location", Text, nullable=False),
    Column("branch", Text),
    Column("include", _texts(), nullable=False, server_default="{}"),
    Column("exclude", _texts(), nullable=False, server_default="{}"),
    # A token or a deploy key must be presented, so it is encrypted, not hashed.
    Column("secret_encrypted", LargeBinary),
    # What a push webhook signs its body with (GitHub, Gitea) or sends (GitLab).
    Column("webhook_secret_encrypted", LargeBinary, nullable=False),
    Column("paused", Boolean, nullable=False, server_default=text("false")),
    # Minutes between scheduled syncs; null: on demand and by webhook only.
    Column("schedule_minutes", Integer),
    # The commit the documents stand at (git), so the next sync reads only the diff.
    Column("last_commit", Text),
    Column("last_synced_at", DateTime(timezone=True)),
    # One sync at a time, across processes: a sync takes the lease and renews it while it works.
    Column("lease_owner", Text),
    Column("lease_expires_at", DateTime(timezone=True)),
    # A push (or the schedule) that found the lease held: its holder syncs again when it ends.
    Column("sync_requested_at", DateTime(timezone=True)),
    _created_at(),
    _updated_at(),
    CheckConstraint("kind IN ('folder', 'git')", name="kind"),
    CheckConstraint("schedule_minutes IS NULL OR schedule_minutes > 0", name="schedule"),
    UniqueConstraint("workspace_id", "location"),
)

source_runs = Table(
    "source_runs",
    metadata,
    _id(),
    Column(
        "source_id",
        UUID(as_uuid=True),
        ForeignKey("sources.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("trigger", Text, nullable=False),
    Column("status", Text, nullable=False, server_default="running"),
    Column("started_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("finished_at", DateTime(timezone=True)),
    Column("commit", Text),
    Column("added", Integer, nullable=False, server_default="0"),
    Column("updated", Integer, nullable=False, server_default="0"),
    Column("removed", Integer, nullable=False, server_default="0"),
    Column("unchanged", Integer, nullable=False, server_default="0"),
    Column("failed", Integer, nullable=False, server_default="0"),
    # [{path, reason}] for each file that failed, and the run's own error when it failed whole.
    Column("failures", JSONB, nullable=False, server_default="[]"),
    Column("error", Text),
    CheckConstraint("status IN ('running', 'succeeded', 'failed')", name="status"),
    Index(None, "source_id", "started_at"),
)

# Which document each of a source's files became: its path, what the file held, and for git the
# commit and date of its last change and the later commits that changed code it names.
source_documents = Table(
    "source_documents",
    metadata,
    Column(
        "document_id",
        UUID(as_uuid=True),
        ForeignKey("documents.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column(
        "source_id",
        UUID(as_uuid=True),
        ForeignKey("sources.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("path", Text, nullable=False),
    # The file's bytes' sha256 (a folder) or its blob id (git): unchanged files are skipped.
    Column("file_hash", Text, nullable=False),
    Column("commit", Text),
    Column("commit_date", DateTime(timezone=True)),
    # The paths and identifiers the document names in its code (lower case), matched against
    # the commits that come after it.
    Column("names", _texts(), nullable=False, server_default="{}"),
    # [{commit, date, paths, identifiers}]: later commits that changed code the document names.
    Column("stale", JSONB, nullable=False, server_default="[]"),
    UniqueConstraint("source_id", "path"),
    Index(None, "names", postgresql_using="gin"),
)

chunks = Table(
    "chunks",
    metadata,
    _id(),
    Column(
        "document_id",
        UUID(as_uuid=True),
        ForeignKey("documents.id", ondelete="CASCADE"),
        nullable=False,
    ),
    # The document's workspace and, for a private document, its owner (null when `org`), copied
    # here so that the HNSW scan filters on the chunk row itself, without a join.
    Column(
        "workspace_id",
        UUID(as_uuid=True),
        ForeignKey("workspaces.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("private_owner_id", UUID(as_uuid=True)),
    Column("ordinal", Integer, nullable=False),
    Column("heading_path", _texts(), nullable=False, server_default="{}"),
    Column("text", Text, nullable=False),
    Column("start_offset", Integer, nullable=False),
    Column("end_offset", Integer, nullable=False),
    Column("token_count", Integer, nullable=False),
    # The page of a converted PDF the chunk mostly sits on (from 1); null for other documents.
    Column("page", Integer),
    # The dimension is the configured model's, fixed by the migration that created the column
    # (and changed only by `corpus reembed`), so the metadata leaves it open.
    Column("embedding", Vector(), nullable=False),
    # Title + heading path + text as lexemes, written by ingest (a title edit rewrites these
    # without re-embedding).
    Column("tsv", TSVECTOR, nullable=False),
    # Number of lexeme occurrences: the document length of BM25.
    Column("lexeme_count", Integer, nullable=False, server_default="0"),
    UniqueConstraint("document_id", "ordinal"),
    Index(
        "ix_chunks_embedding_hnsw",
        "embedding",
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 200},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    ),
    # No index on `tsv`: the keyword half reads the postings, and a quoted phrase is tested on
    # each candidate row (migration 0022).
    Index(None, "workspace_id"),
    CheckConstraint("start_offset >= 0 AND end_offset >= start_offset", name="offsets"),
)

# The links in a document's Markdown to other documents (app.documents.links), written with its
# content: where each points (a document's id, or a path within the workspace and the file's
# name), never the document it found then, so a link finds a target uploaded after it. The
# linking document's workspace is copied here: a backlink is one index lookup. No foreign key
# on `target_id`: a link to a deleted document stays what its author wrote.
document_links = Table(
    "document_links",
    metadata,
    Column(
        "document_id",
        UUID(as_uuid=True),
        ForeignKey("documents.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column(
        "workspace_id",
        UUID(as_uuid=True),
        ForeignKey("workspaces.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("href", Text, nullable=False),
    Column("target_id", UUID(as_uuid=True)),
    Column("target_path", Text),
    Column("target_name", Text),
    PrimaryKeyConstraint("document_id", "href"),
    CheckConstraint("(target_id IS NULL) <> (target_path IS NULL)", name="one_target"),
    Index(None, "target_id"),
    Index(None, "workspace_id", "target_path"),
    Index(None, "workspace_id", "target_name"),
)

# BM25 postings, kept with the chunks in the same transaction (DESIGN.md §4; docs/adr/0004).
# One row per (lexeme, chunk). `impact` is the term's saturated, length-normalised frequency at
# write time: it orders a lexeme's postings so that a query reads only the top few hundred per
# term; the score itself is recomputed at query time from tf and dl with the current statistics.
chunk_terms = Table(
    "chunk_terms",
    metadata,
    Column("lexeme", Text, nullable=False),
    # No foreign key: checking one for each posting written was a third of the postings' cost.
    # A chunk's postings go with it by a statement trigger on `chunks` (migration 0021, ADR
    # 0038), whichever way it is deleted (an edit, a document's or a workspace's cascade).
    Column("chunk_id", UUID(as_uuid=True), nullable=False),
    Column("workspace_id", UUID(as_uuid=True), nullable=False),
    Column("private_owner_id", UUID(as_uuid=True)),
    Column("tf", Integer, nullable=False),
    Column("dl", Integer, nullable=False),
    Column("impact", Float, nullable=False),
    Index(
        "ix_chunk_terms_lexeme_impact",
        "lexeme",
        text("impact DESC"),
        postgresql_include=["chunk_id", "workspace_id", "private_owner_id", "tf", "dl"],
    ),
    Index(None, "chunk_id"),
)

# Corpus statistics of BM25 (document frequencies, chunk count, total length), counted over
# `org` chunks only: a private document must not move anyone else's scores (a side channel).
lexeme_stats = Table(
    "lexeme_stats",
    metadata,
    Column("lexeme", Text, primary_key=True),
    Column("df", Integer, nullable=False),
)

corpus_stats = Table(
    "corpus_stats",
    metadata,
    Column("id", Integer, primary_key=True, server_default="1"),
    Column("chunk_count", BigInteger, nullable=False, server_default="0"),
    Column("lexeme_total", BigInteger, nullable=False, server_default="0"),
    CheckConstraint("id = 1", name="single_row"),
)

questions = Table(
    "questions",
    metadata,
    _id(),
    Column("user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="SET NULL")),
    # Where it was asked: api, chat or mcp (app.search.schemas.Door).
    Column("door", Text, nullable=False),
    Column("query", Text, nullable=False),
    Column("mode", Text, nullable=False),
    Column("best_similarity", Float),
    Column("hit_count", Integer, nullable=False, server_default="0"),
    Column("answered", Boolean, nullable=False),
    *_agent_columns(),
    _created_at(),
    Index(None, "created_at"),
    Index(None, "answered", "created_at"),
)

# A dismissed documentation gap: the questions of this wording asked until `dismissed_at` no
# longer count as a gap (the wording as the gaps compare them: lower-cased, spaces collapsed).
gap_dismissals = Table(
    "gap_dismissals",
    metadata,
    Column("wording", Text, primary_key=True),
    Column("dismissed_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("dismissed_by", UUID(as_uuid=True), ForeignKey("users.id", ondelete="SET NULL")),
)

chats = Table(
    "chats",
    metadata,
    _id(),
    Column(
        "user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE"), nullable=False
    ),
    Column("title", Text, nullable=False, server_default=""),
    # The binding it was made under: a key bound to a workspace sees only its own (and the
    # persona, for the record).
    Column("workspace_scope", Text),
    Column("persona", Text),
    _created_at(),
    _updated_at(),
    Index(None, "user_id", "updated_at"),
)

chat_messages = Table(
    "chat_messages",
    metadata,
    _id(),
    Column(
        "chat_id", UUID(as_uuid=True), ForeignKey("chats.id", ondelete="CASCADE"), nullable=False
    ),
    Column("role", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("mode", Text),
    Column("citations", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
    Column("trace", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
    # Every chunk the answer's run read, cited or not: what a follow-up's history draws on.
    Column("read_chunks", _uuids(), nullable=False, server_default="{}"),
    _created_at(),
    CheckConstraint("role IN ('user', 'assistant')", name="role"),
    Index(None, "chat_id", "created_at"),
)

# Deep research runs that outlast a client's tool timeout (DESIGN.md §6).
research_jobs = Table(
    "research_jobs",
    metadata,
    _id(),
    Column(
        "user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE"), nullable=False
    ),
    Column("question", Text, nullable=False),
    Column("workspace_scope", Text),
    Column("persona", Text),
    Column("status", Text, nullable=False, server_default="running"),
    Column("result", JSONB),
    Column("error", Text),
    _created_at(),
    Column("finished_at", DateTime(timezone=True)),
    # The process running the job renews its lease while it works; a running job whose lease
    # ran out belongs to a process that died, and is marked failed by whoever reads it.
    Column("worker", Text),
    Column("lease_expires_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("heartbeat_at", DateTime(timezone=True)),
    # A deep run asked in a chat: its turn lands there when it ends (ADR 0030).
    Column("chat_id", UUID(as_uuid=True), ForeignKey("chats.id", ondelete="CASCADE")),
    CheckConstraint("status IN ('running', 'done', 'failed')", name="status"),
    Index(None, "user_id"),
    Index(None, "chat_id"),
    Index(
        "ix_research_jobs_running_lease_expires_at",
        "lease_expires_at",
        postgresql_where=text("status = 'running'"),
    ),
)

audit_log = Table(
    "audit_log",
    metadata,
    _id(),
    Column("at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("actor_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="SET NULL")),
    Column("actor_email", Text),
    Column("action", Text, nullable=False),
    Column("target_type", Text, nullable=False),
    Column("target_id", Text),
    Column("before", JSONB),
    Column("after", JSONB),
    *_agent_columns(),
    Index(None, "at"),
    Index(None, "actor_id", "at"),
    Index(None, "action", "at"),
)

oauth_clients = Table(
    "oauth_clients",
    metadata,
    Column("client_id", Text, primary_key=True),
    # The MCP SDK compares client secrets in plain form, so they are encrypted, not hashed.
    Column("client_secret_encrypted", LargeBinary),
    Column("client_name", Text),
    Column("redirect_uris", _texts(), nullable=False),
    Column("metadata", JSONB, nullable=False),  # the full RFC 7591 registration
    _created_at(),
    # When a person first approved it. Anyone may register a client, so one nobody approved
    # within a day is deleted (app.housekeeping); the partial index finds those.
    Column("authorized_at", DateTime(timezone=True)),
    Index(
        "ix_oauth_clients_unauthorized_created_at",
        "created_at",
        postgresql_where=text("authorized_at IS NULL"),
    ),
)

# Consent transactions: an /authorize request waiting for the person's yes or no.
oauth_authorizations = Table(
    "oauth_authorizations",
    metadata,
    Column("id", Text, primary_key=True),
    Column(
        "client_id", Text, ForeignKey("oauth_clients.client_id", ondelete="CASCADE"), nullable=False
    ),
    Column("params", JSONB, nullable=False),
    _created_at(),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Column("answered_at", DateTime(timezone=True)),
    Column("user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE")),
    Index(None, "expires_at"),
)

oauth_codes = Table(
    "oauth_codes",
    metadata,
    Column("code_sha256", Text, primary_key=True),
    Column(
        "client_id", Text, ForeignKey("oauth_clients.client_id", ondelete="CASCADE"), nullable=False
    ),
    Column(
        "user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE"), nullable=False
    ),
    Column("scopes", _texts(), nullable=False),
    Column("code_challenge", Text, nullable=False),
    Column("redirect_uri", Text, nullable=False),
    Column("redirect_uri_provided_explicitly", Boolean, nullable=False),
    Column("resource", Text),
    _created_at(),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    # A redeemed code is kept, marked used, until it expires: presented again, it names the
    # token family it issued, which is then revoked (RFC 6749 §4.1.2).
    Column("used_at", DateTime(timezone=True)),
    Column("family_id", UUID(as_uuid=True)),
    Index(None, "expires_at"),
)

oauth_tokens = Table(
    "oauth_tokens",
    metadata,
    Column("token_sha256", Text, primary_key=True),
    Column("kind", Text, nullable=False),
    Column(
        "client_id", Text, ForeignKey("oauth_clients.client_id", ondelete="CASCADE"), nullable=False
    ),
    Column(
        "user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE"), nullable=False
    ),
    Column("scopes", _texts(), nullable=False),
    Column("resource", Text),
    # Refresh tokens rotate; every token of one grant shares a family, so reuse of an old
    # refresh token can revoke the whole family.
    Column("family_id", UUID(as_uuid=True), nullable=False),
    _created_at(),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Column("used_at", DateTime(timezone=True)),
    Column("revoked_at", DateTime(timezone=True)),
    CheckConstraint("kind IN ('access', 'refresh')", name="kind"),
    Index(None, "family_id"),
    Index(None, "user_id", "client_id"),
    Index(None, "expires_at"),
)

oauth_consents = Table(
    "oauth_consents",
    metadata,
    Column(
        "user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE"), nullable=False
    ),
    Column(
        "client_id", Text, ForeignKey("oauth_clients.client_id", ondelete="CASCADE"), nullable=False
    ),
    Column("scopes", _texts(), nullable=False),
    _created_at(),
    PrimaryKeyConstraint("user_id", "client_id"),
)

# One row: the embedding model the stored vectors were made with.
embedding_meta = Table(
    "embedding_meta",
    metadata,
    Column("id", Integer, primary_key=True, server_default="1"),
    Column("provider", Text, nullable=False),
    Column("model", Text, nullable=False),
    Column("dim", Integer, nullable=False),
    _updated_at(),
    CheckConstraint("id = 1", name="single_row"),
)
