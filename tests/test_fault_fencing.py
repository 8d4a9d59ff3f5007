"""Fencing of a queue manager that lost its place in the group (docs/design.md principle 3), with real
`qsg serve` processes, a real Redis and real faults, all on loopback and bounded in time.

A QM whose heartbeat lease lapsed - paused (SIGSTOP), partitioned from Redis, or cut off by a
Redis outage - is recovered by a peer: its incarnation is fenced in every CF structure and its
units of work are backed out. When it comes back, its clients see MQCMIT answer 2003
(MQRC_BACKED_OUT) for work that was backed out and 2009 (MQRC_CONNECTION_BROKEN) for other
calls on their old connections; the QM rejoins as a new incarnation and serves new connections.
While Redis cannot be reached, calls answer 2345 (MQRC_CF_NOT_AVAILABLE), never 2373.
Also: a QM killed during commits that span two CF structures (all or nothing per unit of work),
a QM killed during intra-group queuing (exactly once on the target queue), and the fault soak
(tests/support/faultload.py) through a pause and a partition.

Every wait is a bounded poll; each scenario has its own group (``make_fresh_cluster``), torn
down after it even when it fails mid-fault (paused QMs resumed, partitions healed). The file
runs in about a minute on two cores.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable

import httpx

from app.core.igq import IGQ_XMITQ
from tests.support.cluster import FAST, Cluster
from tests.support.faultload import FaultLoad, commit_in_doubt
from tests.support.mq import MQ, MQFailed, mq_reason
from tests.support.mqsc import define_shared
from tests.support.waits import wait_until

IDLE_S = 3
ENV = {**FAST, "QSG_IDLE_TIMEOUT_S": str(IDLE_S)}
TTL_S = float(FAST["QSG_HEARTBEAT_TTL_S"])
#: How long a fault lasts: well past the lease, so a peer has time to recover the victim.
FAULT_S = TTL_S + 2.0
PERSISTENT = {"persistence": "PERSISTENT"}


# ---- helpers ---------------------------------------------------------------------------------

# What a poll of a QM in the middle of a fault may meet before the awaited state: "not yet".
TRANSIENT = (httpx.HTTPError, MQFailed, KeyError, ValueError)


def member(group: Cluster, asked: str, name: str) -> dict:
    """Queue manager ``name`` as queue manager ``asked`` lists it (GET /v1/qmgr members)."""
    members = httpx.get(f"{group.url(asked)}/v1/qmgr", timeout=5).json()["members"]
    return next(m for m in members if m["QMNAME"] == name)


def await_peer_recovery(group: Cluster, survivor: str, victim: str, timeout_s: float = 20) -> None:
    """Until ``survivor`` lists ``victim`` as FAILED and RECOVERED YES."""
    def recovered() -> bool:
        m = member(group, survivor, victim)
        return m["STATUS"] == "FAILED" and m["RECOVERED"] == "YES"
    wait_until(recovered, timeout_s, f"{survivor} recovering {victim}", tolerate=TRANSIENT)


def serves(group: Cluster, qm: str, queue: str) -> bool:
    """A new connection on ``qm`` can put and get back a message (true once it serves again)."""
    mq = MQ(group.url(qm), "PROBE")
    try:
        h = mq.open(queue, ["OUTPUT", "INPUT_SHARED"])
        tag = f"probe-{uuid.uuid4().hex[:8]}"
        mq.put(h, tag, md={"correl_id": "ab" * 24})
        got = mq.get(h, ["WAIT", "NO_SYNCPOINT"], wait_ms=2000, match={"correl_id": "ab" * 24})
        mq.disconnect()
        return got["data"] == tag
    finally:
        mq.http.close()


def await_serving(group: Cluster, qm: str, queue: str, timeout_s: float = 30) -> None:
    wait_until(lambda: serves(group, qm, queue), timeout_s, f"{qm} serving again", every_s=0.3, tolerate=TRANSIENT)


def drain(group: Cluster, qm: str, queue: str, qmgr: str = "") -> list[str]:
    """Every message on ``queue`` now (a short wait lets in-flight deliveries land)."""
    mq = MQ(group.url(qm), "DRAIN")
    h = mq.open(queue, ["INPUT_SHARED"], qmgr=qmgr)
    out = []
    while True:
        try:
            out.append(mq.get(h, ["WAIT", "NO_SYNCPOINT"], wait_ms=500)["data"])
        except MQFailed as exc:
            assert exc.reason == 2033, exc.body
            break
    mq.disconnect()
    return out


def reason_of(call: Callable[[], object]) -> int | str:
    """The MQ reason a call failed with, "ok" when it did not fail, or the transport error's name."""
    try:
        call()
    except MQFailed as exc:
        return int(exc.reason)
    except httpx.HTTPError as exc:
        return type(exc).__name__
    return "ok"


