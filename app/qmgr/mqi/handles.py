"""Object handles: MQOPEN and MQCLOSE (of queues, model queues, the queue manager object), with
the dynamic queues an open creates and a close deletes."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from app.activity import Verb, recorded
from app.cf.engine import OutcomeUnknownError
from app.core.dynamic import parse_close_options
from app.core.errors import MQError
from app.core.objects import ObjectDef
from app.core.options import OpenOptions, open_context, parse_object_type, parse_open_options, resolve_open_options
from app.core.reasons import MQRC
from app.qmgr import namelists
from app.qmgr.connection import Connection, Handle, QmgrHandle
from app.qmgr.definitions import ResolvedQueue
from app.qmgr.dynamic import PREDEFINED, deftype
from app.qmgr.mqi.resolve import Resolution

log = logging.getLogger(__name__)


class Handles(Resolution):
    """MQOPEN and MQCLOSE."""

    @recorded(Verb.OPEN)
    async def open(self, hconn: str, object_name: Any, object_qmgr: Any, options: Any,
                   dynamic_q_name: Any = "", alternate_user_id: str = "",
                   object_type: Any = "Q") -> Handle | QmgrHandle:
        """MQOPEN of a queue (local or alias), or of a model queue, which creates a dynamic
        queue named from ``dynamic_q_name`` (app/qmgr/dynamic.py); with ``object_type``
        Q_MGR (MQOT_Q_MGR) of the queue manager object itself, for MQINQ. ``alternate_user_id``
        is MQOD AlternateUserId, used with MQOO_ALTERNATE_USER_AUTHORITY."""
        conn = self.connection(hconn)
        kind = parse_object_type(object_type)
        self._check_handles(conn)
        # In progress from here (no await before): MQDISC, or the end of the connection's session,
        # waits for the open and then closes its handle too, so no open count is left to nobody.
        with self._in_call(conn):
            await self._current_authority(conn)
            if kind in ("Q_MGR", "NAMELIST"):
                return self._open_qmgr(conn, object_name, object_qmgr, options, kind == "NAMELIST")
            return await self._open(conn, object_name, object_qmgr, options, dynamic_q_name, alternate_user_id)

    def _open_qmgr(self, conn: Connection, object_name: Any, object_qmgr: Any, options: Any,
                   namelist: bool = False) -> QmgrHandle:
        """MQOPEN of the queue manager object (MQOT_Q_MGR), or of a namelist (MQOT_NAMELIST,
        ``namelist``). IBM: ObjectName blank or the local queue manager's name (a namelist's
        name); only MQOO_INQUIRE (with FAIL_IF_QUIESCING) is valid for them, other options
        answer MQRC_OPTION_NOT_VALID_FOR_TYPE."""
        if not isinstance(options, list):
            raise MQError(MQRC.OPTIONS_ERROR, "options must be a list of MQOO_ names")
        chosen = parse_open_options(options)
        self._check_running("FAIL_IF_QUIESCING" in chosen)
        other = chosen - {"INQUIRE", "FAIL_IF_QUIESCING"}
        if other:
            what = "a namelist" if namelist else "the queue manager object"
            raise MQError(MQRC.OPTION_NOT_VALID_FOR_TYPE,
                          f"{', '.join(sorted(other))} cannot open {what}: only INQUIRE")
        name = object_name.strip() if isinstance(object_name, str) else None
        qmgr = object_qmgr.strip() if isinstance(object_qmgr, str) else None
        if namelist:
            if qmgr not in ("", self.qm.name):
                raise MQError(MQRC.UNKNOWN_OBJECT_Q_MGR, f"object_qmgr must be blank or {self.qm.name}")
            found = namelists.find(self.qm.cache, object_name)
            self.qm.security.check(conn.principal, "INQ", "NAMELIST", found.name)
            handle = QmgrHandle(str(conn.next_hobj), OpenOptions(None, False, False, False, True, False,
                                                                 "FAIL_IF_QUIESCING" in chosen), found.name)
            conn.next_hobj += 1
            conn.qmgr_handles[handle.hobj] = handle
            return handle
        if name not in ("", self.qm.name):
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME,
                          f"object_name must be blank or {self.qm.name} to open the queue manager object")
        if qmgr not in ("", self.qm.name):
            raise MQError(MQRC.UNKNOWN_OBJECT_Q_MGR, f"object_qmgr must be blank or {self.qm.name}")
        self.qm.security.check_qmgr(conn.principal, "INQ")
        hobj = str(conn.next_hobj)
        conn.next_hobj += 1
        handle = QmgrHandle(hobj, OpenOptions(None, False, False, False, True, False,
                                              "FAIL_IF_QUIESCING" in chosen))
        conn.qmgr_handles[hobj] = handle
        return handle

    async def _open(self, conn: Connection, object_name: Any, object_qmgr: Any, options: Any,
                    dynamic_q_name: Any = "", alternate_user_id: str = "") -> Handle:
        if not isinstance(options, list):
            raise MQError(MQRC.OPTIONS_ERROR, "options must be a list of MQOO_ names")
        chosen = parse_open_options(options)
        self._check_running("FAIL_IF_QUIESCING" in chosen)
        # IBM ignores AlternateUserId unless MQOO_ALTERNATE_USER_AUTHORITY is given; with it the
        # open is checked for that user (after the caller's right to name it), and the context
        # options still for the caller ("AlternateUserId (MQCHAR12)").
        alternate = alternate_user_id.strip() if "ALTERNATE_USER_AUTHORITY" in chosen else ""
        checked = conn.principal
        if "ALTERNATE_USER_AUTHORITY" in chosen:
            checked = await self.qm.security.alternate_principal(conn.principal, alternate)
        model = self._model(object_name, object_qmgr)
        created: ObjectDef | None = None
        if model is not None:
            # the authority to open is checked against the model queue's name, before anything is made
            self._check_open(conn, checked, model.name, chosen)
            created = await self.qm.dynamic.create(model, dynamic_q_name)
            try:
                return await self._open_resolved(conn, self.qm.cache.resolve_queue(created.name), chosen,
                                                 creator=True, alternate_user_id=alternate)
            except BaseException:
                # the open failed after the queue was made: nobody holds it, so it goes again
                if created.attrs.get("DEFTYPE") == "TEMPDYN":
                    with contextlib.suppress(MQError):
                        await self.qm.dynamic.delete(created)
                raise
        resolved = await self.resolve_target(object_name, object_qmgr)
        self._check_open(conn, checked, str(object_name), chosen)
        return await self._open_resolved(conn, resolved, chosen, alternate_user_id=alternate)

    def _check_open(self, conn: Connection, checked: Any, name: str, chosen: frozenset[str]) -> None:
        """MQOPEN's authority checks: the access the options ask of ``checked`` (the caller, or
        the alternate user), then context security for the caller."""
        self.qm.security.check_open(checked, name, chosen)
        self.qm.security.check_context(conn.principal, name, open_context(chosen))

    async def _open_resolved(self, conn: Connection, resolved: ResolvedQueue, chosen: frozenset[str], *,
                             creator: bool = False, alternate_user_id: str = "") -> Handle:
        object_name = resolved.opened.name
        if resolved.remote and chosen & {"INPUT_AS_Q_DEF", "INPUT_SHARED", "INPUT_EXCLUSIVE", "BROWSE", "SET"}:
            raise MQError(MQRC.OPTION_NOT_VALID_FOR_TYPE,
                          f"{object_name} at {resolved.remote[1]} is a remote queue: open it for OUTPUT (or INQUIRE)")
        base = resolved.base.attrs
        opts = resolve_open_options(chosen, shareable=bool(base.get("SHARE", True)),
                                    defsopt=str(base.get("DEFSOPT", "EXCL")))
        hobj = str(conn.next_hobj)
        try:
            opened = await self.qm.cf.open_queue(
                resolved.location, self.qm.name, f"{conn.hconn}:{hobj}", input=opts.input, output=opts.output,
                browse=opts.browse, inquire=opts.inquire, set=opts.set)
        except OutcomeUnknownError:
            conn.next_hobj += 1  # the CF may count it until the engine takes it back: never reused
            raise
        conn.next_hobj += 1
        if resolved.opened.objtype == "QALIAS":
            await self.qm.cf.alias_opened(self.qm.name, resolved.opened.name, f"{conn.hconn}:{hobj}")
        handle = Handle(hobj, resolved, opts, opened.gen, creator=creator, alternate_user_id=alternate_user_id)
        if opts.input and int(opened.ipprocs) == 1:
            # condition 13: a trigger monitor opening an initiation queue nobody else reads
            await self.qm.triggers.initq_opened(resolved.base)
        conn.handles[hobj] = handle
        return handle

    @recorded(Verb.CLOSE)
    async def close(self, hconn: str, hobj: str, options: Any = None) -> None:
        """MQCLOSE, with the close options MQCO_DELETE / MQCO_DELETE_PURGE for a dynamic queue."""
        if options is not None and not isinstance(options, list):
            raise MQError(MQRC.OPTIONS_ERROR, "options must be a list of MQCO_ names")
        chosen = parse_close_options(options)
        conn = self.connection(hconn)
        if hobj in conn.qmgr_handles:
            if chosen:  # IBM: MQCO_DELETE/DELETE_PURGE are for dynamic queues only
                raise MQError(MQRC.OPTION_NOT_VALID_FOR_TYPE, "the queue manager object cannot be deleted")
            del conn.qmgr_handles[hobj]
            return
        handle = conn.handles.get(hobj)
        if handle is None and self.qm.pubsub.close_topic(conn, hobj):
            return  # a topic handle (app/qmgr/pubsub.py)
        if handle is None:
            raise MQError(MQRC.HOBJ_ERROR, f"object handle '{hobj}' is not valid for this connection")
        delete_now: ObjectDef | None = None
        if chosen and not handle.deleted:
            base = self._current(handle.resolved.base)
            kind = deftype(base)
            # IBM (MQCLOSE Options): DELETE/DELETE_PURGE delete a permanent dynamic queue, or the
            # temporary dynamic queue this handle's MQOPEN created; anything else is 2045.
            through_alias = handle.resolved.opened.objtype != "QLOCAL" or handle.resolved.remote is not None
            if through_alias or kind == PREDEFINED or (kind == "TEMPDYN" and not handle.creator):
                raise MQError(MQRC.OPTION_NOT_VALID_FOR_TYPE,
                              f"{handle.resolved.opened.name} is not a permanent dynamic queue (or a temporary "
                              f"one this handle created): it cannot be deleted by MQCLOSE")
            if kind != "TEMPDYN":
                if not handle.creator:
                    await self._check_delete_authority(conn, handle, base.name)
                await self.qm.dynamic.check_deletable(base, purge="DELETE_PURGE" in chosen)
                delete_now = base
        await self._close_handle(conn, handle)
        if delete_now is not None:
            await self._delete_dynamic(delete_now)

    async def _check_delete_authority(self, conn: Connection, handle: Handle, queue: str) -> None:
        """IBM (MQCLOSE usage notes): deleting a permanent dynamic queue through a handle other
        than the one whose MQOPEN created it needs the authority to delete the queue (DLT) of the
        user the MQOPEN was checked for (its alternate user, with ALTERNATE_USER_AUTHORITY),
        as that user's authority is now. MQRC_NOT_AUTHORIZED otherwise; the handle stays open."""
        principal = await self.qm.security.live(conn.principal)
        if handle.alternate_user_id:
            principal = await self.qm.security.alternate_principal(principal, handle.alternate_user_id)
        self.qm.security.check(principal, "DLT", "QUEUE", queue)

    async def _delete_dynamic(self, obj: ObjectDef) -> None:
        """Delete a dynamic queue; this QM's other handles on it answer MQRC_Q_DELETED from now."""
        for other in self.connections.values():
            for handle in other.handles.values():
                if handle.resolved.base.name == obj.name and handle.resolved.base.qsgdisp == obj.qsgdisp:
                    handle.deleted = True
        await self.qm.dynamic.delete(obj)

    async def _close_handle(self, conn: Connection, handle: Handle) -> None:
        conn.handles.pop(handle.hobj, None)
        key = f"{conn.hconn}:{handle.hobj}"
        await self.qm.cf.close_queue(handle.resolved.location, self.qm.name, key)
        if handle.resolved.opened.objtype == "QALIAS":
            await self.qm.cf.alias_closed(self.qm.name, handle.resolved.opened.name, key)
        base = handle.resolved.base
        if deftype(base) != PREDEFINED:
            try:
                if handle.creator and deftype(base) == "TEMPDYN":
                    # IBM: a temporary dynamic queue goes, with its messages, when the handle that
                    # created it is closed - by MQCLOSE, MQDISC, or the end of the application
                    await self._delete_dynamic(base)
                    return
                if handle.deleted or not self.qm.cache.usable("QUEUE", base.name):
                    # a logically deleted dynamic queue: the last handle's close removes it
                    await self.qm.dynamic.remove_state(handle.resolved.location)
                    return
            except MQError as exc:
                # the handle is closed all the same; what is left goes at the next start (TEMPDYN)
                log.warning("dynamic queue %s not deleted at close: %s", base.name, exc)
                return
        if handle.options.input:
            # condition 12: the last server of the queue on this QM closed it with messages left
            try:
                await self.qm.triggers.retrigger(self._current(handle.resolved.base), types=("FIRST", "DEPTH"),
                                                 skip=frozenset({5}))
            except MQError as exc:
                log.warning("close re-trigger of %s failed: %s", handle.resolved.base.name, exc)

    def invalidate(self, name: str) -> None:
        """After ALTER ... FORCE of ``name``: its handles fail with MQRC_OBJECT_CHANGED next time."""
        for conn in self.connections.values():
            for handle in conn.handles.values():
                if name in (handle.resolved.opened.name, handle.resolved.base.name):
                    handle.changed = True
