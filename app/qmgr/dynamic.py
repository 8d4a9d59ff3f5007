"""Dynamic queues: MQOPEN of a model queue creates a local queue from it; MQCLOSE (or the end of
the creating handle, of its connection, or of the queue manager) deletes it again.

IBM's rules (DefinitionType, MQOPEN, MQCLOSE; z/OS) as followed here:

* The model's DEFTYPE says what is created: TEMPDYN a temporary dynamic queue of this queue
  manager (QSGDISP(QMGR), non-persistent messages only, deleted when the handle that created
  it is closed - also by MQDISC or the end of the application - and at queue manager start);
  PERMDYN a permanent dynamic queue of this queue manager (QSGDISP(QMGR)); SHAREDYN a permanent
  dynamic queue shared by the group (QSGDISP(SHARED)) in the model's CF structure.
* The new queue takes every local queue attribute of the model; its DEFTYPE shows how it was
  made (DISPLAY QLOCAL ... DEFTYPE(TEMPDYN)).
* MQCLOSE with MQCO_DELETE deletes a permanent dynamic queue that holds no messages and no
  uncommitted work (else MQRC_Q_NOT_EMPTY); MQCO_DELETE_PURGE deletes it with its messages
  (uncommitted work still refuses: MQRC_Q_NOT_EMPTY). Closing the creating handle of a
  temporary dynamic queue deletes it with its messages, whatever the options.
* A dynamic queue deleted while other handles have it open is logically deleted: it cannot
  be opened any more, those handles fail with MQRC_Q_DELETED (2052) on every call but MQCLOSE,
  and the last MQCLOSE removes it (what it holds is discarded).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol, TypeVar

from app.core import attributes
from app.core.dynamic import DynamicNames
from app.core.errors import MQError
from app.core.objects import SHARED_LOCATION, ObjectDef
from app.core.reasons import MQRC
from app.qmgr.definitions import queue_location
from app.qmgr.ports import QmgrContext

if TYPE_CHECKING:
    from app.cf.keys import QueueLocation

log = logging.getLogger(__name__)
T = TypeVar("T")

#: The DEFTYPE of a queue made by DEFINE, and the dispositions of the queues each model makes.
PREDEFINED = "PREDEFINED"
_QSGDISP_OF = {"TEMPDYN": "QMGR", "PERMDYN": "QMGR", "SHAREDYN": "SHARED"}


class DefinitionAnnouncer(Protocol):
    """The definition workflow (app.qmgr.workflow) as this service uses it."""

    async def define(self, new: ObjectDef) -> ObjectDef: ...

    async def delete_dynamic(self, obj: ObjectDef) -> None: ...


class DynamicHost(QmgrContext, Protocol):
    """What the dynamic queue service uses of its queue manager."""

    @property
    def workflow(self) -> DefinitionAnnouncer: ...


def deftype(obj: ObjectDef) -> str:
    """A local queue's DefinitionType: PREDEFINED, TEMPDYN, PERMDYN or SHAREDYN."""
    return str(obj.attrs.get("DEFTYPE", PREDEFINED))


class DynamicQueues:
    """Creation and deletion of this queue manager's dynamic queues."""

    def __init__(self, host: DynamicHost) -> None:
        self.host = host
        self.names = DynamicNames(host.name)

    async def create(self, model: ObjectDef, dynamic_q_name: object) -> ObjectDef:
        """MQOPEN of ``model``: define the dynamic queue (repository, CF, every QM's cache)."""
        kind = str(model.attrs.get("DEFTYPE", "TEMPDYN"))
        qsgdisp = _QSGDISP_OF.get(kind, "QMGR")
        location = SHARED_LOCATION if qsgdisp == "SHARED" else self.host.name
        # every attribute a local queue has, from the model (IBM: the model's attributes are copied)
        attrs = {name: model.attrs.get(name, spec.default) for name, spec in attributes.specs("QLOCAL").items()}
        attrs["DEFTYPE"] = kind
        if qsgdisp == "SHARED":
            cfname = str(attrs.get("CFSTRUCT", "")).strip()
            if not cfname or self.host.cache.cfstruct(cfname) is None:
                raise MQError(MQRC.CF_STRUC_ERROR,
                              f"model {model.name} is DEFTYPE(SHAREDYN) but CFSTRUCT({cfname}) is not defined")
        else:
            attrs["CFSTRUCT"] = ""  # a private queue has no structure (the model's is for SHAREDYN only)
        for _ in range(3):  # a generated name taken meanwhile: generate another
            name, generated = self.names.name(dynamic_q_name)
            if self.host.cache.usable("QUEUE", name):
                if generated:
                    continue
                raise MQError(MQRC.OBJECT_ALREADY_EXISTS, f"queue {name} already exists")
            try:
                return await self.host.workflow.define(ObjectDef("QLOCAL", name, qsgdisp, location, attrs))
            except MQError as exc:
                if generated and exc.reason == MQRC.OBJECT_ALREADY_EXISTS:
                    continue
                raise
        raise MQError(MQRC.OBJECT_ALREADY_EXISTS, f"no unused name could be made from '{dynamic_q_name}'")

    async def check_deletable(self, obj: ObjectDef, *, purge: bool) -> None:
        """MQCO_DELETE / MQCO_DELETE_PURGE of a permanent dynamic queue: refused with
        MQRC_Q_NOT_EMPTY while it has uncommitted work, or (DELETE) messages."""
        status = await self.host.cf.queue_status(queue_location(self.host.cache, obj))
        if status.uncommitted:
            raise MQError(MQRC.Q_NOT_EMPTY, f"{obj.name} has uncommitted puts or gets: it cannot be deleted now")
        if status.depth and not purge:
            raise MQError(MQRC.Q_NOT_EMPTY,
                          f"{obj.name} holds {status.depth} message(s): close with DELETE_PURGE to delete them too")

    async def delete(self, obj: ObjectDef) -> bool:
        """Delete a dynamic queue with whatever it holds: its definition at once (no new open
        finds it), its coupling-facility state now, or at the last close of a handle on it
        (logically deleted meanwhile). True when the state went now."""
        await self.host.workflow.delete_dynamic(obj)
        return await self.remove_state(queue_location(self.host.cache, obj))

    async def remove_state(self, loc: QueueLocation) -> bool:
        """Remove a deleted dynamic queue's CF state unless a handle still has it open."""
        try:
            await self.host.cf.delete_queue(loc, purge=True)
        except MQError as exc:
            if exc.reason in (MQRC.OBJECT_IN_USE, MQRC.Q_NOT_EMPTY):
                return False  # logically deleted: the last close removes it
            if exc.reason == MQRC.UNKNOWN_OBJECT_NAME:
                return True
            raise
        return True

    async def purge_temporary(self) -> int:
        """Queue manager start: temporary dynamic queues do not survive a restart (IBM: they
        are deleted when the queue manager starts). Returns how many were deleted."""
        gone = 0
        for obj in self.host.cache.all("QUEUE"):
            if obj.objtype == "QLOCAL" and obj.location == self.host.name and deftype(obj) == "TEMPDYN":
                try:
                    await self.delete(obj)
                    gone += 1
                except MQError as exc:
                    log.warning("%s: temporary dynamic queue %s not deleted at start: %s",
                                self.host.name, obj.name, exc)
        if gone:
            log.info("%s: %d temporary dynamic queue(s) of the previous run deleted", self.host.name, gone)
        return gone
