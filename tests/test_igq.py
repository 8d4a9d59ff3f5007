"""Intra-group queuing (docs/ibm-rules.md §5) with three queue managers, and the agent's self recovery,
retry and serialization with peer recovery."""

from __future__ import annotations

import json
import logging
import threading

import httpx
import pytest

from app.cf import keys
from app.core.igq import IGQ_XMITQ, transmission_message
from tests.support.cluster import FAST
from tests.support.inproc import App, mqsc
from tests.support.mq import MQ, MQFailed, mq_reason
from tests.support.waits import wait_until

# On one redis-server and on a 3-master Redis Cluster (tests/conftest.py).
pytestmark = pytest.mark.group_suite

ENV = FAST


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2", "QM3"], env=ENV)
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) RECOVER(YES)")
    for qm in ("QM1", "QM2", "QM3"):
        g.mqsc_ok(qm, f"DEFINE QLOCAL(DEST.{qm})\nDEFINE QLOCAL(DLQ)\nALTER QMGR DEADQ(DLQ)")
    return g


def agent(group, qm: str) -> str:
    return httpx.get(f"{group.url(qm)}/v1/qmgr").json()["IGQAGENT"]


def restart_agent(group, qm: str) -> None:
    """Restart ``qm``'s agent the operator's way (IGQ(DISABLED) stops it, also in the middle of
    a retry interval; IGQ(ENABLED) starts it): an agent in retry otherwise waits IBM's fixed
    60 s before it looks at SYSTEM.QSG.TRANSMIT.QUEUE again (docs/ibm-rules.md §5.3; IBM's agent is not
    told when the queue is defined or altered), which tests/test_igq_retry.py steps on a clock."""
    group.mqsc_ok(qm, "ALTER QMGR IGQ(DISABLED)")
    wait_until(lambda: agent(group, qm) == "STOPPED", what=f"{qm}'s agent stopped")
    group.mqsc_ok(qm, "ALTER QMGR IGQ(ENABLED)")
    wait_until(lambda: agent(group, qm) == "RUNNING", what=f"{qm}'s agent running")


def test_igq_errors_follow_ibm(group):
    app = MQ(group.url("QM1"))
    with mq_reason(2086):
        app.put1("DEST.QM2", "x", qmgr="QM2")  # IGQ is DISABLED on QM1
    group.mqsc_ok("QM1", "ALTER QMGR IGQ(ENABLED)")
    with mq_reason(2085):
        app.put1("DEST.QM2", "x", qmgr="QM2")  # no SYSTEM.QSG.TRANSMIT.QUEUE yet
    with mq_reason(2086):
        app.put1("DEST.QM2", "x", qmgr="QM9")  # not a member of the group
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({IGQ_XMITQ}) QSGDISP(SHARED) CFSTRUCT(APPL1) USAGE(XMITQ) PUT(DISABLED)")
    with mq_reason(2051):
        app.put1("DEST.QM2", "x", qmgr="QM2")
    group.mqsc_ok("QM1", f"ALTER QLOCAL({IGQ_XMITQ}) QSGDISP(SHARED) PUT(ENABLED)")
    with mq_reason(2045):
        app.open("DEST.QM2", ["INPUT_SHARED"], qmgr="QM2")
    # QM1's agent may have gone into retry (IGQ enabled before the queue existed): restart it
    restart_agent(group, "QM1")


def test_delivery_preserves_the_mqmd_and_order(group):
    for qm in ("QM1", "QM2"):
        group.mqsc_ok(qm, "ALTER QMGR IGQ(ENABLED)")
    wait_until(lambda: agent(group, "QM2") == "RUNNING", what="QM2's IGQ agent running")
    sender = MQ(group.url("QM1"), "PAYROLL")
    h = sender.open("DEST.QM2", ["OUTPUT"], qmgr="QM2")
    md = {"msg_id": "11" * 24, "correl_id": "22" * 24, "priority": 7, "persistence": "PERSISTENT",
          "expiry": 600_000, "reply_to_q": "REPLY.Q", "report": ["EXPIRATION", "EXCEPTION"], "format": "MQSTR"}
    sent = sender.put(h, "first", md=md)["md"]
    for i in range(20):
        sender.put(h, f"seq-{i}", md={"priority": 7})
    receiver = MQ(group.url("QM2"))
    hr = receiver.open("DEST.QM2", ["INPUT_SHARED"])
    first = receiver.get(hr, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)
    got = first["md"]
    assert first["data"] == "first"
    for field in ("msg_id", "correl_id", "priority", "persistence", "reply_to_q", "reply_to_qmgr", "report",
                  "put_appl_name", "put_qmgr", "put_date_time", "format"):
        assert got[field] == sent[field], field
    assert got["put_qmgr"] == "QM1" and got["put_appl_name"] == "PAYROLL" and got["reply_to_qmgr"] == "QM1"
    assert 0 < got["expiry"] <= 600_000
    rest = [receiver.get(hr, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)["data"] for _ in range(20)]
    assert rest == [f"seq-{i}" for i in range(20)]  # in order