def uow_in_flight(group: Cluster, q: str) -> tuple[MQ, str]:
    """The issue's unit of work on QM2: M (put beforehand on QM1) got under syncpoint, and P put
    under syncpoint; returns (the QM2 connection, its object handle)."""
    seed = MQ(group.url("QM1"), "SEED")
    seed.put(seed.open(q, ["OUTPUT"]), "M", md=PERSISTENT)
    seed.disconnect()
    c2 = MQ(group.url("QM2"), "VICTIM")
    h2 = c2.open(q, ["INPUT_SHARED", "OUTPUT"])
    assert c2.get(h2, ["SYNCPOINT"])["data"] == "M"
    c2.put(h2, "P", md=PERSISTENT, options=["SYNCPOINT"])
    return c2, h2


def get_m_on_qm1(group: Cluster, q: str) -> None:
    """A getter on QM1 gets M (back on the queue after the peer recovery) and commits."""
    getter = MQ(group.url("QM1"), "SURVIVOR")
    h = getter.open(q, ["INPUT_SHARED"])
    assert getter.get(h, ["WAIT", "SYNCPOINT"], wait_ms=10_000)["data"] == "M"
    getter.commit()
    getter.disconnect()


def assert_old_work_fenced(group: Cluster, q: str, c2: MQ, h2: str) -> None:
    """After the victim is back: its MQCMIT answers 2003, its old hconn answers 2009, M was
    delivered once (QM1's get), P is nowhere, and the victim serves new connections."""
    with mq_reason(2003):
        c2.commit()
    with mq_reason(2009):
        c2.put(h2, "late", options=["NO_SYNCPOINT"])
    await_serving(group, "QM2", q)
    assert drain(group, "QM1", q) == [], "M delivered twice, or P committed by a fenced QM"


# ---- the scenarios -----------------------------------------------------------------------------


def test_paused_qm_cannot_commit_after_its_peer_recovered_it(make_fresh_cluster):
    group = make_fresh_cluster(["QM1", "QM2"], env=ENV)
    q = "FENCE.PAUSE"
    define_shared(group, ("APPL1", q))
    c2, h2 = uow_in_flight(group, q)
    group.qms["QM2"].pause()
    try:
        await_peer_recovery(group, "QM1", "QM2")
        get_m_on_qm1(group, q)
    finally:
        group.qms["QM2"].resume()
    assert_old_work_fenced(group, q, c2, h2)
    members = {m["QMNAME"]: m for m in httpx.get(f"{group.url('QM1')}/v1/qmgr", timeout=5).json()["members"]}
    assert members["QM2"]["STATUS"] == "ACTIVE" and members["QM2"]["RECOVERED"] == "NO"  # a new incarnation

    # The rejoined incarnation runs its agents again: intra-group queuing to QM2 delivers.
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({IGQ_XMITQ}) QSGDISP(SHARED) CFSTRUCT(APPL1) USAGE(XMITQ)")
    group.mqsc_ok("QM2", "DEFINE QLOCAL(FENCE.PRIVATE)")
    for qm in ("QM1", "QM2"):
        group.mqsc_ok(qm, "ALTER QMGR IGQ(ENABLED)")
    MQ(group.url("QM1"), "IGQ").put1("FENCE.PRIVATE", "through IGQ after the rejoin", qmgr="QM2")
    reader = MQ(group.url("QM2"), "READER")
    got = reader.get(reader.open("FENCE.PRIVATE", ["INPUT_SHARED"]), ["WAIT", "NO_SYNCPOINT"], wait_ms=15_000)
    assert got["data"] == "through IGQ after the rejoin"


def test_partitioned_qm_answers_2345_and_is_fenced_after_the_heal(make_fresh_cluster):
    group = make_fresh_cluster(["QM1", "QM2"], env=ENV, proxied=["QM2"])
    q = "FENCE.PARTITION"
    define_shared(group, ("APPL1", q))
    c2, h2 = uow_in_flight(group, q)
    other = MQ(group.url("QM2"), "OTHER")
    h_other = other.open(q, ["OUTPUT"])
    proxy = group.proxies["QM2"]
    proxy.partition()
    try:
        during = reason_of(lambda: other.put(h_other, "during", options=["NO_SYNCPOINT"]))
        assert during in (2345, 2009), f"a call during the partition answered {during}"
        await_peer_recovery(group, "QM1", "QM2")
        get_m_on_qm1(group, q)
    finally:
        proxy.heal()
    assert_old_work_fenced(group, q, c2, h2)


