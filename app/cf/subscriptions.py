"""Storage of one queue manager's subscriptions in the coupling facility (Redis).

Why here rather than in the SQL repository: a subscription belongs to one queue manager on z/OS
(it is not a group object), it changes at the pace of MQSUB/MQCLOSE rather than of
administration, and the queue manager that owns it is the only writer; one Redis hash under the
queue manager's own hash tag (``keys.subscriptions_key``) keeps the durable ones across a restart
of the queue manager (what z/OS keeps on page set zero) without a schema change, and lets the
owner drop its non-durable ones left by a previous run in one call at start.
"""

from __future__ import annotations

from typing import Any

import orjson
from redis.asyncio import Redis

from app.cf import keys
from app.cf.errors import group_access


class SubscriptionStore:
    """SUBID -> subscription record (a JSON object) of one queue manager."""

    def __init__(self, redis: Redis, qsg: str, qmgr: str) -> None:
        self._redis = redis
        self._key = keys.subscriptions_key(qsg, qmgr)

    async def load(self) -> dict[str, dict[str, Any]]:
        """Every stored subscription of this queue manager."""
        with group_access("subscriptions"):
            raw = await self._redis.hgetall(self._key)
        return {(k.decode() if isinstance(k, bytes) else k): orjson.loads(v) for k, v in raw.items()}

    async def save(self, record: dict[str, Any]) -> None:
        with group_access("subscriptions"):
            await self._redis.hset(self._key, record["SUBID"], orjson.dumps(record))

    async def remove(self, *subids: str) -> None:
        if subids:
            with group_access("subscriptions"):
                await self._redis.hdel(self._key, *subids)
