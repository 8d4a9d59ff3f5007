"""Queue depth events on a shared queue across three queue managers (docs/ibm-rules.md §2): QM1 and QM2
have PERFMEV(ENABLED), QM3 DISABLED."""

from __future__ import annotations

import threading

import orjson
import pytest

from tests.support.mq import MQ, MQFailed
from tests.support.mqsc import mqsc_keywords, shared_q

# On one redis-server and on a 3-master Redis Cluster (tests/conftest.py).
pytestmark = pytest.mark.group_suite

EVENTQ = "SYSTEM.ADMIN.PERFM.EVENT"


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2", "QM3"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1)\nALTER QMGR PERFMEV(ENABLED)")
    g.mqsc_ok("QM2", "ALTER QMGR PERFMEV(ENABLED)")
    return g


def shared_queue(group, **attrs) -> str:
    """A shared queue with this module's depth-event defaults (``attrs`` override them)."""
    given = {"MAXDEPTH": 10, "QDEPTHHI": 50, "QDEPTHLO": 20, "QDPHIEV": "ENABLED", "QDPLOEV": "DISABLED",
             "QDPMAXEV": "DISABLED", **attrs}
    return shared_q(group, mqsc_keywords(**given), prefix="EV")


def take_events(group, qm: str, queue: str, n: int, wait_ms: int = 8000) -> list[dict]:
    """n event messages about ``queue`` from a QM's event queue (waiting for them), and then
    proof that no other one about it is there."""
    mq = MQ(group.url(qm))
    h = mq.open(EVENTQ, ["INPUT_SHARED", "BROWSE"])
    out = []
    while len(out) < n:
        m = mq.get(h, ["WAIT", "NO_SYNCPOINT"], wait_ms=wait_ms, match=None)
        body = orjson.loads(m["data"])
        if body["parameters"]["QName"] == queue:
            out.append({"correl_id": m["md"]["correl_id"], **body})
    leftovers = []
    try:
        while True:
            m = mq.get(h, ["NO_SYNCPOINT"])
            if orjson.loads(m["data"])["parameters"]["QName"] == queue:
                leftovers.append(m)
    except MQFailed as exc:
        assert exc.reason == 2033
    assert leftovers == [], f"{qm} issued more than {n} event message(s) about {queue}"
    return out


def live(group, q: str) -> tuple[str, str, str]:
    obj = group.mqsc_ok("QM2", f"DISPLAY QLOCAL({q})")[0]["objects"][0]
    return obj["QDPHIEV"], obj["QDPLOEV"], obj["QDPMAXEV"]


def test_high_event_coordinated_by_the_crossing_qmgr(group):
    q = shared_queue(group)
    qm2, qm1 = MQ(group.url("QM2")), MQ(group.url("QM1"))
    h2, h1 = qm2.open(q, ["OUTPUT"]), qm1.open(q, ["OUTPUT"])
    qm2.put(h2, "a")
    qm2.put(h2, "b")
    qm1.put(h1, "c")
    qm1.put(h1, "d")
    qm1.put(h1, "e")  # depth 5 = 50% of 10: QM1's put crosses, so QM1 coordinates
    (e1,) = take_events(group, "QM1", q, 1)
    (e2,) = take_events(group, "QM2", q, 1)
    take_events(group, "QM3", q, 0)  # PERFMEV(DISABLED): none
    assert e1["reason"] == e2["reason"] == 2224
    assert e1["correl_id"] == e2["correl_id"] and e1["correl_id"] != "0" * 48
    assert (e1["parameters"]["MsgEnqCount"], e2["parameters"]["MsgEnqCount"]) == (3, 2)  # each its own work
    assert e1["parameters"]["QMgrName"] == "QM1" and e2["parameters"]["QMgrName"] == "QM2"
    assert live(group, q) == ("DISABLED", "ENABLED", "ENABLED")


