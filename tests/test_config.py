"""Settings: defaults, derived values, and refusal of bad or placeholder values."""

from __future__ import annotations

import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.config import Settings
from tests.support import TEST_SECRET


def settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path, **values)  # type: ignore[arg-type]


def test_defaults_follow_the_embedding_provider(tmp_path: Path) -> None:
    local = settings(tmp_path)
    hashed = settings(tmp_path, embeddings_provider="hash")
    assert (local.embeddings_provider, local.embeddings_dim) == ("local", 384)
    assert hashed.embeddings_model == "hash-384"
    assert hashed.min_similarity == pytest.approx(0.2)


def test_an_explicit_floor_overrides_the_providers(tmp_path: Path) -> None:
    assert settings(tmp_path, retrieval_min_similarity=0.42).min_similarity == pytest.approx(0.42)


def test_public_url_origins_and_hosts_derive_from_host_and_port(tmp_path: Path) -> None:
    derived = settings(tmp_path, host="127.0.0.1", port=9000)
    assert derived.public_url == "http://127.0.0.1:9000"
    assert derived.allowed_origins == ["http://127.0.0.1:9000"]
    assert "127.0.0.1:9000" in derived.allowed_hosts


def test_comma_separated_lists_are_read_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORPUS_ALLOWED_HOSTS", "kb.example.com, kb.internal")
    monkeypatch.setenv("OIDC_ALLOWED_DOMAINS", "example.com")
    read = settings(tmp_path)
    assert read.allowed_hosts == ["kb.example.com", "kb.internal"]
    assert read.oidc_allowed_domains == ["example.com"]


def test_database_urls_are_normalised_to_asyncpg(tmp_path: Path) -> None:
    read = settings(tmp_path, database_url="postgres://u:p@db:5432/corpus")
    assert read.database_url == "postgresql+asyncpg://u:p@db:5432/corpus"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("database_url", "mysql://db/corpus"),
        ("port", 0),
        ("port", 70000),
        ("embeddings_provider", "word2vec"),
        ("embeddings_dim", 3072),
        ("public_url", "kb.example.com"),
        ("allowed_origins", "https://kb.example.com/path"),
        ("routing_mode", "random"),
        ("oauth_registration", "sometimes"),
        ("oidc_default_role", "owner"),
        ("max_upload_mb", 0),
        ("retrieval_min_similarity", 2.0),
        ("answer_provider", "gemini"),  # without GOOGLE_API_KEY
        ("answer_provider", "anthropic"),  # without ANTHROPIC_API_KEY
        ("answer_provider", "openai"),  # without a key or a base URL
        ("answer_provider", "mistral"),
        ("deep_max_revisions", -1),
    ],
)
def test_bad_values_are_refused(tmp_path: Path, field: str, value: object) -> None:
    with pytest.raises(ValidationError):
        settings(tmp_path, **{field: value})


@pytest.mark.parametrize("placeholder", ["changeme", "changethis", "secret", "CHANGEME"])
def test_a_placeholder_secret_key_is_refused(tmp_path: Path, placeholder: str) -> None:
    with pytest.raises(ValidationError, match="placeholder"):
        settings(tmp_path, secret_key=placeholder)


def test_a_short_secret_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="at least"):
        settings(tmp_path, secret_key="x" * 10)


def test_a_set_secret_key_is_used_as_given(tmp_path: Path) -> None:
    assert settings(tmp_path, secret_key=TEST_SECRET).resolved_secret_key() == TEST_SECRET
    assert not (tmp_path / "secret_key").exists()


def test_an_unset_secret_key_is_generated_once_and_kept_private(tmp_path: Path) -> None:
    first = settings(tmp_path).resolved_secret_key()
    second = settings(tmp_path).resolved_secret_key()
    key_file = tmp_path / "secret_key"
    assert first == second
    assert len(first) >= 32
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_processes_starting_at_once_share_one_whole_generated_key(tmp_path: Path) -> None:
    # Each generation is published whole (written aside, then linked into place), so a reader
    # never finds the file empty; the first link wins and every caller reads its key.
    start = threading.Barrier(16)

    def resolve() -> str:
        start.wait()
        return settings(tmp_path).resolved_secret_key()

    with ThreadPoolExecutor(16) as pool:
        keys = list(pool.map(lambda _: resolve(), range(16)))
    assert len(set(keys)) == 1
    assert len(keys[0]) >= 32
    assert [p.name for p in tmp_path.iterdir()] == ["secret_key"]  # no leftovers


def test_the_secret_key_is_not_shown_in_the_settings_repr(tmp_path: Path) -> None:
    assert TEST_SECRET not in repr(settings(tmp_path, secret_key=TEST_SECRET))
