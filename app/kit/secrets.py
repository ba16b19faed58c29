"""Secrets we hand out and keep: random tokens, stored as their sha256 when we only verify them,
and encrypted (`SecretBox`) when we must present or compare them in plain form (a confidential
OAuth client's secret, which the MCP SDK compares as plaintext; later a remote workspace's
bearer), with a key derived from SECRET_KEY."""

from __future__ import annotations

import base64
import hashlib
import secrets

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

SECRET_BYTES = 32  # 43 URL-safe characters


def new_token(prefix: str = "") -> str:
    """A random secret, with a recognisable prefix for logs and secret scanners."""
    return prefix + secrets.token_urlsafe(SECRET_BYTES)


def sha256(secret: str) -> str:
    """How a secret we only verify is stored and looked up."""
    return hashlib.sha256(secret.encode()).hexdigest()


class SecretBox:
    """Authenticated encryption (Fernet: AES-128-CBC + HMAC-SHA256) under a key derived from
    SECRET_KEY with HKDF, so the signing key and the encryption key are never the same bytes."""

    def __init__(self, secret_key: str) -> None:
        key = HKDF(
            algorithm=hashes.SHA256(), length=32, salt=None, info=b"corpus.secret-box"
        ).derive(secret_key.encode())
        self._fernet = Fernet(base64.urlsafe_b64encode(key))

    def seal(self, plaintext: str) -> bytes:
        return self._fernet.encrypt(plaintext.encode())

    def open(self, sealed: bytes) -> str | None:
        """The plaintext; None when the box was sealed under another SECRET_KEY."""
        try:
            return self._fernet.decrypt(sealed).decode()
        except InvalidToken:
            return None
