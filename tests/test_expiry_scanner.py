"""The group's expiry scanner: shared queues are scanned by exactly one queue manager (the first
with EXPRYINT set); when it ends another takes over; private queues by their own QM."""

from __future__ import annotations

import redis

from app.cf import keys
from tests.support.cluster import FAST
from tests.support.mq import MQ
from tests.support.waits import wait_until


def curdepth(group, qm: str, q: str) -> int:
    return group.mqsc_ok(qm, f"DISPLAY QLOCAL({q})")[0]["objects"][0]["CURDEPTH"]


def test_one_scanner_for_shared_queues_and_takeover(make_cluster):
    group = make_cluster(["QM1", "QM2", "QM3"], env=FAST)
    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1)\nDEFINE QLOCAL(EXP.SH) QSGDISP(SHARED) CFSTRUCT(APPL1)")
    group.mqsc_ok("QM3", "DEFINE QLOCAL(EXP.PRIV)")
    cf = redis.Redis.from_url(group.redis_url)
    lease = keys.scanner_lease("QSG1")
    assert cf.get(lease) is None  # nobody scans while EXPRYINT is OFF everywhere
    group.mqsc_ok("QM2", "ALTER QMGR EXPRYINT(1)")
    wait_until(lambda: cf.get(lease) == b"QM2", what="QM2, the first with EXPRYINT set, scanning")
    group.mqsc_ok("QM1", "ALTER QMGR EXPRYINT(1)")
    group.mqsc_ok("QM3", "ALTER QMGR EXPRYINT(1)")
    writer = MQ(group.url("QM1"))
    h = writer.open("EXP.SH", ["OUTPUT"])
    for i in range(5):
        writer.put(h, f"short {i}", md={"expiry": 3})
    writer.put(h, "long", md={"expiry": 600_000})
    wait_until(lambda: curdepth(group, "QM1", "EXP.SH") == 1, what="the scan of the shared queue")
    assert cf.get(lease) == b"QM2"  # one scanner all along: the lease has one holder
    stats = cf.hgetall("{QSG1.CF.APPL1}:q:EXP.SH:ctl")  # each QM's statistics are fields st:<QM>:<stat>
    assert int(stats.get(b"st:QM2:expired", 0)) == 5
    assert b"st:QM1:expired" not in stats and b"st:QM3:expired" not in stats

    group.qms["QM2"].kill()
    wait_until(lambda: cf.get(lease) in (b"QM1", b"QM3"), what="another QM taking over the scan")
    for i in range(3):
        writer.put(h, f"after {i}", md={"expiry": 3})
    wait_until(lambda: curdepth(group, "QM1", "EXP.SH") == 1, what="the new scanner's pass")
    new_scanner = cf.get(lease).decode()
    assert int(cf.hget("{QSG1.CF.APPL1}:q:EXP.SH:ctl", f"st:{new_scanner}:expired")) == 3

    # a private queue is scanned by its own queue manager, scanner of the shared ones or not
    priv = MQ(group.url("QM3"))
    priv.put(priv.open("EXP.PRIV", ["OUTPUT"]), "mine", md={"expiry": 3})
    wait_until(lambda: curdepth(group, "QM3", "EXP.PRIV") == 0, what="QM3's scan of its own queue")
