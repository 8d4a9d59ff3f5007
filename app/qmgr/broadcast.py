"""Group broadcast between queue managers (the XCF of z/OS) over the coupling facility.

A sender publishes a JSON request on the group channel and waits until every receiver has
acknowledged it (each pushes to a per-request list), so an MQSC command that changes a
definition returns only when every active QM's cache has the change. A receiver that
reconnects reloads everything, because messages published while it was away are lost.

Tools outside the group (the ``qsg user`` CLI changing users and API keys in the repository)
publish with ``publish_from_outside`` and the same acknowledgement rule, without receiving.
The channel, the acknowledgements and the subscription are ``app.cf.group.Broadcasts``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from app.cf.group import Broadcasts, Delivery, publish_from_outside

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[None]]

__all__ = ["Broadcaster", "Delivery", "publish_from_outside"]


class Broadcaster:
    """Publish-with-acknowledgement on the QSG's broadcast channel, and the receiving loop."""

    def __init__(self, broadcasts: Broadcasts, qmgr: str, *, on_message: Handler,
                 on_reconnect: Callable[[], Awaitable[None]], timeout_ms: int) -> None:
        self._broadcasts = broadcasts
        self._qmgr = qmgr
        self._on_message = on_message
        self._on_reconnect = on_reconnect
        self._timeout_s = timeout_ms / 1000
        self._subscriber = broadcasts.subscriber(self._receive, on_subscribed=self._subscribed,
                                                 name=f"broadcasts to {qmgr}")

    async def start(self) -> None:
        """Start receiving; returns once subscribed so no broadcast is missed after start-up."""
        if not await self._subscriber.start(ready_timeout_s=10):
            raise TimeoutError(f"{self._qmgr}: the broadcast channel could not be subscribed")

    async def stop(self) -> None:
        await self._subscriber.stop()

    async def publish(self, message: dict[str, Any]) -> int:
        """Send ``message`` to every QM (this one included); return how many acknowledged in time."""
        delivery = await self._broadcasts.publish(self._qmgr, message, self._timeout_s)
        return delivery.acknowledged

    async def _subscribed(self, count: int) -> None:
        if count > 1:  # a reconnection: broadcasts published meanwhile were lost
            await self._on_reconnect()

    async def _receive(self, data: bytes) -> None:
        try:
            message = json.loads(data)
        except ValueError:
            log.error("ignoring a malformed broadcast: %r", data[:200])
            return
        try:
            await self._on_message(message)
        except Exception:  # a failing handler must not stop the group's broadcasts
            log.exception("broadcast handler failed for %s", message.get("kind"))
        await self._broadcasts.acknowledge(message.get("id", ""), self._qmgr)
