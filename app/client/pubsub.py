"""Publish/subscribe for the pymqi-shaped client: ``SD`` (MQSD with pymqi's field names),
``Topic`` (MQOPEN of a topic, ``pub``) and ``Subscription`` (MQSUB, ``get``, MQCLOSE), as pymqi
and IBM's ``ibmmq`` package offer them, over the queue manager's ``/v1`` API (docs/api.md
"Publish/subscribe"); ``AsyncTopic`` and ``AsyncSubscription`` for ``app.client.aio``.

The verbs are I/O-free plans (as in app/client/session.py), driven by either client.
Not offered: ``pub_rfh2`` (messages carry no RFH2 headers here) and message properties.
"""

from __future__ import annotations

from typing import Any

import app.client.CMQC as CMQC
from app.client.core import (
    GMO,
    MD,
    OD,
    PMO,
    MQMIError,
    MQOpts,
    PYIFError,
    error_of,
    id_hex,
    option_names,
    string_message,
    text,
)
from app.client.session import Call, Connection, Plan


class SD(MQOpts):
    """Subscription descriptor (MQSD). ``set_vs``/``get_vs`` set and read its variable-length
    strings (ObjectString, SubName, ...) as pymqi's do."""

    _fields = {
        "StrucId": CMQC.MQSD_STRUC_ID, "Version": CMQC.MQSD_VERSION_1, "Options": CMQC.MQSO_NON_DURABLE,
        "ObjectName": b"", "AlternateUserId": b"", "AlternateSecurityId": b"\0" * 40,
        "SubExpiry": CMQC.MQEI_UNLIMITED, "ObjectString": b"", "SubName": b"", "SubUserData": b"",
        "SubCorrelId": CMQC.MQCI_NONE, "PubPriority": CMQC.MQPRI_PRIORITY_AS_PUBLISHED,
        "PubAccountingToken": CMQC.MQACT_NONE, "PubApplIdentityData": b"", "SelectionString": b"",
        "SubLevel": 1, "ResObjectString": b"",
    }

    def set_vs(self, name: str, value: Any, offset: int = 0, buffer_size: int = 0, ccsid: int = 0) -> None:
        """Set a variable-length string field (pymqi's ``set_vs``; offsets and CCSIDs unused)."""
        setattr(self, name, value)

    def get_vs(self, name: str) -> str:
        """A variable-length string field as text."""
        return text(getattr(self, name))


SUB_OPTIONS = {
    CMQC.MQSO_ALTER: "ALTER", CMQC.MQSO_CREATE: "CREATE", CMQC.MQSO_RESUME: "RESUME",
    CMQC.MQSO_DURABLE: "DURABLE", CMQC.MQSO_MANAGED: "MANAGED", CMQC.MQSO_FAIL_IF_QUIESCING: "FAIL_IF_QUIESCING",
    CMQC.MQSO_WILDCARD_CHAR: "WILDCARD_CHAR", CMQC.MQSO_WILDCARD_TOPIC: "WILDCARD_TOPIC",
    CMQC.MQSO_SET_CORREL_ID: "SET_CORREL_ID", CMQC.MQSO_NEW_PUBLICATIONS_ONLY: "NEW_PUBLICATIONS_ONLY",
    CMQC.MQSO_NO_READ_AHEAD: "NO_READ_AHEAD", CMQC.MQSO_READ_AHEAD: "READ_AHEAD",
    CMQC.MQSO_SCOPE_QMGR: "SCOPE_QMGR", CMQC.MQSO_NO_MULTICAST: "NO_MULTICAST",
    CMQC.MQSO_ANY_USERID: "ANY_USERID", CMQC.MQSO_FIXED_USERID: "FIXED_USERID",
    CMQC.MQSO_GROUP_SUB: "GROUP_SUB", CMQC.MQSO_PUBLICATIONS_ON_REQUEST: "PUBLICATIONS_ON_REQUEST",
    CMQC.MQSO_SET_IDENTITY_CONTEXT: "SET_IDENTITY_CONTEXT",
    CMQC.MQSO_ALTERNATE_USER_AUTHORITY: "ALTERNATE_USER_AUTHORITY",
}
SUB_CLOSE_OPTIONS = {CMQC.MQCO_KEEP_SUB: "KEEP_SUB", CMQC.MQCO_REMOVE_SUB: "REMOVE_SUB"}


def _ok(response: Any) -> dict[str, Any]:
    err = error_of(response)
    if err is not None:
        raise err
    body = response.json()
    return body if isinstance(body, dict) else {}


