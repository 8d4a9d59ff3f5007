"""Event switches and ALTER (docs/ibm-rules.md §1.4 and §2.2): an ALTER that
names one event switch changes that switch only, never the ones the queue manager toggled
itself when an event fired; an ALTER does not restart the service timer.

The switches: real queue-manager processes over real HTTP. The service timer: the real apps
in this process (``inprocess_group``, requests through HTTP/ASGI) on one ``ManualClock``, since
what is measured is time."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from app.core.clock import ManualClock
from app.qmgr.events import EVENT_QUEUE
from tests.support.inproc import inprocess_group
from tests.support.mq import MQ, MQFailed
from tests.support.names import uniq


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1)")
    for qm in ("QM1", "QM2"):
        g.mqsc_ok(qm, "ALTER QMGR PERFMEV(ENABLED)")
    return g


def switches(group, q: str, qm: str = "QM1") -> tuple[str, str, str, str]:
    (res,) = group.mqsc_ok(qm, f"DISPLAY QLOCAL({q}) QDPHIEV QDPLOEV QDPMAXEV QSVCIEV")
    o = res["objects"][0]
    return o["QDPHIEV"], o["QDPLOEV"], o["QDPMAXEV"], o["QSVCIEV"]


@pytest.mark.parametrize("disp", ["QSGDISP(QMGR)", "QSGDISP(SHARED) CFSTRUCT(APPL1)"])
def test_alter_of_one_switch_keeps_the_ones_the_queue_manager_toggled(group, disp):
    q = uniq("EVQ")
    sd = disp.split()[0]  # ALTER names the QSGDISP
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) {disp} MAXDEPTH(10) QDEPTHHI(20) QDEPTHLO(10) "
                         "QDPHIEV(ENABLED) QDPLOEV(DISABLED) QDPMAXEV(DISABLED) QSVCIEV(NONE)")
    mq = MQ(group.url("QM1"))
    h = mq.open(q, ["OUTPUT"])
    mq.put(h, "one")
    mq.put(h, "two")  # depth 2 reaches 20% of 10: Queue Depth High; the QM toggles the switches
    assert switches(group, q) == ("DISABLED", "ENABLED", "ENABLED", "NONE")
    group.mqsc_ok("QM1", f"ALTER QLOCAL({q}) {sd} QSVCIEV(HIGH)")  # names one switch: that one only
    assert switches(group, q) == ("DISABLED", "ENABLED", "ENABLED", "HIGH")
    group.mqsc_ok("QM1", f"ALTER QLOCAL({q}) {sd} QDPMAXEV(DISABLED)")
    assert switches(group, q) == ("DISABLED", "ENABLED", "DISABLED", "HIGH")
    group.mqsc_ok("QM1", f"ALTER QLOCAL({q}) {sd} QDPHIEV(ENABLED) QDPLOEV(DISABLED)")  # both named: both set
    assert switches(group, q) == ("ENABLED", "DISABLED", "DISABLED", "HIGH")
    mq.put(h, "three")  # Queue Depth High again (depth 3 >= 2): the switch set by ALTER is live
    assert switches(group, q) == ("DISABLED", "ENABLED", "ENABLED", "HIGH")


# ---- the service timer --------------------------------------------------------------------

T0 = 1_750_000_000_000


async def perfm_events(qm: Any, mq: Any) -> list[dict[str, Any]]:
    """The event messages on QM1's SYSTEM.ADMIN.PERFM.EVENT now (taken off)."""
    await qm.events.drain()
    h = await mq.open(EVENT_QUEUE, ["INPUT_SHARED"])
    out = []
    while True:
        try:
            out.append(orjson.loads((await mq.get(h))["data"]))
        except MQFailed as exc:
            assert exc.reason == 2033
            return out


async def test_alter_does_not_restart_the_service_timer(redis_url, tmp_path):
    """Put to an empty queue at T0 (the timer starts), ALTERs at T0+6s of the interval and of
    the switch (already HIGH), a get at T0+11s: 11s > QSVCINT 10s, a Queue Service Interval
    High event - the ALTERs did not restart the timer (from them it would be 5s)."""
    clock = ManualClock(T0)
    async with inprocess_group(["QM1"], redis_url, tmp_path, clock, activity_enabled=False) as qms:
        qm1 = qms["QM1"]
        await qm1.mqsc("ALTER QMGR PERFMEV(ENABLED)\nDEFINE QLOCAL(SVC.Q) QSVCINT(10000) QSVCIEV(HIGH)")
        mq = await qm1.connect("APP")
        out, inp = await mq.open("SVC.Q", ["OUTPUT"]), await mq.open("SVC.Q", ["INPUT_SHARED"])
        await mq.put(out, "a")
        await mq.put(out, "b")
        clock.advance(6_000)
        await qm1.mqsc("ALTER QLOCAL(SVC.Q) QSVCINT(10000) QSVCIEV(HIGH)\nALTER QLOCAL(SVC.Q) DESCR('x')")
        clock.advance(5_000)
        await mq.get(inp)
        assert [e["reason"] for e in await perfm_events(qm1.qm, mq)] == [2226]  # MQRC_Q_SERVICE_INTERVAL_HIGH

        # Enabling the event where it was NONE starts the timer now, messages waiting (docs/ibm-rules.md §1.4:
        # the timer is active while the queue has messages and the event is enabled).
        await qm1.mqsc("ALTER QLOCAL(SVC.Q) QSVCIEV(NONE)")
        clock.advance(60_000)
        await qm1.mqsc("ALTER QLOCAL(SVC.Q) QSVCIEV(HIGH)")
        clock.advance(4_000)
        await mq.get(inp)  # 4s since the event was enabled: within the interval, no High event
        assert await perfm_events(qm1.qm, mq) == []
