"""CFSTRUCT HASHTAG (an emulator addition, docs/howto/redis-cluster.md): the hash tag a structure's keys use, so an
operator chooses where each structure lives on a Redis Cluster. Over real HTTP between two real
queue managers and a real redis-server (or a 3-master cluster with ``QSG_TEST_REDIS=cluster``):
DEFINE validates the value, DISPLAY shows it, the keys go where it says, messages flow, BACKUP
and RECOVER CFSTRUCT work, and a change is refused while anything would be stranded."""

from __future__ import annotations

import pytest

from app.cf import keys
from tests.support.mq import MQ
from tests.support.names import uniq
from tests.support.redis_cluster import sync_client

# On one redis-server and on a 3-master Redis Cluster (tests/conftest.py).
pytestmark = pytest.mark.group_suite

QSG = "QSG1"
PERSISTENT = {"persistence": "PERSISTENT"}


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(PLAIN) CFLEVEL(5)\n"
                     "DEFINE CFSTRUCT(TAGGED) CFLEVEL(5) HASHTAG('Place.1')\n"
                     "DEFINE CFSTRUCT(BUDDY) CFLEVEL(5) HASHTAG('Place.1')\n"
                     "DEFINE CFSTRUCT(HREC) CFLEVEL(5) RECOVER(YES) RECAUTO(NO) HASHTAG('rec/%_2')")
    return g


@pytest.fixture
def redis_client(group):
    client = sync_client(group.redis_url)
    yield client
    client.close()


def hashtag_of(group, qm: str, name: str) -> str:
    (res,) = group.mqsc_ok(qm, f"DISPLAY CFSTRUCT({name}) HASHTAG")
    return res["objects"][0]["HASHTAG"]


@pytest.mark.parametrize("value", ["'a{b'", "'x}'", "'two words'", "'star*'", "'q?'", "'" + "A" * 49 + "'",
                                   "'colon:'"])
def test_define_refuses_a_bad_hashtag(group, value):
    res = group.mqsc_failed("QM1", f"DEFINE CFSTRUCT(BADTAG) CFLEVEL(5) HASHTAG({value})")
    assert res["reason"] == 4005 and res["reason_name"] == "MQRCCF_ATTR_VALUE_ERROR"
    assert "HASHTAG" in " ".join(res["messages"])
    res = group.mqsc_failed("QM2", "DISPLAY CFSTRUCT(BADTAG)")
    assert res["reason"] == 2085  # nothing was defined


def test_display_shows_the_hashtag_on_every_queue_manager(group):
    assert hashtag_of(group, "QM2", "TAGGED") == "Place.1"  # quoted: its case is kept
    assert hashtag_of(group, "QM2", "PLAIN") == ""
    assert hashtag_of(group, "QM1", "HREC") == "rec/%_2"


def test_the_keys_live_under_the_chosen_tag_and_co_located_structures_stay_apart(group, redis_client):
    """TAGGED and BUDDY share a slot (same HASHTAG) but not a key: the structure name follows
    the braces. Messages put, got, committed and backed out through queues on them."""
    qm1, qm2 = MQ(group.url("QM1"), "HT1"), MQ(group.url("QM2"), "HT2")
    for struct in ("TAGGED", "BUDDY", "PLAIN"):
        q = uniq("HTQ", 8)
        group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT({struct})")
        out, inp = qm1.open(q, ["OUTPUT"]), qm2.open(q, ["INPUT_SHARED"])
        qm1.put(out, "one", options=["SYNCPOINT"])
        qm1.commit()
        prefix = "{QSG1.CF.PLAIN}:" if struct == "PLAIN" else "{QSG1.CF.Place.1}" + struct + ":"
        ctl = f"{prefix}q:{q}:ctl"
        assert redis_client.exists(ctl), ctl
        assert redis_client.hget(ctl, "depth") == b"1"
        assert qm2.get(inp, ["SYNCPOINT"])["data"] == "one"
        qm2.backout()
        got = qm2.get(inp)
        assert got["data"] == "one" and got["md"]["backout_count"] == 1
        assert redis_client.hget(ctl, "depth") == b"0"
        qm1.close(out)
        qm2.close(inp)
    tagged, buddy = (keys.structure_state(keys.shared_tag(QSG, s, "Place.1")) for s in ("TAGGED", "BUDDY"))
    assert tagged.startswith("{QSG1.CF.Place.1}TAGGED:") and buddy.startswith("{QSG1.CF.Place.1}BUDDY:")
    assert redis_client.exists(tagged) and redis_client.exists(buddy)
    assert not redis_client.exists(keys.structure_state(keys.shared_tag(QSG, "TAGGED")))  # not the old place
    (res,) = group.mqsc_ok("QM2", "DISPLAY CFSTATUS(*)")
    nodes = {o["CFSTATUS"]: o["CFNODE"] for o in res["objects"]}
    assert nodes["TAGGED"] == nodes["BUDDY"]


