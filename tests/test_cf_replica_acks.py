"""Replica acknowledgement of coupling-facility writes (``QSG_CF_REPLICA_ACKS``) against a real
redis-server master with a real replica: a state-changing script is followed by WAIT on the same
connection, a read-only one is not; fewer acknowledgements than asked leave the call done and are
logged once and counted; error replies and NOSCRIPT keep the pipelined connection in step.
(The failover under load on a Redis Cluster is tests/test_redis_cluster_failover.py.)"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
import redis

from app.cf import keys
from app.cf.engine import CouplingFacility, GetMode
from app.cf.keys import QueueLocation
from app.cf.redisconn import make_redis
from app.core.clock import ManualClock
from app.core.errors import MQError
from app.core.reasons import MQRC
from tests.support.redis_server import RedisServer
from tests.support.waits import wait_until

QSG = "QSG1"
TAG = keys.shared_tag(QSG, "APPL1")
Q = QueueLocation(TAG, "ACK.Q")
RUNTIME: dict[str, str | int] = {
    "put": "ENABLED", "get": "ENABLED", "maxdepth": 999999999, "maxmsgl": 4194304,
    "msgdlvsq": "PRIORITY", "defprty": 0, "usage": "NORMAL", "offload": "0",
}


@pytest.fixture(scope="module")
def master_and_replica() -> Iterator[tuple[RedisServer, RedisServer]]:
    master = RedisServer()
    master.start()
    replica = RedisServer(extra_args=("--replicaof", "127.0.0.1", str(master.port)))
    replica.start()
    client = redis.Redis(port=master.port)
    try:
        wait_until(lambda: int(client.info("replication")["connected_slaves"]) == 1
                   and client.info("replication")["slave0"]["state"] == "online", 20, "the replica in sync")
        yield master, replica
    finally:
        client.close()
        replica.cleanup()
        master.cleanup()


@pytest_asyncio.fixture
async def cf(master_and_replica: tuple[RedisServer, RedisServer]) -> AsyncIterator[CouplingFacility]:
    master, _ = master_and_replica
    redis.Redis(port=master.port).flushall()
    engine = CouplingFacility(make_redis(master.url), QSG, ManualClock())
    engine.qmgr = "QM1"
    engine.replica_acks = 1
    engine.replica_timeout_ms = 2000
    await engine.scripts.load_all()  # a first call's NOSCRIPT would run a WAIT of its own
    await engine.define_queue(Q, RUNTIME)
    yield engine
    await engine.redis.aclose()


def waits_run(port: int) -> int:
    """How many WAIT commands the master has run (INFO commandstats)."""
    client = redis.Redis(port=port)
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    return int(stats.get("cmdstat_wait", {}).get("calls", 0))


async def put(cf: CouplingFacility, body: bytes, *, syncpoint: bool = False) -> None:
    await cf.put(Q, qmgr="QM1", hconn="C1", gen=None, syncpoint=syncpoint, priority=0, persistent=False,
                 msg_id=None, correl_id=None, md_json=json.dumps({"priority": 0}), body=body)


async def test_a_put_waits_for_the_replica_and_a_browse_does_not(cf, master_and_replica) -> None:
    master, replica = master_and_replica
    before = waits_run(master.port)
    await put(cf, b"one")
    assert waits_run(master.port) == before + 1
    # WAIT returned 1: the replica has the message the moment the put returned
    on_replica = redis.Redis(port=replica.port)
    try:
        assert any(on_replica.scan_iter(match=keys.structure_prefix(TAG) + "*"))
    finally:
        on_replica.close()
    got = await cf.get(Q, qmgr="QM1", hconn="C1", gen=None, mode=GetMode.BROWSE_FIRST)
    assert got.body == b"one"
    assert waits_run(master.port) == before + 1  # a browse only reads: no WAIT
    await cf.get(Q, qmgr="QM1", hconn="C1", gen=None, syncpoint="YES")
    await cf.commit(TAG, "QM1", "C1")
    assert waits_run(master.port) == before + 3  # the destructive get, the commit


async def test_off_by_default_no_wait_is_sent(cf, master_and_replica) -> None:
    master, _ = master_and_replica
    cf.replica_acks = 0
    before = waits_run(master.port)
    await put(cf, b"x")
    await cf.commit(TAG, "QM1", "C1")
    assert waits_run(master.port) == before


async def test_fewer_acks_than_asked_succeed_and_are_logged_once_and_counted(cf, caplog) -> None:
    shortfalls: list[str] = []
    cf.on_replica_shortfall = shortfalls.append
    cf.replica_acks, cf.replica_timeout_ms = 2, 150  # one replica only: WAIT 2 times out with 1
    caplog.set_level(logging.INFO, logger="app.cf.base")
    started = time.monotonic()
    await put(cf, b"a")
    await put(cf, b"b")
    assert time.monotonic() - started >= 0.25  # each put waited out the timeout
    assert shortfalls == [TAG, TAG]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith("QSGE201W QM1:") and "APPL1" in warnings[0]
    # the writes stand: both messages are there
    assert (await cf.get(Q, qmgr="QM1", hconn="C1", gen=None)).body == b"a"
    cf.replica_acks = 1  # acknowledged again: said once, and the next shortfall warns again
    await put(cf, b"c")
    assert [r.getMessage()[:8] for r in caplog.records if r.levelno == logging.INFO] == ["QSGE202I"]
    cf.replica_acks = 2
    await put(cf, b"d")
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 2


async def test_an_error_reply_and_noscript_keep_the_pipelined_connection_in_step(master_and_replica) -> None:
    from app.cf.scripts import ScriptRegistry

    master, _ = master_and_replica
    client = make_redis(master.url)
    try:
        registry = ScriptRegistry(client)
        failing = client.register_script("#!lua\nredis.call('SET', KEYS[1], '1')\nreturn redis.error_reply('boom')")
        for _ in range(3):  # one pooled connection: a WAIT reply left unread would be read as the next reply
            with pytest.raises(redis.ResponseError, match="boom"):
                await registry.evalsha_acked(failing, ["k1"], [], 1, 1000)
            ok = client.register_script("#!lua\nreturn redis.call('INCR', KEYS[1])")
            redis.Redis(port=master.port).script_flush()  # NOSCRIPT first: loaded and called again
            reply, acks = await registry.evalsha_acked(ok, ["k2"], [], 1, 1000)
            assert isinstance(reply, int) and acks == 1
        assert await registry.evalsha(ok, ["k2"], []) == 4
    finally:
        await client.aclose()


@pytest.mark.parametrize("acks", [1, 0])
async def test_an_acknowledged_commit_survives_the_masters_death_only_with_replica_acks(acks: int) -> None:
    """Replication to the replica is held (a partition of the replication link, NetProxy), the
    master acknowledges a committed put, dies, and its replica is promoted. With acks=1 the put's
    WAIT returns only once the link is healed and the replica has it: the message is on the new
    master. With acks=0 the put returns at once and the message dies with the master: the loss
    the setting prevents (made certain here by holding the link; in real life a matter of timing)."""
    from tests.support.netproxy import NetProxy

    master = RedisServer()
    master.start()
    link = NetProxy("127.0.0.1", master.port).start()
    replica = RedisServer(extra_args=("--replicaof", "127.0.0.1", str(link.port)))
    replica.start()
    admin = redis.Redis(port=master.port)
    engine = CouplingFacility(make_redis(master.url), QSG, ManualClock())
    heir: CouplingFacility | None = None
    try:
        wait_until(lambda: admin.info("replication").get("slave0", {}).get("state") == "online", 20,
                   "the replica in sync")
        engine.qmgr, engine.replica_acks, engine.replica_timeout_ms = "QM1", acks, 4000
        await engine.scripts.load_all()
        await engine.define_queue(Q, RUNTIME)
        on_replica = redis.Redis(port=replica.port)
        wait_until(lambda: on_replica.exists(keys.QueueKeys(Q).ctl), 10, "the queue's definition on the replica")
        on_replica.close()

        link.partition()
        if acks:  # heal the link once the put waits in WAIT (a blocked client on the master)
            healer = threading.Thread(target=lambda: (
                wait_until(lambda: int(admin.info("clients")["blocked_clients"]) >= 1, 10, "the WAIT"),
                link.heal(resume=True)))
            healer.start()
        await put(engine, b"committed")  # not under syncpoint: committed when it returns
        if acks:
            healer.join(10)
        master.kill()
        link.reset()  # nothing held reaches the replica after the master died
        promoted = redis.Redis(port=replica.port)
        promoted.execute_command("REPLICAOF", "NO", "ONE")
        promoted.close()

        heir = CouplingFacility(make_redis(replica.url), QSG, ManualClock())
        heir.qmgr = "QM1"
        if acks:
            assert (await heir.get(Q, qmgr="QM1", hconn="C2", gen=None)).body == b"committed"
        else:
            with pytest.raises(MQError) as lost:
                await heir.get(Q, qmgr="QM1", hconn="C2", gen=None)
            assert lost.value.reason == MQRC.NO_MSG_AVAILABLE
    finally:
        admin.close()
        await engine.redis.aclose()
        if heir is not None:
            await heir.redis.aclose()
        link.stop()
        replica.cleanup()
        master.cleanup()
