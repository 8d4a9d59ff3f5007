"""Peer recovery and structure life cycle: fences, commit intents, structure state, backup, restore."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from app.cf import keys
from app.cf.base import CFBase
from app.cf.codec import batched as _batched
from app.cf.errors import FENCED
from app.cf.errors import cf_access as _cf_access
from app.cf.errors import check as _check
from app.cf.keys import QueueKeys, QueueLocation
from app.cf.redisconn import scan_tagged
from app.cf.replies import BackupReply, FenceReply, IntentReply, RestoreReply, StructReply
from app.cf.results import (
    StructureState,
)
from app.cf.scriptargs import BackupArgs, FenceArgs, IntentArgs, RestoreArgs, StructArgs


class Recovery(CFBase):
    """The recovery calls of ``CouplingFacility``."""

    # ---- group-wide bookkeeping outside the put/get path ----------------------------------

    async def record_commit_intent(self, qmgr: str, hconn: str, tags: Sequence[str]) -> None:
        """Before committing a unit of work that spans several structures, record them so a
        peer can finish (roll forward) a commit the QM did not complete."""
        incarnation = self.caller()
        def call(due: int) -> IntentArgs:
            return IntentArgs(keys.commit_intent_key(self.qsg, qmgr, hconn), keys.group_fence(self.qsg),
                              json.dumps(list(tags)), self.qmgr, str(incarnation), str(due))

        sent = await self._deadlined(self.qsg, call(0), lambda due: self._unfenced(self.qsg, call(due)))
        reply = IntentReply.parse(sent)
        if reply.code == FENCED:
            self._fenced("peer recovery fenced its incarnation")

    async def fence(self, tag: str | None, qmgr: str, lowest: int) -> None:
        """Peer recovery: fence every incarnation of ``qmgr`` below ``lowest`` in structure
        ``tag`` (None: the group's own records), before resolving anything of it there."""
        fence_key = keys.group_fence(self.qsg) if tag is None else keys.structure_fence(tag)
        with _cf_access(tag or self.qsg):
            FenceReply.parse(await self._unfenced(tag or self.qsg, FenceArgs(fence_key, qmgr, str(lowest))))

    async def clear_commit_intent(self, qmgr: str, hconn: str) -> None:
        with _cf_access(keys.group_prefix(self.qsg)):
            await self.redis.delete(keys.commit_intent_key(self.qsg, qmgr, hconn))

    # -- structure state, backup and recovery (BACKUP / RECOVER / RESET CFSTRUCT) --

    async def structure_state(self, tag: str, action: str, *args: str) -> StructureState:
        """Read or change a structure's state (struct.lua: CHECK, FAIL, RECOVER, ACTIVE)."""
        with _cf_access(tag):
            reply = StructReply.parse(await self._unfenced(tag, StructArgs(keys.structure_state(tag), action, args)))
        return StructureState(status=reply.status, alloc=reply.alloc, fail_ms=reply.failtime,
                              outcome=reply.outcome, by=reply.by)

    async def empty_structure(self, tag: str) -> int:
        """Delete every key of a structure except its state (a failed structure's contents are
        gone; RESET CFSTRUCT ACTION(FAIL) and recovery start from nothing). Returns how many."""
        keep = keys.structure_state(tag).encode()
        removed = 0
        client = self._client_for(tag)
        with _cf_access(tag):
            async for batch in _batched(scan_tagged(client, keys.structure_prefix(tag) + "*", count=1000)):
                doomed = [k for k in batch if k != keep]
                if doomed:
                    removed += await client.unlink(*doomed)
        return removed

    async def backup_chunk(self, loc: QueueLocation, cursor: str, before_ms: int,
                           count: int = 500) -> tuple[str, list[tuple[int, str, bytes, bytes]]]:
        """One chunk of a queue's committed persistent messages put before ``before_ms``:
        (next cursor, "0" at the end; [(id, meta, MQMD JSON, data)])."""
        with _cf_access(loc.tag):
            reply = BackupReply.parse(await self._scripts_for(loc.tag).backup(*BackupArgs(
                keys.uow_registry(loc.tag), QueueKeys(loc).queue_prefix, loc.name, keys.structure_prefix(loc.tag),
                cursor, str(count), str(before_ms)).call()))
        return reply.cursor, reply.messages

    async def restore_messages(self, loc: QueueLocation, last_id: int,
                               messages: Sequence[tuple[int, str, bytes, bytes]]) -> int:
        """Put recovered messages (id, meta, MQMD JSON, data) back on a defined queue, committed;
        its message ids continue after ``last_id``. Returns how many were restored."""
        flat: list[Any] = []
        for ident, meta, md, data in messages:
            flat += [str(ident), meta, md, data]
        with _cf_access(loc.tag):
            reply = RestoreReply.parse(await self._unfenced(loc.tag, RestoreArgs(
                QueueKeys(loc).ctl, keys.expiry_queues(loc.tag), QueueKeys(loc).queue_prefix, loc.name, str(last_id),
                flat)))
        _check(reply.code, loc)
        return reply.restored

    async def remember_last_id(self, tag: str, queue: str, last_id: int) -> None:
        """A queue recovery saw in the logs that is not defined now: a later DEFINE continues
        its message ids after ``last_id``."""
        with _cf_access(tag):
            current = int(await self._client_for(tag).hget(keys.structure_last_ids(tag), queue) or 0)
            if last_id > current:
                await self._client_for(tag).hset(keys.structure_last_ids(tag), queue, last_id)

