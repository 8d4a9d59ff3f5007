"""Hashing of passwords and API keys with argon2 (argon2-cffi's recommended parameters)."""

from __future__ import annotations

import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

_hasher = PasswordHasher()
KEY_PREFIX = "qsg"


def hash_secret(secret: str) -> str:
    return _hasher.hash(secret)


def verify_secret(stored_hash: str | None, secret: str) -> bool:
    """Whether ``secret`` matches ``stored_hash`` (slow on purpose: call it off the event loop)."""
    if not stored_hash:
        return False
    try:
        return _hasher.verify(stored_hash, secret)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


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
