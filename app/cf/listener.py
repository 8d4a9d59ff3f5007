"""Wake-ups of waiting getters: the availability channels of the structures a process uses."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from app.cf import keys
from app.cf.codec import text
from app.cf.keys import QueueLocation
from app.cf.shardsub import ShardSubscriber

log = logging.getLogger(__name__)


class AvailabilityListener:
    """Wakes local waiting getters from their structures' availability channels.

    Each structure has one shard channel (``keys.availability_channel``), SPUBLISHed with the
    queue's name when messages become available on a queue with waiters; the listener follows
    the channel of every structure it is told of (``follow``) and, on demand, of any structure a
    getter waits on. Waiters register an ``asyncio.Event`` for their queue BEFORE trying their
    get, so a publish that lands between the failed try and the wait still sets the event. When
    a channel is (re)subscribed - first subscribed, or after its node failed or its slot moved -
    every waiter of that structure is woken, since publishes meanwhile were lost.
    """

    def __init__(self, notices: ShardSubscriber, *, private: ShardSubscriber | None = None) -> None:
        self._notices = notices
        self._private = private or notices  # the page set's: private queues' channels
        self._tags: dict[str, str] = {}  # channel -> structure tag
        self._waiters: dict[QueueLocation, set[asyncio.Event]] = {}
        self._parked: dict[QueueLocation, int] = {}
        self._park_changed = asyncio.Event()
        self._subscribed_changed = asyncio.Event()
        #: Availability publishes received, per queue (observability and tests).
        self.received: Counter[QueueLocation] = Counter()
        #: Number of times an availability channel was (re)subscribed.
        self.subscriptions = 0

    # -- which structures --

    def follow(self, tag: str) -> bool:
        """Follow the availability channel of structure ``tag``; False when it was already."""
        channel = keys.availability_channel(tag)
        if channel in self._tags:
            return False
        self._tags[channel] = tag
        self._subscriber(tag).add(channel, self._published, self._resubscribed)
        return True

    @property
    def tags(self) -> set[str]:
        """The structures followed."""
        return set(self._tags.values())

    # -- waiter registry (called by the engine) --

    def watch(self, loc: QueueLocation) -> asyncio.Event:
        """A new event set whenever messages become available on ``loc`` (or its structure's
        waiters are woken); the structure is followed from now on if it was not yet."""
        self.follow(loc.tag)
        event = asyncio.Event()
        self._waiters.setdefault(loc, set()).add(event)
        return event

    def unwatch(self, loc: QueueLocation, event: asyncio.Event) -> None:
        events = self._waiters.get(loc)
        if events is not None:
            events.discard(event)
            if not events:
                del self._waiters[loc]

    def wake(self, loc: QueueLocation) -> None:
        for event in self._waiters.get(loc, ()):
            event.set()

    def wake_structure(self, tag: str) -> None:
        """Wake every waiter on a queue of structure ``tag``."""
        for loc, events in self._waiters.items():
            if loc.tag == tag:
                for event in events:
                    event.set()

    def wake_all(self) -> None:
        for events in self._waiters.values():
            for event in events:
                event.set()

    def note_parked(self, loc: QueueLocation, delta: int) -> None:
        """Book-keeping of getters blocked on ``loc`` (observability and tests)."""
        n = self._parked.get(loc, 0) + delta
        if n > 0:
            self._parked[loc] = n
        else:
            self._parked.pop(loc, None)
        changed, self._park_changed = self._park_changed, asyncio.Event()
        changed.set()

    def parked(self, loc: QueueLocation) -> int:
        """Number of getters currently waiting on ``loc`` (after a failed try)."""
        return self._parked.get(loc, 0)

    async def wait_parked(self, loc: QueueLocation, n: int = 1) -> None:
        """Return once at least ``n`` getters wait on ``loc``."""
        while self.parked(loc) < n:
            await self._park_changed.wait()

    # -- subscription --

    async def _published(self, channel: str, data: bytes) -> None:
        tag = self._tags.get(channel)
        if tag is None:
            return
        loc = QueueLocation(tag, text(data))
        self.received[loc] += 1
        self.wake(loc)

    async def _resubscribed(self, channel: str, _count: int) -> None:
        # Anything published while the channel was not subscribed is lost: its waiters retry.
        tag = self._tags.get(channel)
        if tag is not None:
            self.wake_structure(tag)
        self.subscriptions += 1
        changed, self._subscribed_changed = self._subscribed_changed, asyncio.Event()
        changed.set()

    @property
    def subscribed(self) -> bool:
        """Whether every followed availability channel is subscribed now."""
        return all(self._subscriber(tag).subscribed(c) for c, tag in self._tags.items())

    def _subscriber(self, tag: str) -> ShardSubscriber:
        return self._private if keys.is_private(tag) else self._notices

    async def wait_subscribed(self, *, after: int = 0) -> None:
        """Return once availability channels were (re)subscribed more than ``after`` times in
        all and every followed one is subscribed."""
        while self.subscriptions <= after or not self.subscribed:
            await self._subscribed_changed.wait()
