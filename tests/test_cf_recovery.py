"""CF structure failure, BACKUP CFSTRUCT and RECOVER CFSTRUCT (docs/explanation/reliability.md), over real HTTP between
real queue managers and a real redis-server: persistent messages of a RECOVER(YES) structure are
recovered after its contents are lost, non-persistent ones are not, and nothing comes back that
was got or backed out."""

from __future__ import annotations

import time

import pytest

from tests.support.mq import MQ, MQFailed, mq_reason
from tests.support.waits import wait_until

PERSISTENT = {"persistence": "PERSISTENT"}
NON_PERSISTENT = {"persistence": "NOT_PERSISTENT"}


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2", "QM3"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(REC1) CFLEVEL(5) RECOVER(YES) RECAUTO(NO)\n"
                     "DEFINE CFSTRUCT(NOREC) CFLEVEL(5) RECOVER(NO)\n"
                     "DEFINE CFSTRUCT(AUTO) CFLEVEL(5) RECOVER(YES) RECAUTO(YES)\n"
                     "DEFINE QLOCAL(REC.Q) QSGDISP(SHARED) CFSTRUCT(REC1)\n"
                     "DEFINE QLOCAL(REC.OTHER) QSGDISP(SHARED) CFSTRUCT(REC1)\n"
                     "DEFINE QLOCAL(NOREC.Q) QSGDISP(SHARED) CFSTRUCT(NOREC)\n"
                     "DEFINE QLOCAL(AUTO.Q) QSGDISP(SHARED) CFSTRUCT(AUTO)")
    return g


def drain(group, qm: str, queue: str) -> list[str]:
    """Every message now on ``queue``, got through ``qm`` by a new connection."""
    app = MQ(group.url(qm))
    try:
        return app.drain(app.open(queue, ["INPUT_SHARED"]))
    finally:
        app.disconnect()


def status(group, qm: str, name: str, kind: str = "SUMMARY") -> dict:
    (res,) = group.mqsc_ok(qm, f"DISPLAY CFSTATUS({name}) TYPE({kind})")
    return res["objects"][0]


def test_persistent_messages_need_a_recover_yes_structure(group):
    app = MQ(group.url("QM1"))
    h = app.open("NOREC.Q", ["OUTPUT"])
    with mq_reason(2048):
        app.put(h, "p", md=PERSISTENT)
    with mq_reason(2048):
        app.put1("NOREC.Q", "p", md=PERSISTENT)
    app.put(h, "np", md=NON_PERSISTENT)  # non-persistent messages are fine
    (res,) = group.mqsc("QM2", "BACKUP CFSTRUCT(NOREC)")
    assert res["completion_code"] == 2 and "RECOVER(YES)" in " ".join(res["messages"])
    (res,) = group.mqsc("QM2", "BACKUP CFSTRUCT(REC1) EXCLINT(5)")
    assert res["completion_code"] == 2 and "EXCLINT" in res["messages"][0]
    (res,) = group.mqsc("QM2", "RECOVER CFSTRUCT(REC1)")
    assert res["completion_code"] == 2 and res["reason"] == 3236 and "CSQE102E" in res["messages"][0]
    app.disconnect()


