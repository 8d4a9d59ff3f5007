"""Nothing lost, nothing twice: the IGQ agent's retry state (docs/ibm-rules.md §5) for a message it can
neither deliver nor dead-letter, exception reports routed through the group, and a coupling
facility outage that puts the agent in retry instead of ending it abnormally.

Real Redis and real queue-manager processes; the retry intervals are made short by settings."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from app.core.igq import IGQ_XMITQ
from tests.support.cluster import FAST
from tests.support.mq import MQ, mq_reason
from tests.support.waits import wait_until

ENV = {**FAST, "QSG_IGQ_SHORT_RETRY_S": "0.2", "QSG_IGQ_LONG_RETRY_S": "0.5"}


@pytest.fixture(scope="module")
def group(make_cluster):
    # AOF: the outage test restarts Redis, and the group's state must survive it
    g = make_cluster(["QM1", "QM2"], env=ENV, aof=True)
    g.mqsc_ok("QM1", f"DEFINE CFSTRUCT(APPL1) RECOVER(YES)\n"
                     f"DEFINE QLOCAL({IGQ_XMITQ}) QSGDISP(SHARED) CFSTRUCT(APPL1) USAGE(XMITQ)")
    for qm in ("QM1", "QM2"):
        g.mqsc_ok(qm, "ALTER QMGR IGQ(ENABLED)\nDEFINE QLOCAL(DLQ)\nDEFINE QLOCAL(REPLY.Q)")
    g.mqsc_ok("QM2", "DEFINE QLOCAL(DEST.STUCK) PUT(DISABLED)\nDEFINE QLOCAL(DEST.LATER)")
    for qm in ("QM1", "QM2"):
        wait_until(lambda qm=qm: agent(g, qm)["IGQAGENT"] == "RUNNING", what=f"{qm}'s IGQ agent running")
    return g


def agent(group, qm: str) -> dict[str, Any]:
    """The agent's state as DISPLAY QMSTATUS shows it (answered without the coupling facility)."""
    (res,) = group.mqsc_ok(qm, "DISPLAY QMSTATUS")
    return res["objects"][0]


def xmitq_depth(group) -> int:
    (res,) = group.mqsc_ok("QM1", f"DISPLAY QLOCAL({IGQ_XMITQ}) CURDEPTH")
    return int(res["objects"][0]["CURDEPTH"])


def test_undeliverable_message_without_deadq_stays_and_is_delivered_once_later(group):
    """No DEADQ on QM2 (the default) and a put-inhibited destination: the messages stay on the
    transmission queue, the agent retries (no abnormal end), and once the queue is put-enabled
    they are delivered in order, each exactly once."""
    restarts = agent(group, "QM2")["IGQRESTARTS"]
    sender = MQ(group.url("QM1"))
    h = sender.open("DEST.STUCK", ["OUTPUT"], qmgr="QM2")
    for text in ("first", "second"):
        sender.put(h, text, md={"persistence": "PERSISTENT"})
    wait_until(lambda: agent(group, "QM2")["IGQAGENT"] == "RETRY", what="QM2's agent in retry")
    # still retrying, a retry per interval: the agent waits between attempts, it does not spin
    wait_until(lambda: agent(group, "QM2")["IGQRETRIES"] >= 3, what="several retries")
    state = agent(group, "QM2")
    assert state["IGQAGENT"] == "RETRY" and state["IGQRESTARTS"] == restarts  # retry, not CSQM067E
    assert "DEST.STUCK" in state["IGQRETRYREASON"]
    assert xmitq_depth(group) == 2  # both stay on SYSTEM.QSG.TRANSMIT.QUEUE: nothing lost
    receiver = MQ(group.url("QM2"))
    with mq_reason(2033):  # nothing went anywhere else either
        receiver.get(receiver.open("DLQ", ["INPUT_SHARED"]), ["NO_SYNCPOINT"])

    group.mqsc_ok("QM2", "ALTER QLOCAL(DEST.STUCK) PUT(ENABLED)")
    hr = receiver.open("DEST.STUCK", ["INPUT_SHARED"])
    got = [receiver.get(hr, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000) for _ in range(2)]
    assert [m["data"] for m in got] == ["first", "second"]  # in order
    assert all(m["md"]["persistence"] == "PERSISTENT" for m in got)
    with mq_reason(2033):  # exactly once
        receiver.get(hr, ["NO_SYNCPOINT"])
    wait_until(lambda: agent(group, "QM2")["IGQAGENT"] == "RUNNING", what="QM2's agent leaving retry")
    assert xmitq_depth(group) == 0
    assert agent(group, "QM2")["IGQRESTARTS"] == restarts


