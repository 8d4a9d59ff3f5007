"""The coupling facility on a real 3-master Redis Cluster (always run, not opt-in).

A group of two queue managers started with a seed list whose first seed is dead, two CF
structures on two different masters: MQPUT/MQGET across the QMs, commit and backout, a DEFINE
broadcast reaching the other QM; Redis itself refusing a script that touches a second slot; a
subscription moving to a live node when its node fails. The per-structure notices (availability
wake-ups, trigger counts) are sharded pub/sub: subscribed on the structure's node only, and
subscribed again on the new master after a failover.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading

import orjson
import pytest
import redis

from app.cf import keys
from app.cf.channelsub import ChannelSubscriber
from app.cf.engine import CouplingFacility
from app.cf.errors import REDIS_FAILURES
from app.cf.keys import QueueLocation
from app.cf.redisconn import cluster_seeds, make_redis
from app.cf.scripts import SCRIPT_NAMES, ScriptRegistry, load_source
from app.core.clock import ManualClock
from app.core.errors import MQError
from app.core.reasons import MQRC
from tests.support.cluster import Cluster
from tests.support.mq import MQ, mq_reason
from tests.support.names import uniq
from tests.support.redis_cluster import RedisClusterServer
from tests.support.redis_server import free_port
from tests.support.waits import wait_until

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


def _shard_subscribers(rcluster: RedisClusterServer, channel: str) -> dict[int, int]:
    """PUBSUB SHARDNUMSUB of ``channel`` on every running master: port -> subscribers."""
    counts: dict[int, int] = {}
    for node in rcluster.nodes:
        if not node.running:
            continue
        client = redis.Redis(port=node.port)
        try:
            if client.execute_command("ROLE")[0] == b"master":
                counts[node.port] = int(client.execute_command("PUBSUB", "SHARDNUMSUB", channel)[1])
        finally:
            client.close()
    return counts


def test_a_get_waiting_on_one_qm_is_woken_by_a_put_on_the_other(group, rcluster):
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

    # The notice went through the structure's node only: both QMs subscribe its availability
    # and trigger channels there (sharded pub/sub), no other master has a subscriber of them,
    # and nobody subscribes a pattern any more (classic pub/sub would span the cluster).
    tag = keys.shared_tag(QSG, s2)
    home = rcluster.node_of_key(keys.structure_state(tag)).port
    for channel in (keys.availability_channel(tag), keys.trigger_channel(tag)):
        assert rcluster.node_of_key(channel).port == home
        counts = _shard_subscribers(rcluster, channel)
        assert counts.pop(home) == 2, channel
        assert set(counts.values()) == {0}, channel
    for node in rcluster.nodes:
        client = redis.Redis(port=node.port)
        try:
            assert client.execute_command("PUBSUB", "NUMPAT") == 0
        finally:
            client.close()


def test_a_shared_queue_trigger_fires_across_masters(group):
    """A put on QM2 to a triggered shared queue of each structure (two masters): QM1's trigger
    monitor gets one trigger message each, from the counts SPUBLISHed on the structure's node."""
    group.mqsc_ok("QM1", "DEFINE QLOCAL(RC.INITQ) QSGDISP(GROUP)\n"
                         "DEFINE PROCESS(RC.PROC) QSGDISP(GROUP) APPLICID('/bin/true') APPLTYPE(UNIX)")
    monitor = MQ(group.url("QM1"), "RCT1")
    initq = monitor.open("RC.INITQ", ["INPUT_SHARED"])
    queues = []
    for struct in group.structures:
        q = uniq("RCT", 8)
        group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT({struct}) "
                             f"TRIGGER TRIGTYPE(FIRST) INITQ(RC.INITQ) PROCESS(RC.PROC)")
        queues.append(q)
        MQ(group.url("QM2"), "RCT2").put1(q, f"to {struct}")
    named = sorted(orjson.loads(monitor.get(initq, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)["data"])["QName"]
                   for _ in queues)
    assert named == sorted(queues)
    with mq_reason(2033):  # one trigger message per queue (FIRST), no more
        monitor.get(initq, ["WAIT", "NO_SYNCPOINT"], wait_ms=500)


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
        candidates = (keys.structure_state(keys.shared_tag(OTHER_QSG, f"X{i}")) for i in range(1000))
        other = next(k for k in candidates
                     if client.keyslot(k) != client.keyslot(home)
                     and rcluster.node_of_key(k) is rcluster.node_of_key(home))
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


