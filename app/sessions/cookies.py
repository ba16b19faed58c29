"""The session cookie: a random token, signed with SECRET_KEY so that a forged or altered
cookie is turned away before any database work, and stored server-side as its sha256."""

from __future__ import annotations

from itsdangerous import BadSignature, Signer

SESSION_COOKIE = "corpus_session"
SESSION_LIFETIME = "14 days"
SESSION_MAX_AGE_S = 14 * 24 * 3600


class CookieSigner:
    def __init__(self, secret_key: str) -> None:
        self._signer = Signer(secret_key, salt="corpus.session")

    def sign(self, token: str) -> str:
        return self._signer.sign(token).decode()

    def unsign(self, value: str) -> str | None:
        try:
            return self._signer.unsign(value).decode()
        except BadSignature:
            return None
