"""Trigger conditions of docs/ibm-rules.md §3 on one queue manager (private queues), condition
by condition, on a real queue manager run in-process (real Redis and SQLite)."""

from __future__ import annotations

import orjson
import pytest

from app.api import wire
from app.api.schemas import PutRequest
from app.core.errors import MQError
from tests.support.inproc import App, mqsc

SETUP = """
DEFINE PROCESS(PAYPROC) APPLICID('/usr/bin/payroll') APPLTYPE(UNIX) ENVRDATA('env') USERDATA('user data')
DEFINE QLOCAL(INITQ)
DEFINE QLOCAL(APP) TRIGGER TRIGTYPE(FIRST) INITQ(INITQ) PROCESS(PAYPROC) TRIGDATA('pay run')
"""


@pytest.fixture
async def setup(qm):  # noqa: F811
    await mqsc(qm, SETUP)
    app = await App.connect(qm)
    monitor = await App.connect(qm)
    initq = await monitor.open("INITQ", ["INPUT_SHARED"])  # a trigger monitor holds it open (condition 8)
    return qm, app, monitor, initq


async def triggers(monitor: App, initq: str) -> list[dict]:
    """Trigger messages now on the initiation queue (taken off)."""
    out = []
    while True:
        try:
            m = await monitor.get(initq)
        except MQError as exc:
            assert exc.reason == 2033
            return out
        assert m["md"]["format"] == "MQTRIG" and m["md"]["expiry"] == -1
        out.append(orjson.loads(m["data"]))


async def empty(app: App, queue: str) -> None:
    """Take every message off and close again (an open input handle would stop triggering)."""
    h = await app.open(queue, ["INPUT_SHARED"])
    await app.drain(h)
    await app.qm.mqi.close(app.hconn, h)


async def put(app: App, queue: str, n: int = 1, **md) -> None:
    h = await app.open(queue, ["OUTPUT"])
    for i in range(n):
        await app.put(h, f"m{i}", **md)


async def test_first_triggers_when_the_queue_was_empty(setup):
    qm, app, monitor, initq = setup
    await put(app, "APP")
    (tm,) = await triggers(monitor, initq)
    assert tm == {"StrucId": "TM  ", "Version": 1, "QName": "APP", "ProcessName": "PAYPROC",
                  "TriggerData": "pay run", "ApplType": 6, "ApplId": "/usr/bin/payroll", "EnvData": "env",
                  "UserData": "user data"}
    await put(app, "APP", 3)  # not previously empty, TRIGINT not passed (condition 11)
    assert await triggers(monitor, initq) == []
    await empty(app, "APP")
    await put(app, "APP")
    assert len(await triggers(monitor, initq)) == 1


async def test_condition_2_trigger_message_priority(setup):
    qm, app, monitor, initq = setup
    await mqsc(qm, "ALTER QLOCAL(APP) TRIGMPRI(5)")
    await put(app, "APP", 3, priority=3)  # below TRIGMPRI: they do not count
    assert await triggers(monitor, initq) == []
    await put(app, "APP", priority=6)  # the count of messages that count goes 0 -> 1
    assert len(await triggers(monitor, initq)) == 1


async def test_every_and_depth(setup):
    qm, app, monitor, initq = setup
    await mqsc(qm, "ALTER QLOCAL(APP) TRIGTYPE(EVERY)")
    await put(app, "APP", 3)
    assert len(await triggers(monitor, initq)) == 3
    await mqsc(qm, "DEFINE QLOCAL(DEEP) TRIGGER TRIGTYPE(DEPTH) TRIGDPTH(3) INITQ(INITQ) PROCESS(PAYPROC)")
    await put(app, "DEEP", 2)
    assert await triggers(monitor, initq) == []
    await put(app, "DEEP")
    assert [t["QName"] for t in await triggers(monitor, initq)] == ["DEEP"]
    (res,) = await mqsc(qm, "DISPLAY QLOCAL(DEEP)")
    assert res["objects"][0]["TRIGGER"] == "NOTRIGGER"  # the QM turned triggering off
    await put(app, "DEEP", 3)
    assert await triggers(monitor, initq) == []


async def test_condition_4_open_input_count(setup):
    qm, app, monitor, initq = setup
    server = await App.connect(qm)
    h = await server.open("APP", ["INPUT_SHARED"])
    await put(app, "APP")
    assert await triggers(monitor, initq) == []  # a server has it open for input
    await server.qm.mqi.close(server.hconn, h)  # condition 12: the only server closes, a message waits
    assert len(await triggers(monitor, initq)) == 1


async def test_condition_5_and_13_get_inhibit_lifted(setup):
    qm, app, monitor, initq = setup
    await mqsc(qm, "ALTER QLOCAL(APP) GET(DISABLED)")
    await put(app, "APP")
    assert await triggers(monitor, initq) == []
    await mqsc(qm, "ALTER QLOCAL(APP) GET(ENABLED)")
    assert len(await triggers(monitor, initq)) == 1


async def test_condition_6_process_and_transmission_queue(setup):
    qm, app, monitor, initq = setup
    await mqsc(qm, "DEFINE QLOCAL(NOPROC) TRIGGER INITQ(INITQ)\n"
                   "DEFINE QLOCAL(BADPROC) TRIGGER INITQ(INITQ) PROCESS(NO.SUCH.PROCESS)\n"
                   "DEFINE QLOCAL(XMIT) USAGE(XMITQ) TRIGGER INITQ(INITQ) TRIGDATA('CHL.TO.QM9')")
    await put(app, "NOPROC")
    await put(app, "BADPROC")
    assert await triggers(monitor, initq) == []
    await put(app, "XMIT")
    (tm,) = await triggers(monitor, initq)
    assert (tm["QName"], tm["ProcessName"], tm["TriggerData"], tm["ApplType"], tm["ApplId"]) == \
        ("XMIT", "", "CHL.TO.QM9", -1, "")


