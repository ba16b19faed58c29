"""Encryption of the few secrets we must present or compare in plain form (a confidential OAuth
client's secret, which the MCP SDK compares as plaintext; later a remote workspace's bearer),
with a key derived from SECRET_KEY. What we only verify is hashed instead (app.auth.tokens)."""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


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