def test_backup_and_recover_a_structure_with_a_hashtag(group, redis_client):
    q = uniq("HRQ", 8)
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT(HREC)")
    app = MQ(group.url("QM1"), "HR1")
    app.put1(q, "in the backup", md=PERSISTENT)
    group.mqsc_ok("QM1", "BACKUP CFSTRUCT(HREC) EXCLINT(30)")
    app.put1(q, "in the log", md=PERSISTENT)
    app.put1(q, "not persistent")
    group.mqsc_ok("QM2", "RESET CFSTRUCT(HREC) ACTION(FAIL)")
    ctl = "{QSG1.CF.rec/%_2}HREC:q:" + q + ":ctl"
    assert not redis_client.exists(ctl)  # the failure emptied the structure at its place
    group.mqsc_ok("QM2", "RECOVER CFSTRUCT(HREC)")
    other = MQ(group.url("QM2"), "HR2")
    assert sorted(other.drain(other.open(q, ["INPUT_SHARED"]))) == ["in the backup", "in the log"]
    assert redis_client.exists(ctl)


def test_alter_hashtag_is_refused_while_a_queue_is_defined_on_the_structure(group):
    q = uniq("HAQ", 8)
    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(MOVER) CFLEVEL(5)\n"
                         f"DEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT(MOVER)")
    res = group.mqsc_failed("QM2", "ALTER CFSTRUCT(MOVER) HASHTAG('Elsewhere')")
    assert res["reason"] == 2346 and res["reason_name"] == "MQRC_CF_STRUC_IN_USE"
    text = " ".join(res["messages"])
    assert q in text and "HASHTAG" in text and "CSQ9023E" in text
    res = group.mqsc_failed("QM1", "DEFINE CFSTRUCT(MOVER) CFLEVEL(5) HASHTAG('Elsewhere') REPLACE")
    assert res["reason"] == 2346
    assert hashtag_of(group, "QM1", "MOVER") == ""


def test_alter_hashtag_is_refused_while_the_structure_holds_keys(group, redis_client):
    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(HELD) CFLEVEL(5)")
    stray = keys.uow_key(keys.shared_tag(QSG, "HELD"), "QM9", "h1")  # a unit of work left behind
    redis_client.rpush(stray, "P:1:SOME.Q")
    res = group.mqsc_failed("QM2", "ALTER CFSTRUCT(HELD) HASHTAG('H')")
    assert res["reason"] == 2346 and stray in " ".join(res["messages"])
    assert hashtag_of(group, "QM2", "HELD") == ""
    redis_client.delete(stray)
    group.mqsc_ok("QM2", "ALTER CFSTRUCT(HELD) HASHTAG('H')")
    assert hashtag_of(group, "QM1", "HELD") == "H"