async def test_condition_7_initiation_queue_and_13_put_inhibit_lifted(setup):
    qm, app, monitor, initq = setup
    await mqsc(qm, "DEFINE QLOCAL(NOINIT) TRIGGER INITQ(NO.SUCH.INITQ) PROCESS(PAYPROC)\n"
                   "ALTER QLOCAL(INITQ) PUT(DISABLED)")
    await put(app, "NOINIT")
    await put(app, "APP")
    assert await triggers(monitor, initq) == []
    await mqsc(qm, "ALTER QLOCAL(INITQ) PUT(ENABLED)")  # one trigger message per such queue
    assert [t["QName"] for t in await triggers(monitor, initq)] == ["APP"]
    await mqsc(qm, "DEFINE QLOCAL(XINIT) USAGE(XMITQ)\n"
                   "DEFINE QLOCAL(APP3) TRIGGER INITQ(XINIT) PROCESS(PAYPROC)")
    xinit = await monitor.open("XINIT", ["INPUT_SHARED"])
    await put(app, "APP3")
    assert await triggers(monitor, xinit) == []  # an initiation queue must be USAGE(NORMAL)


async def test_condition_8_and_13_monitor_opens_the_initiation_queue(qm):  # noqa: F811
    await mqsc(qm, SETUP + "DEFINE QLOCAL(APP2) TRIGGER TRIGTYPE(EVERY) INITQ(INITQ) PROCESS(PAYPROC)")
    app = await App.connect(qm)
    await put(app, "APP")
    await put(app, "APP2", 2)
    monitor = await App.connect(qm)
    initq = await monitor.open("INITQ", ["INPUT_SHARED"])  # nobody had it open: no trigger messages yet
    names = sorted(t["QName"] for t in await triggers(monitor, initq))
    assert names == ["APP", "APP2"]  # one per queue, even for EVERY with two messages (note 1)


async def test_conditions_9_10_and_13_trigger_turned_on(setup):
    qm, app, monitor, initq = setup
    await mqsc(qm, "ALTER QLOCAL(APP) NOTRIGGER")
    await put(app, "APP", 2)
    assert await triggers(monitor, initq) == []
    await mqsc(qm, "ALTER QLOCAL(APP) TRIGGER")
    assert len(await triggers(monitor, initq)) == 1
    await mqsc(qm, "ALTER QLOCAL(APP) TRIGTYPE(NONE)")
    await empty(app, "APP")
    await put(app, "APP")
    assert await triggers(monitor, initq) == []
    h = await app.open("APP", ["SET"])  # MQSET changing TRIGTYPE with a message waiting
    await qm.mqi.set(app.hconn, h, {"TRIGTYPE": "FIRST"})
    assert len(await triggers(monitor, initq)) == 1


async def test_condition_11_trigger_interval(setup):
    qm, app, monitor, initq = setup
    await mqsc(qm, "ALTER QMGR TRIGINT(0)")
    await put(app, "APP")
    await put(app, "APP")  # not previously empty, and the interval (0 ms) has passed
    assert len(await triggers(monitor, initq)) == 2


async def test_condition_14_fifo_queue_uses_the_default_priority(setup):
    qm, app, monitor, initq = setup
    await mqsc(qm, "DEFINE QLOCAL(FIFO.HI) MSGDLVSQ(FIFO) DEFPRTY(3) TRIGGER TRIGMPRI(4) INITQ(INITQ) "
                   "PROCESS(PAYPROC)\n"
                   "DEFINE QLOCAL(FIFO.LO) MSGDLVSQ(FIFO) DEFPRTY(3) TRIGGER TRIGMPRI(3) INITQ(INITQ) PROCESS(PAYPROC)")
    await put(app, "FIFO.HI", priority=9)  # priority ignored: the queue's 3 is below TRIGMPRI 4
    await put(app, "FIFO.LO", priority=0)
    assert [t["QName"] for t in await triggers(monitor, initq)] == ["FIFO.LO"]


async def test_units_of_work(setup):
    qm, app, monitor, initq = setup
    h = await app.open("APP", ["OUTPUT"])
    await qm.mqi.put(app.hconn, h, wire.put_call(PutRequest(data="x", options=["SYNCPOINT"])))
    assert await triggers(monitor, initq) == []  # not available until the unit of work ends
    await qm.mqi.backout(app.hconn)
    assert len(await triggers(monitor, initq)) == 1  # FIRST: made available on backout too
    await mqsc(qm, "ALTER QLOCAL(APP) TRIGTYPE(EVERY)")
    await qm.mqi.put(app.hconn, h, wire.put_call(PutRequest(data="y", options=["SYNCPOINT"])))
    await qm.mqi.backout(app.hconn)
    assert await triggers(monitor, initq) == []  # EVERY: nothing on backout
    await qm.mqi.put(app.hconn, h, wire.put_call(PutRequest(data="z", options=["SYNCPOINT"])))
    await qm.mqi.commit(app.hconn)
    assert len(await triggers(monitor, initq)) == 1