def test_retry_state_entered_and_left(group):
    group.mqsc_ok("QM3", "ALTER QMGR IGQ(ENABLED)")
    wait_until(lambda: agent(group, "QM3") == "RUNNING", what="QM3's agent running")
    group.mqsc_ok("QM1", f"ALTER QLOCAL({IGQ_XMITQ}) QSGDISP(SHARED) GET(DISABLED)")
    wait_until(lambda: agent(group, "QM3") == "RETRY", what="QM3's agent in retry")
    info = httpx.get(f"{group.url('QM3')}/v1/qmgr").json()
    assert info["IGQRETRIES"] >= 1
    assert info["IGQAGENT"] == "RETRY" and "RETRY" in httpx.get(f"{group.url('QM3')}/metrics").text
    (res,) = group.mqsc_ok("QM3", "DISPLAY QMSTATUS")  # IBM's shape: the agent's state is not there
    assert "IGQAGENT" not in res["objects"][0]
    # every agent of the group uses the one get-inhibited transmission queue: all go into retry
    for qm in ("QM1", "QM2"):
        wait_until(lambda qm=qm: agent(group, qm) == "RETRY", what=f"{qm}'s agent in retry")
    group.mqsc_ok("QM1", f"ALTER QLOCAL({IGQ_XMITQ}) QSGDISP(SHARED) GET(ENABLED)")
    assert agent(group, "QM3") == "RETRY"  # until its next retry, IBM's fixed 60 s away
    for qm in ("QM1", "QM2", "QM3"):
        restart_agent(group, qm)
    MQ(group.url("QM1")).put1("DEST.QM3", "after retry", qmgr="QM3")
    r = MQ(group.url("QM3"))
    assert r.get(r.open("DEST.QM3", ["INPUT_SHARED"]), ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)["data"] \
        == "after retry"


def test_undeliverable_goes_to_the_destination_dead_letter_queue(group):
    MQ(group.url("QM1")).put1("NO.SUCH.Q", "lost?", qmgr="QM2")
    r = MQ(group.url("QM2"))
    dead = r.get(r.open("DLQ", ["INPUT_SHARED"]), ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)
    import json
    header = json.loads(dead["data"])
    assert dead["md"]["format"] == "MQDEAD" and header["Reason"] == 2085 and header["DestQName"] == "NO.SUCH.Q"


def test_object_changed_after_an_igq_switch(group):
    sender = MQ(group.url("QM1"))
    h = sender.open("DEST.QM2", ["OUTPUT"], qmgr="QM2")
    local = sender.open("DEST.QM1", ["OUTPUT"])
    group.mqsc_ok("QM1", "ALTER QMGR IGQ(DISABLED)")
    with mq_reason(2041):
        sender.put(h, "x")
    sender.put(local, "a local handle is not affected")
    group.mqsc_ok("QM1", "ALTER QMGR IGQ(ENABLED)")


def test_exactly_once_across_kill_9_of_the_receiving_qmgr(group):
    sender = MQ(group.url("QM1"))
    h = sender.open("DEST.QM2", ["OUTPUT"], qmgr="QM2")
    n = 150
    done = threading.Event()

    def send() -> None:
        for i in range(n):
            # persistent: a restart of QM2 discards nonpersistent messages on its private queues (z/OS)
            sender.put(h, f"msg-{i:03d}", md={"persistence": "PERSISTENT"})
        done.set()

    t = threading.Thread(target=send)
    t.start()
    receiver = MQ(group.url("QM2"))
    hr = receiver.open("DEST.QM2", ["INPUT_SHARED"])
    got = [receiver.get(hr, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)["data"] for _ in range(10)]
    group.qms["QM2"].kill()  # mid-transfer
    t.join()
    group.qms["QM2"].start()
    wait_until(lambda: agent(group, "QM2") == "RUNNING", what="QM2's agent running again")
    receiver = MQ(group.url("QM2"))
    hr = receiver.open("DEST.QM2", ["INPUT_SHARED"])
    while True:
        try:
            got.append(receiver.get(hr, ["WAIT", "NO_SYNCPOINT"], wait_ms=8000)["data"])
        except MQFailed as exc:
            assert exc.reason == 2033
            break
    assert sorted(got) == [f"msg-{i:03d}" for i in range(n)]  # none lost, none twice


