"""Named leases in the coupling facility: one mechanism for every lock with an expiry.

A lease is a Redis string holding its owner (a queue manager name) with a PEXPIRE, changed only
by the scripts ``lua/lease_take.lua``, ``lease_hold.lua`` and ``lease_release.lua``:

* the **recovery lock** of a failed queue manager (``recovery_lock``): the survivor that takes
  it runs the peer recovery; the IGQ agent of the recovered QM waits while it is held;
* the **backup lock** of a structure (``backup_lock``): one BACKUP CFSTRUCT at a time;
* the **expiry-scanner lease** of the group (``scanner_lease``): its holder scans the shared
  queues (``hold``: renewed while held, taken when free).

The heartbeat lease of a queue manager is not one of these: it carries the incarnation and is
kept by ``app.cf.group`` (claim.lua / renew.lua). Every call maps Redis failures to
MQRC_CF_NOT_AVAILABLE (``MQError``).
"""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis

from app.cf import keys
from app.cf.codec import text
from app.cf.errors import cf_access
from app.cf.replies import LeaseHoldReply, LeaseReleaseReply, LeaseTakeReply
from app.cf.scriptargs import LeaseHoldArgs, LeaseReleaseArgs, LeaseTakeArgs
from app.cf.scripts import ScriptRegistry

#: How long a recovery lock lasts when its holder dies in the middle of a recovery.
RECOVERY_LOCK_MS = 60_000
#: How long a backup lock lasts when its holder dies in the middle of a backup.
BACKUP_LOCK_MS = 3_600_000


@dataclass(frozen=True)
class Lease:
    """A named lease: its key and a name for messages."""

    name: str
    key: str


def recovery_lock(qsg: str, qmgr: str) -> Lease:
    """Held by the queue manager that runs peer recovery of ``qmgr``."""
    return Lease(f"recovery of {qmgr}", keys.recovery_lock(qsg, qmgr))


def backup_lock(tag: str) -> Lease:
    """Held by the queue manager running BACKUP CFSTRUCT of the structure ``tag``."""
    return Lease(f"backup of {keys.structure_name(tag)}", keys.backup_lock(tag))


def scanner_lease(qsg: str) -> Lease:
    """Held by the queue manager that scans the group's shared queues for expired messages."""
    return Lease("expiry scanner", keys.scanner_lease(qsg))


class Leases:
    """Take, hold, release and inspect named leases (one object per Redis client)."""

    def __init__(self, redis: Redis, scripts: ScriptRegistry) -> None:
        self._redis = redis
        self._scripts = scripts

    async def take(self, lease: Lease, owner: str, ms: int) -> bool:
        """Take ``lease`` for ``ms`` unless anyone holds it; True when taken."""
        args = LeaseTakeArgs(lease.key, owner, str(ms))
        with cf_access(lease.key):
            return LeaseTakeReply.parse(await self._scripts.lease_take(args.keys(), args.argv())).taken

    async def hold(self, lease: Lease, owner: str, ms: int) -> bool:
        """Renew ``lease`` if ``owner`` holds it, take it if nobody does; True when ``owner`` holds it."""
        args = LeaseHoldArgs(lease.key, owner, str(ms))
        with cf_access(lease.key):
            return LeaseHoldReply.parse(await self._scripts.lease_hold(args.keys(), args.argv())).held

    async def release(self, lease: Lease, owner: str) -> bool:
        """Give ``lease`` up if ``owner`` holds it; True when released."""
        args = LeaseReleaseArgs(lease.key, owner)
        with cf_access(lease.key):
            return LeaseReleaseReply.parse(await self._scripts.lease_release(args.keys(), args.argv())).released

    async def holder(self, lease: Lease) -> str | None:
        """Who holds ``lease`` now (None: nobody)."""
        with cf_access(lease.key):
            value: bytes | str | None = await self._redis.get(lease.key)
        return None if value is None else text(value)

    async def held(self, lease: Lease) -> bool:
        """Whether anyone holds ``lease`` now."""
        with cf_access(lease.key):
            return bool(await self._redis.exists(lease.key))