def test_recover_brings_back_exactly_the_committed_persistent_messages(group):
    putter, getter, holder = MQ(group.url("QM1")), MQ(group.url("QM2")), MQ(group.url("QM3"))
    hp = putter.open("REC.Q", ["OUTPUT"])
    hg = getter.open("REC.Q", ["INPUT_SHARED"])
    for i in range(1, 6):
        putter.put(hp, f"P{i}", md=PERSISTENT)
    putter.put(hp, "N1", md=NON_PERSISTENT)
    assert getter.get(hg)["data"] == "P1"                       # got and committed: gone for good
    hh = holder.open("REC.Q", ["OUTPUT"])
    holder.put(hh, "P6", md=PERSISTENT, options=["SYNCPOINT"])
    holder.commit()                                             # committed in a unit of work
    holder.put(hh, "P7", md=PERSISTENT, options=["SYNCPOINT"])  # still uncommitted at the failure
    assert getter.get(hg, options=["SYNCPOINT"])["data"] == "P2"  # a get in flight at the failure

    (res,) = group.mqsc_ok("QM2", "BACKUP CFSTRUCT(REC1)")
    assert "Backup of CF structure REC1 complete" in res["messages"][0]
    backup = status(group, "QM1", "REC1", "BACKUP")
    assert backup["QMNAME"] == "QM2" and backup["BKUPDATE"] and backup["STATUS"] == "ACTIVE"

    putter.put(hp, "P8", md=PERSISTENT)                         # after the backup: from the log
    other = putter.open("REC.OTHER", ["OUTPUT"])
    putter.put(other, "O1", md=PERSISTENT)
    third = MQ(group.url("QM3"))
    assert third.get(third.open("REC.Q", ["INPUT_SHARED"]))["data"] == "P3"
    third.disconnect()

    (res,) = group.mqsc_ok("QM1", "RESET CFSTRUCT(REC1) ACTION(FAIL)")
    assert "FAILED" in res["messages"][0]
    # Every queue manager now answers 2373 on the structure's queues, at once.
    for qm in ("QM1", "QM2", "QM3"):
        app = MQ(group.url(qm))
        with mq_reason(2373, 503):
            app.open("REC.Q", ["INPUT_SHARED"])
        with mq_reason(2373):
            app.put1("REC.Q", "x", md=PERSISTENT)
        assert status(group, qm, "REC1")["STATUS"] == "FAILED"
    with mq_reason(2373):
        putter.put(hp, "lost", md=PERSISTENT)
    with mq_reason(2003):
        holder.commit()                                         # its work in REC1 cannot commit
    with mq_reason(2003):
        getter.commit()
    (res,) = group.mqsc_ok("QM2", "DISPLAY QLOCAL(REC.*) QSGDISP(SHARED)")
    assert {o["QUEUE"] for o in res["objects"]} == {"REC.Q", "REC.OTHER"}  # definitions are still shown

    (res,) = group.mqsc_ok("QM3", "RECOVER CFSTRUCT(REC1)")
    assert "6 persistent message(s) restored" in res["messages"][0], res["messages"]
    for qm in ("QM1", "QM2", "QM3"):
        assert status(group, qm, "REC1")["STATUS"] == "ACTIVE"

    reader = MQ(group.url("QM2"))
    hr = reader.open("REC.Q", ["INPUT_SHARED", "BROWSE"])
    assert reader.drain(hr) == ["P2", "P4", "P5", "P6", "P8"]  # no P1/P3 (got), P7 (backed out), N1
    assert drain(group, "QM1", "REC.OTHER") == ["O1"]

    # Service carries on: new messages get new ids and a second recovery replays them too.
    writer = MQ(group.url("QM1"))
    hw = writer.open("REC.Q", ["OUTPUT"])
    writer.put(hw, "P9", md=PERSISTENT)
    writer.put(hw, "P10", md=PERSISTENT)
    assert reader.get(hr)["data"] == "P9"
    group.mqsc_ok("QM1", "RESET CFSTRUCT(REC1) ACTION(FAIL)")
    (res,) = group.mqsc_ok("QM2", "RECOVER CFSTRUCT(REC1)")
    assert drain(group, "QM3", "REC.Q") == ["P10"]
    for app in (putter, getter, holder, reader, writer):
        try:
            app.disconnect()
        except MQFailed:
            pass


def test_clear_and_purge_are_remembered_by_recovery(group):
    app = MQ(group.url("QM1"))
    h = app.open("REC.OTHER", ["OUTPUT"])
    app.put(h, "cleared", md=PERSISTENT)
    app.close(h)
    group.mqsc_ok("QM2", "CLEAR QLOCAL(REC.OTHER) QSGDISP(SHARED)")
    h = app.open("REC.OTHER", ["OUTPUT"])
    app.put(h, "after-clear", md=PERSISTENT)
    app.close(h)
    group.mqsc_ok("QM1", "RESET CFSTRUCT(REC1) ACTION(FAIL)")
    group.mqsc_ok("QM1", "RECOVER CFSTRUCT(REC1)")
    assert drain(group, "QM3", "REC.OTHER") == ["after-clear"]

    h = app.open("REC.OTHER", ["OUTPUT"])
    app.put(h, "purged", md=PERSISTENT)
    group.mqsc_ok("QM1", "RESET CFSTRUCT(REC1) ACTION(FAIL)")
    (res,) = group.mqsc_ok("QM2", "RECOVER CFSTRUCT(REC1) TYPE(PURGE)")
    assert "recovered empty" in res["messages"][0]
    assert drain(group, "QM3", "REC.OTHER") == []
    # A later recovery starts from the purge, not from older backups and logs.
    group.mqsc_ok("QM1", "RESET CFSTRUCT(REC1) ACTION(FAIL)\nRECOVER CFSTRUCT(REC1)")
    assert drain(group, "QM3", "REC.OTHER") == []


