"""Passwords: Argon2id hashes (argon2-cffi's RFC 9106 low-memory profile), rehashed on sign-in
when the parameters change, and the rules a new password must meet.

The app hashes and verifies through a `Hasher`, which runs Argon2 in a bounded pool of threads
(argon2-cffi releases the GIL): a burst of sign-ins queues there instead of blocking the event
loop, and at most CORPUS_HASH_WORKERS hashes cost CPU at once.
"""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from app.errors import ValidationFailed

MIN_LENGTH = 10
MAX_LENGTH = 256  # Argon2 takes any length; a cap keeps a megabyte "password" from costing CPU

_hasher = PasswordHasher()


@functools.cache
def _dummy_hash() -> str:
    """Verified against when an email is unknown, so that a failed sign-in costs the same work
    whether or not the account exists (no timing oracle for which emails have accounts)."""
    return _hasher.hash("corpus-dummy-password-for-equal-work")


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
        _hasher.verify(password_hash or _dummy_hash(), password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return Verdict(ok=False)
    if password_hash is None:
        return Verdict(ok=False)
    return Verdict(ok=True, needs_rehash=_hasher.check_needs_rehash(password_hash))


class Hasher:
    """Argon2 off the event loop, in at most `workers` threads. The lifespan owns one."""

    def __init__(self, workers: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="argon2")
        # Made now, so that the first unknown email does not cost two hashes.
        self._pool.submit(_dummy_hash)

    async def hash(self, password: str) -> str:
        return await asyncio.get_running_loop().run_in_executor(self._pool, hash_password, password)

    async def verify(self, password_hash: str | None, password: str) -> Verdict:
        """As `verify_password`, in the pool."""
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, verify_password, password_hash, password
        )

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


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
