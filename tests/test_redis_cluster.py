"""The coupling facility on a real 3-master Redis Cluster (always run, not opt-in).

A group of two queue managers started with a seed list whose first seed is dead, two CF
structures on two different masters: MQPUT/MQGET across the QMs, commit and backout, a DEFINE
broadcast reaching the other QM; Redis itself refusing a script that touches a second slot; a
subscription moving to a live node when its node fails.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading

import pytest
import redis

from app.cf import keys
from app.cf.pubsub import Subscriber
from app.cf.redisconn import cluster_seeds, make_redis
from app.cf.scripts import SCRIPT_NAMES, ScriptRegistry, load_source
from tests.support.cluster import Cluster
from tests.support.mq import MQ, mq_reason
from tests.support.names import uniq
from tests.support.redis_cluster import RedisClusterServer
from tests.support.redis_server import free_port

QSG = "QSG1"
#: The group of the tests that write keys of their own (never the running group's keys).
OTHER_QSG = "QSGT"


@pytest.fixture(scope="module")
def rcluster():
    server = RedisClusterServer(3)
    server.start()
    yield server
    server.cleanup()


def _structures_on_two_nodes(rcluster: RedisClusterServer) -> tuple[str, str]:
    """Two CF structure names whose keys live on two different masters."""
    first = "APPL1"
    home = rcluster.node_of_key(keys.structure_state(keys.shared_tag(QSG, first)))
    for i in range(2, 100):
        name = f"APPL{i}"
        if rcluster.node_of_key(keys.structure_state(keys.shared_tag(QSG, name))) is not home:
            return first, name
    raise AssertionError("no structure name found on another node")


@pytest.fixture(scope="module")
def group(rcluster, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("qsg-rc")
    dead = free_port()  # nobody listens there: the first seed of the URL is dead
    url = f"redis+cluster://127.0.0.1:{dead}," + rcluster.url.removeprefix("redis+cluster://")
    g = Cluster(url, f"sqlite:///{workdir / 'qsg.db'}", workdir)
    g.redis_server = rcluster
    try:
        g.start(["QM1", "QM2"])
        s1, s2 = _structures_on_two_nodes(rcluster)
        g.mqsc_ok("QM1", f"DEFINE CFSTRUCT({s1}) CFLEVEL(5)\nDEFINE CFSTRUCT({s2}) CFLEVEL(5)")
        g.structures = (s1, s2)  # type: ignore[attr-defined]
        yield g
    finally:
        g.stop()


def test_the_url_names_a_dead_seed_first(group):
    seeds, _ = cluster_seeds(group.redis_url)
    assert len(seeds) == 4
    with pytest.raises(OSError):
        socket.create_connection(seeds[0], timeout=1).close()
    assert all(qm.alive for qm in group.qms.values())


def test_put_get_commit_backout_on_structures_of_two_nodes(group, rcluster):
    s1, s2 = group.structures
    nodes = {rcluster.node_of_key(keys.structure_state(keys.shared_tag(QSG, s))).port for s in (s1, s2)}
    assert len(nodes) == 2
    qm1, qm2 = MQ(group.url("QM1"), "RC1"), MQ(group.url("QM2"), "RC2")
    for struct in (s1, s2):
        q = uniq("RCQ", 8)
        group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT({struct})")
        out, inp = qm1.open(q, ["OUTPUT"]), qm2.open(q, ["INPUT_SHARED"])
        qm1.put(out, f"plain-{struct}")
        assert qm2.get(inp)["data"] == f"plain-{struct}"
        # A put under syncpoint is invisible to the other QM until commit.
        qm1.put(out, f"committed-{struct}", options=["SYNCPOINT"])
        with mq_reason(2033):  # MQRC_NO_MSG_AVAILABLE
            qm2.get(inp)
        qm1.commit()
        assert qm2.get(inp)["data"] == f"committed-{struct}"
        # A get under syncpoint that is backed out puts the message back.
        qm1.put(out, f"again-{struct}")
        assert qm2.get(inp, ["SYNCPOINT"])["data"] == f"again-{struct}"
        qm2.backout()
        got = qm2.get(inp)
        assert got["data"] == f"again-{struct}"
        assert got["md"]["backout_count"] == 1


def test_a_get_waiting_on_one_qm_is_woken_by_a_put_on_the_other(group):
    s1, s2 = group.structures
    q = uniq("RCW", 8)
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT({s2})")
    qm1, qm2 = MQ(group.url("QM1"), "RCW1"), MQ(group.url("QM2"), "RCW2")
    inp, out = qm2.open(q, ["INPUT_SHARED"]), qm1.open(q, ["OUTPUT"])

    got: list[dict] = []
    waiter = threading.Thread(target=lambda: got.append(qm2.get(inp, ["WAIT"], wait_ms=30_000)))
    waiter.start()
    group.wait_for_waiter(q, struct=s2)
    qm1.put(out, "wake up")
    waiter.join(timeout=30)
    assert got and got[0]["data"] == "wake up"


def test_a_define_is_broadcast_to_the_other_queue_manager(group):
    q = uniq("RCD", 8)
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) QSGDISP(GROUP) DESCR('via the cluster')")
    # The DEFINE returned once every active member acknowledged the broadcast: QM2 has it now.
    (res,) = group.mqsc_ok("QM2", f"DISPLAY QLOCAL({q}) DESCR")
    assert res["objects"][0]["DESCR"] == "via the cluster"
    group.mqsc_ok("QM2", f"ALTER QLOCAL({q}) QSGDISP(GROUP) DESCR('changed on QM2')")
    (res,) = group.mqsc_ok("QM1", f"DISPLAY QLOCAL({q}) DESCR")
    assert res["objects"][0]["DESCR"] == "changed on QM2"


def test_every_script_declares_flags_without_cross_slot(rcluster):
    for name in SCRIPT_NAMES:
        first = load_source(f"{name}.lua").splitlines()[0]
        assert first.startswith("#!lua"), name
        assert "allow-cross-slot-keys" not in first, name
    assert load_source("status.lua").splitlines()[0] == "#!lua flags=no-writes"


async def test_redis_refuses_a_flagged_script_touching_a_second_slot(rcluster):
    client = make_redis(rcluster.url)
    try:
        home = keys.structure_state(keys.shared_tag(OTHER_QSG, "APPL1"))
        # the same node, another slot: Redis refuses it because the script declared flags
        other = next(keys.structure_state(keys.shared_tag(OTHER_QSG, f"X{i}")) for i in range(1000)
                     if rcluster.node_of_key(keys.structure_state(keys.shared_tag(OTHER_QSG, f"X{i}")))
                     is rcluster.node_of_key(home)
                     and client.keyslot(keys.structure_state(keys.shared_tag(OTHER_QSG, f"X{i}"))) != client.keyslot(home))
        script = "#!lua\nredis.call('SET', KEYS[1], '1')\nreturn redis.call('GET', ARGV[1])"
        with pytest.raises(redis.ResponseError, match="slot"):
            await client.eval(script, 1, home, other)
        # the same script without declaring flags would have been let through (compatibility mode)
        assert await client.eval(script.removeprefix("#!lua\n"), 1, home, other) is None
    finally:
        await client.aclose()


async def test_a_script_goes_to_the_master_of_its_slot(rcluster):
    client = make_redis(rcluster.url)
    try:
        registry = ScriptRegistry(client)
        for struct in ("APPL1", "APPL2", "APPL3", "APPL4"):
            tag = keys.shared_tag(OTHER_QSG, struct)
            key = keys.structure_state(tag)
            # lease_take: SET NX with a PEXPIRE on KEYS[1]; it must land where the key lives
            await registry.evalsha(registry.lease_take, [key + ":lease"], ["me", "60000"])
            node = rcluster.node_of_key(key)
            direct = redis.Redis(port=node.port)
            try:
                assert direct.get(key + ":lease") == b"me"
            finally:
                direct.close()
    finally:
        await client.aclose()


async def test_a_subscription_moves_to_a_live_node_when_its_node_fails():
    with RedisClusterServer(3) as cl:
        client = make_redis(cl.url)
        got: asyncio.Queue[bytes] = asyncio.Queue()

        async def received(_channel: str, data: bytes) -> None:
            await got.put(data)

        sub = Subscriber(client, keys.definitions_channel("QSGX"), pattern=False, on_message=received,
                         backoff=None, poll_s=0.2)
        try:
            assert await sub.start(ready_timeout_s=10)
            port = sub.node[1]
            victim = next(n for n in cl.nodes if n.port == port)
            # a broadcast published on another node reaches it (classic pub/sub spans the cluster)
            other = next(n for n in cl.nodes if n.port != port)
            publisher = redis.Redis(port=other.port)
            publisher.publish(keys.definitions_channel("QSGX"), b"before")
            assert await asyncio.wait_for(got.get(), 10) == b"before"
            cl.kill(victim)
            await asyncio.wait_for(sub.wait_subscribed(after=1), 30)
            assert sub.node is not None and sub.node[1] != port
            publisher.publish(keys.definitions_channel("QSGX"), b"after")
            assert await asyncio.wait_for(got.get(), 10) == b"after"
            publisher.close()
        finally:
            await sub.stop()
            await client.aclose()


def test_qsg_serve_refuses_a_cluster_url_with_no_live_seed(group, tmp_path):
    env = {**group.qms["QM1"].env, "QSG_QMGR": "QM9", "QSG_PORT": str(free_port()),
           "QSG_REDIS_URL": f"redis+cluster://127.0.0.1:{free_port()},127.0.0.1:{free_port()}"}
    out = subprocess.run([sys.executable, "-m", "app.cli", "serve"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and "cannot reach the coupling facility" in out.stderr



def test_display_cfstatus_names_the_node_of_each_structure(group, rcluster):
    s1, s2 = group.structures
    (res,) = group.mqsc_ok("QM2", "DISPLAY CFSTATUS(*)")
    shown = {o["CFSTATUS"]: o["CFNODE"] for o in res["objects"]}
    for struct in (s1, s2):
        node = rcluster.node_of_key(keys.structure_state(keys.shared_tag(QSG, struct)))
        assert shown[struct] == f"127.0.0.1:{node.port}"
    assert shown[s1] != shown[s2]
