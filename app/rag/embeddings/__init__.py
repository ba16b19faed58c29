"""Embedding providers behind one interface; `make_embedder` builds the configured one.

Providers import their libraries (onnxruntime, google-genai, httpx) only when chosen, so a
deployment that embeds through an API never loads the local model's runtime.
"""

from __future__ import annotations

from typing import assert_never

from pydantic import SecretStr

from app.config import PROVIDER_DEFAULTS, Settings
from app.rag.embeddings.base import Embedder, EmbeddingError, Vectors

__all__ = ["Embedder", "EmbeddingError", "Vectors", "make_embedder"]


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


def make_embedder(settings: Settings) -> Embedder:
    """The embedder that `settings` select (the caller closes it with `aclose`).

    Raises:
        EmbeddingError: the provider lacks its key, or cannot serve the configured model or
            dimension.
    """
    provider = settings.embeddings_provider
    model, dim = settings.embeddings_model, settings.embeddings_dim
    if provider == "local":
        local_model, local_dim, _ = PROVIDER_DEFAULTS["local"]
        if (model, dim) != (local_model, local_dim):
            raise EmbeddingError(
                f"the local provider serves only {local_model} ({local_dim} dimensions), "
                f"not {model} ({dim})"
            )
        from app.rag.embeddings.local import LocalEmbedder

        return LocalEmbedder()
    if provider == "hash":
        from app.rag.embeddings.hash import HashEmbedder

        return HashEmbedder(dim=dim)
    if provider == "gemini":
        from app.rag.embeddings.gemini import GeminiEmbedder

        return GeminiEmbedder(model=model, dim=dim, api_key=_secret(settings.google_api_key))
    if provider == "openai":
        from app.rag.embeddings.openai import OpenAIEmbedder

        return OpenAIEmbedder(
            model=model,
            dim=dim,
            api_key=_secret(settings.openai_api_key),
            base_url=settings.openai_base_url,
        )
    if provider == "voyage":
        from app.rag.embeddings.voyage import VoyageEmbedder

        return VoyageEmbedder(model=model, dim=dim, api_key=_secret(settings.voyage_api_key))
    assert_never(provider)