def test_an_emptied_structure_moves_with_its_bookkeeping(group, redis_client):
    """A structure whose queues were deleted moves: its state (allocation) and the last ids of
    its deleted queues go with it, so it stays ACTIVE and a re-created queue's ids continue."""
    q = uniq("HMQ", 8)
    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(EMPTIED) CFLEVEL(5)\n"
                         f"DEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT(EMPTIED)")
    app = MQ(group.url("QM1"), "HM1")
    for n in range(3):
        app.put1(q, f"m{n}")
    group.mqsc_ok("QM1", f"DELETE QLOCAL({q}) QSGDISP(SHARED) PURGE")
    old, new = keys.shared_tag(QSG, "EMPTIED"), keys.shared_tag(QSG, "EMPTIED", "Moved.9")
    last = redis_client.hget(keys.structure_last_ids(old), q)
    alloc = redis_client.hget(keys.structure_state(old), "alloc")
    assert last and alloc
    group.mqsc_ok("QM2", "ALTER CFSTRUCT(EMPTIED) HASHTAG('Moved.9')")
    assert redis_client.hget(keys.structure_last_ids(new), q) == last
    assert redis_client.hget(keys.structure_state(new), "alloc") == alloc
    assert not redis_client.exists(keys.structure_state(old), keys.structure_last_ids(old))
    (res,) = group.mqsc_ok("QM1", "DISPLAY CFSTATUS(EMPTIED)")
    assert res["objects"][0]["STATUS"] == "ACTIVE"
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT(EMPTIED)")
    app.put1(q, "after the move")
    qk = keys.QueueKeys(keys.QueueLocation(new, q))
    assert redis_client.hget(qk.ctl, "depth") == b"1"
    other = MQ(group.url("QM2"), "HM2")
    hobj = other.open(q, ["INPUT_SHARED"])
    assert other.drain(hobj) == ["after the move"]
    other.close(hobj)
    # and back to the structure's own name: a blank HASHTAG once its queue is gone
    group.mqsc_ok("QM2", f"DELETE QLOCAL({q}) QSGDISP(SHARED)\nALTER CFSTRUCT(EMPTIED) HASHTAG(' ')")
    assert redis_client.hget(keys.structure_state(old), "alloc") == alloc
    assert hashtag_of(group, "QM1", "EMPTIED") == ""


def test_peer_recovery_and_the_expiry_scanner_find_a_hashtag_structure(make_cluster):
    """The paths that enumerate a structure's keys by its tag: the expiry scanner of shared
    queues, and peer recovery of a killed queue manager's unit of work."""
    from tests.support.cluster import FAST
    from tests.support.waits import wait_until

    g = make_cluster(["QM1", "QM2"], env=FAST)
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(PEERS) CFLEVEL(5) RECOVER(YES) HASHTAG('Peer.Place')\n"
                     "DEFINE QLOCAL(PEER.Q) QSGDISP(SHARED) CFSTRUCT(PEERS)\n"
                     "DEFINE QLOCAL(EXPIRE.Q) QSGDISP(SHARED) CFSTRUCT(PEERS)\n"
                     "ALTER QMGR EXPRYINT(1)")
    client = sync_client(g.redis_url)
    try:
        writer = MQ(g.url("QM1"), "PW1")
        h = writer.open("EXPIRE.Q", ["OUTPUT"])
        for i in range(3):
            writer.put(h, f"short {i}", md={"expiry": 3})
        writer.put(h, "long", md={"expiry": 600_000})
        ctl = "{QSG1.CF.Peer.Place}PEERS:q:EXPIRE.Q:ctl"
        wait_until(lambda: client.hget(ctl, "depth") == b"1", what="the expiry scan of a HASHTAG structure")
        assert int(client.hget(ctl, "st:QM1:expired") or 0) == 3

        for i in range(3):
            writer.put1("PEER.Q", f"m{i}", md=PERSISTENT)
        victim = MQ(g.url("QM2"), "PW2")
        hv = victim.open("PEER.Q", ["INPUT_SHARED", "OUTPUT"])
        taken = [victim.get(hv, ["SYNCPOINT"])["data"] for _ in range(2)]
        victim.put(hv, "never committed", options=["SYNCPOINT"])
        registry = client.smembers(keys.uow_registry(keys.shared_tag(QSG, "PEERS", "Peer.Place")))
        assert [m for m in registry if m.startswith(b"QM2:")]
        g.qms["QM2"].kill()
        reader = MQ(g.url("QM1"), "PR1")
        hr = reader.open("PEER.Q", ["INPUT_SHARED"])
        got = [reader.get(hr, ["WAIT"], wait_ms=15_000)["data"] for _ in range(3)]
        assert sorted(got) == ["m0", "m1", "m2"] and set(taken) <= set(got)
        assert reader.drain(hr) == []  # the uncommitted put is gone
        registry = client.smembers(keys.uow_registry(keys.shared_tag(QSG, "PEERS", "Peer.Place")))
        assert not [m for m in registry if m.startswith(b"QM2:")]  # QM2's unit of work is resolved
    finally:
        client.close()
