"""A queue manager's page set: its private queues live in a redis-server of its own (started by
``qsg serve`` with no setting), not in the coupling facility; a restart keeps their persistent
messages and drops the nonpersistent ones (z/OS); a unit of work over private and shared queues
is all or nothing across a kill -9 of its queue manager (peers recover the shared part, the
queue manager its private part when it restarts)."""

from __future__ import annotations

import redis

from app.cf.keys import private_tag, structure_prefix
from tests.support.mq import MQ


def _keys(url: str, prefix: str) -> list[bytes]:
    client = redis.Redis.from_url(url)
    try:
        return list(client.scan_iter(match=prefix + "*", count=1000))
    finally:
        client.close()


def test_private_queues_live_in_the_page_set_not_in_the_cf(make_cluster):
    group = make_cluster(["QM1"])
    group.mqsc_ok("QM1", "DEFINE QLOCAL(PS.OWN.Q)")
    mq = MQ(group.url("QM1"))
    h = mq.open("PS.OWN.Q", ["OUTPUT"])
    mq.put(h, "on the page set")
    prefix = structure_prefix(private_tag("QSG1", "QM1"))
    assert _keys(group.pageset_url("QM1"), prefix + "q:PS.OWN.Q:")
    assert not _keys(group.redis_url, prefix + "q:PS.OWN.Q:")


def test_restart_keeps_persistent_private_messages_and_drops_nonpersistent(make_fresh_cluster):
    group = make_fresh_cluster(["QM1"])
    group.mqsc_ok("QM1", "DEFINE QLOCAL(PS.KEEP.Q)")
    mq = MQ(group.url("QM1"))
    h = mq.open("PS.KEEP.Q", ["OUTPUT"])
    for i in range(3):
        mq.put(h, f"persistent-{i}", md={"persistence": "PERSISTENT"})
        mq.put(h, f"nonpersistent-{i}", md={"persistence": "NOT_PERSISTENT"})

    qm = group.qms["QM1"]
    qm.kill()  # kill -9: its page set's server goes with it
    qm.start()
    reader = MQ(group.url("QM1"))
    got = reader.drain(reader.open("PS.KEEP.Q", ["INPUT_SHARED"]))
    assert got == [f"persistent-{i}" for i in range(3)]

    # A clean stop and start too.
    writer = MQ(group.url("QM1"))
    h = writer.open("PS.KEEP.Q", ["OUTPUT"])
    writer.put(h, "kept", md={"persistence": "PERSISTENT"})
    writer.put(h, "dropped", md={"persistence": "NOT_PERSISTENT"})
    qm.stop()
    qm.start()
    reader = MQ(group.url("QM1"))
    assert reader.drain(reader.open("PS.KEEP.Q", ["INPUT_SHARED"])) == ["kept"]


def test_kill_mid_unit_of_work_over_private_and_shared_queues_is_exactly_once(make_fresh_cluster):
    group = make_fresh_cluster(["QM1", "QM2"])
    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\n"
                         "DEFINE QLOCAL(PS.SH.Q) QSGDISP(SHARED) CFSTRUCT(APPL1) DEFPSIST(YES)\n"
                         "DEFINE QLOCAL(PS.PRIV.Q) DEFPSIST(YES)\n"
                         "DEFINE QLOCAL(PS.OUT.Q) DEFPSIST(YES)")
    mq = MQ(group.url("QM1"))
    shared, private = mq.open("PS.SH.Q", ["OUTPUT"]), mq.open("PS.PRIV.Q", ["OUTPUT"])
    mq.put(shared, "shared-1")
    mq.put(private, "private-1")

    # In flight when the queue manager dies: a get from each queue and a put to each, uncommitted.
    worker = MQ(group.url("QM1"))
    hs, hp = worker.open("PS.SH.Q", ["INPUT_SHARED", "OUTPUT"]), worker.open("PS.PRIV.Q", ["INPUT_SHARED"])
    out = worker.open("PS.OUT.Q", ["OUTPUT"])
    assert worker.get(hs, ["SYNCPOINT"])["data"] == "shared-1"
    assert worker.get(hp, ["SYNCPOINT"])["data"] == "private-1"
    worker.put(hs, "shared-uncommitted", options=["SYNCPOINT"])
    worker.put(out, "private-uncommitted", options=["SYNCPOINT"])

    # Committed before it dies: a unit of work over both, moving a message each way.
    committer = MQ(group.url("QM1"))
    cs, co = committer.open("PS.SH.Q", ["OUTPUT"]), committer.open("PS.OUT.Q", ["OUTPUT"])
    committer.put(cs, "shared-committed", options=["SYNCPOINT"])
    committer.put(co, "private-committed", options=["SYNCPOINT"])
    committer.commit()

    qm = group.qms["QM1"]
    qm.kill()
    qm.start()  # waits for (or does) the peer recovery of its shared work, then backs out its private work

    reader = MQ(group.url("QM2"))
    assert sorted(reader.drain(reader.open("PS.SH.Q", ["INPUT_SHARED"]))) == ["shared-1", "shared-committed"]
    own = MQ(group.url("QM1"))
    assert own.drain(own.open("PS.PRIV.Q", ["INPUT_SHARED"])) == ["private-1"]
    assert own.drain(own.open("PS.OUT.Q", ["INPUT_SHARED"])) == ["private-committed"]


def test_a_copy_queue_is_made_by_its_own_queue_manager_when_its_page_set_is_out_of_reach(make_cluster):
    """DEFINE ... QSGDISP(GROUP) on QM1 makes every COPY; QM2's page set is out of QM1's reach
    (e.g. on a loopback address of another host): QM2 makes its COPY's state itself."""
    from app.cf.keys import pagesets_key

    group = make_cluster(["QM1", "QM2"])
    client = redis.Redis.from_url(group.redis_url)
    try:
        client.hset(pagesets_key("QSG1"), "QM2", "redis://127.0.0.1:9/0")  # nobody listens there
    finally:
        client.close()
    group.mqsc_ok("QM1", "DEFINE QLOCAL(PS.GROUP.Q) QSGDISP(GROUP)")
    mq = MQ(group.url("QM2"))
    h = mq.open("PS.GROUP.Q", ["INPUT_SHARED", "OUTPUT"])
    mq.put(h, "on QM2's copy")
    assert mq.get(h)["data"] == "on QM2's copy"
    prefix = structure_prefix(private_tag("QSG1", "QM2"))
    assert _keys(group.pageset_url("QM2"), prefix + "q:PS.GROUP.Q:")
