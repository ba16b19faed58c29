"""The one configuration model: every door and the CLI read `Settings`, and nothing else reads
the environment (ruff's banned-api rule enforces that outside this module)."""

from __future__ import annotations

import os
import secrets
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from limits import parse as parse_rate
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.access.capabilities import Role

EmbeddingsProvider = Literal["local", "gemini", "openai", "voyage", "hash"]
AnswerProvider = Literal["gemini", "anthropic", "openai", "none"]
RoutingMode = Literal["persona-routed", "all-allowed", "custom"]

# Each embedding provider's defaults: model id, vector dimension, relevance floor (cosine
# similarity under which a dense candidate is dropped). The floors are per provider because
# similarity scales differ between models; the retrieval issue sets them by measurement.
PROVIDER_DEFAULTS: dict[str, tuple[str, int, float]] = {
    "local": ("all-MiniLM-L6-v2-onnx-int8", 384, 0.3),
    "gemini": ("gemini-embedding-001", 768, 0.5),
    "openai": ("text-embedding-3-small", 1536, 0.3),
    "voyage": ("voyage-3.5-lite", 1024, 0.3),
    "hash": ("hash-384", 384, 0.2),
}

# Values copied from examples or templates: refused, because a known key signs every session.
PLACEHOLDER_SECRETS = frozenset(
    {"changeme", "changethis", "change-me", "secret", "secret_key", "your-secret-key", "xxx"}
)
MIN_SECRET_LENGTH = 32
SECRET_KEY_FILE = "secret_key"

# The SPA's build output inside a checkout; deployments that install the package elsewhere point
# CORPUS_STATIC_DIR at their copy.
DEFAULT_STATIC_DIR = Path(__file__).resolve().parent.parent / "frontend" / "dist"

CommaList = Annotated[list[str], NoDecode]


