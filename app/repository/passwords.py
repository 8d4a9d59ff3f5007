"""Hashing of passwords and API keys with argon2 (argon2-cffi's recommended parameters).

argon2 is slow on purpose (about half a second here): it runs on a small thread pool of its own
(``VERIFY_THREADS``), never on the default pool that every SQL call shares, so a flood of wrong
passwords cannot starve the repository. A credential of an unknown user or key is verified
against a dummy hash all the same, so that the answer takes as long as a wrong password for a
known user (a caller cannot tell known names by timing)."""

from __future__ import annotations

import asyncio
import functools
import secrets
from concurrent.futures import ThreadPoolExecutor

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

_hasher = PasswordHasher()
KEY_PREFIX = "qsg"
#: Threads that run argon2 (each verification takes a core for its duration): bounded, so that
#: failed logins queue here instead of taking every core and the default pool.
VERIFY_THREADS = 2
_pool = ThreadPoolExecutor(max_workers=VERIFY_THREADS, thread_name_prefix="qsg-argon2")


def hash_secret(secret: str) -> str:
    return _hasher.hash(secret)


@functools.cache
def dummy_hash() -> str:
    """A hash of a random secret nobody knows: what an unknown user's password is checked
    against (made on first use: importing this module stays cheap)."""
    return _hasher.hash(secrets.token_urlsafe(32))


def verify_secret(stored_hash: str | None, secret: str) -> bool:
    """Whether ``secret`` matches ``stored_hash`` (slow on purpose: call it off the event loop).
    Without a stored hash the secret is verified against ``dummy_hash()`` (and fails) so that it
    costs the same."""
    try:
        matched = _hasher.verify(stored_hash or dummy_hash(), secret)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False
    return bool(matched and stored_hash)


async def verify_off_loop(stored_hash: str | None, secret: str) -> bool:
    """``verify_secret`` on the argon2 pool."""
    return await asyncio.get_running_loop().run_in_executor(_pool, verify_secret, stored_hash, secret)


def new_api_key() -> tuple[str, str, str]:
    """(key_id, secret, the key as the user presents it: ``qsg_<key_id>_<secret>``)."""
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    return key_id, secret, f"{KEY_PREFIX}_{key_id}_{secret}"


def split_api_key(key: str) -> tuple[str, str] | None:
    """(key_id, secret) of a presented key, or None when it is not shaped like one."""
    prefix, sep, rest = key.strip().partition("_")
    if prefix != KEY_PREFIX or not sep:
        return None
    key_id, sep, secret = rest.partition("_")
    if not sep or not key_id or not secret:
        return None
    return key_id, secret
