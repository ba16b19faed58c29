"""Passwords: Argon2id hashes (argon2-cffi's RFC 9106 low-memory profile), rehashed on sign-in
when the parameters change, and the rules a new password must meet."""

from __future__ import annotations

from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from app.errors import ValidationFailed

MIN_LENGTH = 10
MAX_LENGTH = 256  # Argon2 takes any length; a cap keeps a megabyte "password" from costing CPU

_hasher = PasswordHasher()

# Verified against when an email is unknown, so that a failed sign-in costs the same work
# whether or not the account exists (no timing oracle for which emails have accounts).
_DUMMY_HASH = _hasher.hash("corpus-dummy-password-for-equal-work")


@dataclass(frozen=True, slots=True)
class Verdict:
    ok: bool
    needs_rehash: bool = False


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> Verdict:
    """Check `password` against a stored hash; with no hash (unknown email, an agent, an
    OpenID-only person) the dummy hash is verified instead and the answer is no."""
    try:
        _hasher.verify(password_hash or _DUMMY_HASH, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return Verdict(ok=False)
    if password_hash is None:
        return Verdict(ok=False)
    return Verdict(ok=True, needs_rehash=_hasher.check_needs_rehash(password_hash))


def check_rules(password: str, *, email: str) -> None:
    """Raises:
    ValidationFailed: the password is too short, too long, one repeated character, or the
        email address itself.
    """
    if len(password) < MIN_LENGTH:
        raise ValidationFailed(f"password: use at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise ValidationFailed(f"password: use at most {MAX_LENGTH} characters")
    if len(set(password)) == 1:
        raise ValidationFailed("password: a single repeated character is not a password")
    if password.strip().lower() in {email.lower(), email.split("@", 1)[0].lower()}:
        raise ValidationFailed("password: must not be your email address")