class Settings(BaseSettings):
    """Corpus settings, from the environment and `.env` (README has the table)."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
        validate_default=True,
    )

    database_url: str = Field(default="", validation_alias="DATABASE_URL")
    database_read_url: str = Field(default="", validation_alias="DATABASE_READ_URL")
    # With a replica (docs/adr/0032): reads fall back to the primary while it has not replayed
    # what the primary had written this many seconds ago, and its state is checked this often.
    replica_max_lag_s: float = Field(
        default=10.0, gt=0, le=3600, validation_alias="CORPUS_REPLICA_MAX_LAG_S"
    )
    replica_check_s: float = Field(
        default=2.0, gt=0, le=600, validation_alias="CORPUS_REPLICA_CHECK_S"
    )
    # The most connections one process opens to PostgreSQL (per engine). A request holds at
    # most one at a time, so this bounds the requests in the database at once, not the requests.
    db_max_connections: int = Field(
        default=20, ge=1, le=1000, validation_alias="CORPUS_DB_MAX_CONNECTIONS"
    )
    data_dir: Path = Field(default=Path("var"), validation_alias="CORPUS_DATA_DIR")
    host: str = Field(default="127.0.0.1", min_length=1, validation_alias="CORPUS_HOST")
    port: int = Field(default=8000, ge=1, le=65535, validation_alias="CORPUS_PORT")
    public_url: str = Field(default="", validation_alias="CORPUS_PUBLIC_URL")
    allowed_hosts: CommaList = Field(default_factory=list, validation_alias="CORPUS_ALLOWED_HOSTS")
    allowed_origins: CommaList = Field(
        default_factory=list, validation_alias="CORPUS_ALLOWED_ORIGINS"
    )
    secret_key: SecretStr | None = Field(default=None, validation_alias="SECRET_KEY")
    open_signup: bool = Field(default=False, validation_alias="CORPUS_OPEN_SIGNUP")
    static_dir: Path = Field(default=DEFAULT_STATIC_DIR, validation_alias="CORPUS_STATIC_DIR")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", validation_alias="CORPUS_LOG_LEVEL"
    )
    # `json`: one JSON object a line, for a log collector (app/logs.py).
    log_format: Literal["text", "json"] = Field(
        default="text", validation_alias="CORPUS_LOG_FORMAT"
    )
    # Set: GET /metrics answers Prometheus text to `Authorization: Bearer <token>` (401
    # otherwise); empty: there is no /metrics (404).
    metrics_token: SecretStr | None = Field(default=None, validation_alias="CORPUS_METRICS_TOKEN")
    # OpenTelemetry traces (app/observe/tracing.py), by the standard variables: off unless an
    # OTLP endpoint is set. Only OTLP over HTTP with protobuf is exported.
    otel_exporter_otlp_endpoint: str = Field(
        default="", validation_alias="OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    otel_exporter_otlp_traces_endpoint: str = Field(
        default="", validation_alias="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    )
    otel_exporter_otlp_protocol: Literal["http/protobuf"] = Field(
        default="http/protobuf", validation_alias="OTEL_EXPORTER_OTLP_PROTOCOL"
    )
    otel_traces_exporter: Literal["otlp", "none"] = Field(
        default="otlp", validation_alias="OTEL_TRACES_EXPORTER"
    )
    otel_sdk_disabled: bool = Field(default=False, validation_alias="OTEL_SDK_DISABLED")
    otel_service_name: str = Field(
        default="corpus", min_length=1, validation_alias="OTEL_SERVICE_NAME"
    )

    embeddings_provider: EmbeddingsProvider = Field(
        default="local", validation_alias="EMBEDDINGS_PROVIDER"
    )
    embeddings_model: str = Field(default="", validation_alias="EMBEDDINGS_MODEL")
    embeddings_dim: int = Field(default=0, ge=0, le=16000, validation_alias="EMBEDDINGS_DIM")
    retrieval_min_similarity: float | None = Field(
        default=None, ge=-1.0, le=1.0, validation_alias="RETRIEVAL_MIN_SIMILARITY"
    )

    answer_provider: AnswerProvider | Literal[""] = Field(
        default="", validation_alias="ANSWER_PROVIDER"
    )
    answer_model: str = Field(default="", validation_alias="ANSWER_MODEL")
    deep_model: str = Field(default="", validation_alias="DEEP_MODEL")
    google_api_key: SecretStr | None = Field(default=None, validation_alias="GOOGLE_API_KEY")
    anthropic_api_key: SecretStr | None = Field(default=None, validation_alias="ANTHROPIC_API_KEY")
    openai_api_key: SecretStr | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    openai_base_url: str = Field(default="", validation_alias="OPENAI_BASE_URL")
    voyage_api_key: SecretStr | None = Field(default=None, validation_alias="VOYAGE_API_KEY")
    # Other endpoints for the Gemini and Anthropic APIs (a proxy or gateway); empty: theirs.
    gemini_base_url: str = Field(default="", validation_alias="GEMINI_BASE_URL")
    anthropic_base_url: str = Field(default="", validation_alias="ANTHROPIC_BASE_URL")

    # --- The answering agents' budgets (docs/DEEP_AGENT_RAG.md): a run cannot run away.
    # One model request's timeout (a provider that hangs becomes a clear error).
    answer_timeout_s: float = Field(default=60.0, gt=0, le=600, validation_alias="ANSWER_TIMEOUT_S")
    # The most tokens one model reply may hold.
    answer_max_tokens: int = Field(
        default=4096, ge=64, le=65536, validation_alias="ANSWER_MAX_TOKENS"
    )
    # A whole run's deadline, per mode.
    fast_deadline_s: float = Field(
        default=90.0, gt=0, le=3600, validation_alias="ANSWER_FAST_DEADLINE_S"
    )
    deep_deadline_s: float = Field(
        default=600.0, gt=0, le=7200, validation_alias="ANSWER_DEEP_DEADLINE_S"
    )
    # The fast agent's searches (its step cap): at the cap it answers from what it has.
    fast_max_searches: int = Field(
        default=5, ge=1, le=50, validation_alias="ANSWER_FAST_MAX_SEARCHES"
    )
    # Model calls and tool calls of one run, every agent of a deep run together.
    answer_max_model_calls: int = Field(
        default=40, ge=2, le=1000, validation_alias="ANSWER_MAX_MODEL_CALLS"
    )
    answer_max_tool_calls: int = Field(
        default=60, ge=1, le=1000, validation_alias="ANSWER_MAX_TOOL_CALLS"
    )
    # The most characters put in front of the model at once (about four per token).
    answer_max_context_chars: int = Field(
        default=60_000, ge=2000, le=2_000_000, validation_alias="ANSWER_MAX_CONTEXT_CHARS"
    )
    # The deep run: researchers at once, and how often the verifier may send a draft back.
    deep_max_researchers: int = Field(
        default=4, ge=1, le=16, validation_alias="DEEP_MAX_RESEARCHERS"
    )
    deep_max_revisions: int = Field(default=2, ge=0, le=10, validation_alias="DEEP_MAX_REVISIONS")
    # POST /api/ask sends a keep-alive comment this often, so that proxies keep a stream open
    # while the model thinks.
    sse_ping_s: float = Field(default=15.0, gt=0, le=300, validation_alias="ANSWER_SSE_PING_S")
    # MCP's deep_research answers within this wait, else returns a job id to poll.
    research_wait_s: float = Field(
        default=45.0, ge=0, le=600, validation_alias="DEEP_RESEARCH_WAIT_S"
    )
    # A research job's lease, renewed a few times within it while its process runs the job.
    research_lease_s: float = Field(
        default=60.0, ge=1, le=3600, validation_alias="DEEP_RESEARCH_LEASE_S"
    )

    oauth_registration: Literal["open", "closed"] = Field(
        default="open", validation_alias="CORPUS_OAUTH_REGISTRATION"
    )
    oidc_issuer: str = Field(default="", validation_alias="OIDC_ISSUER")
    oidc_client_id: str = Field(default="", validation_alias="OIDC_CLIENT_ID")
    oidc_client_secret: SecretStr | None = Field(
        default=None, validation_alias="OIDC_CLIENT_SECRET"
    )
    oidc_allowed_domains: CommaList = Field(
        default_factory=list, validation_alias="OIDC_ALLOWED_DOMAINS"
    )
    oidc_default_role: Role = Field(default="viewer", validation_alias="OIDC_DEFAULT_ROLE")

    policy_file: Path | None = Field(default=None, validation_alias="CORPUS_POLICY_FILE")
    routing_mode: RoutingMode = Field(
        default="persona-routed", validation_alias="CORPUS_ROUTING_MODE"
    )
    default_persona: str = Field(default="", validation_alias="CORPUS_DEFAULT_PERSONA")
    fanout_timeout_ms: int = Field(default=4000, ge=1, validation_alias="CORPUS_FANOUT_TIMEOUT_MS")
    # Remote workspaces (and anything else the server fetches from an address it is given) go
    # to public addresses only; true also admits private ones (RFC 1918, 100.64.0.0/10,
    # fc00::/7) and loopback, for federating inside one network or host. Link-local
    # (169.254.169.254, the cloud metadata endpoints), unspecified, multicast and reserved
    # addresses are refused either way (docs/SECURITY.md, "Remote workspaces").
    remote_allow_private: bool = Field(
        default=False, validation_alias="CORPUS_REMOTE_ALLOW_PRIVATE"
    )
    # Folders a source may read: a folder source, or a git repository given as a local path or
    # a file:// URL, must lie under one of these (empty: none; a remote URL is not a folder).
    # Without the rule an admin's source could publish any file the server can read.
    source_roots: CommaList = Field(default_factory=list, validation_alias="CORPUS_SOURCE_ROOTS")
    cache_ttl_s: int = Field(default=600, ge=0, validation_alias="CORPUS_CACHE_TTL_S")
    cache_max_entries: int = Field(default=1000, ge=0, validation_alias="CORPUS_CACHE_MAX_ENTRIES")
    token_budget: int = Field(default=2000, ge=1, validation_alias="CORPUS_TOKEN_BUDGET")
    max_upload_mb: int = Field(default=20, ge=1, le=1024, validation_alias="CORPUS_MAX_UPLOAD_MB")
    max_document_chars: int = Field(
        default=2_000_000, ge=1000, validation_alias="CORPUS_MAX_DOCUMENT_CHARS"
    )
    max_query_chars: int = Field(
        default=2000, ge=1, le=100_000, validation_alias="CORPUS_MAX_QUERY_CHARS"
    )

    # --- Limits and throttles (docs/SECURITY.md has the threat each one answers). Throttles
    # are rates in the `limits` package's notation ("10/minute", "20 per hour"), kept in each
    # process's memory.

    # Sign-in: per client address and over the whole process.
    signin_rate_per_address: str = Field(
        default="10/minute", validation_alias="CORPUS_SIGNIN_RATE_PER_ADDRESS"
    )
    signin_rate: str = Field(default="120/minute", validation_alias="CORPUS_SIGNIN_RATE")
    # Password hashing runs in a bounded pool of threads, off the event loop.
    hash_workers: int = Field(default=2, ge=1, le=64, validation_alias="CORPUS_HASH_WORKERS")

    # OAuth dynamic client registration, per client address.
    register_rate_per_address: str = Field(
        default="20/hour", validation_alias="CORPUS_REGISTER_RATE_PER_ADDRESS"
    )

    # Answering (app/asking/limits.py): each person's runs at once at every door (asks, and
    # research jobs while they run); of those, research jobs running, and more of them waiting
    # in line; and the model calls the process makes at once, shared fairly between people.
    max_runs_per_person: int = Field(
        default=4, ge=1, le=1000, validation_alias="CORPUS_MAX_RUNS_PER_PERSON"
    )
    max_jobs_per_person: int = Field(
        default=2, ge=1, le=1000, validation_alias="CORPUS_MAX_JOBS_PER_PERSON"
    )
    max_queued_jobs_per_person: int = Field(
        default=8, ge=0, le=1000, validation_alias="CORPUS_MAX_QUEUED_JOBS_PER_PERSON"
    )
    max_concurrent_model_calls: int = Field(
        default=8, ge=1, le=10_000, validation_alias="CORPUS_MAX_CONCURRENT_MODEL_CALLS"
    )

    # Request bodies: JSON routes other than documents and /mcp.
    max_json_kb: int = Field(default=256, ge=1, le=65536, validation_alias="CORPUS_MAX_JSON_KB")

    # File conversion, in a worker process of its own.
    convert_timeout_s: float = Field(
        default=20.0, gt=0, le=600, validation_alias="CORPUS_CONVERT_TIMEOUT_S"
    )
    convert_memory_mb: int = Field(
        default=1024, ge=128, le=65536, validation_alias="CORPUS_CONVERT_MEMORY_MB"
    )
    # How many files convert at once (one worker process each); the others wait their turn.
    convert_workers: int = Field(default=2, ge=1, le=64, validation_alias="CORPUS_CONVERT_WORKERS")
    # Bounds checked while a file converts, before the work they would cost: a PDF's pages, the
    # bytes its streams inflate to (each stream, and all the pages' content together), and how
    # deep HTML nests (markdownify recurses once per level).
    convert_max_pdf_pages: int = Field(
        default=2000, ge=1, le=100_000, validation_alias="CORPUS_CONVERT_MAX_PDF_PAGES"
    )
    convert_max_inflated_mb: int = Field(
        default=64, ge=1, le=4096, validation_alias="CORPUS_CONVERT_MAX_INFLATED_MB"
    )
    convert_max_html_depth: int = Field(
        default=128, ge=8, le=250, validation_alias="CORPUS_CONVERT_MAX_HTML_DEPTH"
    )

    @field_validator(
        "allowed_hosts", "allowed_origins", "oidc_allowed_domains", "source_roots", mode="before"
    )
    @classmethod
    def _split_commas(cls, value: object) -> object:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @field_validator("signin_rate_per_address", "signin_rate", "register_rate_per_address")
    @classmethod
    def _rate(cls, value: str) -> str:
        try:
            parse_rate(value)
        except ValueError:
            raise ValueError(
                f"{value!r} is not a rate: write it as N/second, N/minute, N/hour or N/day"
            ) from None
        return value

    @field_validator("database_url", "database_read_url")
    @classmethod
    def _asyncpg_url(cls, value: str) -> str:
        if not value:
            return value
        scheme, sep, rest = value.partition("://")
        if not sep or scheme not in {"postgres", "postgresql", "postgresql+asyncpg"}:
            raise ValueError("must be a postgresql:// URL")
        return f"postgresql+asyncpg://{rest}"

    @field_validator(
        "public_url",
        "oidc_issuer",
        "openai_base_url",
        "gemini_base_url",
        "anthropic_base_url",
        "otel_exporter_otlp_endpoint",
        "otel_exporter_otlp_traces_endpoint",
    )
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value:
            return value
        parts = urlsplit(value)
        if parts.scheme not in {"http", "https"} or not parts.netloc:
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/")

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, value: list[str]) -> list[str]:
        for origin in value:
            parts = urlsplit(origin)
            if parts.scheme not in {"http", "https"} or not parts.netloc or parts.path:
                raise ValueError(f"{origin!r} is not an origin (scheme://host[:port])")
        return [origin.rstrip("/") for origin in value]

    @field_validator("metrics_token", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("secret_key", "metrics_token")
    @classmethod
    def _real_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        raw = value.get_secret_value()
        if raw.strip().lower() in PLACEHOLDER_SECRETS:
            raise ValueError("is a placeholder; set a random value or leave it unset")
        if len(raw) < MIN_SECRET_LENGTH:
            raise ValueError(f"must be at least {MIN_SECRET_LENGTH} characters")
        return value

    @model_validator(mode="after")
    def _derived(self) -> Settings:
        self.data_dir = self.data_dir.expanduser().resolve()
        model, dim, floor = PROVIDER_DEFAULTS[self.embeddings_provider]
        if not self.embeddings_dim:
            self.embeddings_dim = dim
        if not self.embeddings_model:
            # The hash "model" is its dimension: a change of either is a change of vectors.
            hashed = self.embeddings_provider == "hash"
            self.embeddings_model = f"hash-{self.embeddings_dim}" if hashed else model
        if self.embeddings_dim > 2000:
            # pgvector's HNSW index on `vector` stops at 2,000 dimensions.
            raise ValueError("EMBEDDINGS_DIM must be at most 2000 (pgvector's HNSW limit)")
        if self.retrieval_min_similarity is None:
            self.retrieval_min_similarity = floor
        # A provider chosen without what it needs would fail at every question, not here.
        needs = {
            "gemini": (self.google_api_key, "GOOGLE_API_KEY"),
            "anthropic": (self.anthropic_api_key, "ANTHROPIC_API_KEY"),
            "openai": (
                self.openai_api_key or self.openai_base_url,
                "OPENAI_API_KEY or OPENAI_BASE_URL",
            ),
        }
        if self.answer_provider in needs and not needs[self.answer_provider][0]:
            raise ValueError(
                f"ANSWER_PROVIDER={self.answer_provider} needs {needs[self.answer_provider][1]}"
            )
        if not self.public_url:
            self.public_url = f"http://{self.host}:{self.port}"
        public = urlsplit(self.public_url)
        if not self.allowed_origins:
            self.allowed_origins = [f"{public.scheme}://{public.netloc}"]
        if not self.allowed_hosts:
            hosts = {public.netloc, public.hostname or "", "127.0.0.1", "localhost"}
            hosts |= {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
            self.allowed_hosts = sorted(h for h in hosts if h)
        return self

    @property
    def min_similarity(self) -> float:
        """The relevance floor in force (the provider's default unless set)."""
        assert self.retrieval_min_similarity is not None  # set by _derived
        return self.retrieval_min_similarity

    @property
    def resolved_answer_provider(self) -> AnswerProvider:
        """The answer model's provider: as set, else the first whose key is present."""
        if self.answer_provider:
            return self.answer_provider
        if self.google_api_key:
            return "gemini"
        if self.anthropic_api_key:
            return "anthropic"
        if self.openai_api_key or self.openai_base_url:
            return "openai"
        return "none"

    @property
    def traces_url(self) -> str:
        """Where spans go: the traces endpoint as set, else the OTLP endpoint with the signal's
        path (as the OpenTelemetry specification says); empty when tracing is off."""
        if self.otel_sdk_disabled or self.otel_traces_exporter == "none":
            return ""
        if self.otel_exporter_otlp_traces_endpoint:
            return self.otel_exporter_otlp_traces_endpoint
        if self.otel_exporter_otlp_endpoint:
            return self.otel_exporter_otlp_endpoint.rstrip("/") + "/v1/traces"
        return ""

    @property
    def max_upload_bytes(self) -> int:
        return self.max_upload_mb * 1024 * 1024

    def resolved_secret_key(self) -> str:
        """SECRET_KEY, or the one generated on first use and kept in the data folder.

        A generated key must survive restarts (it signs sessions) and be shared by every process
        on the same data folder, so it lives there, readable by its owner only.
        """
        if self.secret_key is not None:
            return self.secret_key.get_secret_value()
        path = self.data_dir / SECRET_KEY_FILE
        if not path.exists():
            self.data_dir.mkdir(parents=True, exist_ok=True)
            # Written whole under a name of its own, then linked into place: the link appears
            # with the key in it, or not at all. Created in place, a second process starting at
            # the same moment read the file between its creation and its write (an empty key).
            fd, written = tempfile.mkstemp(dir=self.data_dir, prefix=f".{SECRET_KEY_FILE}.")
            try:
                with os.fdopen(fd, "w") as handle:  # mkstemp's file is its owner's only (0600)
                    handle.write(secrets.token_urlsafe(48))
                os.link(written, path)
            except FileExistsError:
                pass  # another process won the race; read its key below
            finally:
                os.unlink(written)
        key = path.read_text().strip()
        if len(key) < MIN_SECRET_LENGTH:
            raise ValueError(f"{path} holds a key shorter than {MIN_SECRET_LENGTH} characters")
        return key


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, read once."""
    return Settings()