def test_redis_outage_past_the_ttl_backs_out_both_units_of_work(make_fresh_cluster):
    group = make_fresh_cluster(["QM1", "QM2"], env=ENV, aof=True)
    q = "FENCE.OUTAGE"
    define_shared(group, ("APPL1", q))
    seed = MQ(group.url("QM1"), "SEED")
    seed.put(seed.open(q, ["OUTPUT"]), "M", md=PERSISTENT)
    seed.disconnect()
    c1 = MQ(group.url("QM1"), "UOW1")
    h1 = c1.open(q, ["OUTPUT"])
    c1.put(h1, "P1", md=PERSISTENT, options=["SYNCPOINT"])
    c2 = MQ(group.url("QM2"), "UOW2")
    h2 = c2.open(q, ["INPUT_SHARED", "OUTPUT"])
    assert c2.get(h2, ["SYNCPOINT"])["data"] == "M"
    c2.put(h2, "P2", md=PERSISTENT, options=["SYNCPOINT"])
    probe = MQ(group.url("QM1"), "PROBE")
    hp = probe.open(q, ["OUTPUT"])

    group.redis_server.stop()
    outage_end = time.monotonic() + FAULT_S
    try:
        during = reason_of(lambda: probe.put(hp, "during", options=["NO_SYNCPOINT"]))
        assert during == 2345, f"a call while Redis is down answered {during}"
        time.sleep(max(0.0, outage_end - time.monotonic()))  # the fault's length, past the TTL
    finally:
        group.redis_server.start()
    for qm in group.qms.values():
        qm.wait_ready(timeout_s=30)

    with mq_reason(2003):
        c1.commit()
    with mq_reason(2003):
        c2.commit()
    for qm in ("QM1", "QM2"):
        await_serving(group, qm, q)
    assert drain(group, "QM1", q) == ["M"], "M must be there once, P1 and P2 never"


def test_kill_during_commits_across_two_structures_is_all_or_nothing(make_fresh_cluster):
    group = make_fresh_cluster(["QM1", "QM2"], env=ENV)
    qa, qb = "FENCE.TWO.A", "FENCE.TWO.B"
    define_shared(group, ("APPL1", qa), ("APPL2", qb))
    committed: set[str] = set()
    in_doubt: set[str] = set()
    in_commit = threading.Event()
    stop = threading.Event()
    lock = threading.Lock()

    def client(cid: int) -> None:
        mq = MQ(group.url("QM2"), f"TWO{cid}")
        mq.http.timeout = httpx.Timeout(10)
        try:
            ha, hb = mq.open(qa, ["OUTPUT"]), mq.open(qb, ["OUTPUT"])
            for i in range(2000):  # bounded; the kill ends it long before
                if stop.is_set():
                    return
                key = f"{cid}-{i}"
                mq.put(ha, key, md=PERSISTENT, options=["SYNCPOINT"])
                mq.put(hb, key, md=PERSISTENT, options=["SYNCPOINT"])
                in_commit.set()
                try:
                    mq.commit()
                except (MQFailed, httpx.HTTPError) as exc:
                    if commit_in_doubt(exc):
                        with lock:
                            in_doubt.add(key)
                    return
                with lock:
                    committed.add(key)
        except (MQFailed, httpx.HTTPError):
            return
        finally:
            mq.http.close()

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(3)]
    for t in threads:
        t.start()
    try:
        wait_until(lambda: len(committed) >= 30, 30, "30 two-structure units of work committed", every_s=0.02,
                   tolerate=TRANSIENT)
        in_commit.clear()
        assert in_commit.wait(5), "no MQCMIT started"
        group.qms["QM2"].kill()  # an MQCMIT request is on its way or being served
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=15)
    await_peer_recovery(group, "QM1", "QM2")
    a, b = Counter(drain(group, "QM1", qa)), Counter(drain(group, "QM1", qb))
    assert max(a.values(), default=1) == 1 and max(b.values(), default=1) == 1, "delivered twice"
    assert set(a) == set(b), f"half-committed units of work: {sorted(set(a) ^ set(b))[:5]}"
    assert committed <= set(a), f"committed but lost: {sorted(committed - set(a))[:5]}"
    assert set(a) <= committed | in_doubt, f"never committed, yet there: {sorted(set(a) - committed - in_doubt)[:5]}"