def test_low_event_with_a_null_event_from_an_idle_qmgr(group):
    q = shared_queue(group)
    qm1 = MQ(group.url("QM1"))
    h = qm1.open(q, ["OUTPUT", "INPUT_SHARED"])
    for i in range(5):
        qm1.put(h, str(i))  # High, coordinated by QM1; QM2 answers with a null event
    (null_high,) = take_events(group, "QM2", q, 1)
    assert null_high["parameters"]["MsgEnqCount"] == 0 and null_high["parameters"]["MsgDeqCount"] == 0
    take_events(group, "QM1", q, 1)
    qm2 = MQ(group.url("QM2"))
    h2 = qm2.open(q, ["INPUT_SHARED"])
    for _ in range(3):
        qm2.get(h2)  # depth 2 = 20%: Low, coordinated by QM2
    (low2,) = take_events(group, "QM2", q, 1)
    (low1,) = take_events(group, "QM1", q, 1)
    assert low1["reason"] == low2["reason"] == 2225 and low1["correl_id"] == low2["correl_id"]
    assert low2["parameters"]["MsgDeqCount"] == 3
    assert (low1["parameters"]["MsgEnqCount"], low1["parameters"]["MsgDeqCount"]) == (0, 0)  # the null event
    assert live(group, q) == ("ENABLED", "DISABLED", "ENABLED")


def test_queue_full_refusal_and_event(group):
    q = shared_queue(group, QDPHIEV="DISABLED", QDPMAXEV="ENABLED")
    qm2 = MQ(group.url("QM2"))
    h = qm2.open(q, ["OUTPUT"])
    for i in range(10):
        qm2.put(h, str(i))
    with pytest.raises(MQFailed) as info:
        qm2.put(h, "one too many")
    assert info.value.reason == 2053 and info.value.status == 409
    (f2,) = take_events(group, "QM2", q, 1)
    (f1,) = take_events(group, "QM1", q, 1)
    assert f1["reason"] == f2["reason"] == 2053 and f1["correl_id"] == f2["correl_id"]
    assert live(group, q) == ("DISABLED", "ENABLED", "DISABLED")


def test_a_disabled_coordinator_issues_nothing_but_the_enabled_others_do(group):
    """docs/ibm-rules.md §2.3: the coordinating QM with PERFMEV(DISABLED) issues no message itself but still
    broadcasts the request; every other active QM with PERFMEV(ENABLED) issues its own (n from
    1 to the number of active QMs), all with the coordinator's CorrelId."""
    q = shared_queue(group)
    qm3 = MQ(group.url("QM3"))
    h = qm3.open(q, ["OUTPUT"])
    for i in range(5):
        qm3.put(h, str(i))
    assert live(group, q) == ("DISABLED", "ENABLED", "ENABLED")  # the switch happened
    (e1,) = take_events(group, "QM1", q, 1)
    (e2,) = take_events(group, "QM2", q, 1)
    take_events(group, "QM3", q, 0, wait_ms=500)
    assert e1["reason"] == e2["reason"] == 2224
    assert e1["correl_id"] == e2["correl_id"] and e1["correl_id"] != "0" * 48
    assert (e1["parameters"]["MsgEnqCount"], e2["parameters"]["MsgEnqCount"]) == (0, 0)  # null events


def test_simultaneous_crossings_give_one_coordinated_set(group):
    # The racers are the PERFMEV(ENABLED) QMs: a crossing on QM3 (disabled) rightly issues nothing.
    q = shared_queue(group, MAXDEPTH=1000, QDEPTHHI=3)  # crossed at depth 30
    barrier = threading.Barrier(6)

    def put_many(qm: str) -> None:
        mq = MQ(group.url(qm))
        h = mq.open(q, ["OUTPUT"])
        barrier.wait()
        for i in range(10):
            mq.put(h, f"{qm}-{i}")

    threads = [threading.Thread(target=put_many, args=(qm,)) for qm in ("QM1", "QM2") * 3]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (e1,) = take_events(group, "QM1", q, 1)
    (e2,) = take_events(group, "QM2", q, 1)
    take_events(group, "QM3", q, 0, wait_ms=500)
    assert e1["correl_id"] == e2["correl_id"] and e1["reason"] == 2224
    assert e1["parameters"]["MsgEnqCount"] + e2["parameters"]["MsgEnqCount"] <= 60