async def test_agent_self_recovery_and_serialization(qm, caplog):  # noqa: F811
    """In-process: a forced abnormal end is recovered (CSQM067E), and the agent waits (retry)
    while peer recovery of its queue manager is in progress."""
    await mqsc(qm, f"DEFINE QLOCAL({IGQ_XMITQ}) QSGDISP(SHARED) CFSTRUCT(APPL1) USAGE(XMITQ)\n"
                   "DEFINE QLOCAL(LOCAL.DEST)\nALTER QMGR IGQ(ENABLED)")
    import asyncio

    async def until(cond) -> None:
        for _ in range(200):
            if cond():
                return
            await asyncio.sleep(0.05)
        raise AssertionError("condition not reached")

    await until(lambda: qm.igq.state == "RUNNING")
    # a forced fault: the agent's delivery of a message fails once with an unexpected error (a
    # malformed message is no such fault: it is dead-lettered, test_igq_retry.py)
    real_deliver, failed = qm.igq._deliver, []

    async def deliver_failing_once(*args, **kwargs):
        if not failed:
            failed.append(True)
            raise RuntimeError("an unexpected failure")
        await real_deliver(*args, **kwargs)

    qm.igq._deliver = deliver_failing_once
    app = await App.connect(qm)
    md, header = transmission_message({"msg_id": "ab" * 24, "correl_id": "00" * 24, "priority": 0,
                                       "format": "MQSTR"}, b"after the abnormal end", "LOCAL.DEST", "QM1")
    with caplog.at_level(logging.ERROR):
        await app.put(await app.open(IGQ_XMITQ, ["OUTPUT"]), json.dumps(header), correl_id=md["correl_id"],
                      format="MQXMIT")
        await until(lambda: qm.igq.restarts >= 1)
    assert any("CSQM067E" in r.message and "QM1 IGQ agent ended abnormally" in r.message for r in caplog.records)
    # restarted, the agent delivers the message its unit of work had backed out
    got = await app.get(await app.open("LOCAL.DEST", ["INPUT_SHARED"]), ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)
    assert got["data"] == "after the abnormal end" and qm.igq.restarts == 1
    await until(lambda: qm.igq.state == "RUNNING")
    lock = f"{keys.group_prefix('QSG1')}recovery:QM1"
    await qm.redis.set(lock, "QM2", px=60_000)
    await until(lambda: qm.igq.state == "RETRY")
    await qm.redis.delete(lock)
    qm.clock.advance(60_000)  # the next retry: IBM's fixed short interval, on the QM's clock
    await until(lambda: qm.igq.state == "RUNNING")


def test_ibm_rest_post_naming_another_qmgr_travels_by_igq(group):
    group.mqsc_ok("QM1", "ALTER QMGR IGQ(ENABLED)")
    r = httpx.post(f"{group.url('QM1')}/ibmmq/rest/v2/messaging/qmgr/QM2/queue/DEST.QM2/message",
                   content=b"via the group", headers={"ibm-mq-rest-csrf-token": "x",
                                                      "Content-Type": "text/plain;charset=utf-8"})
    assert r.status_code == 201 and r.headers["ibm-mq-md-messageId"]
    receiver = MQ(group.url("QM2"))
    m = receiver.get(receiver.open("DEST.QM2", ["INPUT_SHARED"]), ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)
    assert m["data"] == "via the group" and m["md"]["put_qmgr"] == "QM1"  # put on QM1, moved by IGQ


def test_qremote_and_queue_manager_alias_travel_by_igq(group):
    group.mqsc_ok("QM1", "ALTER QMGR IGQ(ENABLED)\n"
                         "DEFINE QREMOTE(TO.QM2) RNAME(DEST.QM2) RQMNAME(QM2) DEFPRTY(6)\n"
                         "DEFINE QREMOTE(QM2.ALIAS) RNAME(' ') RQMNAME(QM2)\n"
                         "DEFINE QREMOTE(LOOPBACK) RNAME(DEST.QM1) RQMNAME(QM1)")
    (obj,) = group.mqsc_ok("QM1", "DISPLAY QREMOTE(TO.QM2)")[0]["objects"]
    assert (obj["TYPE"], obj["RNAME"], obj["RQMNAME"]) == ("QREMOTE", "DEST.QM2", "QM2")
    sender = MQ(group.url("QM1"))
    sender.put1("TO.QM2", "through a remote queue definition")
    sender.put1("DEST.QM2", "through a queue-manager alias", qmgr="QM2.ALIAS")
    with mq_reason(2087):
        sender.put1("LOOPBACK", "RQMNAME is this queue manager")
    with mq_reason(2045):
        sender.open("TO.QM2", ["INPUT_SHARED"])
    # an alias of a remote queue definition: the alias's defaults apply first
    group.mqsc_ok("QM1", "DEFINE QALIAS(ALIAS.TO.QM2) TARGET(TO.QM2) DEFPRTY(2)")
    sender.put(sender.open("ALIAS.TO.QM2", ["OUTPUT"]), "through an alias")
    with mq_reason(2045):
        sender.open("ALIAS.TO.QM2", ["INPUT_SHARED"])
    receiver = MQ(group.url("QM2"))
    hr = receiver.open("DEST.QM2", ["INPUT_SHARED"])
    got = [receiver.get(hr, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000) for _ in range(3)]
    by_data = {m["data"]: m["md"] for m in got}
    assert set(by_data) == {"through a remote queue definition", "through a queue-manager alias", "through an alias"}
    assert by_data["through a remote queue definition"]["priority"] == 6  # the QREMOTE's DEFPRTY
    assert by_data["through an alias"]["priority"] == 2  # the alias's DEFPRTY
