"""Soak with faults (bounded, loopback): connections on all three queue managers put and get
persistent messages under syncpoint while one QM is killed (kill -9) and restarted and Redis
(AOF, fsync always) is restarted. Every message whose MQCMIT succeeded is delivered exactly once
and nothing is left in limbo."""

from __future__ import annotations

import threading
import time

import httpx

from tests.mqclient import MQ, MQFailed
from tests.test_group import FAST, wait_until

Q = "SOAK.FAULTS"


def test_committed_persistent_messages_survive_qm_kills_and_a_redis_restart(make_cluster):
    # Clients that lose a call reconnect and abandon the old connection: it ends after the idle
    # timeout, backing out its unit of work (API.md), so keep that short here.
    group = make_cluster(["QM1", "QM2", "QM3"], env={**FAST, "QSG_IDLE_TIMEOUT_S": "2"}, aof=True)
    group.mqsc_ok("QM1", f"DEFINE CFSTRUCT(APPL1) RECOVER(YES)\nDEFINE QLOCAL({Q}) QSGDISP(SHARED) CFSTRUCT(APPL1) DEFPSIST(YES)")
    stop = threading.Event()
    lock = threading.Lock()
    committed_puts: set[str] = set()
    uncertain_puts: set[str] = set()  # the commit call itself failed: in doubt, at most once
    committed_gets: list[str] = []
    uncertain_gets: set[str] = set()  # got, but the commit call failed: it may have committed

    def producer(qm: str, pid: int) -> None:
        seq = 0
        while not stop.is_set():
            try:
                mq = MQ(group.url(qm), f"P{pid}")
                h = mq.open(Q, ["OUTPUT"])
                while not stop.is_set():
                    batch = [f"{pid}-{seq + i}" for i in range(3)]
                    seq += 3
                    for data in batch:
                        mq.put(h, data, options=["SYNCPOINT"])
                    try:
                        mq.commit()
                    except (MQFailed, httpx.HTTPError):
                        with lock:
                            uncertain_puts.update(batch)
                        raise
                    with lock:
                        committed_puts.update(batch)
            except (MQFailed, httpx.HTTPError):
                time.sleep(0.2)  # the QM or Redis is away: connect again (a client's retry)

    def consumer(qm: str, cid: int) -> None:
        while not stop.is_set():
            try:
                mq = MQ(group.url(qm), f"C{cid}")
                h = mq.open(Q, ["INPUT_SHARED"])
                while not stop.is_set():
                    try:
                        m = mq.get(h, ["WAIT", "SYNCPOINT"], wait_ms=500)
                    except MQFailed as exc:
                        if exc.reason == 2033:
                            continue
                        raise
                    try:
                        mq.commit()
                    except (MQFailed, httpx.HTTPError):
                        with lock:
                            uncertain_gets.add(m["data"])
                        raise
                    with lock:
                        committed_gets.append(m["data"])
            except (MQFailed, httpx.HTTPError):
                time.sleep(0.2)

    threads = [threading.Thread(target=producer, args=(qm, i)) for i, qm in enumerate(("QM1", "QM2", "QM3") * 2)]
    threads += [threading.Thread(target=consumer, args=(qm, i)) for i, qm in enumerate(("QM3", "QM1", "QM2"))]
    for t in threads:
        t.start()
    try:
        time.sleep(3)  # load running: the faults below hit it mid-flight
        group.qms["QM2"].kill()
        time.sleep(2)
        group.qms["QM2"].start()
        time.sleep(2)
        group.redis_server.restart()  # AOF with fsync always: committed persistent work survives
        for name in ("QM1", "QM2", "QM3"):
            wait_until(lambda: httpx.get(f"{group.url(name)}/v1/ready").status_code == 200, timeout_s=30,
                       what=f"{name} ready after the Redis restart")
        time.sleep(3)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)

    # Drain what is left (peer recovery has returned anything the dead QM held).
    wait_until(lambda: "FAILED" not in {m["STATUS"] for m in httpx.get(f"{group.url('QM1')}/v1/qmgr").json()["members"]}
               or all(m["RECOVERED"] == "YES" for m in httpx.get(f"{group.url('QM1')}/v1/qmgr").json()["members"]
                      if m["STATUS"] == "FAILED"), what="no unrecovered failed QM")
    def no_uncommitted_work() -> bool:
        rows = group.mqsc_ok("QM1", f"DISPLAY QSTATUS({Q})")[0]["objects"]
        return all(o["UNCOM"] == "NO" for o in rows)

    import redis as syncredis
    cf = syncredis.Redis.from_url(group.redis_url)
    try:
        wait_until(no_uncommitted_work, timeout_s=30, what="abandoned connections ended and backed out")
    except AssertionError:
        holders = sorted(m.decode() for m in cf.smembers("{QSG1.CF.APPL1}:uows"))
        raise AssertionError(f"units of work left in the CF: {holders}; members "
                             f"{httpx.get(group.url('QM1') + '/v1/qmgr').json()['members']}") from None
    reader = MQ(group.url("QM1"))
    h = reader.open(Q, ["INPUT_SHARED"])
    while True:
        try:
            committed_gets.append(reader.get(h, ["WAIT", "NO_SYNCPOINT"], wait_ms=3000)["data"])
        except MQFailed as exc:
            assert exc.reason == 2033
            break
    got = committed_gets
    assert len(committed_puts) > 50, "the soak did too little work to mean anything"
    assert len(got) == len(set(got)), "a message was delivered twice"
    # a message is accounted for when it was delivered, or its get's MQCMIT was in doubt
    missing = committed_puts - set(got) - uncertain_gets
    assert not missing, f"{len(missing)} committed message(s) lost, e.g. {sorted(missing)[:5]}"
    assert set(got) <= committed_puts | uncertain_puts, "a message nobody committed was delivered"
    status = group.mqsc_ok("QM1", f"DISPLAY QSTATUS({Q})")[0]["objects"]
    assert all(o["CURDEPTH"] == 0 and o["UNCOM"] == "NO" for o in status)  # nothing in limbo
