"""The coupling facility (Redis) cannot be reached: calls on shared queues fail promptly with 2345
MQRC_CF_NOT_AVAILABLE (not 2373: no structure failed; no hang, no 500) while private queues, on the
queue manager's own page set, go on (2345 is for shared queues only, as on z/OS); /v1/ready says so,
and service resumes by itself when Redis returns - even without its data."""

from __future__ import annotations

import time

import httpx

from tests.support.mq import MQ, MQFailed
from tests.support.waits import wait_until


def test_calls_fail_promptly_while_redis_is_down_and_service_resumes(make_cluster):
    group = make_cluster(["QM1", "QM2"])
    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1)\nDEFINE QLOCAL(CF.SHARED) QSGDISP(SHARED) CFSTRUCT(APPL1)\n"
                         "DEFINE QLOCAL(CF.PRIVATE)")
    app = MQ(group.url("QM1"))
    shared, private = app.open("CF.SHARED", ["OUTPUT", "INPUT_SHARED"]), app.open("CF.PRIVATE", ["OUTPUT"])
    app.put(shared, "before the outage")

    group.redis_server.stop()
    started = time.monotonic()
    try:
        app.put(shared, "during")
        raise AssertionError("a put to a shared queue succeeded without a coupling facility")
    except MQFailed as exc:
        assert (exc.status, exc.reason) == (503, 2345), exc.body
    assert time.monotonic() - started < 10  # promptly: no hang until some long timeout
    app.put(private, "during")  # the private queue is on the page set: no coupling facility needed
    r = httpx.get(f"{group.url('QM2')}/v1/ready")
    assert r.status_code == 503 and r.json()["error"]["reason"] == 2345
    assert httpx.get(f"{group.url('QM2')}/v1/health").status_code == 200

    group.redis_server.start()  # back, but without its data (no persistence in this test)
    wait_until(lambda: httpx.get(f"{group.url('QM1')}/v1/ready").status_code == 200, what="QM1 ready again")
    wait_until(lambda: httpx.get(f"{group.url('QM2')}/v1/ready").status_code == 200, what="QM2 ready again")

    def usable() -> bool:
        try:
            fresh = MQ(group.url("QM2"))
            fresh.put1("CF.SHARED", "after")
            return True
        except MQFailed:
            return False

    wait_until(usable, what="the queue managers rebuilt the shared queue's state")
    reader = MQ(group.url("QM2"))
    assert reader.drain(reader.open("CF.SHARED", ["INPUT_SHARED"])) == ["after"]  # non-persistent data was lost
    MQ(group.url("QM1")).put1("CF.PRIVATE", "private again")
