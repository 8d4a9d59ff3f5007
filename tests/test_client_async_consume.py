"""Asynchronous consume (MQCB / MQCTL) as IBM's ibmmq programs use it, against real queue
managers: a consumer registered on a queue of QM2 gets what QM1 puts, the event handler and the
2033 event calls, the 2500 gate while started, START_WAIT ended by a callback, the state errors
(2534, 2446, 2448) and closing a queue deregistering its consumer. Waits are events with bounds."""

from __future__ import annotations

import queue as stdqueue
import threading

import pytest

import app.client as pymqi
from app.client import CMQC
from tests.support.mqsc import shared_q
from tests.support.pymqi_group import connections, reason_of

BOUND_S = 15


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    return g


@pytest.fixture
def connect(group):
    yield from connections(group)


class Recorder:
    """A callback that records each call (call type, reason, message) and hands it to the test."""

    def __init__(self, on_call=None):
        self.calls: stdqueue.Queue = stdqueue.Queue()
        self.threads: set[int] = set()  # where the message calls ran
        self.on_call = on_call

    def __call__(self, *, queue_manager, queue, md, gmo, msg, cbc):
        if msg is not None:
            self.threads.add(threading.get_ident())
        self.calls.put((cbc.CallType, cbc.Reason, msg, cbc.CallbackArea, cbc.ConnectionArea))
        if self.on_call is not None:
            self.on_call(queue_manager=queue_manager, queue=queue, md=md, gmo=gmo, msg=msg, cbc=cbc)

    def next(self):
        return self.calls.get(timeout=BOUND_S)


def _put(qmgr, q, body):
    pymqi.Queue(qmgr, q, CMQC.MQOO_OUTPUT).put(body, pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))


def test_consumer_gets_what_another_qm_puts_and_the_gate_holds_while_started(group, connect):
    q = shared_q(group)
    writer, reader = connect("QM1"), connect("QM2")
    consumer = Recorder()
    inq = pymqi.Queue(reader, q, CMQC.MQOO_INPUT_SHARED)
    cbd = pymqi.CBD(CallbackFunction=consumer, CallbackArea=b"area",
                    Options=CMQC.MQCBDO_REGISTER_CALL | CMQC.MQCBDO_START_CALL | CMQC.MQCBDO_STOP_CALL)
    inq.cb(operation=CMQC.MQOP_REGISTER, cbd=cbd, md=pymqi.MD(),
           gmo=pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT | CMQC.MQGMO_WAIT, WaitInterval=CMQC.MQWI_UNLIMITED))
    assert consumer.next()[:2] == (CMQC.MQCBCT_REGISTER_CALL, 0)
    reader.ctl(CMQC.MQOP_START, pymqi.CTLO(ConnectionArea=b"conn"))
    assert consumer.next()[0] == CMQC.MQCBCT_START_CALL

    for body in (b"one", b"two"):
        _put(writer, q, body)
    got = [consumer.next(), consumer.next()]
    assert [(c[0], c[2]) for c in got] == [(CMQC.MQCBCT_MSG_REMOVED, b"one"), (CMQC.MQCBCT_MSG_REMOVED, b"two")]
    assert got[0][3:] == (b"area", b"conn")
    # messages are delivered on the connection's own thread (the REGISTER_CALL came on ours)
    assert consumer.threads and threading.get_ident() not in consumer.threads

    # while started, the program's own calls are refused - but STOP is not
    assert reason_of(lambda: inq.get(None, pymqi.MD(), pymqi.GMO())).reason == CMQC.MQRC_HCONN_ASYNC_ACTIVE
    assert reason_of(reader.commit).reason == CMQC.MQRC_HCONN_ASYNC_ACTIVE
    reader.ctl(CMQC.MQOP_STOP, pymqi.CTLO())
    assert consumer.next()[0] == CMQC.MQCBCT_STOP_CALL
    _put(writer, q, b"after stop")
    assert inq.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_WAIT, WaitInterval=5000)) == b"after stop"
    assert consumer.calls.empty()  # stopped: the message was the program's, not the consumer's


def test_wait_interval_events_and_start_wait_ended_by_the_callback(group, connect):
    q = shared_q(group)
    qmgr = connect("QM2")

    def stop_on_second_event(*, queue_manager, cbc, **_):
        if cbc.CallType == CMQC.MQCBCT_EVENT_CALL and len(events) == 2:
            queue_manager.ctl(CMQC.MQOP_STOP)  # from a callback: takes effect when it returns

    events: list[tuple[int, int]] = []
    consumer = Recorder(lambda **kw: (events.append((kw["cbc"].CallType, kw["cbc"].Reason)),
                                      stop_on_second_event(**kw)))
    inq = pymqi.Queue(qmgr, q, CMQC.MQOO_INPUT_SHARED)
    inq.cb(operation=CMQC.MQOP_REGISTER, cbd=pymqi.CBD(CallbackFunction=consumer),
           gmo=pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT, WaitInterval=100))
    qmgr.ctl(CMQC.MQOP_START_WAIT, pymqi.CTLO())  # returns when the callback stopped the connection
    assert events == [(CMQC.MQCBCT_EVENT_CALL, CMQC.MQRC_NO_MSG_AVAILABLE)] * 2
    qmgr.commit()  # stopped: calls are the program's again