def topic_desc(topic_name: Any = None, topic_string: Any = None, topic_desc: OD | None = None) -> tuple[str, str]:
    """(topic object name, topic string) of pymqi's Topic arguments."""
    if topic_desc is not None:
        name = text(topic_desc.ObjectName)
        string = text(getattr(topic_desc, "ObjectString", b"")) if "ObjectString" in topic_desc._fields else ""
        return name, string
    if topic_name is None and topic_string is None:
        raise PYIFError("a topic needs topic_name, topic_string or topic_desc")
    return text(topic_name or ""), text(topic_string or "")


def open_topic_plan(conn: Connection, name: str, string: str, options: int) -> Plan[str]:
    """MQOPEN of a topic (MQOT_TOPIC) for output."""
    names = option_names(options, {CMQC.MQOO_OUTPUT: "OUTPUT", CMQC.MQOO_FAIL_IF_QUIESCING: "FAIL_IF_QUIESCING",
                                   CMQC.MQOO_INPUT_AS_Q_DEF: "INPUT_AS_Q_DEF", CMQC.MQOO_BROWSE: "BROWSE",
                                   CMQC.MQOO_INQUIRE: "INQUIRE", CMQC.MQOO_SET: "SET"},
                         0, "open", CMQC.MQRC_OPTIONS_ERROR)
    body = _ok((yield Call("POST", conn._path("/objects"), {"object_type": "TOPIC", "object_name": name,
                                                             "object_string": string, "options": names})))
    return str(body["hobj"])


def subscribe_plan(conn: Connection, sd: SD, hobj: str | None) -> Plan[dict[str, Any]]:
    """MQSUB; fills the SD's output fields (ObjectString resolved, SubCorrelId)."""
    options = option_names(sd.Options, SUB_OPTIONS, 0, "subscription", CMQC.MQRC_OPTIONS_ERROR)
    body: dict[str, Any] = {"object_name": text(sd.ObjectName), "object_string": text(sd.ObjectString),
                            "sub_name": text(sd.SubName), "options": options}
    if hobj is not None:
        body["hobj"] = hobj
    if sd.Options & CMQC.MQSO_SET_CORREL_ID:
        body["sub_correl_id"] = id_hex(sd.SubCorrelId, "SubCorrelId")
    result = _ok((yield Call("POST", conn._path("/subscriptions"), body)))
    sd.SubCorrelId = bytes.fromhex(str(result.get("sub_correl_id", "00" * 24)))
    sd.ResObjectString = str(result.get("object_string", ""))
    return result


def close_subscription_plan(conn: Connection, hsub: str, options: int) -> Plan[None]:
    names = option_names(options, SUB_CLOSE_OPTIONS, 0, "close", CMQC.MQRC_OPTIONS_ERROR)
    _ok((yield Call("DELETE", conn._path(f"/subscriptions/{hsub}"), {"options": names})))


def _md_pmo(opts: tuple[Any, ...]) -> tuple[MD, PMO]:
    md = opts[0] if len(opts) > 0 and opts[0] is not None else MD()
    pmo = opts[1] if len(opts) > 1 and opts[1] is not None else PMO()
    return md, pmo


def _sub_desc(sub_desc: SD | None, sub_name: Any, sub_opts: Any, topic_name: Any, topic_string: Any) -> SD:
    """The SD of pymqi's ``sub`` arguments: the one given, or one made from the others."""
    if sub_desc is not None:
        if not isinstance(sub_desc, SD):
            raise PYIFError("sub_desc must be an SD")
        return sub_desc
    sd = SD(Options=sub_opts if sub_opts is not None else CMQC.MQSO_CREATE | CMQC.MQSO_MANAGED)
    if sub_name is not None:
        sd.set_vs("SubName", sub_name)
    if topic_name is not None:
        sd.ObjectName = topic_name
    if topic_string is not None:
        sd.set_vs("ObjectString", topic_string)
    return sd


# ---- synchronous (app.client.sync) ----------------------------------------------------------------


