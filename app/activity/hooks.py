"""Recording MQI calls: one decorator per verb of ``Mqi``, in the one place that sees both
outcomes (the call's return or its ``MQError``), and ``note`` for what only the inside of a
call knows (the depth after a put, the message size).

Usage in ``app.qmgr.mqi``::

    @recorded(Verb.PUT)
    async def put(self, hconn, hobj, call): ...

    # inside, after the coupling facility answered:
    note(conn.hconn, resolved=resolved, depth=done.depth, size=len(data))

Describers read the call's arguments by name (``MqiCall``, bound from the verb's signature)
and its outcome. Describing a call never fails it: a describer that raises only leaves fields
out, and is logged as the bug it is.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from datetime import UTC, datetime
from time import perf_counter_ns
from typing import Any, TypeVar

from app.activity.schema import Verb
from app.core.calls import GetCall, GotMessage, PutCall, PutOutcome
from app.core.errors import MQError
from app.core.reasons import MQRC, CompCode

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

#: The record of the MQI call in progress in this task (None outside a recorded call).
_CURRENT: ContextVar[dict[str, Any] | None] = ContextVar("activity_record", default=None)

#: Set True in a task of the queue manager's own (the command server) whose MQI calls are not
#: applications' activity: they are not recorded.
unrecorded: ContextVar[bool] = ContextVar("activity_unrecorded", default=False)


def note(hconn: str, *, resolved: Any = None, **fields: Any) -> None:
    """Add fields to the record of the call in progress on connection ``hconn``.

    A no-op when nothing is recorded, and when the call in progress is another connection's
    (the queue manager's own puts, e.g. an expiration report sent during an MQGET, must not
    change the MQGET's record). ``resolved`` (a ``ResolvedQueue``) fills object, qsgdisp, alias.
    """
    record = _CURRENT.get()
    if record is None or record.get("hconn") != hconn:
        return
    if resolved is not None:
        _queue(record, resolved)
    record.update(fields)


# ---- the call as described: its arguments by name ------------------------------------------


class MqiCall:
    """One MQI call as the activity log sees it: the ``Mqi`` verb's arguments by parameter name
    (bound once per call from the verb's signature, never read by position), typed where the
    record needs them."""

    __slots__ = ("args",)

    def __init__(self, args: dict[str, Any]) -> None:
        self.args = args

    @property
    def hconn(self) -> Any:
        return self.args.get("hconn")

    @property
    def hobj(self) -> Any:
        return self.args.get("hobj")

    @property
    def put(self) -> PutCall | None:
        """The MQPUT or MQPUT1's message and options (a put-batch's: each message's)."""
        value = self.args.get("call")
        return value if isinstance(value, PutCall) else None

    @property
    def get(self) -> GetCall | None:
        """The MQGET's options and match fields (a get-batch's: the batch's)."""
        value = self.args.get("call")
        return value if isinstance(value, GetCall) else None


def _binder(fn: Callable[..., Any]) -> Callable[[tuple[Any, ...], dict[str, Any]], MqiCall]:
    """How to name a call's arguments: the parameters of ``fn`` after ``self``, in order."""
    names = tuple(itertools.islice(inspect.signature(fn).parameters, 1, None))

    def bind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> MqiCall:
        named = dict(zip(names, args, strict=False))
        named.update(kwargs)
        return MqiCall(named)

    return bind


# ---- describers: fields from the arguments (before) and from the result (after) -----------

Describer = Callable[[Any, dict[str, Any], MqiCall, Any], None]


def _connection(mqi: Any, rec: dict[str, Any], call: MqiCall) -> Any:
    hconn = call.hconn
    rec["hconn"] = hconn
    conn = mqi.connections.get(hconn) if isinstance(hconn, str) else None
    if conn is not None:
        rec["appl"] = conn.appl_name
    return conn


def _queue(rec: dict[str, Any], resolved: Any) -> None:
    rec["object"] = resolved.base.name
    rec["qsgdisp"] = resolved.base.qsgdisp
    if resolved.opened.name != resolved.base.name:
        rec["alias"] = resolved.opened.name


def _handle(mqi: Any, rec: dict[str, Any], call: MqiCall) -> Any:
    conn = _connection(mqi, rec, call)
    handle = conn.handles.get(call.hobj) if conn is not None else None
    if handle is not None:
        _queue(rec, handle.resolved)
    return handle


def _before_conn(mqi: Any, rec: dict[str, Any], call: MqiCall, _: Any) -> None:
    appl = call.args.get("appl_name")
    if isinstance(appl, str):
        rec["appl"] = appl.strip()[:28]


def _after_conn(mqi: Any, rec: dict[str, Any], call: MqiCall, conn: Any) -> None:
    rec["hconn"] = conn.hconn
    rec["appl"] = conn.appl_name


def _before_disc(mqi: Any, rec: dict[str, Any], call: MqiCall, _: Any) -> None:
    _connection(mqi, rec, call)
    if call.args.get("commit") is False:
        rec["detail"] = "ended abnormally: unit of work backed out"


def _before_hconn(mqi: Any, rec: dict[str, Any], call: MqiCall, _: Any) -> None:
    _connection(mqi, rec, call)


def _before_handle(mqi: Any, rec: dict[str, Any], call: MqiCall, _: Any) -> None:
    _handle(mqi, rec, call)


def _before_open(mqi: Any, rec: dict[str, Any], call: MqiCall, _: Any) -> None:
    _connection(mqi, rec, call)
    object_name, options = call.args.get("object_name"), call.args.get("options")
    if isinstance(object_name, str):
        rec["object"] = object_name
    if isinstance(options, list):
        rec["detail"] = ",".join(str(o) for o in options)


def _after_open(mqi: Any, rec: dict[str, Any], call: MqiCall, handle: Any) -> None:
    _queue(rec, handle.resolved)


def _before_put(mqi: Any, rec: dict[str, Any], call: MqiCall, _: Any) -> None:
    _handle(mqi, rec, call)
    put = call.put
    if put is not None:
        rec["syncpoint"] = put.pmo.syncpoint


def _before_put1(mqi: Any, rec: dict[str, Any], call: MqiCall, _: Any) -> None:
    _connection(mqi, rec, call)
    object_name = call.args.get("object_name")
    if isinstance(object_name, str):
        rec["object"] = object_name  # replaced by the resolved queue once known (note)
    put = call.put
    if put is not None:
        rec["syncpoint"] = put.pmo.syncpoint


def _after_put(mqi: Any, rec: dict[str, Any], call: MqiCall, outcome: PutOutcome) -> None:
    md = outcome.md
    rec["msg_id"] = md.msg_id
    rec["correl_id"] = md.correl_id
    rec["priority"] = md.priority
    rec["persistent"] = md.persistent
    if outcome.warnings:
        rec["cc"] = int(CompCode.WARNING)
        rec["rc"] = int(outcome.warnings[0][0])


def _before_get(mqi: Any, rec: dict[str, Any], call: MqiCall, _: Any) -> None:
    handle = _handle(mqi, rec, call)
    if handle is not None:
        rec["bothresh"] = int(handle.resolved.base.attrs.get("BOTHRESH", 0) or 0)
    get = call.get
    if get is None:
        return
    gmo = get.gmo
    if gmo.browse:
        rec["verb"] = Verb.BROWSE.value
        rec["syncpoint"] = False
    elif gmo.syncpoint != "IF_PERSISTENT":
        rec["syncpoint"] = gmo.syncpoint == "YES"
    else:
        rec["syncpoint"] = None  # decided by the message's persistence (after)


def _after_get(mqi: Any, rec: dict[str, Any], call: MqiCall, got: GotMessage) -> None:
    md = got.md
    rec["msg_id"] = md.msg_id
    rec["correl_id"] = md.correl_id
    rec["priority"] = md.priority
    rec["persistent"] = md.persistent
    rec["size"] = got.data_length
    rec["backout_count"] = md.backout_count
    if md.put_date_time:
        rec["put_ts"] = parse_put_time(md.put_date_time)
    if rec.get("syncpoint", False) is None:
        rec["syncpoint"] = md.persistent
    if got.truncated:
        rec["cc"] = int(CompCode.WARNING)
        rec["rc"] = int(MQRC.TRUNCATED_MSG_ACCEPTED)


def _nothing(mqi: Any, rec: dict[str, Any], call: MqiCall, result: Any) -> None:
    return None


_DESCRIBERS: dict[Verb, tuple[Describer, Describer]] = {
    Verb.CONN: (_before_conn, _after_conn),
    Verb.DISC: (_before_disc, _nothing),
    Verb.CMIT: (_before_hconn, _nothing),
    Verb.BACK: (_before_hconn, _nothing),
    Verb.OPEN: (_before_open, _after_open),
    Verb.CLOSE: (_before_handle, _nothing),
    Verb.PUT: (_before_put, _after_put),
    Verb.PUT1: (_before_put1, _after_put),
    Verb.GET: (_before_get, _after_get),
    Verb.INQ: (_before_handle, _nothing),
    Verb.SET: (_before_handle, _nothing),
}


def recorded(verb: Verb) -> Callable[[F], F]:
    """Record every call of the decorated ``Mqi`` verb: its outcome (completion and reason
    code, also of a failure), its latency and what the describers of ``verb`` find."""
    before, after = _DESCRIBERS[verb]

    def decorate(fn: F) -> F:
        bind = _binder(fn)

        @functools.wraps(fn)
        async def call(mqi: Any, *args: Any, **kwargs: Any) -> Any:
            activity = getattr(mqi.qm, "activity", None)
            if activity is None or not activity.enabled or unrecorded.get():
                return await fn(mqi, *args, **kwargs)
            if activity.full:
                await activity.room()  # policy wait: a slow disk slows calls, memory stays bounded
            rec = activity.new_record(verb.value)
            described = bind(args, kwargs)
            try:
                before(mqi, rec, described, None)
            except Exception:  # describing never fails a call; a describer that raises is a bug
                log.warning("activity: describing %s failed", verb, exc_info=True)
            token = _CURRENT.set(rec)
            started = perf_counter_ns()
            try:
                result = await fn(mqi, *args, **kwargs)
            except MQError as exc:
                rec["cc"] = exc.comp
                rec["rc"] = exc.reason
                raise
            except BaseException:
                rec["cc"] = 2
                rec["rc"] = int(MQRC.UNEXPECTED_ERROR)
                raise
            else:
                rec["cc"] = 0
                rec["rc"] = 0
                try:
                    after(mqi, rec, described, result)
                except Exception:
                    log.warning("activity: describing the result of %s failed", verb, exc_info=True)
                return result
            finally:
                rec["latency_us"] = (perf_counter_ns() - started) // 1000
                _CURRENT.reset(token)
                rec["ts"] = activity.clock.now_ms()
                if rec.get("syncpoint", False) is None:
                    del rec["syncpoint"]
                activity.submit(rec)

        return call  # type: ignore[return-value]

    return decorate


async def room_for_batch(mqi: Any) -> None:
    """What ``recorded`` does before a call, for a batch call: wait while the activity buffer
    is full (policy ``wait``), so a batch's many records are slowed down like single calls'."""
    activity = getattr(mqi.qm, "activity", None)
    if activity is not None and activity.enabled and activity.full:
        await activity.room()


def record_batch(mqi: Any, verb: Verb, args: tuple[Any, ...], done: Sequence[tuple[Any, Any, dict[str, Any]]],
                 failed: tuple[Any, MQError] | None, started_ns: int) -> None:
    """Record a batch call (put-batch, get-batch) as the single calls it stands for, so the
    analytics count messages the same way whichever verb moved them: one ``verb`` record per
    message, described as that verb's single call is. ``args`` are the batch's (hconn, hobj);
    ``done`` holds per message its own argument (its ``PutCall``; the ``GetCall`` for a get),
    its result and what ``note`` would have added (``resolved``, ``depth``, ``size``);
    ``failed``, the argument and error of the message that stopped the batch (one failed
    record, as a single call that failed). The batch's latency is shared evenly."""
    activity = getattr(mqi.qm, "activity", None)
    if activity is None or not activity.enabled:
        return
    before, after = _DESCRIBERS[verb]
    n = len(done) + (failed is not None)
    latency_us = (perf_counter_ns() - started_ns) // 1000 // max(n, 1)
    # What the verb's describer takes from the arguments (connection, queue, syncpoint) is the
    # batch's, the same for every message: described once, copied into each message's record.
    common = activity.new_record(verb.value)
    first = done[0][0] if done else (failed[0] if failed is not None else None)
    hconn, hobj = args
    try:
        before(mqi, common, MqiCall({"hconn": hconn, "hobj": hobj, "call": first}), None)
    except Exception:  # describing never fails a call; a describer that raises is a bug
        log.warning("activity: describing %s failed", verb, exc_info=True)
    common["latency_us"] = latency_us
    common["ts"] = activity.clock.now_ms()

    queues: dict[int, dict[str, Any]] = {}  # id of a ResolvedQueue -> what _queue writes for it
    records: list[dict[str, Any]] = []

    def one(arg: Any, result: Any, noted: dict[str, Any], error: MQError | None) -> None:
        rec = common.copy()
        for key, value in noted.items():
            if key != "resolved":
                rec[key] = value
            elif value is not None:  # the batch's messages share their queue: described once
                fields = queues.get(id(value))
                if fields is None:
                    fields = queues[id(value)] = {}
                    _queue(fields, value)
                rec.update(fields)
        if error is not None:
            rec["cc"], rec["rc"] = error.comp, error.reason
        else:
            rec["cc"], rec["rc"] = 0, 0
            try:
                after(mqi, rec, MqiCall({"hconn": hconn, "hobj": hobj, "call": arg}), result)
            except Exception:
                log.warning("activity: describing the result of %s failed", verb, exc_info=True)
        if rec.get("syncpoint", False) is None:
            del rec["syncpoint"]
        records.append(rec)

    for arg, result, noted in done:
        one(arg, result, noted, None)
    if failed is not None:
        one(failed[0], None, {}, failed[1])
    activity.submit_batch(records)


_SECOND_CACHE: dict[str, int] = {}


def parse_put_time(text: str) -> int | None:
    """``put_date_time`` (``2025-06-01T10:00:00.123Z``) as ms since the epoch; None when it is
    not in that form. The second is cached: gets of one second's messages parse it once."""
    prefix, ms = text[:19], text[20:23]
    second = _SECOND_CACHE.get(prefix)
    if second is None:
        try:
            second = int(datetime.strptime(prefix, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp())
        except ValueError:
            return None
        if len(_SECOND_CACHE) > 4096:
            _SECOND_CACHE.clear()
        _SECOND_CACHE[prefix] = second
    return second * 1000 + (int(ms) if ms.isdigit() else 0)
