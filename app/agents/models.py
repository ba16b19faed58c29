"""The chat models, chosen by ANSWER_PROVIDER: Gemini (google-genai), Anthropic, or any
OpenAI-compatible endpoint (Ollama, vLLM, LM Studio). None when no model is configured: the
answer is then extractive. Provider failures are classified into the few errors a person can
act on (a bad key, a quota, a timeout), and every request has a timeout, so a run never hangs
on a provider."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from app.agents.schemas import RunMode
from app.config import Settings

# A run's mode names the model it uses: ANSWER_MODEL for fast runs (and the deep run's cheap
# scout), DEEP_MODEL for the deep run's planner, researchers and verifier.
ModelRole = RunMode

DEFAULT_MODELS: dict[str, str] = {
    "gemini": "gemini-2.5-flash",
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-4o-mini",
}


class Models(Protocol):
    """Where the agents get their chat model; tests pass a scripted one."""

    @property
    def provider(self) -> str: ...

    def chat(self, role: ModelRole) -> BaseChatModel | None:
        """The model of the fast agent or of the deep orchestrator and its subagents; None
        when no model is configured."""
        ...


class ModelError(Exception):
    """A provider failed in a way retrying now will not fix; `code` says which."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class ProviderModels:
    """The configured provider's models, built on first use and kept for the process."""

    settings: Settings
    _built: dict[ModelRole, BaseChatModel] = field(default_factory=dict)

    @property
    def provider(self) -> str:
        return self.settings.resolved_answer_provider

    def model_name(self, role: ModelRole) -> str:
        fast = self.settings.answer_model or DEFAULT_MODELS.get(self.provider, "")
        return (self.settings.deep_model or fast) if role == "deep" else fast

    def chat(self, role: ModelRole) -> BaseChatModel | None:
        if self.provider == "none":
            return None
        if role not in self._built:
            self._built[role] = self._build(self.model_name(role))
        return self._built[role]

    def _build(self, model: str) -> BaseChatModel:
        settings = self.settings
        # One retry: a transient failure is retried once; a bad key or a quota is reported at
        # once instead of after the SDK's backoff. Options go by their documented names, which
        # the integrations declare as pydantic aliases (mypy sees only the field names).
        common: dict[str, Any] = {"model": model, "max_retries": 1}
        # Each provider's SDK is imported when it is configured: the others are never loaded.
        if self.provider == "gemini":
            from langchain_google_genai import ChatGoogleGenerativeAI

            return ChatGoogleGenerativeAI(
                **common,
                google_api_key=_secret(settings.google_api_key),
                timeout=settings.answer_timeout_s,
                max_output_tokens=settings.answer_max_tokens,
                base_url=settings.gemini_base_url or None,
            )
        if self.provider == "anthropic":
            from langchain_anthropic import ChatAnthropic

            common |= {
                "api_key": _secret(settings.anthropic_api_key) or "",
                "base_url": settings.anthropic_base_url or None,
            }
            return ChatAnthropic(
                **common,
                default_request_timeout=settings.answer_timeout_s,
                max_tokens=settings.answer_max_tokens,
            )
        from langchain_openai import ChatOpenAI

        common |= {
            # Local servers (Ollama, vLLM) take any key; the SDK insists on one.
            "api_key": _secret(settings.openai_api_key) or "none",
            "base_url": settings.openai_base_url or None,
            "timeout": settings.answer_timeout_s,
        }
        return ChatOpenAI(**common, max_tokens=settings.answer_max_tokens, stream_usage=False)


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


@dataclass(frozen=True)
class NoModels:
    """No model configured: every answer is extractive."""

    provider: str = "none"

    def chat(self, role: ModelRole) -> BaseChatModel | None:
        return None


def make_models(settings: Settings) -> Models:
    """The models the settings configure (the lifespan keeps them)."""
    if settings.resolved_answer_provider == "none":
        return NoModels()
    return ProviderModels(settings)


# Where providers' errors come from: their SDKs, the integrations that wrap them, and httpx.
_PROVIDER_MODULES = frozenset(
    {
        "openai",
        "anthropic",
        "google",
        "httpx",
        "langchain_openai",
        "langchain_anthropic",
        "langchain_google_genai",
    }
)
_AUTH = {401, 403}
_QUOTA = {429}


def classify(exc: BaseException) -> ModelError | None:
    """The provider failure `exc` is, or None when it is not one (a bug of ours, say).

    The SDKs' error classes differ by provider (openai, anthropic, google-genai, httpx below
    them), so they are recognised by their status code and class name rather than imported.
    """
    if isinstance(exc, ModelError):
        return exc
    name = type(exc).__name__
    module = type(exc).__module__.split(".")[0]
    status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)) or "Timeout" in name:
        return ModelError("model_timeout", "the answer model did not reply in time")
    if module not in _PROVIDER_MODULES:
        return None
    if status in _AUTH or "Authentication" in name or "PermissionDenied" in name:
        return ModelError(
            "model_unauthorized", "the answer model refused the configured key (check its key)"
        )
    if status in _QUOTA or "RateLimit" in name or "ResourceExhausted" in name:
        return ModelError(
            "model_rate_limited", "the answer model's quota or rate limit is spent; try later"
        )
    if "Connection" in name or "Connect" in name:
        return ModelError("model_unreachable", "the answer model's endpoint cannot be reached")
    return ModelError("model_error", f"the answer model failed ({name})")
