"""Asynchronous consume (MQCB, MQCTL) for the synchronous client, as IBM's ``ibmmq`` offers it:
``queue.cb(operation=CMQC.MQOP_REGISTER, cbd=cbd, md=md, gmo=gmo)``, ``qmgr.cb(...)`` for the
event handler, ``qmgr.ctl(CMQC.MQOP_START, ctlo)``; the callback is called with the keywords
``queue_manager, queue, md, gmo, msg, cbc`` (an MQCBC).

There is no server side to it: a connection's consumers are driven by one thread of the client
(IBM: "callbacks run on a thread started by the system"), which issues the consumers' MQGETs
with wait, in turns, and calls each consumer with what it got. IBM's rules (MQCB and MQCTL in
the IBM MQ reference, https://www.ibm.com/docs/SSFKSJ_9.4.0/refdev/q101720_.html and
q101790_.html):

* while the connection is started, an MQI call from any thread but the consumer thread fails
  with MQRC_HCONN_ASYNC_ACTIVE (2500), except MQCTL STOP / SUSPEND and MQDISC (which stops
  first); a callback may issue any call on its connection (commit, put a reply, ...);
* MQOP_START returns at once; MQOP_START_WAIT runs the consumers on the caller's thread until a
  callback stops or suspends the connection (2521 MQRC_CONNECTION_SUSPENDED, a warning), or no
  consumer is left active (2446 MQRC_NO_CALLBACKS_ACTIVE); STOP from outside returns once the
  running callback has returned; RESUME or SUSPEND of a stopped connection and START of a
  suspended one are 2534 MQRC_OPERATION_NOT_ALLOWED;
* a consumer whose GMO waits for a limited WaitInterval is called with MQCBCT_EVENT_CALL and
  MQRC_NO_MSG_AVAILABLE each time that interval passes with no message; one with MQGMO_NO_WAIT
  once each time the queue is found empty; one with an unlimited wait never;
* MQCBDO_REGISTER_CALL, START_CALL, STOP_CALL, DEREGISTER_CALL ask for the control calls;
  closing the queue deregisters its consumer; DEREGISTER of nothing is 2448;
* a failure of the connection (2009 and the like) is an event: the event handler is called
  (else every consumer), and consumption stops. A failure of one consumer's get (2016 get
  inhibited, 2080 truncated, ...) is given to that consumer as an event call, and the consumer
  is suspended until MQOP_RESUME (IBM retries some of these itself: this client does not).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import app.client.CMQC as CMQC
from app.client.core import GMO, MD, MQMIError, MQOpts

log = logging.getLogger(__name__)

# How long one MQGET of the consumer thread waits at most, so that a STOP from another thread
# (which waits for the thread) and the other consumers of the connection get their turn.
SLICE_MS = 250
# Reasons that end the connection's consumption rather than one consumer's.
CONNECTION_REASONS = frozenset((CMQC.MQRC_CONNECTION_BROKEN, CMQC.MQRC_Q_MGR_QUIESCING,
                                CMQC.MQRC_Q_MGR_STOPPING, CMQC.MQRC_CONNECTION_QUIESCING,
                                CMQC.MQRC_CONNECTION_STOPPING, CMQC.MQRC_HCONN_ERROR,
                                CMQC.MQRC_Q_MGR_NOT_AVAILABLE, CMQC.MQRC_NOT_AUTHORIZED))


class CBD(MQOpts):
    """Callback descriptor (MQCBD): the function (any callable), its type, options and area."""

    _fields = {"StrucId": CMQC.MQCBD_STRUC_ID, "Version": CMQC.MQCBD_VERSION_1,
               "CallbackType": CMQC.MQCBT_MESSAGE_CONSUMER, "Options": CMQC.MQCBDO_NONE, "CallbackArea": 0,
               "CallbackFunction": 0, "CallbackName": b"", "MaxMsgLength": CMQC.MQCBD_FULL_MSG_LENGTH}


class CBC(MQOpts):
    """Callback context (MQCBC) a callback receives: why it is called and with what."""

    _fields = {"StrucId": CMQC.MQCBC_STRUC_ID, "Version": CMQC.MQCBC_VERSION_2, "CallType": 0, "Hobj": 0,
               "CallbackArea": 0, "ConnectionArea": 0, "CompCode": 0, "Reason": 0, "State": 0,
               "DataLength": 0, "BufferLength": 0, "Flags": 0, "ReconnectDelay": 0, "CallbackFunction": 0}


class CTLO(MQOpts):
    """MQCTL options (MQCTLO); ``ConnectionArea`` is handed to every callback."""

    _fields = {"StrucId": CMQC.MQCTLO_STRUC_ID, "Version": CMQC.MQCTLO_VERSION_1, "Options": CMQC.MQCTLO_NONE,
               "Reserved": 0, "ConnectionArea": 0}


def _fail(reason: int, message: str, comp: int = CMQC.MQCC_FAILED) -> MQMIError:
    return MQMIError(comp, reason, message)


@dataclass
class _Callback:
    """One registered callback: a queue's message consumer or the connection's event handler."""

    function: Any
    area: Any
    options: int
    queue: Any  # the Queue object; None for the event handler
    md: MD = field(default_factory=MD)
    gmo: GMO = field(default_factory=GMO)
    max_length: int | None = None
    suspended: bool = False
    deadline: float | None = None  # when the consumer's wait interval runs out (None: never)
    empty_reported: bool = False  # NO_WAIT consumers: 2033 already given for this empty spell


_STOPPED, _STARTED, _SUSPENDED = "stopped", "started", "suspended"


class AsyncConsume:
    """The callbacks and the consumer thread of one synchronous ``QueueManager``."""

    def __init__(self, qmgr: Any) -> None:
        self.qmgr = qmgr
        self.consumers: dict[str, _Callback] = {}  # by object handle, in registration order
        self.event_handler: _Callback | None = None
        self.state = _STOPPED
        self.connection_area: Any = 0
        self._cond = threading.Condition(threading.RLock())
        self._consumer_thread: int | None = None  # ident of the thread that runs the callbacks
        self._thread: threading.Thread | None = None
        self._stop = False
        self._in_callback = False
        self._turn = 0
        self._waiting_mode = False  # started by START_WAIT (the caller's thread consumes)

    # ---- the gate of every other MQI call ------------------------------------------------

    def check_call(self) -> None:
        """MQRC_HCONN_ASYNC_ACTIVE for a call from outside the consumer thread while started."""
        if self.state != _STOPPED and threading.get_ident() != self._consumer_thread:
            raise _fail(CMQC.MQRC_HCONN_ASYNC_ACTIVE, "the connection is started for asynchronous consume")

    def _on_consumer_thread(self) -> bool:
        return threading.get_ident() == self._consumer_thread

    # ---- MQCB ----------------------------------------------------------------------------

    def cb(self, queue: Any, kwargs: dict[str, Any]) -> None:
        """MQCB on ``queue`` (a Queue) or, with None, on the connection."""
        self.check_call()
        operation = kwargs.get("operation", CMQC.MQOP_REGISTER)
        cbd = kwargs.get("cbd") or CBD()
        md, gmo = kwargs.get("md") or MD(), kwargs.get("gmo") or GMO()
        if not isinstance(cbd, CBD):
            raise TypeError("cbd must be an instance of CBD")
        if not isinstance(md, MD) or not isinstance(gmo, GMO):
            raise TypeError("md must be an MD and gmo a GMO")
        base = operation & (CMQC.MQOP_REGISTER | CMQC.MQOP_DEREGISTER)
        state_ops = operation & (CMQC.MQOP_SUSPEND | CMQC.MQOP_RESUME)
        if operation & ~(CMQC.MQOP_REGISTER | CMQC.MQOP_DEREGISTER | CMQC.MQOP_SUSPEND | CMQC.MQOP_RESUME) \
                or base == CMQC.MQOP_REGISTER | CMQC.MQOP_DEREGISTER \
                or state_ops == CMQC.MQOP_SUSPEND | CMQC.MQOP_RESUME or not operation:
            raise _fail(CMQC.MQRC_OPERATION_ERROR, f"MQCB operation {operation} is not valid")
        with self._cond:
            if base == CMQC.MQOP_REGISTER:
                callback = self._register(queue, cbd, md, gmo)
                if callback.options & CMQC.MQCBDO_REGISTER_CALL:
                    self._call(callback, CMQC.MQCBCT_REGISTER_CALL)
            elif base == CMQC.MQOP_DEREGISTER:
                self._deregister(queue)
                return
            key = self._key(queue, cbd)
            found = self.consumers.get(key) if key else self.event_handler
            if found is None:
                raise _fail(CMQC.MQRC_CALLBACK_NOT_REGISTERED, "no callback is registered for the handle")
            callback = found
            if state_ops:
                callback.suspended = state_ops == CMQC.MQOP_SUSPEND
            self._cond.notify_all()

    def _key(self, queue: Any, cbd: CBD | None = None) -> str:
        if queue is None:
            return ""
        return queue._handle()  # MQRC_HOBJ_ERROR when the queue is not open

    def _register(self, queue: Any, cbd: CBD, md: MD, gmo: GMO) -> _Callback:
        if cbd.CallbackType not in (CMQC.MQCBT_MESSAGE_CONSUMER, CMQC.MQCBT_EVENT_HANDLER):
            raise _fail(CMQC.MQRC_CALLBACK_TYPE_ERROR, f"CallbackType {cbd.CallbackType} is not valid")
        if not callable(cbd.CallbackFunction):
            raise _fail(CMQC.MQRC_CALLBACK_ROUTINE_ERROR, "CallbackFunction is not callable")
        known = (CMQC.MQCBDO_START_CALL | CMQC.MQCBDO_STOP_CALL | CMQC.MQCBDO_REGISTER_CALL
                 | CMQC.MQCBDO_DEREGISTER_CALL | CMQC.MQCBDO_FAIL_IF_QUIESCING | CMQC.MQCBDO_EVENT_CALL
                 | CMQC.MQCBDO_MC_EVENT_CALL)
        if cbd.Options & ~known:
            raise _fail(CMQC.MQRC_CBD_OPTIONS_ERROR, f"MQCBD options 0x{cbd.Options:08x} are not valid")
        if cbd.CallbackType == CMQC.MQCBT_EVENT_HANDLER:  # Hobj is ignored for an event handler
            self.event_handler = _Callback(cbd.CallbackFunction, cbd.CallbackArea, cbd.Options, None)
            return self.event_handler
        if queue is None:
            raise _fail(CMQC.MQRC_HOBJ_ERROR, "a message consumer is registered on an open queue")
        hobj = queue._handle()
        # the registration keeps its own copies: the program may reuse its MD and GMO
        max_length = None if cbd.MaxMsgLength == CMQC.MQCBD_FULL_MSG_LENGTH else cbd.MaxMsgLength
        callback = _Callback(cbd.CallbackFunction, cbd.CallbackArea, cbd.Options, queue, MD(**md.get()),
                             GMO(**gmo.get()), max_length)
        self.consumers.pop(hobj, None)
        self.consumers[hobj] = callback
        self._restart_wait(callback)
        return callback

    def _deregister(self, queue: Any) -> None:
        if queue is None:
            callback, self.event_handler = self.event_handler, None
        else:
            callback = self.consumers.pop(self._key(queue), None)
        if callback is None:
            raise _fail(CMQC.MQRC_CALLBACK_NOT_REGISTERED, "no callback is registered for the handle")
        if callback.options & CMQC.MQCBDO_DEREGISTER_CALL:
            self._call(callback, CMQC.MQCBCT_DEREGISTER_CALL)
        self._cond.notify_all()

    def closed(self, hobj: str) -> None:
        """A queue was closed: its consumer is deregistered (with its DEREGISTER_CALL)."""
        with self._cond:
            callback = self.consumers.pop(hobj, None)
            if callback is not None and callback.options & CMQC.MQCBDO_DEREGISTER_CALL:
                self._call(callback, CMQC.MQCBCT_DEREGISTER_CALL, reason=CMQC.MQRC_NONE)
            self._cond.notify_all()

    # ---- MQCTL ---------------------------------------------------------------------------

    def ctl(self, operation: int, ctlo: CTLO | None) -> None:
        """MQCTL: START, START_WAIT, STOP, SUSPEND, RESUME."""
        if ctlo is not None and not isinstance(ctlo, CTLO):
            raise TypeError("ctlo must be an instance of CTLO")
        if operation == CMQC.MQOP_START:
            self._start(ctlo)
        elif operation == CMQC.MQOP_START_WAIT:
            self._start_wait(ctlo)
        elif operation == CMQC.MQOP_STOP:
            self.stop()
        elif operation == CMQC.MQOP_SUSPEND:
            with self._cond:
                if self.state == _STOPPED:
                    raise _fail(CMQC.MQRC_OPERATION_NOT_ALLOWED, "the connection is stopped")
                self.state = _SUSPENDED
                self._cond.notify_all()
        elif operation == CMQC.MQOP_RESUME:
            with self._cond:
                if self.state == _STOPPED:
                    raise _fail(CMQC.MQRC_OPERATION_NOT_ALLOWED, "the connection is stopped: MQOP_START it")
                self.state = _STARTED
                self._cond.notify_all()
                blocking = self._waiting_mode and not self._on_consumer_thread()
            if blocking:  # IBM: after a START_WAIT that returned suspended, RESUME blocks
                self._consume_here()
        else:
            raise _fail(CMQC.MQRC_OPERATION_ERROR, f"MQCTL operation {operation} is not valid")

    def _begin(self, ctlo: CTLO | None) -> None:
        if self.state == _SUSPENDED:
            raise _fail(CMQC.MQRC_OPERATION_NOT_ALLOWED, "the connection is suspended: MQOP_RESUME it")
        self.connection_area = ctlo.ConnectionArea if ctlo is not None else 0
        self.state = _STARTED
        self._stop = False
        for callback in self.consumers.values():
            self._restart_wait(callback)

    def _start(self, ctlo: CTLO | None) -> None:
        with self._cond:
            if self.state == _STARTED:
                return
            self._begin(ctlo)
            self._waiting_mode = False
            self._thread = threading.Thread(target=self._run_thread, name=f"mqcb-{self.qmgr.get_handle()}",
                                            daemon=True)
            self._thread.start()
            # the consumer thread is known before START returns, so that the gate is exact
            self._cond.wait_for(lambda: self._consumer_thread is not None, timeout=10)

    def _start_wait(self, ctlo: CTLO | None) -> None:
        with self._cond:
            if self._on_consumer_thread():
                raise _fail(CMQC.MQRC_ENVIRONMENT_ERROR, "MQOP_START_WAIT inside a callback")
            if self.state != _STOPPED:
                raise _fail(CMQC.MQRC_OPERATION_NOT_ALLOWED, "the connection is already started or suspended")
            if not any(not c.suspended for c in self.consumers.values()):
                raise _fail(CMQC.MQRC_NO_CALLBACKS_ACTIVE, "no registered consumer is active")
            self._begin(ctlo)
            self._waiting_mode = True
        self._consume_here()

    def _consume_here(self) -> None:
        """START_WAIT (and its RESUME): the caller's thread is the consumer thread until the end."""
        with self._cond:
            self._consumer_thread = threading.get_ident()
        outcome = self._loop()
        if outcome == "suspended":
            raise _fail(CMQC.MQRC_CONNECTION_SUSPENDED, "the connection was suspended", CMQC.MQCC_WARNING)
        if outcome == "no consumers":
            raise _fail(CMQC.MQRC_NO_CALLBACKS_ACTIVE, "no registered consumer is active")

    def stop(self) -> None:
        """MQOP_STOP: from a callback it takes effect when the callback returns; from another
        thread it returns once the consumer thread has finished its callback and stopped."""
        with self._cond:
            if self.state == _STOPPED:
                return
            self._stop = True
            self._cond.notify_all()
            thread = self._thread
        if self._on_consumer_thread() or thread is None:
            return
        thread.join()

    def shutdown(self) -> None:
        """Before MQDISC: stop, and deregister every callback (with their DEREGISTER_CALLs)."""
        self.stop()
        with self._cond:
            for hobj in list(self.consumers):
                self.closed(hobj)
            if self.event_handler is not None and self.event_handler.options & CMQC.MQCBDO_DEREGISTER_CALL:
                self._call(self.event_handler, CMQC.MQCBCT_DEREGISTER_CALL)
            self.event_handler = None

    # ---- the consumer thread -------------------------------------------------------------

    def _run_thread(self) -> None:
        with self._cond:
            self._consumer_thread = threading.get_ident()
            self._cond.notify_all()
        self._loop()

    def _loop(self) -> str:
        """Consume until stopped; the outcome: "stopped", "suspended" or "no consumers"."""
        for callback in list(self.consumers.values()):
            if callback.options & CMQC.MQCBDO_START_CALL:
                self._call(callback, CMQC.MQCBCT_START_CALL)
        outcome = "stopped"
        while True:
            with self._cond:
                if self._stop:
                    break
                if self.state == _SUSPENDED:
                    if self._waiting_mode:
                        return "suspended"  # the connection stays suspended; RESUME or STOP follows
                    self._cond.wait()
                    continue
                active = [c for c in self.consumers.values() if not c.suspended]
                if not active:
                    if self._waiting_mode:
                        outcome = "no consumers"  # an implicit STOP
                        break
                    self._cond.wait()
                    continue
                self._turn = (self._turn + 1) % len(active)
                callback = active[self._turn]
            if not self._consume_one(callback, slice_ms=SLICE_MS if len(active) == 1 else SLICE_MS // len(active)):
                outcome = "stopped"
                break
        with self._cond:
            for callback in list(self.consumers.values()):
                if callback.options & CMQC.MQCBDO_STOP_CALL:
                    self._call(callback, CMQC.MQCBCT_STOP_CALL)
            self.state = _STOPPED
            self._stop = False
            self._consumer_thread = None
            self._thread = None
            self._cond.notify_all()
        return outcome

    def _restart_wait(self, callback: _Callback) -> None:
        gmo = callback.gmo
        waits = gmo.Options & CMQC.MQGMO_WAIT and gmo.WaitInterval != CMQC.MQWI_UNLIMITED
        callback.deadline = time.monotonic() + gmo.WaitInterval / 1000 if waits else None
        callback.empty_reported = False

    def _consume_one(self, callback: _Callback, slice_ms: int) -> bool:
        """One MQGET for ``callback`` and the call it leads to; False when consumption must end."""
        gmo = GMO(**callback.gmo.get())
        md = MD(**callback.md.get())
        unlimited = gmo.Options & CMQC.MQGMO_WAIT and gmo.WaitInterval == CMQC.MQWI_UNLIMITED
        if callback.deadline is not None:
            remaining_ms = max(0, int((callback.deadline - time.monotonic()) * 1000))
        else:
            remaining_ms = slice_ms
        gmo.Options |= CMQC.MQGMO_WAIT
        gmo.WaitInterval = max(1, min(slice_ms, remaining_ms)) if not unlimited else slice_ms
        try:
            msg = callback.queue.get(callback.max_length, md, gmo)
        except MQMIError as exc:
            return self._failed_get(callback, exc, md, gmo)
        self._restart_wait(callback)
        browse = callback.gmo.Options & (CMQC.MQGMO_BROWSE_FIRST | CMQC.MQGMO_BROWSE_NEXT)
        gmo.Options, gmo.WaitInterval = callback.gmo.Options, callback.gmo.WaitInterval
        if browse and callback.gmo.Options & CMQC.MQGMO_BROWSE_FIRST:
            # the next turn browses on from this message, as a browse consumer does
            callback.gmo.Options = callback.gmo.Options & ~CMQC.MQGMO_BROWSE_FIRST | CMQC.MQGMO_BROWSE_NEXT
        self._call(callback, CMQC.MQCBCT_MSG_NOT_REMOVED if browse else CMQC.MQCBCT_MSG_REMOVED,
                   md=md, gmo=gmo, msg=msg)
        return True

    def _failed_get(self, callback: _Callback, exc: MQMIError, md: MD, gmo: GMO) -> bool:
        if exc.reason == CMQC.MQRC_NO_MSG_AVAILABLE:
            if callback.deadline is not None and time.monotonic() >= callback.deadline:
                self._restart_wait(callback)
                self._call(callback, CMQC.MQCBCT_EVENT_CALL, reason=exc.reason, comp=exc.comp)
            elif not callback.gmo.Options & CMQC.MQGMO_WAIT and not callback.empty_reported:
                callback.empty_reported = True
                self._call(callback, CMQC.MQCBCT_EVENT_CALL, reason=exc.reason, comp=exc.comp)
            return True
        if exc.reason in CONNECTION_REASONS:
            targets = [self.event_handler] if self.event_handler is not None else list(self.consumers.values())
            for target in targets:
                self._call(target, CMQC.MQCBCT_EVENT_CALL, reason=exc.reason, comp=exc.comp)
            return False
        if exc.comp == CMQC.MQCC_WARNING and exc.original_data is not None:  # e.g. truncated, accepted
            self._call(callback, CMQC.MQCBCT_MSG_REMOVED, md=md, gmo=gmo, msg=exc.original_data,
                       reason=exc.reason, comp=exc.comp)
            return True
        callback.suspended = True  # a failure of this consumer only: suspended until RESUME
        self._call(callback, CMQC.MQCBCT_EVENT_CALL, reason=exc.reason, comp=exc.comp)
        return True

    def _call(self, callback: _Callback, call_type: int, *, md: MD | None = None, gmo: GMO | None = None,
              msg: bytes | None = None, reason: int = CMQC.MQRC_NONE, comp: int = CMQC.MQCC_OK) -> None:
        """Call one callback as ibmmq does: keywords queue_manager, queue, md, gmo, msg, cbc."""
        queue = callback.queue
        cbc = CBC(CallType=call_type, Hobj=queue._hobj if queue is not None and queue._hobj else 0,
                  CallbackArea=callback.area, ConnectionArea=self.connection_area, CompCode=comp, Reason=reason,
                  State=CMQC.MQCS_SUSPENDED if callback.suspended else CMQC.MQCS_NONE,
                  DataLength=len(msg) if msg is not None else 0, BufferLength=len(msg) if msg is not None else 0,
                  CallbackFunction=callback.function)
        try:
            callback.function(queue_manager=self.qmgr, queue=queue, md=md if md is not None else MD(),
                              gmo=gmo if gmo is not None else GMO(), msg=msg, cbc=cbc)
        except Exception:  # a callback's failure must not end the consumer thread
            log.exception("asynchronous consume: the callback raised")


def of(qmgr: Any) -> AsyncConsume:
    """The asynchronous-consume state of a synchronous QueueManager, made on first use."""
    if qmgr._consume is None:
        qmgr._consume = AsyncConsume(qmgr)
    return qmgr._consume
