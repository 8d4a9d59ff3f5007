"""Persistent messages on a shared queue survive a Redis (coupling facility) restart when Redis
persists with AOF + fsync always, and the queue managers carry on by themselves."""

from __future__ import annotations

import httpx

from tests.support.mq import MQ, MQFailed


def test_messages_survive_a_cf_restart_and_service_resumes(make_cluster):
    group = make_cluster(["QM1", "QM2"], aof=True)
    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\n"
                         "DEFINE QLOCAL(DUR.Q) QSGDISP(SHARED) CFSTRUCT(APPL1) DEFPSIST(YES)")
    writer = MQ(group.url("QM1"))
    h = writer.open("DUR.Q", ["OUTPUT"])
    sent = [f"persistent-{i}" for i in range(20)]
    for data in sent:
        writer.put(h, data)
    big = "B" * 200_000  # an offloaded body (CFLEVEL(5)) too
    writer.put(h, big, md={"persistence": "PERSISTENT"})

    group.redis_server.restart()

    # While Redis was away calls may fail with 2345 (or 2009 if a QM lost its lease); once it is back, new work succeeds
    # without restarting any queue manager.
    reader = None
    for _ in range(100):
        try:
            reader = MQ(group.url("QM2"))
            hr = reader.open("DUR.Q", ["INPUT_SHARED"])
            break
        except MQFailed as exc:
            assert exc.reason in (2345, 2009, 2059), exc.body
    assert reader is not None
    got = reader.drain(hr)
    assert got == sent + [big]
    assert httpx.get(f"{group.url('QM1')}/v1/ready").status_code == 200