def test_state_errors_and_close_deregisters(group, connect):
    q = shared_q(group)
    qmgr = connect("QM2")
    assert reason_of(lambda: qmgr.ctl(CMQC.MQOP_RESUME, pymqi.CTLO())).reason == CMQC.MQRC_OPERATION_NOT_ALLOWED
    assert reason_of(lambda: qmgr.ctl(CMQC.MQOP_SUSPEND, pymqi.CTLO())).reason == CMQC.MQRC_OPERATION_NOT_ALLOWED
    assert reason_of(lambda: qmgr.ctl(CMQC.MQOP_START_WAIT, pymqi.CTLO())).reason == CMQC.MQRC_NO_CALLBACKS_ACTIVE
    inq = pymqi.Queue(qmgr, q, CMQC.MQOO_INPUT_SHARED)
    assert reason_of(lambda: inq.cb(operation=CMQC.MQOP_DEREGISTER)).reason == CMQC.MQRC_CALLBACK_NOT_REGISTERED
    assert reason_of(lambda: inq.cb(operation=CMQC.MQOP_REGISTER, cbd=pymqi.CBD(CallbackFunction=1))).reason \
        == CMQC.MQRC_CALLBACK_ROUTINE_ERROR
    assert reason_of(lambda: inq.cb(operation=CMQC.MQOP_REGISTER,
                                    cbd=pymqi.CBD(CallbackFunction=print, CallbackType=9))).reason \
        == CMQC.MQRC_CALLBACK_TYPE_ERROR
    consumer = Recorder()
    inq.cb(operation=CMQC.MQOP_REGISTER, cbd=pymqi.CBD(CallbackFunction=consumer,
                                                       Options=CMQC.MQCBDO_DEREGISTER_CALL),
           gmo=pymqi.GMO(Options=CMQC.MQGMO_WAIT, WaitInterval=CMQC.MQWI_UNLIMITED))
    qmgr.ctl(CMQC.MQOP_START, pymqi.CTLO())
    qmgr.ctl(CMQC.MQOP_SUSPEND, pymqi.CTLO())
    assert reason_of(lambda: qmgr.ctl(CMQC.MQOP_START, pymqi.CTLO())).reason == CMQC.MQRC_OPERATION_NOT_ALLOWED
    assert reason_of(lambda: inq.close()).reason == CMQC.MQRC_HCONN_ASYNC_ACTIVE  # suspended is still started
    qmgr.ctl(CMQC.MQOP_STOP, pymqi.CTLO())
    inq.close()
    assert consumer.next()[0] == CMQC.MQCBCT_DEREGISTER_CALL
    # with its only consumer gone, START_WAIT has nothing to run
    assert reason_of(lambda: qmgr.ctl(CMQC.MQOP_START_WAIT, pymqi.CTLO())).reason == CMQC.MQRC_NO_CALLBACKS_ACTIVE


def test_event_handler_hears_a_broken_connection(group, connect):
    q = shared_q(group)
    writer, qmgr = connect("QM1"), connect("QM2")
    handler, consumer = Recorder(), Recorder()
    qmgr.cb(operation=CMQC.MQOP_REGISTER, cbd=pymqi.CBD(CallbackFunction=handler,
                                                        CallbackType=CMQC.MQCBT_EVENT_HANDLER))
    inq = pymqi.Queue(qmgr, q, CMQC.MQOO_INPUT_SHARED)
    inq.cb(operation=CMQC.MQOP_REGISTER, cbd=pymqi.CBD(CallbackFunction=consumer),
           gmo=pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT, WaitInterval=CMQC.MQWI_UNLIMITED))
    qmgr.ctl(CMQC.MQOP_START, pymqi.CTLO())
    _put(writer, q, b"m")
    assert consumer.next()[2] == b"m"
    # the queue manager ends the connection under the consumer: the event handler is told
    qmgr._session.close()
    call_type, reason, *_ = handler.next()
    assert call_type == CMQC.MQCBCT_EVENT_CALL
    assert reason == CMQC.MQRC_CONNECTION_BROKEN
    assert consumer.calls.empty()  # an event handler exists: the consumers are not told
    assert reason_of(qmgr.disconnect).reason == CMQC.MQRC_CONNECTION_BROKEN  # stopped: MQDISC is let through


def test_disconnect_from_outside_stops_a_started_connection(group, connect):
    qmgr = connect("QM2")
    consumer = Recorder()
    inq = pymqi.Queue(qmgr, shared_q(group), CMQC.MQOO_INPUT_SHARED)
    inq.cb(operation=CMQC.MQOP_REGISTER, cbd=pymqi.CBD(CallbackFunction=consumer,
                                                       Options=CMQC.MQCBDO_STOP_CALL | CMQC.MQCBDO_DEREGISTER_CALL),
           gmo=pymqi.GMO(Options=CMQC.MQGMO_WAIT, WaitInterval=CMQC.MQWI_UNLIMITED))
    qmgr.ctl(CMQC.MQOP_START, pymqi.CTLO())
    qmgr.disconnect()  # MQDISC is allowed while started: it stops first
    assert [consumer.next()[0], consumer.next()[0]] == [CMQC.MQCBCT_STOP_CALL, CMQC.MQCBCT_DEREGISTER_CALL]
    assert not qmgr.is_connected
