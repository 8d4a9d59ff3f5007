"""Name resolution of MQOPEN and MQPUT1: local queues and aliases, remote queue definitions,
queue-manager aliases, and queues of other queue managers reached through intra-group queuing."""

from __future__ import annotations

from typing import Any

from app.core.errors import MQError
from app.core.igq import IGQ_XMITQ
from app.core.names import check_object_name, is_object_name
from app.core.objects import ObjectDef
from app.core.reasons import MQRC
from app.qmgr.definitions import ResolvedQueue, queue_location
from app.qmgr.mqi.uow import UnitsOfWork


class Resolution(UnitsOfWork):
    """Name resolution: which queue an MQOD names, here or through the group."""

    async def resolve_target(self, object_name: Any, object_qmgr: Any) -> ResolvedQueue:
        """Name resolution: a local queue or alias, or (intra-group queuing) a queue of another
        QM of the group, reached through SYSTEM.QSG.TRANSMIT.QUEUE."""
        if not isinstance(object_name, str) or not object_name:
            raise MQError(MQRC.OBJECT_NAME_ERROR, "object_name is required")
        if not isinstance(object_qmgr, str):
            raise MQError(MQRC.Q_MGR_NAME_ERROR, "object_qmgr must be a string")
        check_object_name(object_name)
        target_qmgr = object_qmgr.strip()
        if target_qmgr and target_qmgr not in (self.qm.name, self.qm.qsg):
            # ObjectQMgrName is resolved first: it may name a queue-manager alias (a QREMOTE
            # with a blank RNAME) whose RQMNAME is the queue manager meant.
            alias = self.qm.cache.queue(target_qmgr) if is_object_name(target_qmgr) else None
            if alias is not None and alias.objtype == "QREMOTE" and not str(alias.attrs.get("RNAME", "")).strip():
                target_qmgr = str(alias.attrs.get("RQMNAME", "")).strip() or self.qm.name
            if target_qmgr not in (self.qm.name, self.qm.qsg):
                return await self._resolve_remote(object_name, target_qmgr)
        named = self.qm.cache.queue(object_name)
        if named is not None and named.objtype == "QREMOTE":
            return await self._resolve_remote_definition(named)
        if named is not None and named.objtype == "QALIAS" and named.attrs.get("TARGTYPE", "QUEUE") == "QUEUE":
            # An alias may name a remote queue definition too (IBM): the alias comes first in
            # the resolution path (its PUT and defaults apply), then the remote definition's.
            target = self.qm.cache.queue(str(named.attrs.get("TARGET", "")).strip())
            if target is not None and target.objtype == "QREMOTE":
                remote = await self._resolve_remote_definition(target)
                return ResolvedQueue(named, remote.base, remote.location, remote=remote.remote)
        return self.qm.cache.resolve_queue(object_name)

    async def _resolve_remote_definition(self, remote: ObjectDef) -> ResolvedQueue:
        """A local definition of a remote queue: RNAME at RQMNAME, reached through the group
        (the only transmission this emulator has is intra-group queuing)."""
        rname = str(remote.attrs.get("RNAME", "")).strip()
        rqmname = str(remote.attrs.get("RQMNAME", "")).strip()
        xmitq = str(remote.attrs.get("XMITQ", "")).strip()
        if not rname:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"{remote.name} is a queue-manager alias, not a queue")
        if not rqmname or rqmname == self.qm.name:
            raise MQError(MQRC.UNKNOWN_REMOTE_Q_MGR,
                          f"{remote.name}: RQMNAME is blank or this queue manager (IBM's MQRC_UNKNOWN_REMOTE_Q_MGR)")
        if xmitq and xmitq != IGQ_XMITQ:
            raise MQError(MQRC.UNKNOWN_REMOTE_Q_MGR,
                          f"{remote.name}: XMITQ({xmitq}) - only {IGQ_XMITQ} (intra-group queuing) is available")
        resolved = await self._resolve_remote(rname, rqmname)
        # the remote definition is the first in the resolution path: its PUT and defaults apply
        return ResolvedQueue(remote, resolved.base, resolved.location, remote=resolved.remote)

    async def _resolve_remote(self, queue: str, target_qmgr: str) -> ResolvedQueue:
        members = {m.name for m in await self.qm.membership.members()}
        if target_qmgr not in members:
            raise MQError(MQRC.UNKNOWN_OBJECT_Q_MGR, f"'{target_qmgr}' is not a queue manager of {self.qm.qsg}")
        if self.qm.attrs.get("IGQ") != "ENABLED":
            raise MQError(MQRC.UNKNOWN_OBJECT_Q_MGR,
                          f"{target_qmgr} is reached by intra-group queuing, which is DISABLED on {self.qm.name}")
        xmitq = self.qm.cache.queue(IGQ_XMITQ)
        if xmitq is None:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"{IGQ_XMITQ} is not defined")
        if xmitq.qsgdisp != "SHARED" or xmitq.attrs.get("USAGE") != "XMITQ":
            raise MQError(MQRC.XMIT_Q_USAGE_ERROR, f"{IGQ_XMITQ} must be a shared queue with USAGE(XMITQ)")
        return ResolvedQueue(xmitq, xmitq, queue_location(self.qm.cache, xmitq), remote=(queue, target_qmgr))

    def invalidate_igq(self) -> None:
        """IGQ was switched: handles resolved through the group fail with MQRC_OBJECT_CHANGED."""
        for conn in self.connections.values():
            for handle in conn.handles.values():
                if handle.resolved.remote is not None:
                    handle.changed = True

    def _model(self, object_name: Any, object_qmgr: Any) -> ObjectDef | None:
        """The model queue an MQOPEN names, if it names one of this queue manager."""
        if not isinstance(object_name, str) or not isinstance(object_qmgr, str) or not is_object_name(object_name):
            return None
        if object_qmgr.strip() not in ("", self.qm.name, self.qm.qsg):
            return None
        named = self.qm.cache.queue(object_name)
        return named if named is not None and named.objtype == "QMODEL" else None
