"""Wake-ups of waiting getters: one availability subscription per process."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

import redis.exceptions as redis_errors
from redis.asyncio import Redis

from app.cf.codec import text as _text

log = logging.getLogger(__name__)


class AvailabilityListener:
    """One pattern subscription per process that wakes local waiting getters.

    Waiters register an ``asyncio.Event`` for their queue's channel BEFORE trying their get, so
    a publish that lands between the failed try and the wait still sets the event. The
    subscription reconnects by itself (short backoff) after a Redis failure and then wakes every
    waiter, since publishes during the outage were lost.
    """

    def __init__(self, redis: Redis, pattern: str, *, poll_s: float = 1.0,
                 backoff_min_s: float = 0.05, backoff_max_s: float = 1.0) -> None:
        self._redis = redis
        self._pattern = pattern
        self._poll_s = poll_s  # bounded reads, well under the client's socket timeout
        self._backoff_min_s = backoff_min_s
        self._backoff_max_s = backoff_max_s
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._parked: dict[str, int] = {}
        self._park_changed = asyncio.Event()
        self._subscribed = asyncio.Event()
        self._subscription_changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: Number of times the subscription was (re)established.
        self.subscriptions = 0
        #: Availability publishes received, per channel (observability and tests).
        self.received: Counter[str] = Counter()

    # -- waiter registry (called by the engine) --

    def watch(self, channel: str) -> asyncio.Event:
        """A new event set whenever ``channel`` is published (or all waiters are woken)."""
        event = asyncio.Event()
        self._waiters.setdefault(channel, set()).add(event)
        return event

    def unwatch(self, channel: str, event: asyncio.Event) -> None:
        events = self._waiters.get(channel)
        if events is not None:
            events.discard(event)
            if not events:
                del self._waiters[channel]

    def wake(self, channel: str) -> None:
        for event in self._waiters.get(channel, ()):
            event.set()

    def wake_all(self) -> None:
        for events in self._waiters.values():
            for event in events:
                event.set()

    def note_parked(self, channel: str, delta: int) -> None:
        """Book-keeping of getters blocked on ``channel`` (observability and tests)."""
        n = self._parked.get(channel, 0) + delta
        if n > 0:
            self._parked[channel] = n
        else:
            self._parked.pop(channel, None)
        changed, self._park_changed = self._park_changed, asyncio.Event()
        changed.set()

    def parked(self, channel: str) -> int:
        """Number of getters currently waiting on ``channel`` (after a failed try)."""
        return self._parked.get(channel, 0)

    async def wait_parked(self, channel: str, n: int = 1) -> None:
        """Return once at least ``n`` getters wait on ``channel``."""
        while self.parked(channel) < n:
            await self._park_changed.wait()

    # -- subscription --

    @property
    def subscribed(self) -> bool:
        return self._subscribed.is_set()

    async def wait_subscribed(self, *, after: int = 0) -> None:
        """Return once the subscription has been established more than ``after`` times."""
        while self.subscriptions <= after or not self._subscribed.is_set():
            await self._subscription_changed.wait()

    def _signal_subscription(self) -> None:
        changed, self._subscription_changed = self._subscription_changed, asyncio.Event()
        changed.set()

    async def start(self, *, ready_timeout_s: float = 2.0) -> bool:
        """Start the listener task; True when the subscription is up within the timeout (the
        task keeps trying in the background otherwise)."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name=f"cf-listener {self._pattern}")
        try:
            await asyncio.wait_for(self._subscribed.wait(), ready_timeout_s)
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._subscribed.clear()
        self.wake_all()

    async def _run(self) -> None:
        backoff = self._backoff_min_s
        while True:
            pubsub = self._redis.pubsub()
            try:
                await pubsub.psubscribe(self._pattern)
                while True:
                    msg = await pubsub.get_message(timeout=self._poll_s)
                    if msg is None:
                        continue
                    kind = msg["type"]
                    if kind == "pmessage":
                        channel = _text(msg["channel"])
                        self.received[channel] += 1
                        self.wake(channel)
                    elif kind == "psubscribe":
                        backoff = self._backoff_min_s
                        self.subscriptions += 1
                        self._subscribed.set()
                        self._signal_subscription()
                        # Anything published while we were not subscribed is lost: retry all.
                        self.wake_all()
            except asyncio.CancelledError:
                raise
            except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError) as exc:
                if self._subscribed.is_set():
                    log.warning("availability subscription lost: %s", exc)
                self._subscribed.clear()
                self._signal_subscription()
            except Exception:  # never let the listener die: waiters would only recheck slowly
                log.exception("availability listener failed")
                self._subscribed.clear()
                self._signal_subscription()
            finally:
                try:
                    await pubsub.aclose()
                except Exception:  # the connection is already broken
                    pass
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self._backoff_max_s)

