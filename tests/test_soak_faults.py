"""Soak with faults (bounded, loopback): connections on all three queue managers put and get
persistent messages under syncpoint while one QM is killed (kill -9) and restarted and Redis
(AOF, fsync always) is restarted. Every message whose MQCMIT succeeded is delivered exactly once
and nothing is left in limbo."""

from __future__ import annotations

import time

import httpx

from tests.support.cluster import FAST
from tests.support.faultload import FaultLoad
from tests.support.waits import wait_until

Q = "SOAK.FAULTS"


def test_committed_persistent_messages_survive_qm_kills_and_a_redis_restart(make_cluster):
    # Clients that lose a call reconnect and abandon the old connection: it ends after the idle
    # timeout, backing out its unit of work (docs/api.md §4), so keep that short here.
    group = make_cluster(["QM1", "QM2", "QM3"], env={**FAST, "QSG_IDLE_TIMEOUT_S": "2"}, aof=True)
    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) RECOVER(YES)\n"
                         f"DEFINE QLOCAL({Q}) QSGDISP(SHARED) CFSTRUCT(APPL1) DEFPSIST(YES)")
    load = FaultLoad(group, batch=3)
    load.start(producers=[(qm, Q) for qm in ("QM1", "QM2", "QM3") * 2],
               consumers=[(qm, Q) for qm in ("QM3", "QM1", "QM2")])
    try:
        time.sleep(3)  # load running: the faults below hit it mid-flight
        group.qms["QM2"].kill()
        time.sleep(2)
        group.qms["QM2"].start()
        time.sleep(2)
        group.redis_server.restart()  # AOF with fsync always: committed persistent work survives
        for name in ("QM1", "QM2", "QM3"):
            wait_until(lambda name=name: httpx.get(f"{group.url(name)}/v1/ready").status_code == 200, timeout_s=30,
                       what=f"{name} ready after the Redis restart")
        time.sleep(3)
    finally:
        load.stop()

    # Peer recovery returns anything the dead QM held; abandoned connections end and back out.
    outcome = load.settle_and_check()
    assert not outcome.cf_uows and not any(outcome.uncommitted.values()), \
        f"units of work left in the CF: {outcome.cf_uows}; members {outcome.members}"
    assert outcome.committed_puts > 50, "the soak did too little work to mean anything"
    assert not outcome.duplicates, f"delivered twice: {outcome.duplicates[:5]}"
    assert not outcome.missing, f"{len(outcome.missing)} committed message(s) lost, e.g. {outcome.missing[:5]}"
    assert not outcome.unexpected, f"a message nobody committed was delivered: {outcome.unexpected[:5]}"
    status = group.mqsc_ok("QM1", f"DISPLAY QSTATUS({Q})")[0]["objects"]
    assert all(o["CURDEPTH"] == 0 and o["UNCOM"] == "NO" for o in status)  # nothing in limbo


STALL_Q = "SOAK.STALL"


def test_every_answer_stays_true_through_a_redis_stall_and_a_stalled_network(make_fresh_cluster):
    # A short CF timeout keeps each stall short; the default 5 s lease outlives the 3 s stalls,
    # so nothing is fenced: what is checked is the truth of every answer given meanwhile (the
    # strict checker of tests/support/faultload.py: 2345 = nothing happened, 2009 = in doubt).
    group = make_fresh_cluster(["QM1", "QM2", "QM3"], proxied=("QM3",),
                               env={"QSG_CF_TIMEOUT_S": "1.5", "QSG_HEARTBEAT_INTERVAL_S": "0.5",
                                    "QSG_HEARTBEAT_TTL_S": "8", "QSG_IDLE_TIMEOUT_S": "2"})
    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) RECOVER(YES)\n"
                         f"DEFINE QLOCAL({STALL_Q}) QSGDISP(SHARED) CFSTRUCT(APPL1) DEFPSIST(YES)")
    load = FaultLoad(group, batch=2)
    load.start(producers=[(qm, STALL_Q) for qm in ("QM1", "QM2", "QM3") * 2],
               consumers=[(qm, STALL_Q) for qm in ("QM3", "QM1", "QM2")])
    try:
        time.sleep(3)  # load running: the stalls below hit calls in flight
        group.redis_server.pause()  # SIGSTOP: commands wait in Redis's buffers and run late
        time.sleep(3)
        group.redis_server.resume()
        time.sleep(3)
        group.proxies["QM3"].partition()  # QM3's bytes held, nothing closed
        time.sleep(3)
        group.proxies["QM3"].heal(resume=True)  # ... and delivered late
        time.sleep(3)
    finally:
        group.redis_server.resume()
        load.stop()

    outcome = load.settle_and_check()
    assert outcome.committed_puts > 20, "the soak did too little work to mean anything"
    assert outcome.ok, outcome.summary()
