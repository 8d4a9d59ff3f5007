"""Where a CF structure lives on a Redis Cluster: moving an unused structure to a new HASHTAG,
and choosing a HASHTAG whose slot a given node serves.

A structure's keys all share one hash tag (app/cf/keys.py), so a Redis Cluster keeps the whole
structure on the master that owns that tag's slot. ``DEFINE CFSTRUCT ... HASHTAG(X)`` (an emulator
addition, the counterpart of the CFRM policy's PREFLIST on z/OS) names the tag; structures
with the same HASHTAG share a slot, so a master. Changing the HASHTAG of a structure moves it,
which is allowed only while it holds nothing but its bookkeeping (``keys.structure_bookkeeping``):
messages, units of work or handles would be stranded at the old place.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import redis
from redis.crc import key_slot

from app.cf import keys
from app.cf.base import CFBase
from app.cf.errors import cf_access as _cf_access
from app.cf.redisconn import scan_tagged

#: Keys named in a refusal (a structure in use may hold thousands).
SHOWN_KEYS = 5


class Placement(CFBase):
    """The placement calls of ``CouplingFacility``."""

    async def structure_keys_in_use(self, tag: str, limit: int = SHOWN_KEYS) -> list[str]:
        """Up to ``limit`` keys of structure ``tag`` other than its bookkeeping: [] when the
        structure can move to another HASHTAG without stranding anything."""
        spared = {k.encode() for k in keys.structure_bookkeeping(tag)}
        found: list[str] = []
        with _cf_access(tag):
            async for key in scan_tagged(self.redis, keys.structure_prefix(tag) + "*", count=1000):
                if key not in spared:
                    found.append(key.decode(errors="replace"))
                    if len(found) >= limit:
                        break
        return found

    async def copy_bookkeeping(self, old_tag: str, new_tag: str) -> int:
        """Copy a structure's bookkeeping hashes from ``old_tag``'s place to ``new_tag``'s (the
        places may be different masters: key by key, not atomic; the caller keeps the old copy
        until every queue manager uses the new place). Returns how many keys were copied."""
        copied = 0
        for old, new in zip(keys.structure_bookkeeping(old_tag), keys.structure_bookkeeping(new_tag), strict=True):
            with _cf_access(old_tag):
                fields: dict[Any, Any] = await self.redis.hgetall(old)
            with _cf_access(new_tag):
                await self.redis.delete(new)
                if fields:
                    await self.redis.hset(new, mapping=fields)
                    copied += 1
        return copied

    async def drop_bookkeeping(self, tag: str) -> None:
        """Delete a structure's bookkeeping at a place it no longer uses."""
        for key in keys.structure_bookkeeping(tag):
            with _cf_access(tag):
                await self.redis.delete(key)


def slot_of_tag(tag: str) -> int:
    """The Redis Cluster slot of every key of structure ``tag``."""
    return int(key_slot(keys.structure_state(tag).encode()))


def hashtag_for_slots(qsg: str, name: str, slots: Iterable[tuple[int, int]], *, tries: int = 100000) -> str:
    """A HASHTAG for structure ``name`` whose slot is in one of the ``(first, last)`` ranges:
    ``<name>.<n>`` for the smallest such ``n`` (the name keeps the value readable). Raises
    LookupError when none of the first ``tries`` candidates fits (the ranges cover no slot)."""
    ranges = list(slots)
    for n in range(tries):
        candidate = f"{name}.{n}"
        slot = slot_of_tag(keys.shared_tag(qsg, name, candidate))
        if any(first <= slot <= last for first, last in ranges):
            return candidate
    raise LookupError(f"no HASHTAG for {name} among {tries} candidates falls in slots {ranges}")


def own_slots(cluster_nodes: str) -> list[tuple[int, int]]:
    """The slot ranges of the node that answered CLUSTER NODES (its ``myself`` line), or
    LookupError when it is not a master serving slots (a replica, or a master without any)."""
    for line in cluster_nodes.splitlines():
        fields = line.split()
        if len(fields) < 8 or "myself" not in fields[2].split(","):
            continue
        if "master" not in fields[2].split(","):
            raise LookupError("the node is not a master (a replica serves no slots of its own)")
        ranges: list[tuple[int, int]] = []
        for item in fields[8:]:
            if item.startswith("["):  # a slot being imported or migrated: not settled yet
                continue
            first, _, last = item.partition("-")
            ranges.append((int(first), int(last or first)))
        if not ranges:
            raise LookupError("the node is a master that serves no slots")
        return ranges
    raise LookupError("CLUSTER NODES has no 'myself' line")


def hashtag_on_node(qsg: str, name: str, host: str, port: int, *, timeout_s: float = 5.0) -> str:
    """A HASHTAG that puts structure ``name`` on the Redis Cluster master at ``host:port``, from
    that node's slots now (CLUSTER NODES). LookupError, with the reason, when the node cannot
    be asked or serves no slots (``qsg cf place``)."""
    client = redis.Redis(host=host, port=port, socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
                         decode_responses=True)
    try:
        nodes = str(client.execute_command("CLUSTER", "NODES"))  # type: ignore[no-untyped-call]
    except (redis.RedisError, OSError) as exc:
        raise LookupError(f"cannot ask the node for its slots: {exc}") from None
    finally:
        client.close()
    return hashtag_for_slots(qsg, name, own_slots(nodes))
