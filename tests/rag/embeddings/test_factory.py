"""make_embedder: the configured provider, built without loading the others' libraries."""

from __future__ import annotations

import subprocess
import sys
from contextlib import aclosing
from pathlib import Path

import pytest

from app.rag.embeddings import Embedder, EmbeddingError, make_embedder
from app.rag.embeddings.gemini import GeminiEmbedder
from app.rag.embeddings.hash import HashEmbedder
from app.rag.embeddings.local import LocalEmbedder
from app.rag.embeddings.openai import OpenAIEmbedder
from app.rag.embeddings.voyage import VoyageEmbedder
from tests.support import PROJECT_ROOT, make_settings


async def test_each_provider_reports_its_defaults(tmp_path: Path) -> None:
    cases: list[tuple[dict[str, object], type[Embedder], str, int, float]] = [
        ({"embeddings_provider": "hash"}, HashEmbedder, "hash-384", 384, 0.2),
        ({}, LocalEmbedder, "all-MiniLM-L6-v2-onnx-int8", 384, 0.3),
        (
            {"embeddings_provider": "gemini", "google_api_key": "AIza-test-key-0000"},
            GeminiEmbedder,
            "gemini-embedding-001",
            768,
            0.5,
        ),
        (
            {"embeddings_provider": "openai", "openai_api_key": "sk-test-key-0000"},
            OpenAIEmbedder,
            "text-embedding-3-small",
            1536,
            0.3,
        ),
    ]
    for overrides, kind, model, dim, floor in cases:
        settings = make_settings(tmp_path, **{"embeddings_provider": "local", **overrides})
        async with aclosing(make_embedder(settings)) as embedder:
            assert isinstance(embedder, kind)
            assert (embedder.provider, embedder.model, embedder.dim) == (
                settings.embeddings_provider,
                model,
                dim,
            )
            assert embedder.default_floor == pytest.approx(floor)


async def test_each_provider_declares_the_window_its_model_reads(tmp_path: Path) -> None:
    cases: list[tuple[dict[str, object], int | None]] = [
        ({"embeddings_provider": "hash"}, None),
        ({}, 256),
        ({"embeddings_provider": "gemini", "google_api_key": "AIza-test-key-0000"}, 2048),
        ({"embeddings_provider": "openai", "openai_api_key": "sk-test-key-0000"}, 8191),
        (
            {
                "embeddings_provider": "openai",
                "openai_base_url": "http://127.0.0.1:9/v1",
                "embeddings_model": "nomic-embed-text",
                "embeddings_dim": 768,
            },
            512,
        ),
        ({"embeddings_provider": "voyage", "voyage_api_key": "pa-test-key-0000"}, 32000),
    ]
    for overrides, window in cases:
        settings = make_settings(tmp_path, **{"embeddings_provider": "local", **overrides})
        async with aclosing(make_embedder(settings)) as embedder:
            assert embedder.window == window, overrides
            if overrides.get("embeddings_provider", "local") not in ("local", "hash"):
                # Hosted models are estimated: ASCII by fours, anything else one a character.
                assert embedder.count_tokens(["abcdefgh", "日本"]) == [2, 2]


async def test_voyage_takes_its_key_from_the_settings(tmp_path: Path) -> None:
    settings = make_settings(
        tmp_path, embeddings_provider="voyage", voyage_api_key="pa-test-key-0000"
    )

    embedder = make_embedder(settings)
    await embedder.aclose()

    assert isinstance(embedder, VoyageEmbedder)
    assert (embedder.model, embedder.dim) == ("voyage-3.5-lite", 1024)


@pytest.mark.parametrize("provider", ["gemini", "openai", "voyage"])
async def test_a_hosted_provider_without_its_key_is_refused(tmp_path: Path, provider: str) -> None:
    settings = make_settings(tmp_path, embeddings_provider=provider)

    with pytest.raises(EmbeddingError):
        make_embedder(settings)


async def test_an_openai_compatible_server_needs_no_key(tmp_path: Path) -> None:
    settings = make_settings(
        tmp_path,
        embeddings_provider="openai",
        openai_base_url="http://127.0.0.1:11434/v1",
        embeddings_model="nomic-embed-text",
        embeddings_dim=768,
    )

    async with aclosing(make_embedder(settings)) as embedder:
        assert isinstance(embedder, OpenAIEmbedder)
        assert (embedder.model, embedder.dim) == ("nomic-embed-text", 768)


async def test_the_local_provider_refuses_another_model(tmp_path: Path) -> None:
    settings = make_settings(
        tmp_path, embeddings_provider="local", embeddings_model="intfloat/e5-small-v2"
    )

    with pytest.raises(EmbeddingError):
        make_embedder(settings)


def test_choosing_the_hash_provider_loads_no_model_library() -> None:
    code = (
        "import sys\n"
        "from app.rag.embeddings import make_embedder\n"
        "from tests.support import make_settings\n"
        "make_embedder(make_settings(__import__('pathlib').Path('var')))\n"
        "heavy = {'torch', 'sentence_transformers', 'transformers', 'google.genai'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )

    loaded = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()

    assert loaded == "[]"