async def test_a_script_follows_moved_after_a_failover_and_runs_once():
    """A manual failover leaves the client's slot map naming the old master, which now answers
    MOVED: the script did not run there, so the call goes on to the new master and runs once."""
    with RedisClusterServer(3, replicas=1) as cl:
        client = make_redis(cl.url)
        try:
            registry = ScriptRegistry(client)
            key = keys.structure_state(keys.shared_tag(OTHER_QSG, "MOVE"))
            assert await registry.evalsha(registry.lease_take, [key + ":1"], ["A", "60000"]) == 1
            master = cl.node_of_key(key)
            admin = redis.Redis(port=master.port)
            my_id = admin.execute_command("CLUSTER", "MYID").decode()
            replicas = admin.execute_command("CLUSTER", "REPLICAS", my_id)
            admin.close()
            replica_port = int(replicas[0].decode().split()[1].split("@")[0].rsplit(":", 1)[1])
            replica = redis.Redis(port=replica_port)

            def failed_over() -> bool:
                if cl.node_of_key(key).port != replica_port:
                    replica.execute_command("CLUSTER", "FAILOVER")  # refused until the replica is in sync
                return cl.node_of_key(key).port == replica_port

            wait_until(failed_over, 30, "the manual failover", every_s=0.2, tolerate=(redis.ResponseError,))
            assert client.get_node_from_key(key).port == master.port  # the client's map is stale
            assert await registry.evalsha(registry.lease_take, [key + ":2"], ["B", "60000"]) == 1  # ran once
            assert replica.get(key + ":2") == b"B"
            assert client.get_node_from_key(key).port == replica_port  # the map learnt the move
            replica.close()
        finally:
            await client.aclose()


async def test_a_failed_master_fails_its_structures_calls_once_and_the_others_go_on():
    with RedisClusterServer(3) as cl:
        client = make_redis(cl.url)
        try:
            registry = ScriptRegistry(client)
            names = [keys.structure_state(keys.shared_tag(OTHER_QSG, f"S{i}")) for i in range(30)]
            victim_key = names[0]
            victim = cl.node_of_key(victim_key)
            survivor_key = next(k for k in names if cl.node_of_key(k) is not victim)
            for k in (victim_key, survivor_key):
                assert await registry.evalsha(registry.lease_take, [k + ":a"], ["A", "60000"]) == 1
            cl.kill(victim)
            # the call fails (MQRC_CF_NOT_AVAILABLE upstream), and is not retried behind the caller's back
            with pytest.raises(REDIS_FAILURES):
                await registry.evalsha(registry.lease_take, [victim_key + ":b"], ["B", "60000"])
            # cluster-require-full-coverage no: a structure on another master keeps serving
            assert await registry.evalsha(registry.lease_take, [survivor_key + ":b"], ["B", "60000"]) == 1
        finally:
            await client.aclose()