class Topic:
    """A topic to publish on (pymqi's and ibmmq's ``Topic``)."""

    def __init__(self, queue_manager: Any, topic_name: Any = None, topic_string: Any = None,
                 topic_desc: OD | None = None, open_opts: int | None = None) -> None:
        self._qmgr = queue_manager
        self._hobj: str | None = None
        self.topic_name, self.topic_string = (text(topic_name or ""), text(topic_string or ""))
        self._desc = topic_desc
        if open_opts is not None and (topic_name or topic_string or topic_desc):
            self.open(topic_name, topic_string, topic_desc, open_opts)

    def open(self, topic_name: Any = None, topic_string: Any = None, topic_desc: OD | None = None,
             open_opts: int | None = None) -> None:
        """MQOPEN of the topic (for MQOO_OUTPUT, the default)."""
        if self._hobj is not None:
            raise PYIFError("the topic is already open")
        if topic_name is None and topic_string is None and topic_desc is None:
            topic_name, topic_string, topic_desc = self.topic_name or None, self.topic_string or None, self._desc
        name, string = topic_desc_of(topic_name, topic_string, topic_desc)
        self.topic_name, self.topic_string = name, string
        self._hobj = self._qmgr._run(open_topic_plan(self._qmgr._conn, name, string,
                                                     open_opts if open_opts is not None else CMQC.MQOO_OUTPUT))

    def pub(self, msg: bytes | str, *opts: Any) -> None:
        """MQPUT of a publication: ``pub(msg[, md[, pmo]])``; the MD receives its MsgId."""
        md, pmo = _md_pmo(opts)
        string_message(msg, md)
        if self._hobj is None:
            self.open(open_opts=CMQC.MQOO_OUTPUT)
        assert self._hobj is not None
        self._qmgr._run(self._qmgr._conn.put(self._hobj, msg, md, pmo))

    def pub_rfh2(self, msg: bytes | str, *opts: Any) -> None:
        raise PYIFError("pub_rfh2: messages carry no RFH2 headers on this queue manager; use pub")

    def close(self, options: int = CMQC.MQCO_NONE) -> None:
        if self._hobj is None:
            raise PYIFError("the topic is not open")
        self._qmgr._run(self._qmgr._conn.close(self._hobj, options))
        self._hobj = None

    def get_handle(self) -> str:
        if self._hobj is None:
            raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_HOBJ_ERROR, "the topic is not open")
        return self._hobj

    def __enter__(self) -> Topic:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._hobj is not None and self._qmgr.is_connected:
            self.close()


topic_desc_of = topic_desc


class Subscription:
    """A subscription (pymqi's and ibmmq's ``Subscription``): ``sub`` makes or resumes it,
    ``get`` reads its publications, ``close`` ends or keeps it."""

    def __init__(self, queue_manager: Any, sub_desc: SD | None = None, sub_name: Any = None, sub_queue: Any = None,
                 sub_opts: Any = None, topic_name: Any = None, topic_string: Any = None) -> None:
        self._qmgr = queue_manager
        self.sub_queue: Any = None
        self._hsub: str | None = None
        self.sub_desc: SD | None = None
        self.sub_name = sub_name
        if sub_desc is not None or topic_string is not None or topic_name is not None:
            self.sub(sub_desc, sub_queue, sub_name, sub_opts, topic_name, topic_string)

    def sub(self, sub_desc: SD | None = None, sub_queue: Any = None, sub_name: Any = None, sub_opts: Any = None,
            topic_name: Any = None, topic_string: Any = None) -> Any:
        """MQSUB. Managed (MQSO_MANAGED): the queue manager makes the queue; else ``sub_queue``,
        an open ``Queue``, receives the publications. Returns the subscription's queue."""
        from app.client.sync import Queue
        sd = _sub_desc(sub_desc, sub_name, sub_opts, topic_name, topic_string)
        hobj = None if sub_queue is None else sub_queue.get_handle()
        result = self._qmgr._run(subscribe_plan(self._qmgr._conn, sd, hobj))
        self._adopt(sd, result, sub_queue, Queue)
        return self.sub_queue

    def _adopt(self, sd: SD, result: dict[str, Any], sub_queue: Any, queue_class: type) -> None:
        self.sub_desc, self._hsub = sd, str(result["hsub"])
        self.sub_name = result.get("sub_name")
        if sub_queue is not None:
            self.sub_queue = sub_queue
        elif "hobj" in result:
            queue = queue_class(self._qmgr, str(result["object_name"]))
            queue._hobj = str(result["hobj"])  # the managed queue, opened by MQSUB
            self.sub_queue = queue

    def get_sub_queue(self) -> Any:
        return self.sub_queue

    def get(self, max_length: int | None = None, *opts: Any) -> bytes:
        """MQGET from the subscription's queue: ``get(max_length[, md[, gmo]])``."""
        if self.sub_queue is None:
            raise PYIFError("not subscribed")
        md = opts[0] if len(opts) > 0 and opts[0] is not None else MD()
        gmo = opts[1] if len(opts) > 1 and opts[1] is not None else GMO()
        return self.sub_queue.get(max_length, md, gmo)

    def get_no_jms(self, max_length: int | None = None, *opts: Any) -> bytes:
        return self.get(max_length, *opts)

    get_no_rfh2 = get_no_jms

    def close(self, sub_close_options: int = CMQC.MQCO_NONE, close_sub_queue: bool = False,
              close_sub_queue_options: int = CMQC.MQCO_NONE) -> None:
        """MQCLOSE of the subscription (MQCO_KEEP_SUB / MQCO_REMOVE_SUB), then, when asked, of
        its queue."""
        if self._hsub is None:
            raise PYIFError("not subscribed")
        self._qmgr._run(close_subscription_plan(self._qmgr._conn, self._hsub, sub_close_options))
        self._hsub = None
        if close_sub_queue and self.sub_queue is not None:
            self.sub_queue.close(close_sub_queue_options)

    def get_handle(self) -> str:
        if self._hsub is None:
            raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_HOBJ_ERROR, "not subscribed")
        return self._hsub


