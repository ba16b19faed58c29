"""Passwords: Argon2id hashes (argon2-cffi's RFC 9106 low-memory profile), rehashed on sign-in
when the parameters change, and the rules a new password must meet.

The app hashes and verifies through a `Hasher`, which runs Argon2 in a bounded pool of threads
(argon2-cffi releases the GIL): a burst of sign-ins queues there instead of blocking the event
loop, and at most CORPUS_HASH_WORKERS hashes cost CPU at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from app.errors import ValidationFailed

MIN_LENGTH = 10
MAX_LENGTH = 256  # Argon2 takes any length; a cap keeps a megabyte "password" from costing CPU

# Verified against when an email is unknown, so that a failed sign-in costs the same work
# whether or not the account exists (no timing oracle for which emails have accounts).
_DUMMY_PASSWORD = "corpus-dummy-password-for-equal-work"


@dataclass(frozen=True, slots=True)
class Verdict:
    ok: bool
    needs_rehash: bool = False


def _verify(
    argon2: PasswordHasher, dummy: Callable[[], str], password_hash: str | None, password: str
) -> Verdict:
    """Check `password` against a stored hash; with no hash (unknown email, an agent, an
    OpenID-only person) the dummy hash is verified instead and the answer is no."""
    try:
        argon2.verify(password_hash or dummy(), password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return Verdict(ok=False)
    if password_hash is None:
        return Verdict(ok=False)
    return Verdict(ok=True, needs_rehash=argon2.check_needs_rehash(password_hash))


class Hasher:
    """Argon2 off the event loop, in at most `workers` threads. The lifespan owns one.

    `argon2` carries the parameters new hashes get (and older ones are rehashed to); by default
    RFC 9106's low-memory profile. Only tests pass others, to make their accounts cheaply: no
    setting weakens it.
    """

    def __init__(self, workers: int, argon2: PasswordHasher | None = None) -> None:
        self._argon2 = argon2 or PasswordHasher()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="argon2")
        # Made now, in the pool, so that the first unknown email does not cost two hashes.
        self._dummy: Future[str] = self._pool.submit(self._argon2.hash, _DUMMY_PASSWORD)

    async def hash(self, password: str) -> str:
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, self._argon2.hash, password
        )

    async def verify(self, password_hash: str | None, password: str) -> Verdict:
        """Check a password against a stored hash (`_verify`), in the pool; a stale hash (other
        parameters than this hasher's) asks to be rehashed."""
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, _verify, self._argon2, self._dummy.result, password_hash, password
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