async def test_a_subscription_moves_to_a_live_node_when_its_node_fails():
    with RedisClusterServer(3) as cl:
        client = make_redis(cl.url)
        got: asyncio.Queue[bytes] = asyncio.Queue()

        async def received(_channel: str, data: bytes) -> None:
            await got.put(data)

        sub = ChannelSubscriber(client, keys.definitions_channel("QSGX"), pattern=False, on_message=received,
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


_RUNTIME: dict[str, str | int] = {
    "put": "ENABLED", "get": "ENABLED", "maxdepth": 999999999, "maxmsgl": 4194304,
    "msgdlvsq": "PRIORITY", "defprty": 0, "usage": "NORMAL", "offload": "0",
}


def _fail_over(cl: RedisClusterServer, key: str, *, crash: bool) -> int:
    """Make the replica of ``key``'s master its new master: a manual CLUSTER FAILOVER (the old
    master becomes a replica) or, with ``crash``, by killing the master (the replica takes
    over by itself). Returns the new master's port."""
    master = cl.node_of_key(key)
    admin = redis.Redis(port=master.port)
    my_id = admin.execute_command("CLUSTER", "MYID").decode()
    replicas: list[bytes] = []

    def knows_its_replica() -> bool:  # just after forming, gossip may not have told the master yet
        replicas[:] = admin.execute_command("CLUSTER", "REPLICAS", my_id)
        return bool(replicas)

    try:
        wait_until(knows_its_replica, 30, "the master knowing its replica", every_s=0.1)
    finally:
        admin.close()
    replica_port = int(replicas[0].decode().split()[1].split("@")[0].rsplit(":", 1)[1])
    if crash:
        # a replica that never synchronised refuses to take over (cluster-replica-validity-factor)
        replica = redis.Redis(port=replica_port)
        try:
            wait_until(lambda: replica.info("replication").get("master_link_status") == "up", 30,
                       "the replica in sync", every_s=0.1)
        finally:
            replica.close()
        cl.kill(master)
        wait_until(lambda: cl.node_of_key(key).port == replica_port, 30, "the replica taking over",
                   every_s=0.2, tolerate=(redis.RedisError, OSError))
        return replica_port
    replica = redis.Redis(port=replica_port)

    def failed_over() -> bool:
        if cl.node_of_key(key).port != replica_port:
            replica.execute_command("CLUSTER", "FAILOVER")  # refused until the replica is in sync
        return cl.node_of_key(key).port == replica_port

    try:
        wait_until(failed_over, 30, "the manual failover", every_s=0.2, tolerate=(redis.ResponseError,))
    finally:
        replica.close()
    return replica_port


async def _get_woken_by_put(waiting: CouplingFacility, putting: CouplingFacility, loc: QueueLocation,
                            body: str) -> None:
    """A get waiting on ``waiting`` (which never re-checks by itself within the test) is woken by
    a put through ``putting``: the availability notice reached it."""
    before = waiting.listener.received[loc]
    waiter = asyncio.create_task(waiting.get(loc, qmgr="QM1", hconn="W", gen=None, wait_ms=60_000))
    await asyncio.wait_for(waiting.listener.wait_parked(loc), 10)
    md = '{"priority": 0}'
    for attempt in range(3):  # a put through a map naming a crashed master fails once (not retried)
        try:
            await putting.put(loc, qmgr="QM2", hconn="P", gen=None, syncpoint=False, priority=0,
                              persistent=False, msg_id="0" * 48, correl_id=None, md_json=md, body=body.encode())
            break
        except MQError as exc:
            assert exc.reason == MQRC.CF_NOT_AVAILABLE and attempt < 2, exc
    got = await asyncio.wait_for(waiter, 10)
    assert got.body == body.encode()
    assert waiting.listener.received[loc] == before + 1


@pytest.mark.parametrize("crash", [False, True], ids=["manual-failover", "master-killed"])
async def test_structure_notices_follow_their_node_through_a_failover(crash):
    """The availability channel of a structure is subscribed on its master only; after a
    failover (manual, or the master killed) it is subscribed again on the new master, and a
    waiting get is still woken by a later put."""
    with RedisClusterServer(3, replicas=1) as cl:
        tag = keys.shared_tag(OTHER_QSG, "NOTE")
        loc = QueueLocation(tag, "NOTE.Q")
        channel = keys.availability_channel(tag)
        waiting = CouplingFacility(make_redis(cl.url), OTHER_QSG, ManualClock(), recheck_s=60.0)
        putting = CouplingFacility(make_redis(cl.url), OTHER_QSG, ManualClock(), recheck_s=60.0)
        try:
            waiting.follow([tag])
            assert await waiting.start(ready_timeout_s=10)
            await putting.define_queue(loc, _RUNTIME)
            master = cl.node_of_key(channel)
            assert waiting.notices.node(channel) == ("127.0.0.1", master.port)
            counts = _shard_subscribers(cl, channel)
            assert counts.pop(master.port) == 1 and set(counts.values()) == {0}
            await _get_woken_by_put(waiting, putting, loc, "before")

            subscribed = waiting.notices.subscriptions(channel)
            new_master = await asyncio.to_thread(_fail_over, cl, channel, crash=crash)
            await asyncio.wait_for(waiting.notices.wait_subscribed(channel, after=subscribed), 30)
            assert waiting.notices.node(channel) == ("127.0.0.1", new_master)
            counts = _shard_subscribers(cl, channel)
            assert counts.pop(new_master) == 1 and set(counts.values()) == {0}
            await _get_woken_by_put(waiting, putting, loc, "after")
        finally:
            for cf in (waiting, putting):
                await cf.stop()
                await cf.redis.aclose()


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


def _master_slots(rcluster: RedisClusterServer) -> dict[int, list[tuple[int, int]]]:
    """Each master's port -> its slot ranges, as CLUSTER SLOTS tells."""
    client = rcluster.client()
    try:
        out: dict[int, list[tuple[int, int]]] = {}
        for (first, last), info in client.cluster_slots().items():
            out.setdefault(int(info["primary"][1]), []).append((int(first), int(last)))
        return out
    finally:
        client.close()


def test_hashtags_spread_structures_over_masters_and_co_locate_them(group, rcluster):
    """HASHTAG (an emulator addition) places structures: one chosen for each master puts a
    structure there (DISPLAY CFSTATUS's CFNODE and the keys' slot say so), two structures with
    the same HASHTAG share a node and a slot, and messages flow through queues on them."""
    from app.cf.placement import hashtag_for_slots, slot_of_tag

    slots = _master_slots(rcluster)
    assert len(slots) == 3
    placed: dict[str, int] = {}
    script = []
    for i, (port, ranges) in enumerate(sorted(slots.items())):
        name = f"SPREAD{i}"
        tag = hashtag_for_slots(QSG, name, ranges)
        placed[name] = port
        script.append(f"DEFINE CFSTRUCT({name}) CFLEVEL(5) HASHTAG('{tag}')")
        if i == 0:  # a second structure beside the first, with the same HASHTAG
            placed["BESIDE0"] = port
            script.append(f"DEFINE CFSTRUCT(BESIDE0) CFLEVEL(5) HASHTAG('{tag}')")
    group.mqsc_ok("QM1", "\n".join(script))
    (res,) = group.mqsc_ok("QM2", "DISPLAY CFSTATUS(*)")
    shown = {o["CFSTATUS"]: o["CFNODE"] for o in res["objects"]}
    for name, port in placed.items():
        assert shown[name] == f"127.0.0.1:{port}", (name, shown)
        (d,) = group.mqsc_ok("QM1", f"DISPLAY CFSTRUCT({name}) HASHTAG")
        tag = keys.shared_tag(QSG, name, d["objects"][0]["HASHTAG"])
        assert rcluster.node_of_key(keys.structure_state(tag)).port == port
    assert len({shown[f"SPREAD{i}"] for i in range(3)}) == 3
    (a,), (b,) = (group.mqsc_ok("QM1", f"DISPLAY CFSTRUCT({n}) HASHTAG")[0]["objects"] for n in ("SPREAD0", "BESIDE0"))
    assert slot_of_tag(keys.shared_tag(QSG, "SPREAD0", a["HASHTAG"])) == \
        slot_of_tag(keys.shared_tag(QSG, "BESIDE0", b["HASHTAG"]))
    qm1, qm2 = MQ(group.url("QM1"), "RCP1"), MQ(group.url("QM2"), "RCP2")
    for struct in placed:
        q = uniq("RCP", 8)
        group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT({struct})")
        out, inp = qm1.open(q, ["OUTPUT"]), qm2.open(q, ["INPUT_SHARED"])
        qm1.put(out, f"committed-{struct}", options=["SYNCPOINT"])
        with mq_reason(2033):
            qm2.get(inp)
        qm1.commit()
        assert qm2.get(inp, ["SYNCPOINT"])["data"] == f"committed-{struct}"
        qm2.backout()
        got = qm2.get(inp)
        assert got["data"] == f"committed-{struct}" and got["md"]["backout_count"] == 1


def test_qsg_cf_place_prints_a_hashtag_the_named_master_serves(group, rcluster):
    from app.cf.placement import slot_of_tag

    for port, ranges in _master_slots(rcluster).items():
        out = subprocess.run([sys.executable, "-m", "app.cli", "cf", "place", "APPL7", "--node", f"127.0.0.1:{port}",
                              "--qsg", QSG], capture_output=True, text=True, timeout=60,
                             env={**group.qms["QM1"].env})
        assert out.returncode == 0, out.stderr
        hashtag = out.stdout.strip()
        assert "HASHTAG('" + hashtag + "')" in out.stderr
        slot = slot_of_tag(keys.shared_tag(QSG, "APPL7", hashtag))
        assert any(first <= slot <= last for first, last in ranges)
        assert rcluster.node_of_key(keys.structure_state(keys.shared_tag(QSG, "APPL7", hashtag))).port == port
    nobody = f"127.0.0.1:{free_port()}"
    out = subprocess.run([sys.executable, "-m", "app.cli", "cf", "place", "APPL7", "--node", nobody],
                         capture_output=True, text=True, timeout=60, env={**group.qms["QM1"].env})
    assert out.returncode == 2 and "qsg cf place" in out.stderr
