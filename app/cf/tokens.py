"""The group's LTPA login tokens (IBM MQ REST ``LtpaToken2``): valid on every queue manager of
the QSG because they live in the coupling facility, keyed by a digest of the token."""

from __future__ import annotations

from redis.asyncio import Redis

from app.cf import keys
from app.cf.codec import text
from app.cf.errors import group_access


class TokenStore:
    """Login tokens of one queue-sharing group: digest -> user name, with an expiry."""

    def __init__(self, redis: Redis, qsg: str) -> None:
        self._redis = redis
        self.qsg = qsg

    async def user(self, digest: str) -> str | None:
        """The user a token was issued to (None: expired, logged out or never issued)."""
        with group_access("login tokens"):
            name = await self._redis.get(keys.ltpa_token_key(self.qsg, digest))
        return None if name is None else text(name)

    async def issue(self, digest: str, user: str, expiry_s: int) -> None:
        with group_access("login tokens"):
            await self._redis.set(keys.ltpa_token_key(self.qsg, digest), user, ex=expiry_s)

    async def revoke(self, digest: str) -> None:
        with group_access("login tokens"):
            await self._redis.delete(keys.ltpa_token_key(self.qsg, digest))
