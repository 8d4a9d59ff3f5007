"""MQPUT and MQPUT1, of a queue or a topic (a publication, app/qmgr/pubsub.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.activity import Verb, recorded
from app.core import msggroups
from app.core.calls import PutCall, PutOutcome
from app.core.errors import MQError
from app.core.reasons import MQRC
from app.qmgr.mqi.stat import AsyncPuts, _asynchronous

if TYPE_CHECKING:
    from app.qmgr.pubsub import TopicHandle


class Puts(AsyncPuts):
    """MQPUT and MQPUT1."""

    @recorded(Verb.PUT)
    async def put(self, hconn: str, hobj: str, call: PutCall) -> PutOutcome:
        """MQPUT on an open handle (of a topic: a publication, app/qmgr/pubsub.py)."""
        conn = self.connection(hconn)
        if hobj not in conn.handles:
            topic = self.qm.pubsub.topic_handle(hconn, hobj)
            if topic is not None:
                with self._in_call(conn):
                    return await self.qm.pubsub.publish(conn, topic, call)
        handle = self.handle(conn, hobj)
        if not handle.options.output:
            raise MQError(MQRC.NOT_OPEN_FOR_OUTPUT, f"{handle.resolved.opened.name} is not open for output")
        if call.pmo.logical_order or handle.put_msg_group is not None:
            handle.put_msg_group = msggroups.logical_put(handle.put_msg_group, call.md, len(call.data),
                                                         call.pmo.syncpoint, call.pmo.logical_order, self.msg_ids.next)
        put = self._async_put if _asynchronous(call.pmo, handle.resolved) else self._put
        if call.pmo.context == "DEFAULT" and not call.pmo.alternate_user:  # the common case
            return await put(conn, handle.resolved, call, gen=handle.gen, user_id=handle.alternate_user_id or None)
        if call.pmo.alternate_user:
            # IBM (MQPMO options): MQPMO_ALTERNATE_USER_AUTHORITY is valid on MQPUT1 only
            raise MQError(MQRC.OPTIONS_ERROR, "ALTERNATE_USER_AUTHORITY is a put option of MQPUT1 only: "
                                              "open the queue with ALTERNATE_USER_AUTHORITY instead")
        passed = self._put_context(conn, handle, call)
        return await put(conn, handle.resolved, call, gen=handle.gen, passed=passed,
                         user_id=handle.alternate_user_id or None)

    @recorded(Verb.PUT1)
    async def put1(self, hconn: str, object_name: str, object_qmgr: str, call: PutCall,
                   alternate_user_id: str = "") -> PutOutcome:
        """MQPUT1: open for output, put, close, as one call. ``alternate_user_id`` is MQOD
        AlternateUserId, used with MQPMO_ALTERNATE_USER_AUTHORITY (as MQOPEN's with MQOO_)."""
        conn = self.connection(hconn)
        self._check_handles(conn)  # MQPUT1 uses a handle while it runs (IBM: 2017 at MAXHANDS)
        await self._current_authority(conn)
        resolved = await self.resolve_target(object_name, object_qmgr)
        pmo = call.pmo
        put = self._async_put if _asynchronous(pmo, resolved) else self._put
        if pmo.context == "DEFAULT" and not pmo.alternate_user:  # the common case
            self.qm.security.check(conn.principal, "PUT", "QUEUE", object_name)
            return await put(conn, resolved, call, gen=None)
        checked, user_id = conn.principal, None
        if pmo.alternate_user:
            user_id = alternate_user_id.strip()
            checked = await self.qm.security.alternate_principal(conn.principal, user_id)
        self.qm.security.check(checked, "PUT", "QUEUE", object_name)
        # MQPUT1 opens with the MQOO_ context option its MQPMO_ option implies: context security
        # is checked as MQOPEN checks it, for the caller (z/OS "Profiles for context security")
        self.qm.security.check_context(conn.principal, object_name, frozenset({pmo.context}))
        passed = None if pmo.context == "DEFAULT" else self._put_context(conn, None, call)
        return await put(conn, resolved, call, gen=None, passed=passed, user_id=user_id or None)

    async def open_topic(self, hconn: str, object_name: Any, object_string: Any, options: Any) -> TopicHandle:
        """MQOPEN of a topic (MQOD ObjectType MQOT_TOPIC) for publishing (app/qmgr/pubsub.py)."""
        conn = self.connection(hconn)
        await self._current_authority(conn)
        topic: TopicHandle = self.qm.pubsub.open_topic(conn, object_name, object_string, options)
        return topic

    @recorded(Verb.PUT1)
    async def put1_topic(self, hconn: str, object_name: str, object_string: str, call: PutCall) -> PutOutcome:
        """MQPUT1 of a topic: open it for output, publish, close."""
        conn = self.connection(hconn)
        await self._current_authority(conn)
        topic = self.qm.pubsub.open_topic(conn, object_name, object_string, ["OUTPUT"])
        try:
            with self._in_call(conn):
                return await self.qm.pubsub.publish(conn, topic, call)
        finally:
            self.qm.pubsub.close_topic(conn, topic.hobj)