# ---- asyncio (app.client.aio) ---------------------------------------------------------------------


class AsyncTopic:
    """``Topic`` for ``app.client.aio.QueueManager``: the same calls, awaited."""

    def __init__(self, queue_manager: Any, topic_name: Any = None, topic_string: Any = None,
                 topic_desc: OD | None = None) -> None:
        self._qmgr = queue_manager
        self._hobj: str | None = None
        self.topic_name, self.topic_string = text(topic_name or ""), text(topic_string or "")
        self._desc = topic_desc

    async def open(self, topic_name: Any = None, topic_string: Any = None, topic_desc: OD | None = None,
                   open_opts: int | None = None) -> None:
        if self._hobj is not None:
            raise PYIFError("the topic is already open")
        if topic_name is None and topic_string is None and topic_desc is None:
            topic_name, topic_string, topic_desc = self.topic_name or None, self.topic_string or None, self._desc
        name, string = topic_desc_of(topic_name, topic_string, topic_desc)
        self.topic_name, self.topic_string = name, string
        self._hobj = await self._qmgr._run(open_topic_plan(self._qmgr._conn, name, string,
                                                           open_opts if open_opts is not None else CMQC.MQOO_OUTPUT))

    async def pub(self, msg: bytes | str, *opts: Any) -> None:
        md, pmo = _md_pmo(opts)
        string_message(msg, md)
        if self._hobj is None:
            await self.open(open_opts=CMQC.MQOO_OUTPUT)
        assert self._hobj is not None
        await self._qmgr._run(self._qmgr._conn.put(self._hobj, msg, md, pmo))

    async def close(self, options: int = CMQC.MQCO_NONE) -> None:
        if self._hobj is None:
            raise PYIFError("the topic is not open")
        await self._qmgr._run(self._qmgr._conn.close(self._hobj, options))
        self._hobj = None


class AsyncSubscription(Subscription):
    """``Subscription`` for ``app.client.aio.QueueManager``: ``await sub.sub(...)``, ``await
    sub.get(...)``, ``await sub.close(...)``."""

    #: the asyncio ``Queue`` class the managed queue's handle is given (app.client.aio sets it)
    queue_class: type | None = None

    def __init__(self, queue_manager: Any) -> None:
        self._qmgr = queue_manager
        self.sub_queue = None
        self._hsub = None
        self.sub_desc = None
        self.sub_name = None

    async def sub(self, sub_desc: SD | None = None, sub_queue: Any = None, sub_name: Any = None,  # type: ignore[override]
                  sub_opts: Any = None, topic_name: Any = None, topic_string: Any = None) -> Any:
        assert self.queue_class is not None, "use app.client.aio.Subscription"
        sd = _sub_desc(sub_desc, sub_name, sub_opts, topic_name, topic_string)
        hobj = None if sub_queue is None else sub_queue.get_handle()
        result = await self._qmgr._run(subscribe_plan(self._qmgr._conn, sd, hobj))
        self._adopt(sd, result, sub_queue, self.queue_class)
        return self.sub_queue

    async def get(self, max_length: int | None = None, *opts: Any) -> bytes:  # type: ignore[override]
        if self.sub_queue is None:
            raise PYIFError("not subscribed")
        md = opts[0] if len(opts) > 0 and opts[0] is not None else MD()
        gmo = opts[1] if len(opts) > 1 and opts[1] is not None else GMO()
        return await self.sub_queue.get(max_length, md, gmo)

    async def close(self, sub_close_options: int = CMQC.MQCO_NONE, close_sub_queue: bool = False,  # type: ignore[override]
                    close_sub_queue_options: int = CMQC.MQCO_NONE) -> None:
        if self._hsub is None:
            raise PYIFError("not subscribed")
        await self._qmgr._run(close_subscription_plan(self._qmgr._conn, self._hsub, sub_close_options))
        self._hsub = None
        if close_sub_queue and self.sub_queue is not None:
            await self.sub_queue.close(close_sub_queue_options)


__all__ = ["SD", "AsyncSubscription", "AsyncTopic", "Subscription", "Topic"]