def test_recovery_uses_the_backup_when_the_logs_before_it_are_gone(group):
    """BACKUP CFSTRUCT is what recovery starts from: with the log records of the messages
    removed (as if pruned), the backup still has them. EXCLINT(30) leaves out messages put in
    the last 30 s; rather than wait, the test ages the two messages' put time in the structure."""
    import redis

    from app.cf.keys import QueueKeys, QueueLocation, shared_tag

    app = MQ(group.url("QM1"))
    h = app.open("REC.Q", ["OUTPUT"])
    assert drain(group, "QM2", "REC.Q") == []
    app.put(h, "old-1", md=PERSISTENT)
    app.put(h, "old-2", md=PERSISTENT)
    r = redis.Redis.from_url(group.redis_url)
    meta_key = QueueKeys(QueueLocation(shared_tag("QSG1", "REC1"), "REC.Q")).meta
    for ident, raw in r.hgetall(meta_key).items():
        fields = raw.decode().split("|")
        fields[5] = str(int(fields[5]) - 60_000)  # the put time, ms
        r.hset(meta_key, ident, "|".join(fields))
    (res,) = group.mqsc_ok("QM3", "BACKUP CFSTRUCT(REC1)")
    assert "2 persistent message(s)" in res["messages"][0], res["messages"]
    for segment in (group.workdir / "mqlog" / "QSG1" / "QM1").glob("*.log"):
        segment.write_bytes(b"")  # the log records of the two puts are gone (QM1 goes on appending)
    group.mqsc_ok("QM1", "RESET CFSTRUCT(REC1) ACTION(FAIL)")
    group.mqsc_ok("QM2", "RECOVER CFSTRUCT(REC1)")
    assert drain(group, "QM2", "REC.Q") == ["old-1", "old-2"]


def test_redis_restart_without_data(group):
    """Redis comes back empty: a RECOVER(NO) structure is reallocated empty and usable, a
    RECOVER(YES) RECAUTO(YES) CFLEVEL(5) one recovers by itself, a RECAUTO(NO) one stays FAILED
    until RECOVER CFSTRUCT."""
    app = MQ(group.url("QM1"))
    app.put1("AUTO.Q", "auto-p", md=PERSISTENT)
    app.put1("AUTO.Q", "auto-np", md=NON_PERSISTENT)
    app.put1("REC.Q", "rec-p", md=PERSISTENT)
    app.put1("NOREC.Q", "norec-np", md=NON_PERSISTENT)

    group.redis_server.restart()  # no AOF: every structure's contents are lost

    def auto_back() -> bool:
        try:
            return status(group, "QM2", "AUTO")["STATUS"] == "ACTIVE" and \
                status(group, "QM2", "REC1")["STATUS"] == "FAILED"
        except (AssertionError, Exception):
            return False
    wait_until(auto_back, 30, "automatic recovery of AUTO")
    reader = MQ(group.url("QM3"))
    assert drain(group, "QM3", "AUTO.Q") == ["auto-p"]
    assert drain(group, "QM3", "NOREC.Q") == []
    with mq_reason(2373, 503):
        reader.open("REC.Q", ["INPUT_SHARED"])
    group.mqsc_ok("QM1", "RECOVER CFSTRUCT(REC1)")
    assert drain(group, "QM3", "REC.Q") == ["rec-p"]


