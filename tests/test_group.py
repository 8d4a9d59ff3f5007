"""A real group: membership, peer recovery after kill -9, clean stop and restart, quiescing."""

from __future__ import annotations

import subprocess
import sys
import threading

import httpx
import pytest

from tests.support.cluster import FAST
from tests.support.mq import MQ, MQFailed, mq_reason
from tests.support.mqsc import shared_q
from tests.support.names import uniq
from tests.support.redis_server import free_port
from tests.support.waits import wait_until

# On one redis-server and on a 3-master Redis Cluster (tests/conftest.py).
pytestmark = pytest.mark.group_suite


def members(url: str) -> dict[str, str]:
    return {m["QMNAME"]: m["STATUS"] for m in httpx.get(f"{url}/v1/qmgr", timeout=10).json()["members"]}


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2", "QM3"], env=FAST)
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    return g


def test_members_are_listed_and_names_are_unique(group):
    assert members(group.url("QM1")) == {"QM1": "ACTIVE", "QM2": "ACTIVE", "QM3": "ACTIVE"}
    (res,) = group.mqsc_ok("QM2", "DISPLAY GROUP")
    assert {(o["QMNAME"], o["STATUS"]) for o in res["objects"]} == {("QM1", "ACTIVE"), ("QM2", "ACTIVE"),
                                                                    ("QM3", "ACTIVE")}
    env = {**group.qms["QM1"].env, "QSG_PORT": str(free_port())}
    out = subprocess.run([sys.executable, "-m", "app.cli", "serve"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and "QM1 is already active" in out.stderr


def test_kill_9_mid_unit_of_work_under_load_loses_and_duplicates_nothing(group):
    q = shared_q(group, prefix="GRP")
    loader, victim_qm = MQ(group.url("QM1"), "LOADER"), MQ(group.url("QM2"), "VICTIM")
    out1 = loader.open(q, ["OUTPUT"])
    for i in range(10):
        loader.put(out1, f"committed-{i}")
    # QM2 takes four messages and puts two more, all under syncpoint, and never commits.
    h2 = victim_qm.open(q, ["INPUT_SHARED", "OUTPUT"])
    taken = [victim_qm.get(h2, ["SYNCPOINT"])["data"] for _ in range(4)]
    for i in range(2):
        victim_qm.put(h2, f"uncommitted-{i}", options=["SYNCPOINT"])
    # Load on QM1 while QM2 dies: more committed puts, concurrently.
    stop = threading.Event()
    extra: list[str] = []

    def produce() -> None:
        mq = MQ(group.url("QM1"), "LOAD2")
        h = mq.open(q, ["OUTPUT"])
        i = 0
        while not stop.is_set() and i < 200:
            mq.put(h, f"load-{i}")
            extra.append(f"load-{i}")
            i += 1

    t = threading.Thread(target=produce)
    t.start()
    group.qms["QM2"].kill()
    wait_until(lambda: members(group.url("QM1"))["QM2"] == "FAILED", what="QM2 seen FAILED")
    stop.set()
    t.join()
    # Peer recovery returns the four messages to their place; a getter on QM3 waits for them.
    reader = MQ(group.url("QM3"), "READER")
    h3 = reader.open(q, ["INPUT_SHARED"])
    got: dict[str, int] = {}
    while True:
        try:
            m = reader.get(h3, ["WAIT", "NO_SYNCPOINT"], wait_ms=8000)
        except MQFailed as exc:
            assert exc.reason == 2033
            break
        assert m["data"] not in got, f"duplicate {m['data']}"
        got[m["data"]] = m["md"]["backout_count"]
    expected = {f"committed-{i}" for i in range(10)} | set(extra)
    assert set(got) == expected  # every committed message once; the uncommitted puts are gone
    assert {d: got[d] for d in taken} == {d: 1 for d in taken}  # backed out once, even with two survivors
    assert all(n == 0 for d, n in got.items() if d not in taken)
    status = group.mqsc_ok("QM1", f"DISPLAY QSTATUS({q})")[0]["objects"]
    assert "QM2" not in {o["QMNAME"] for o in status}  # the dead QM's open counts are cleared
    # QM2 restarts under its own name and is active again
    group.qms["QM2"].start()
    assert members(group.url("QM3"))["QM2"] == "ACTIVE"


def test_restart_resolves_own_private_units_of_work(group):
    q = uniq("PRIV")
    group.mqsc_ok("QM3", f"DEFINE QLOCAL({q})")
    mq = MQ(group.url("QM3"))
    h = mq.open(q, ["INPUT_SHARED", "OUTPUT"])
    # persistent: a restart discards the nonpersistent messages of private queues (z/OS)
    mq.put(h, "keep me", md={"persistence": "PERSISTENT"})
    assert mq.get(h, ["SYNCPOINT"])["data"] == "keep me"
    mq.put(h, "never committed", options=["SYNCPOINT"])
    group.qms["QM3"].kill()
    group.qms["QM3"].start()
    again = MQ(group.url("QM3"))
    h = again.open(q, ["INPUT_SHARED"])
    m = again.get(h)
    assert (m["data"], m["md"]["backout_count"]) == ("keep me", 1)
    with mq_reason(2033):
        again.get(h)


def test_clean_stop_leaves_nothing_for_peer_recovery_and_quiesces_waiters(group):
    q = shared_q(group, prefix="GRP")
    feeder = MQ(group.url("QM1"))
    hf = feeder.open(q, ["OUTPUT"])
    feeder.put(hf, "held at shutdown")
    on3 = MQ(group.url("QM3"))
    h3 = on3.open(q, ["INPUT_SHARED"])
    assert on3.get(h3, ["SYNCPOINT"])["data"] == "held at shutdown"
    waiter = MQ(group.url("QM3"))
    hw = waiter.open(q, ["INPUT_SHARED"])
    outcome: list[object] = []

    def wait_get() -> None:
        try:
            outcome.append(waiter.get(hw, ["WAIT", "NO_SYNCPOINT", "FAIL_IF_QUIESCING"], wait_ms=60_000))
        except MQFailed as exc:
            outcome.append(exc)

    t = threading.Thread(target=wait_get)
    t.start()
    group.wait_for_waiter(q)  # the get is waiting in the coupling facility
    group.qms["QM3"].stop()
    t.join(timeout=30)
    assert isinstance(outcome[0], MQFailed) and outcome[0].reason == 2161, outcome
    assert members(group.url("QM1"))["QM3"] == "STOPPED"
    # QM3 backed out its own unit of work at shutdown: the message is back at once
    m = feeder.get(feeder.open(q, ["INPUT_SHARED"]))
    assert (m["data"], m["md"]["backout_count"]) == ("held at shutdown", 1)
    group.qms["QM3"].start()
    assert members(group.url("QM1"))["QM3"] == "ACTIVE"
