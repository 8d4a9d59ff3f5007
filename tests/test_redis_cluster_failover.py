"""A Redis Cluster master killed (SIGKILL) under load, with replicas and ``QSG_CF_REPLICA_ACKS=1``:
nothing committed is lost and the other masters' structures keep serving.

Three masters with one replica each, two real queue managers over real HTTP, persistent
put+commit / get+commit load (tests/support/faultload.py) on a shared queue of structure A and one
of structure B, on two different masters. The master of A is killed mid-load; its replica takes
over (cluster-node-timeout 1 s, far below the 8 s heartbeat lease). Every message whose MQCMIT
answered OK is got exactly once (calls that failed in doubt - 2345, no answer - excused), B's
clients saw no failure at all, and no queue manager lost its lease (the group's records and the
queue managers' private queues live on a master that is not killed: the test picks the names).

Without the replica acknowledgement a failover may lose acknowledged work (asynchronous
replication); that is probabilistic, so no test asserts it.
"""

from __future__ import annotations

import re
import threading
import time

import httpx
import redis

from app.cf import keys
from tests.support.cluster import Cluster
from tests.support.faultload import FaultLoad, Observer
from tests.support.redis_cluster import RedisClusterServer
from tests.support.waits import wait_until

QSG = "QSG1"
QA, QB = "FAILOVER.A", "FAILOVER.B"
ENV = {
    # the lease is far longer than a failover (cluster-node-timeout 1 s + election): no QM may lapse
    "QSG_HEARTBEAT_INTERVAL_S": "0.5", "QSG_HEARTBEAT_TTL_S": "8",
    # abandoned connections (a client reconnects after a failed call) back out soon
    "QSG_IDLE_TIMEOUT_S": "2",
    "QSG_CF_REPLICA_ACKS": "1",
    # after the failover A's new master has no replica: each of its writes waits this long, then goes on
    "QSG_CF_REPLICA_TIMEOUT_MS": "300",
}