def test_kill_during_igq_transfer_delivers_each_committed_message_once(make_fresh_cluster):
    env = ENV  # the IGQ retry intervals are IBM's fixed ones, not settings
    group = make_fresh_cluster(["QM1", "QM2"], env=env)
    group.mqsc_ok("QM1", f"DEFINE CFSTRUCT(APPL1) RECOVER(YES)\n"
                         f"DEFINE QLOCAL({IGQ_XMITQ}) QSGDISP(SHARED) CFSTRUCT(APPL1) USAGE(XMITQ)")
    group.mqsc_ok("QM2", "DEFINE QLOCAL(DEST.QM2) DEFPSIST(YES)")
    for qm in ("QM1", "QM2"):
        group.mqsc_ok(qm, "ALTER QMGR IGQ(ENABLED)")

    def agent_running() -> bool:
        return httpx.get(f"{group.url('QM2')}/v1/qmgr", timeout=5).json()["IGQAGENT"] == "RUNNING"

    wait_until(agent_running, 20, "QM2's IGQ agent running", tolerate=TRANSIENT)
    committed: list[str] = []
    in_doubt: set[str] = set()
    stop = threading.Event()

    def producer() -> None:
        mq = MQ(group.url("QM1"), "IGQLOAD")
        try:
            h = mq.open("DEST.QM2", ["OUTPUT"], qmgr="QM2")
            for i in range(3000):  # bounded; stopped well before
                if stop.is_set():
                    return
                key = f"0-{i}"
                mq.put(h, key, md=PERSISTENT, options=["SYNCPOINT"])
                try:
                    mq.commit()
                except (MQFailed, httpx.HTTPError) as exc:
                    if commit_in_doubt(exc):
                        in_doubt.add(key)
                    raise
                committed.append(key)
        finally:
            mq.http.close()

    thread = threading.Thread(target=producer, daemon=True)
    thread.start()
    try:
        wait_until(lambda: len(committed) >= 40, 30, "40 messages committed for QM2", every_s=0.02, tolerate=TRANSIENT)
        group.qms["QM2"].kill()  # its IGQ agent is moving messages from the shared xmitq
        n_at_kill = len(committed)
        wait_until(lambda: len(committed) >= n_at_kill + 40, 30, "QM1 putting on while QM2 is down", every_s=0.05,
                   tolerate=TRANSIENT)
        group.qms["QM2"].start()
        wait_until(agent_running, 30, "QM2's IGQ agent running after the restart", tolerate=TRANSIENT)
        wait_until(lambda: len(committed) >= n_at_kill + 80, 30, "more messages after the restart", every_s=0.05,
                   tolerate=TRANSIENT)
    finally:
        stop.set()
        thread.join(timeout=30)
    receiver = MQ(group.url("QM2"), "RECEIVER")
    h = receiver.open("DEST.QM2", ["INPUT_SHARED"])
    got: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # until everything committed has arrived, then 1 s quiet
        try:
            got.append(receiver.get(h, ["WAIT", "NO_SYNCPOINT"], wait_ms=1000)["data"])
        except MQFailed as exc:
            assert exc.reason == 2033, exc.body
            if set(committed) <= set(got):
                break
    counts = Counter(got)
    assert not [k for k, n in counts.items() if n > 1], \
        f"delivered twice: {[k for k, n in counts.items() if n > 1][:5]}"
    assert set(committed) <= set(got), f"committed but not delivered: {sorted(set(committed) - set(got))[:5]}"
    assert set(got) <= set(committed) | in_doubt, f"never committed: {sorted(set(got) - set(committed))[:5]}"


def test_fault_soak_through_a_pause_and_a_partition(make_fresh_cluster):
    group = make_fresh_cluster(["QM1", "QM2"], env=ENV, proxied=["QM2"])
    q = "FENCE.SOAK"
    define_shared(group, ("APPL1", q))
    load = FaultLoad(group, batch=2)
    load.start(producers=[(qm, q) for qm in ("QM1", "QM2") * 2], consumers=[(qm, q) for qm in ("QM2", "QM1")])
    victim, proxy = group.qms["QM2"], group.proxies["QM2"]
    try:
        wait_until(lambda: len(load.committed_puts) >= 20, 20, "load running", tolerate=TRANSIENT)
        victim.pause()
        time.sleep(FAULT_S)  # the fault's length: past the TTL
        victim.resume()
        victim.wait_ready(timeout_s=30)
        n = len(load.committed_puts)
        wait_until(lambda: len(load.committed_puts) >= n + 20, 30, "load after the pause", tolerate=TRANSIENT)
        proxy.partition()
        time.sleep(FAULT_S)
        proxy.heal()
        victim.wait_ready(timeout_s=30)
        n = len(load.committed_puts)
        wait_until(lambda: len(load.committed_puts) >= n + 20, 30, "load after the partition", tolerate=TRANSIENT)
    finally:
        victim.resume()
        proxy.heal()
        load.stop()
    outcome = load.settle_and_check(timeout_s=30)
    assert outcome.committed_puts > 50, "the soak did too little work to mean anything"
    assert outcome.ok, outcome.summary()