def test_dead_letter_and_exception_report_through_the_group(group):
    """With DEADQ set the message is dead-lettered on the destination QM, and the exception
    report it asked for travels back through the group to ReplyToQ at ReplyToQMgr (QM1)."""
    group.mqsc_ok("QM2", "ALTER QMGR DEADQ(DLQ)\nALTER QLOCAL(DEST.STUCK) PUT(DISABLED)")
    sender = MQ(group.url("QM1"), "PAYROLL")
    md = {"persistence": "PERSISTENT", "report": ["EXCEPTION_WITH_DATA"], "reply_to_q": "REPLY.Q",
          "msg_id": "ab" * 24}
    sent = sender.put1("DEST.STUCK", "to the dead-letter queue", md=md, qmgr="QM2")["md"]
    assert sent["reply_to_qmgr"] == "QM1"

    receiver = MQ(group.url("QM2"))
    dead = receiver.get(receiver.open("DLQ", ["INPUT_SHARED"]), ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)
    header = json.loads(dead["data"])
    assert dead["md"]["format"] == "MQDEAD" and header["Reason"] == 2051 and header["DestQName"] == "DEST.STUCK"
    assert header["MsgDesc"]["msg_id"] == "ab" * 24

    reply = sender.open("REPLY.Q", ["INPUT_SHARED"])
    report = sender.get(reply, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)
    assert report["md"]["msg_type"] == "REPORT" and report["md"]["feedback"] == 2051
    assert report["md"]["correl_id"] == "ab" * 24  # MQRO_COPY_MSG_ID_TO_CORREL_ID (the default)
    assert report["md"]["put_qmgr"] == "QM2" and report["md"]["persistence"] == "PERSISTENT"
    assert report["data"] == "to the dead-letter queue"  # WITH_DATA: the first 100 bytes
    with mq_reason(2033):  # one report, not a local copy on QM2 as well
        receiver.get(receiver.open("REPLY.Q", ["INPUT_SHARED"]), ["NO_SYNCPOINT"])
    assert agent(group, "QM2")["IGQAGENT"] == "RUNNING"


def test_coupling_facility_outage_puts_the_agent_in_retry(group):
    """Redis stops for a moment: the agent goes into retry (not abnormal ends counting up) and
    works again when Redis is back."""
    restarts = {qm: agent(group, qm)["IGQRESTARTS"] for qm in ("QM1", "QM2")}
    group.redis_server.stop()
    try:
        for qm in ("QM1", "QM2"):
            wait_until(lambda qm=qm: agent(group, qm)["IGQAGENT"] == "RETRY", what=f"{qm}'s agent in retry")
        wait_until(lambda: agent(group, "QM2")["IGQRETRIES"] >= 2, what="retries during the outage")
        assert {qm: agent(group, qm)["IGQRESTARTS"] for qm in ("QM1", "QM2")} == restarts
    finally:
        group.redis_server.start()
    for qm in ("QM1", "QM2"):
        wait_until(lambda qm=qm: httpx.get(f"{group.url(qm)}/v1/ready").status_code == 200, what=f"{qm} ready")
        wait_until(lambda qm=qm: agent(group, qm)["IGQAGENT"] == "RUNNING", what=f"{qm}'s agent running again")
    MQ(group.url("QM1")).put1("DEST.LATER", "after the outage", md={"persistence": "PERSISTENT"}, qmgr="QM2")
    receiver = MQ(group.url("QM2"))
    hr = receiver.open("DEST.LATER", ["INPUT_SHARED"])
    assert receiver.get(hr, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)["data"] == "after the outage"
    with mq_reason(2033):
        receiver.get(hr, ["NO_SYNCPOINT"])
    assert {qm: agent(group, qm)["IGQRESTARTS"] for qm in ("QM1", "QM2")} == restarts