class Failures(Observer):
    """Every failed MQI call of a load (but the routine 2033 of a get that waited in vain)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.failed: list[tuple[str, float, int | str]] = []

    def call(self, verb: str, start: float, end: float, failure: int | str | None) -> None:
        if failure is not None and not (verb == "GET" and failure == 2033):
            with self.lock:
                self.failed.append((verb, end, failure))


def master_port(cl: RedisClusterServer, tag: str) -> int:
    return cl.node_of_key(keys.structure_prefix(tag) + "x").port


def placement(cl: RedisClusterServer) -> tuple[list[str], str, str]:
    """Two queue manager names whose private queues share the master of the group's records, and
    structures A (on another master: the one killed) and B (on the third master)."""
    records = master_port(cl, QSG)  # the group's records: {QSG1}
    names = [f"Q{c}" for c in "ABCDEFGHIJKLMNOPRSTUVWXYZ"]
    qms = [n for n in names if master_port(cl, keys.private_tag(QSG, n)) == records][:2]
    by_master: dict[int, str] = {}
    for i in range(1, 200):
        name = f"APPL{i}"
        by_master.setdefault(master_port(cl, keys.shared_tag(QSG, name)), name)
    others = sorted(p for p in by_master if p != records)
    assert len(qms) == 2 and len(others) == 2, (qms, by_master)
    return qms, by_master[others[0]], by_master[others[1]]


def replica_of(cl: RedisClusterServer, port: int) -> int:
    """The port of the replica of the master on ``port``."""
    admin = redis.Redis(port=port)
    try:
        my_id = admin.execute_command("CLUSTER", "MYID").decode()
        (line, *_more) = admin.execute_command("CLUSTER", "REPLICAS", my_id)
    finally:
        admin.close()
    return int(line.decode().split()[1].split("@")[0].rsplit(":", 1)[1])


def metric(group: Cluster, qm: str, name: str) -> dict[str, float]:
    """The samples of metric ``name`` on ``qm`` as {labels text: value}."""
    text = httpx.get(f"{group.url(qm)}/metrics", timeout=10).text
    return {m.group(1) or "": float(m.group(2))
            for m in re.finditer(rf"^{name}(\{{[^}}]*\}})? (\S+)$", text, re.MULTILINE)}


def members(group: Cluster, qm: str) -> dict[str, tuple[str, int]]:
    listed = httpx.get(f"{group.url(qm)}/v1/qmgr", timeout=10).json()["members"]
    return {m["QMNAME"]: (m["STATUS"], m["INCARNATION"]) for m in listed}


def waits_run(port: int) -> int:
    """How many WAIT commands the node on ``port`` ran (INFO commandstats)."""
    client = redis.Redis(port=port)
    try:
        return int(client.info("commandstats").get("cmdstat_wait", {}).get("calls", 0))
    finally:
        client.close()


def committed(load: FaultLoad) -> int:
    with load.lock:
        return len(load.committed_puts) + len(load.committed_gets)


def test_a_master_killed_under_load_loses_nothing_committed_and_the_others_keep_serving(tmp_path):
    with RedisClusterServer(3, replicas=1) as cl:
        qms, struct_a, struct_b = placement(cl)
        group = Cluster(cl.url, f"sqlite:///{tmp_path / 'qsg.db'}", tmp_path, extra_env=ENV)
        group.redis_server = cl
        load_a = FaultLoad(group, struct=struct_a, batch=3)
        seen_b = Failures()
        load_b = FaultLoad(group, struct=struct_b, batch=3, observer=seen_b)
        try:
            group.start(qms)
            qm1, qm2 = qms
            group.mqsc_ok(qm1, f"DEFINE CFSTRUCT({struct_a}) CFLEVEL(5) RECOVER(YES)\n"
                               f"DEFINE CFSTRUCT({struct_b}) CFLEVEL(5) RECOVER(YES)\n"
                               f"DEFINE QLOCAL({QA}) QSGDISP(SHARED) CFSTRUCT({struct_a}) DEFPSIST(YES)\n"
                               f"DEFINE QLOCAL({QB}) QSGDISP(SHARED) CFSTRUCT({struct_b}) DEFPSIST(YES)")
            before = members(group, qm1)
            victim = next(n for n in cl.nodes if n.port == master_port(cl, keys.shared_tag(QSG, struct_a)))
            heir = replica_of(cl, victim.port)

            load_a.start(producers=[(qm1, QA), (qm2, QA)], consumers=[(qm2, QA), (qm1, QA)])
            load_b.start(producers=[(qm1, QB), (qm2, QB)], consumers=[(qm2, QB), (qm1, QB)])
            wait_until(lambda: committed(load_a) >= 60 and committed(load_b) >= 60, 30, "the load under way")

            cl.kill(victim)  # SIGKILL mid-load
            killed_at = time.monotonic()
            b_before = committed(load_b)
            wait_until(lambda: master_port(cl, keys.shared_tag(QSG, struct_a)) == heir, 30,
                       "the replica taking over A's slot", every_s=0.1)
            took_over = time.monotonic()
            # A serves again through its new master; B went on all along
            a_after = committed(load_a)
            wait_until(lambda: committed(load_a) >= a_after + 12, 30, "A's load resuming after the failover")
            assert committed(load_b) > b_before, "B's load stalled during A's failover"
        finally:
            load_a.stop()
            load_b.stop()
        try:
            outcome_a = load_a.settle_and_check()
            outcome_b = load_b.settle_and_check()
            after = members(group, qm1)
            recoveries = {qm: metric(group, qm, "qsg_peer_recoveries_total") for qm in qms}
            shortfalls = {qm: metric(group, qm, "qsg_cf_replica_shortfalls_total") for qm in qms}
            waits_b = waits_run(master_port(cl, keys.shared_tag(QSG, struct_b)))
        finally:
            group.stop()

    for name, outcome in (("A", outcome_a), ("B", outcome_b)):
        assert outcome.committed_puts >= 30, f"{name}: too little work to mean anything: {outcome.summary()}"
        assert not outcome.missing, f"{name}: committed messages lost: {outcome.summary()}"
        assert not outcome.duplicates, f"{name}: delivered twice: {outcome.summary()}"
        assert not outcome.unexpected, f"{name}: delivered though not committed: {outcome.summary()}"
        assert outcome.ok, f"{name}: {outcome.summary()}"
    # B's clients saw no failure while A failed over (or at any other time)
    assert not seen_b.failed, f"B's calls failed: {seen_b.failed[:5]} (kill at {killed_at:.1f}, over {took_over:.1f})"
    # no lease lapsed: the same incarnations, all ACTIVE, no peer recovery anywhere
    assert after == before and all(status == "ACTIVE" for status, _ in after.values()), (before, after)
    assert all(not any(r.values()) for r in recoveries.values()), recoveries
    for qm in qms:
        assert "CSQE016E" not in group.qms[qm].log() and "CSQE011I" not in group.qms[qm].log()
    # the replica acknowledgement was in force: B's master ran a WAIT for each of B's writes, and A's
    # new master, with no replica left, fell short (logged, counted, and done all the same)
    assert waits_b >= outcome_b.committed_puts, (waits_b, outcome_b.summary())
    assert any(v for s in shortfalls.values() for k, v in s.items() if struct_a in k), shortfalls
