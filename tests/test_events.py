"""Performance events on one queue manager (docs/ibm-rules.md §1 and §2), in-process with an injected
clock: service interval events step by step, queue depth events and their automatic switching,
the PERFMEV contrast between shared and private queues, RESET QSTATS."""

from __future__ import annotations

import orjson
import pytest

from app.core.errors import MQError
from app.qmgr.events import EVENT_QUEUE
from tests.support.inproc import App, mqsc


async def events(qm, app: App, n: int | None = None) -> list[dict]:
    """The event messages on SYSTEM.ADMIN.PERFM.EVENT: n of them (waiting), or all now."""
    await qm.events.drain()
    h = await app.open(EVENT_QUEUE, ["INPUT_SHARED"])
    out = []
    while n is None or len(out) < n:
        try:
            out.append(await app.get(h))
        except MQError as exc:
            assert exc.reason == 2033 and n is None, f"expected {n} event messages, got {len(out)}"
            break
    return [{"md": m["md"], **(orjson.loads(m["data"]) if m["md"]["format"] == "MQEVENT" else {})} for m in out]


async def attrs(qm, name: str) -> dict:
    (res,) = await mqsc(qm, f"DISPLAY QLOCAL({name})")
    return res["objects"][0]


async def test_event_queue_exists_and_events_are_never_about_it(qm):
    assert (await attrs(qm, EVENT_QUEUE))["QSGDISP"] == "QMGR"
    await mqsc(qm, f"ALTER QMGR PERFMEV(ENABLED)\nALTER QLOCAL({EVENT_QUEUE}) MAXDEPTH(2) QDPHIEV(ENABLED)")
    app = await App.connect(qm)
    h = await app.open(EVENT_QUEUE, ["OUTPUT"])
    await app.put(h, "a")
    await app.put(h, "b")  # crosses 80% of 2: no event message about the event queue itself
    assert [m["md"]["format"] for m in await events(qm, app)] == ["MQSTR", "MQSTR"]


async def test_queue_depth_high_low_full_and_their_switching(qm):
    await mqsc(qm, "ALTER QMGR PERFMEV(ENABLED)\n"
                   "DEFINE QLOCAL(D.Q) MAXDEPTH(10) QDEPTHHI(50) QDEPTHLO(20) QDPHIEV(ENABLED) "
                   "QDPLOEV(DISABLED) QDPMAXEV(DISABLED)")
    app = await App.connect(qm)
    out, inp = await app.open("D.Q", ["OUTPUT"]), await app.open("D.Q", ["INPUT_SHARED"])
    for i in range(4):
        await app.put(out, str(i))
    assert await events(qm, app) == []
    await app.put(out, "5th reaches 50%")
    (high,) = await events(qm, app, 1)
    assert high["reason"] == 2224 and high["reason_name"] == "MQRC_Q_DEPTH_HIGH"
    assert high["md"]["format"] == "MQEVENT" and high["md"]["expiry"] == -1
    assert high["parameters"] == {"QMgrName": "QM1", "QName": "D.Q", "TimeSinceReset": 0,
                                  "HighQDepth": 5, "MsgEnqCount": 5, "MsgDeqCount": 0}
    a = await attrs(qm, "D.Q")
    assert (a["QDPHIEV"], a["QDPLOEV"], a["QDPMAXEV"]) == ("DISABLED", "ENABLED", "ENABLED")
    for i in range(5):
        await app.put(out, f"more {i}")
    with pytest.raises(MQError) as info:
        await app.put(out, "full")
    assert info.value.reason == 2053
    (full,) = await events(qm, app, 1)
    assert full["reason"] == 2053 and full["parameters"]["MsgEnqCount"] == 5  # since the last event
    a = await attrs(qm, "D.Q")
    assert (a["QDPHIEV"], a["QDPLOEV"], a["QDPMAXEV"]) == ("DISABLED", "ENABLED", "DISABLED")
    for _ in range(7):
        await app.get(inp)
    assert await events(qm, app) == []  # depth 3 is above 20% of 10
    await app.get(inp)  # depth 2: reaches the low limit
    (low,) = await events(qm, app, 1)
    assert low["reason"] == 2225 and low["parameters"]["MsgDeqCount"] == 8 and low["parameters"]["HighQDepth"] == 10
    a = await attrs(qm, "D.Q")
    assert (a["QDPHIEV"], a["QDPLOEV"], a["QDPMAXEV"]) == ("ENABLED", "DISABLED", "ENABLED")
    # an ALTER of another attribute leaves the live switches alone
    await mqsc(qm, "ALTER QLOCAL(D.Q) DESCR('still switched')")
    assert (await attrs(qm, "D.Q"))["QDPHIEV"] == "ENABLED"


async def test_private_queue_switches_nothing_while_perfmev_is_disabled(qm):
    await mqsc(qm, "DEFINE QLOCAL(LQ1) MAXDEPTH(10) QDPHIEV(ENABLED) QDPLOEV(DISABLED) QDPMAXEV(DISABLED)\n"
                   "DEFINE QLOCAL(SQ1) QSGDISP(SHARED) CFSTRUCT(APPL1) MAXDEPTH(10) QDPHIEV(ENABLED) "
                   "QDPLOEV(DISABLED) QDPMAXEV(DISABLED)")
    app = await App.connect(qm)
    for q in ("LQ1", "SQ1"):
        h = await app.open(q, ["OUTPUT"])
        for i in range(8):
            await app.put(h, str(i))
    lq, sq = await attrs(qm, "LQ1"), await attrs(qm, "SQ1")
    # the example of docs/ibm-rules.md §2.2: the shared queue switches whatever PERFMEV, the private one does not
    assert (sq["QDPHIEV"], sq["QDPLOEV"], sq["QDPMAXEV"]) == ("DISABLED", "ENABLED", "ENABLED")
    assert (lq["QDPHIEV"], lq["QDPLOEV"], lq["QDPMAXEV"]) == ("ENABLED", "DISABLED", "DISABLED")
    assert await events(qm, app) == []  # and no QM with PERFMEV(DISABLED) issues anything