def test_backup_deletes_log_segments_recovery_no_longer_needs(group):
    """Segments whose newest record (its group-clock stamp, not the file's time) is older than
    every recoverable structure's latest backup (with a margin) go; the queue manager that was
    writing one carries on in a new segment, and nothing is lost."""
    import os
    import re

    group.mqsc_ok("QM1", "BACKUP CFSTRUCT(*)")  # REC1 and AUTO: recovery starts from now
    app = MQ(group.url("QM1"))
    old = list((group.workdir / "mqlog" / "QSG1").glob("QM*/*.log"))
    assert old
    for segment in old:  # written long before the backups: their records say so
        with open(segment, "r+b") as f:  # in place: a writer appending to it keeps its file
            stamped = re.sub(rb'^\{"t":\d+,', b'{"t":1,', f.read(), flags=re.MULTILINE)
            f.seek(0)
            f.truncate()
            f.write(stamped)
    recent = old[0].with_name("recent.log")  # a file time long ago, a record of now: it stays
    recent.write_bytes(b'{"t":%d,"s":"REC1","o":"C","q":"NONE","upto":0}\n' % time.time_ns())
    os.utime(recent, ns=(1, 1))
    (res,) = group.mqsc_ok("QM2", "BACKUP CFSTRUCT(REC1)")
    assert f"{len(old)} log segment(s) no longer needed for recovery deleted" in res["messages"], res["messages"]
    assert not any(p.exists() for p in old) and recent.exists()
    recent.unlink()
    app.put1("REC.Q", "after-prune", md=PERSISTENT)  # QM1 writes a new segment
    group.mqsc_ok("QM1", "RESET CFSTRUCT(REC1) ACTION(FAIL)\nRECOVER CFSTRUCT(REC1)")
    assert drain(group, "QM3", "REC.Q") == ["after-prune"]


def test_recover_refuses_when_a_queue_managers_log_is_not_shared(make_fresh_cluster, tmp_path):
    """QM2 logs to a folder QM1 cannot see (QSG_MQLOG_DIR not on shared storage): RECOVER
    CFSTRUCT on QM1 refuses rather than silently leaving QM2's records out, and the structure
    stays FAILED; QM2, which sees its own folder but not QM1's, refuses too."""
    g = make_fresh_cluster(["QM1", "QM2"], qm_env={"QM2": {"QSG_MQLOG_DIR": str(tmp_path / "qm2-only")}})
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(SPLIT) CFLEVEL(5) RECOVER(YES) RECAUTO(NO)\n"
                     "DEFINE QLOCAL(SPLIT.Q) QSGDISP(SHARED) CFSTRUCT(SPLIT)")
    app = MQ(g.url("QM2"))
    h = app.open("SPLIT.Q", ["OUTPUT"])
    app.put(h, "logged by QM2 only", md=PERSISTENT)
    app.disconnect()
    g.mqsc_ok("QM1", "RESET CFSTRUCT(SPLIT) ACTION(FAIL)")
    for qm, missing in (("QM1", "QM2"), ("QM2", "QM1")):
        (res,) = g.mqsc(qm, "RECOVER CFSTRUCT(SPLIT)")
        assert res["reason"] == 3236, res
        text = " ".join(res["messages"])
        assert f"the recovery log of {missing} is not under" in text, text
    assert status(g, "QM1", "SPLIT")["STATUS"] == "FAILED"


def test_recover_type_purge_forces_its_clear_records_before_it_answers(group):
    """RECOVER CFSTRUCT TYPE(PURGE) writes a CLEAR record per queue so that no later recovery
    brings the purged messages back: like CLEAR QLOCAL's, that record is forced to disk before
    the command answers (QSG_MQLOG_SYNC=commit), or a machine crash after the answer would
    let the next recovery put the purged messages back."""
    import re

    import httpx

    def fsyncs(qm: str) -> float:
        text = httpx.get(f"{group.url(qm)}/metrics", timeout=30).text
        return float(re.search(r"^qsg_mqlog_fsyncs_total (\S+)$", text, re.M).group(1))

    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(PURGEF) CFLEVEL(5) RECOVER(YES) RECAUTO(NO)\n"
                         "DEFINE QLOCAL(PURGEF.Q) QSGDISP(SHARED) CFSTRUCT(PURGEF)")
    MQ(group.url("QM1")).put1("PURGEF.Q", "purged", md=PERSISTENT)
    group.mqsc_ok("QM1", "RESET CFSTRUCT(PURGEF) ACTION(FAIL)")
    before = fsyncs("QM2")
    group.mqsc_ok("QM2", "RECOVER CFSTRUCT(PURGEF) TYPE(PURGE)")
    assert fsyncs("QM2") > before  # the CLEAR record is on QM2's log on disk
    assert drain(group, "QM3", "PURGEF.Q") == []
