"""Queue administration that touches runtime state: define, alter, delete, clear, status, statistics."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.cf import keys
from app.cf.base import CFBase
from app.cf.codec import pairs as _pairs
from app.cf.codec import text as _text
from app.cf.errors import cf_access as _cf_access
from app.cf.errors import check as _check
from app.cf.errors import mq_error
from app.cf.keys import QueueKeys, QueueLocation
from app.cf.redisconn import is_cluster
from app.cf.replies import (
    AlterReply,
    ClearReply,
    DefineReply,
    DeleteReply,
    PurgeReply,
    ResetStatsReply,
    StatusReply,
)
from app.cf.results import (
    COUNTER_FIELDS,
    OPEN_KINDS,
    QueueStatistics,
    QueueStatus,
)
from app.cf.scriptargs import (
    AlterArgs,
    ClearArgs,
    DefineArgs,
    DeleteArgs,
    PurgeArgs,
    ResetStatsArgs,
    StatusArgs,
)
from app.core.reasons import MQRC


class Admin(CFBase):
    """The administration calls of ``CouplingFacility``."""

    # -- administration --

    async def define_queue(self, loc: QueueLocation, runtime: Mapping[str, str | int]) -> int:
        """Create or replace a queue's runtime attributes (PUT, GET, MAXDEPTH, MAXMSGL,
        MSGDLVSQ, DEFPRTY, USAGE, OFFLOAD, ... every field given is stored); counters and
        messages of an existing queue are kept. Returns the definition generation."""
        qk = QueueKeys(loc)
        reply = DefineReply.parse(await self._script(
            DefineArgs(qk.ctl, keys.structure_queues(loc.tag), keys.structure_generations(loc.tag),
                       keys.structure_last_ids(loc.tag), qk.queue_prefix, loc.name, self.channel(loc),
                       _pairs(runtime, "define")),
            loc.tag, self.caller()))
        return reply.gen

    async def alter_queue(self, loc: QueueLocation, changes: Mapping[str, str | int], *,
                          bump_gen: bool = False) -> int:
        """Set runtime attributes; with ``bump_gen`` open handles become stale
        (MQRC_OBJECT_CHANGED). Returns the generation. MQRC_UNKNOWN_OBJECT_NAME if no state."""
        qk = QueueKeys(loc)
        reply = AlterReply.parse(await self._script(
            AlterArgs(qk.ctl, qk.queue_prefix, loc.name, "1" if bump_gen else "0", self.channel(loc),
                      _pairs(changes, "alter")),
            loc.tag, self.caller()))
        _check(reply.code, loc)
        return reply.gen

    async def delete_queue(self, loc: QueueLocation, *, purge: bool = False) -> int:
        """Remove a queue's state. MQRC_OBJECT_IN_USE if open anywhere, MQRC_Q_NOT_EMPTY if
        it has messages (unless ``purge``) or uncommitted work. Returns messages purged."""
        qk = QueueKeys(loc)
        await self.usable(loc.tag)
        reply = DeleteReply.parse(await self._script(
            DeleteArgs(qk.ctl, keys.structure_queues(loc.tag), keys.structure_generations(loc.tag),
                       keys.structure_last_ids(loc.tag), qk.queue_prefix, loc.name, "1" if purge else "0",
                       self.channel(loc)),
            loc.tag, self.caller()))
        _check(reply.code, loc)
        if self.recovery_log is not None and self.recovery_log.wanted(loc.tag):
            self.recovery_log.removed_all(loc.tag, loc.name, reply.seq, deleted=True)
            await self._logged(loc.tag)
        return reply.purged

    async def clear_queue(self, loc: QueueLocation) -> int:
        """CLEAR QLOCAL. MQRC_OBJECT_IN_USE if open anywhere, MQRC_Q_NOT_EMPTY if uncommitted
        work exists. Returns the number of messages removed."""
        qk = QueueKeys(loc)
        await self.usable(loc.tag)
        reply = ClearReply.parse(await self._script(ClearArgs(qk.ctl, qk.queue_prefix), loc.tag, self.caller()))
        _check(reply.code, loc)
        if self.recovery_log is not None and self.recovery_log.wanted(loc.tag):
            self.recovery_log.removed_all(loc.tag, loc.name, reply.seq, deleted=False)
            await self._logged(loc.tag)
        return reply.removed

    async def purge_nonpersistent(self, loc: QueueLocation) -> int:
        """At a queue manager's restart: discard the nonpersistent messages of its private queue
        ``loc`` (as z/OS does; its persistent messages stay). Returns how many."""
        qk = QueueKeys(loc)
        cursor, discarded = "0", 0
        for _ in range(1_000_000):  # bounded: each call moves the cursor on
            reply = PurgeReply.parse(await self._script(
                PurgeArgs(qk.ctl, keys.expiry_queues(loc.tag), qk.queue_prefix, loc.name, cursor),
                loc.tag, self.caller()))
            _check(reply.code, loc)
            discarded += reply.discarded
            cursor = reply.cursor
            if cursor == "0":
                break
        return discarded

    async def queue_status(self, loc: QueueLocation) -> QueueStatus:
        """Snapshot for DISPLAY QSTATUS / MQINQ. MQRC_UNKNOWN_OBJECT_NAME if no state."""
        await self.usable(loc.tag)
        qk = QueueKeys(loc)
        with _cf_access(loc.tag):
            status = self._scripts_for(loc.tag).status
            reply = StatusReply.parse(await status(*StatusArgs(qk.ctl, qk.opens, qk.queue_prefix).call()))
        _check(reply.code, loc)
        ctl = reply.ctl
        opens: dict[str, dict[str, int]] = {}
        for name, value in reply.opens.items():
            qmgr, _, kind = name.partition(":")
            opens.setdefault(qmgr, dict.fromkeys(OPEN_KINDS, 0))[kind] = int(value)
        raw_stats: dict[str, dict[str, int]] = {}
        for name, value in reply.stats.items():
            qmgr, _, stat = name.partition(":")
            raw_stats.setdefault(qmgr, {})[stat] = int(value)
        return QueueStatus(
            depth=int(ctl.get("depth", 0)), uncommitted=int(ctl.get("uncom", 0)),
            gen=int(ctl["gen"]), available=reply.available, ipprocs=int(ctl.get("ipprocs", 0)),
            opprocs=int(ctl.get("opprocs", 0)),
            attributes={k: v for k, v in ctl.items() if k not in COUNTER_FIELDS},
            opens=opens,
            stats={qm: QueueStatistics(enq=s.get("enq", 0), deq=s.get("deq", 0),
                                       hiq=s.get("hiq", 0), last_put_ms=s.get("lastput", 0),
                                       last_get_ms=s.get("lastget", 0),
                                       reset_ms=s.get("reset", 0))
                   for qm, s in raw_stats.items()})

    async def trigger_count(self, loc: QueueLocation, trigmpri: int) -> int:
        """Messages that count for triggering now: priority >= ``trigmpri``; committed ones on a
        shared queue, committed and uncommitted ones on a private queue (docs/ibm-rules.md §3.1, note 3)."""
        qk = QueueKeys(loc)
        hi = f"({(10 - trigmpri) * 2 ** 49}"
        with _cf_access(loc.tag):
            client = self._client_for(loc.tag)
            n = int(await client.zcount(qk.index, "-inf", hi))
            if ".CF." not in loc.tag:
                n += int(await client.zcount(f"{qk.queue_prefix}pend", "-inf", hi))
        return n

    async def queue_depth(self, loc: QueueLocation) -> int:
        """CURDEPTH. MQRC_UNKNOWN_OBJECT_NAME if the queue has no state."""
        with _cf_access(loc.tag):
            depth = await self._client_for(loc.tag).hget(QueueKeys(loc).ctl, "depth")
        if depth is None:
            raise mq_error(MQRC.UNKNOWN_OBJECT_NAME, loc)
        return int(depth)

    async def queue_names(self, tag: str) -> set[str]:
        """Names of the queues with state in structure ``tag``."""
        with _cf_access(tag):
            return {_text(m) for m in await self._client_for(tag).smembers(keys.structure_queues(tag))}

    async def structure_node(self, tag: str) -> str:
        """``host:port`` of the Redis that holds structure ``tag``: on a Redis Cluster the master
        that owns the slot of the structure's hash tag now; on a single Redis, that Redis."""
        if is_cluster(self.redis):
            cluster: Any = self.redis
            with _cf_access(tag):
                if cluster._initialize:  # the slot map is stale (a node failed): learn it again
                    await cluster.initialize()
                node = cluster.get_node_from_key(keys.structure_state(tag))
            return f"{node.host}:{node.port}"
        kw = self.redis.connection_pool.connection_kwargs
        return f"{kw.get('host', 'localhost')}:{kw.get('port', 6379)}"

    async def alias_opened(self, qmgr: str, alias: str, hobj: str) -> None:
        """Record a handle opened through an alias queue (aliases are never shared: the QM's tag)."""
        with _cf_access(keys.private_tag(self.qsg, qmgr)):
            await self.redis.sadd(keys.alias_handles_key(self.qsg, qmgr, alias), hobj)

    async def alias_closed(self, qmgr: str, alias: str, hobj: str) -> None:
        with _cf_access(keys.private_tag(self.qsg, qmgr)):
            await self.redis.srem(keys.alias_handles_key(self.qsg, qmgr, alias), hobj)

    async def alias_handle_count(self, qmgr: str, alias: str) -> int:
        """How many handles ``qmgr`` has open through ``alias``."""
        with _cf_access(keys.private_tag(self.qsg, qmgr)):
            return int(await self.redis.scard(keys.alias_handles_key(self.qsg, qmgr, alias)))

    async def reset_stats(self, loc: QueueLocation, qmgr: str) -> QueueStatistics:
        """RESET QSTATS for ``qmgr``: the statistics of the interval that ends now
        (``reset_ms`` = when it started, 0 if never reset); a new interval starts with
        MsgEnqCount/MsgDeqCount 0 and HighQDepth = current depth."""
        qk = QueueKeys(loc)
        reply = ResetStatsReply.parse(await self._script(
            ResetStatsArgs(qk.ctl, qmgr, str(self.clock.now_ms())), loc.tag, self.caller()))
        _check(reply.code, loc)
        return QueueStatistics(enq=reply.enq, deq=reply.deq, hiq=reply.hiq, reset_ms=reply.reset_ms_before)

