"""Credentials we hand out: random secrets with recognisable prefixes, stored as sha256, and the
signature on the session cookie."""

from __future__ import annotations

import hashlib
import secrets

from itsdangerous import BadSignature, Signer

API_KEY_PREFIX = "ck_"
# The part of a key shown in lists, so that people can tell keys apart (API.md: 12 characters).
KEY_PREFIX_LENGTH = 12
SECRET_BYTES = 32  # 43 URL-safe characters

SESSION_COOKIE = "corpus_session"
SESSION_LIFETIME = "14 days"
SESSION_MAX_AGE_S = 14 * 24 * 3600


def new_api_key() -> str:
    return API_KEY_PREFIX + secrets.token_urlsafe(SECRET_BYTES)


def new_session_token() -> str:
    return secrets.token_urlsafe(SECRET_BYTES)


def sha256(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class CookieSigner:
    """Signs the session cookie with SECRET_KEY, so that a forged or altered cookie is turned
    away before any database work."""

    def __init__(self, secret_key: str) -> None:
        self._signer = Signer(secret_key, salt="corpus.session")

    def sign(self, token: str) -> str:
        return self._signer.sign(token).decode()

    def unsign(self, value: str) -> str | None:
        try:
            return self._signer.unsign(value).decode()
        except BadSignature:
            return None
