"""Two survivors racing to recover the same dead queue manager never double-restore."""

from __future__ import annotations

import asyncio
import json

from app.cf import keys
from app.cf.engine import CouplingFacility
from app.cf.keys import QueueLocation, shared_tag
from app.cf.redisconn import make_redis
from app.core.clock import ManualClock
from app.qmgr.membership import Membership

TAG = shared_tag("QSG1", "APPL1")
LOC = QueueLocation(TAG, "RACE.Q")
RUNTIME = {"put": "ENABLED", "get": "ENABLED", "maxdepth": 1000, "maxmsgl": 4194304, "msgdlvsq": "PRIORITY",
           "defprty": 0, "usage": "NORMAL", "offload": "1"}


async def test_two_survivors_race_to_recover_one_dead_peer(redis_url):
    clock = ManualClock()
    clients = [make_redis(redis_url) for _ in range(3)]
    dead_cf, cf1, cf2 = (CouplingFacility(c, "QSG1", clock) for c in clients)
    await dead_cf.define_queue(LOC, RUNTIME)
    for i in range(5):
        await dead_cf.put(LOC, qmgr="QM9", hconn="h", gen=None, syncpoint=False, priority=0, persistent=True,
                          msg_id=f"{i + 1:048x}", correl_id="", md_json=b"{}", body=f"m{i}".encode())
    # QM9 takes three messages and puts one, under syncpoint, then dies (its member record says ACTIVE,
    # but no heartbeat lease exists any more).
    for _ in range(3):
        await dead_cf.get(LOC, qmgr="QM9", hconn="h", gen=None, syncpoint="YES")
    await dead_cf.put(LOC, qmgr="QM9", hconn="h", gen=None, syncpoint=True, priority=0, persistent=True,
                      msg_id="f" * 48, correl_id="", md_json=b"{}", body=b"uncommitted")
    await dead_cf.open_queue(LOC, "QM9", "h:1", input="SHARED")
    await clients[0].hset(keys.members_key("QSG1"), "QM9", json.dumps({"status": "ACTIVE", "recovered": False}))

    survivors = [Membership(cf, clock, qsg="QSG1", qmgr=name, url="", interval_s=1, ttl_s=5,
                            shared_tags=lambda: [TAG])
                 for c, cf, name in ((clients[1], cf1, "QM1"), (clients[2], cf2, "QM2"))]
    results = await asyncio.gather(*(m.recover_peer("QM9") for m in survivors))
    assert sorted(results) == [False, True]  # exactly one of them did the recovery

    status = await cf1.queue_status(LOC)
    assert status.depth == 5 and status.uncommitted == 0 and "QM9" not in status.opens
    backouts = []
    for _ in range(5):
        got = await cf1.get(LOC, qmgr="QM1", hconn="r", gen=None)
        backouts.append((got.body.decode(), got.backout_count))
    assert sorted(backouts) == [("m0", 1), ("m1", 1), ("m2", 1), ("m3", 0), ("m4", 0)]
    # a late second recovery changes nothing
    assert await survivors[1].recover_peer("QM9") is False
    assert (await cf1.queue_status(LOC)).depth == 0
    for c in clients:
        await c.aclose()