async def test_depth_low_sees_expiry_discards(qm):
    await mqsc(qm, "ALTER QMGR PERFMEV(ENABLED)\n"
                   "DEFINE QLOCAL(X.Q) MAXDEPTH(10) QDEPTHLO(20) QDPLOEV(ENABLED) QDPHIEV(DISABLED)")
    app = await App.connect(qm)
    h = await app.open("X.Q", ["OUTPUT"])
    for i in range(5):
        await app.put(h, str(i), expiry=10)
    qm.clock.advance(2_000)
    (res,) = await mqsc(qm, "REFRESH QMGR TYPE(EXPIRY) NAME(X.Q)")
    (low,) = await events(qm, app, 1)
    assert low["reason"] == 2225 and low["parameters"]["QName"] == "X.Q"


async def test_service_interval_walkthrough(qm):
    """The algorithm of docs/ibm-rules.md §1 step by step: timer started by a put to an empty queue, reset by
    a get leaving messages, OFF when a get empties the queue; High on the next put or get once
    the interval is exceeded, OK only on a get within it; HIGH/OK flip each other."""
    await mqsc(qm, "ALTER QMGR PERFMEV(ENABLED)\nDEFINE QLOCAL(S.Q) QSVCINT(10000) QSVCIEV(HIGH)")
    app = await App.connect(qm)
    out, inp = await app.open("S.Q", ["OUTPUT"]), await app.open("S.Q", ["INPUT_SHARED"])
    clock = qm.clock
    await app.put(out, "P1")  # put to an empty queue: timer starts
    clock.advance(5_000)
    await app.get(inp)  # within the interval, but only OK events are on after a High: nothing
    assert await events(qm, app) == []
    await app.put(out, "P2")  # empty queue again: timer restarts
    clock.advance(10_000)
    await app.put(out, "P3")  # elapsed == interval: "not generated when equal"
    assert await events(qm, app) == []
    clock.advance(1)
    await app.put(out, "P4")  # now greater than the interval: High on this put
    (high,) = await events(qm, app, 1)
    assert high["reason"] == 2226 and high["reason_name"] == "MQRC_Q_SERVICE_INTERVAL_HIGH"
    assert (await attrs(qm, "S.Q"))["QSVCIEV"] == "OK"
    clock.advance(3_000)
    await app.get(inp)  # a get still measures from the P2 put: 13 s > 10 s, no OK; timer reset
    assert await events(qm, app) == []
    clock.advance(4_000)
    await app.get(inp)  # 4 s since the last get, within the interval: OK event, flips to HIGH
    (ok,) = await events(qm, app, 1)
    assert ok["reason"] == 2227 and (await attrs(qm, "S.Q"))["QSVCIEV"] == "HIGH"
    clock.advance(20_000)
    await app.get(inp)  # empties the queue after 20 s: High, and the timer goes OFF
    (high2,) = await events(qm, app, 1)
    assert high2["reason"] == 2226
    clock.advance(60_000)
    await app.put(out, "P5")  # a put to an empty queue restarts the timer: no event however long
    assert await events(qm, app) == []


async def test_service_interval_none_and_shared_queues_generate_nothing(qm):
    await mqsc(qm, "ALTER QMGR PERFMEV(ENABLED)\nDEFINE QLOCAL(N.Q) QSVCINT(1) QSVCIEV(NONE)\n"
                   "DEFINE QLOCAL(SS.Q) QSGDISP(SHARED) CFSTRUCT(APPL1) QSVCINT(1) QSVCIEV(HIGH)")
    app = await App.connect(qm)
    for q in ("N.Q", "SS.Q"):
        out = await app.open(q, ["OUTPUT"])
        await app.put(out, "a")
        qm.clock.advance(5_000)
        await app.put(out, "b")
        qm.clock.advance(5_000)
        await app.get(await app.open(q, ["INPUT_SHARED"]))
    assert await events(qm, app) == []


async def test_reset_qstats_returns_and_restarts_the_statistics(qm):
    await mqsc(qm, "ALTER QMGR PERFMEV(ENABLED)\n"
                   "DEFINE QLOCAL(R.Q) MAXDEPTH(10) QDEPTHHI(50) QDPHIEV(ENABLED)")
    app = await App.connect(qm)
    out, inp = await app.open("R.Q", ["OUTPUT"]), await app.open("R.Q", ["INPUT_SHARED"])
    for i in range(3):
        await app.put(out, str(i))
    await app.get(inp)
    qm.clock.advance(7_000)
    (res,) = await mqsc(qm, "RESET QSTATS(R.Q)")
    assert res["objects"] == [{"QSTATS": "R.Q", "QSGDISP": "QMGR", "MSGIN": 3, "MSGOUT": 1, "HIQDEPTH": 3,
                               "TIMESINCERESET": 7}]
    qm.clock.advance(2_000)
    for i in range(3):
        await app.put(out, str(i))  # depth 5: High
    (high,) = await events(qm, app, 1)
    # counts since the RESET QSTATS; HighQDepth starts again from the depth at the reset
    assert high["parameters"]["MsgEnqCount"] == 3 and high["parameters"]["MsgDeqCount"] == 0
    assert high["parameters"]["HighQDepth"] == 5 and high["parameters"]["TimeSinceReset"] == 2
