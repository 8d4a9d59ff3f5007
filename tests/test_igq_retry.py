"""Nothing lost, nothing twice: the IGQ agent's retry state (docs/ibm-rules.md §5) for a message it
can neither deliver nor dead-letter, with IBM's fixed short and long retry counts and intervals
(docs/ibm-rules.md §5.3: 10 retries 60 s apart, then 1200 s apart; they are not settings), exception
reports routed through the group, and a coupling facility outage that puts the agent in retry
instead of ending it abnormally.

The intervals are measured on the queue managers' clock: the retry tests run the real apps in
this process (``inprocess_group``, requests through HTTP/ASGI) on one ``ManualClock`` and step
it, with a real redis-server; the dead-letter test runs real queue-manager processes."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.clock import ManualClock
from app.core.igq import IGQ_XMITQ, igq_correl_id
from app.qmgr.igq import LONG_RETRY_INTERVAL_MS, SHORT_RETRY_COUNT, SHORT_RETRY_INTERVAL_MS
from tests.support.inproc import InProcessQM, inprocess_group
from tests.support.mq import MQ, mq_reason
from tests.support.redis_server import RedisServer
from tests.support.waits import wait_until

T0 = 1_760_000_000_000
SETUP = (f"DEFINE CFSTRUCT(APPL1) RECOVER(YES)\n"
         f"DEFINE QLOCAL({IGQ_XMITQ}) QSGDISP(SHARED) CFSTRUCT(APPL1) USAGE(XMITQ)")


async def until(predicate: Callable[[], Awaitable[bool]], what: str, timeout_s: float = 20) -> None:
    """Poll ``predicate`` (awaited) until true; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if await predicate():
                return
        except Exception:  # noqa: BLE001 - a QM not answering yet (outage test) is "not yet"
            pass
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what} not reached within {timeout_s}s")


async def agent(qm: InProcessQM) -> dict[str, Any]:
    """The agent's state as GET /v1/qmgr shows it (IBM's DISPLAY QMSTATUS has no such attributes)."""
    r = await qm.http.get("/v1/qmgr")
    return r.json()


async def xmitq_depth(qm: InProcessQM) -> int:
    (res,) = await qm.mqsc(f"DISPLAY QLOCAL({IGQ_XMITQ}) CURDEPTH")
    return int(res["objects"][0]["CURDEPTH"])


@asynccontextmanager
async def two_qmgrs(redis_url: str, workdir: Path, clock: ManualClock) -> AsyncIterator[dict[str, InProcessQM]]:
    async with inprocess_group(["QM1", "QM2"], redis_url, workdir, clock, activity_enabled=False,
                               heartbeat_interval_s=0.2, heartbeat_ttl_s=1.5) as qms:
        await qms["QM1"].mqsc(SETUP)
        for name in ("QM1", "QM2"):
            await qms[name].mqsc("DEFINE QLOCAL(DLQ)\nDEFINE QLOCAL(REPLY.Q)\nALTER QMGR IGQ(ENABLED)")
        for name in ("QM1", "QM2"):
            await until(lambda name=name: _state_is(qms[name], "RUNNING"), f"{name}'s IGQ agent running")
        yield qms


async def _state_is(qm: InProcessQM, state: str) -> bool:
    return (await agent(qm))["IGQAGENT"] == state


async def _retries_are(qm: InProcessQM, n: int) -> bool:
    a = await agent(qm)
    return a["IGQAGENT"] == "RETRY" and a["IGQRETRIES"] == n


async def test_undeliverable_message_retries_at_ibms_fixed_intervals_and_is_delivered_once(redis_url, tmp_path):
    """No DEADQ on QM2 and a put-inhibited destination: the messages stay on the transmission
    queue and the agent retries - one retry per 60 s of the clock for the first 10, then one per
    1200 s - and delivers them in order, each exactly once, at the retry after the cause is gone."""
    clock = ManualClock(T0)
    async with two_qmgrs(redis_url, tmp_path, clock) as qms:
        qm1, qm2 = qms["QM1"], qms["QM2"]
        await qm2.mqsc("DEFINE QLOCAL(DEST.STUCK) PUT(DISABLED)")
        sender = await qm1.connect("SENDER")
        h = await sender.open("DEST.STUCK", ["OUTPUT"], qmgr="QM2")
        for text in ("first", "second"):
            await sender.put(h, text, md={"persistence": "PERSISTENT", "expiry": 36_000})  # an hour
        await until(lambda: _retries_are(qm2, 1), "QM2's agent in retry")
        state = await agent(qm2)
        assert "DEST.STUCK" in state["IGQRETRYREASON"] and state["IGQRESTARTS"] == 0  # retry, not CSQM067E
        for n in range(2, SHORT_RETRY_COUNT + 2):  # each short interval passed on the clock: one retry
            clock.advance(SHORT_RETRY_INTERVAL_MS)
            await until(lambda n=n: _retries_are(qm2, n), f"retry {n}")
        assert SHORT_RETRY_INTERVAL_MS == 60_000 and LONG_RETRY_INTERVAL_MS == 1_200_000  # docs/ibm-rules.md §5.3
        assert await xmitq_depth(qm1) == 2  # both stay on SYSTEM.QSG.TRANSMIT.QUEUE: nothing lost

        await qm2.mqsc("ALTER QLOCAL(DEST.STUCK) PUT(ENABLED)")
        clock.advance(SHORT_RETRY_INTERVAL_MS)  # a short interval no longer ends the (long) wait
        receiver = await qm2.connect("RECEIVER")
        hr = await receiver.open("DEST.STUCK", ["INPUT_SHARED"])
        with mq_reason(2033):
            await receiver.get(hr, ["WAIT", "NO_SYNCPOINT"], wait_ms=1000)
        assert (await agent(qm2))["IGQRETRIES"] == SHORT_RETRY_COUNT + 1
        clock.advance(LONG_RETRY_INTERVAL_MS - SHORT_RETRY_INTERVAL_MS)  # the long interval has passed
        got = [await receiver.get(hr, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000) for _ in range(2)]
        assert [m["data"] for m in got] == ["first", "second"]  # in order
        assert all(m["md"]["persistence"] == "PERSISTENT" for m in got)
        # 10 x 60 s + 1200 s = 30 minutes on SYSTEM.QSG.TRANSMIT.QUEUE: half the expiry is left
        assert [m["md"]["expiry"] for m in got] == [18_000, 18_000]
        with mq_reason(2033):  # exactly once
            await receiver.get(hr, ["NO_SYNCPOINT"])
        await until(lambda: _state_is(qm2, "RUNNING"), "QM2's agent leaving retry")
        assert await xmitq_depth(qm1) == 0
        assert (await agent(qm2))["IGQRESTARTS"] == 0


async def test_coupling_facility_outage_puts_the_agent_in_retry(tmp_path):
    """Redis stops for a moment: the agents go into retry (not abnormal ends) and work again at
    their next retry once Redis is back. An AOF redis-server of its own: the group's state must
    survive the restart."""
    clock = ManualClock(T0)
    with RedisServer(aof=True) as server:
        async with two_qmgrs(server.url, tmp_path, clock) as qms:
            await qms["QM2"].mqsc("DEFINE QLOCAL(DEST.LATER)")
            server.stop()
            try:
                for name in ("QM1", "QM2"):
                    await until(lambda name=name: _state_is(qms[name], "RETRY"), f"{name}'s agent in retry")
            finally:
                server.start()
            for name in ("QM1", "QM2"):
                async def ready(name: str = name) -> bool:
                    return (await qms[name].http.get("/v1/ready")).status_code == 200
                await until(ready, f"{name} ready")
            clock.advance(SHORT_RETRY_INTERVAL_MS)
            for name in ("QM1", "QM2"):
                await until(lambda name=name: _state_is(qms[name], "RUNNING"), f"{name}'s agent running again")
                assert (await agent(qms[name]))["IGQRESTARTS"] == 0
            sender = await qms["QM1"].connect("SENDER")
            await sender.put1("DEST.LATER", "after the outage", md={"persistence": "PERSISTENT"}, qmgr="QM2")
            receiver = await qms["QM2"].connect("RECEIVER")
            hr = await receiver.open("DEST.LATER", ["INPUT_SHARED"])
            assert (await receiver.get(hr, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000))["data"] == "after the outage"
            with mq_reason(2033):
                await receiver.get(hr, ["NO_SYNCPOINT"])


# ---- dead-lettering by the agent: real queue-manager processes ------------------------------


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", SETUP)
    for qm in ("QM1", "QM2"):
        g.mqsc_ok(qm, "ALTER QMGR IGQ(ENABLED)\nDEFINE QLOCAL(DLQ)\nDEFINE QLOCAL(REPLY.Q)")
    g.mqsc_ok("QM2", "ALTER QMGR DEADQ(DLQ)\nDEFINE QLOCAL(DEST.STUCK) PUT(DISABLED)")
    return g


def test_dead_letter_keeps_the_original_context_and_the_report_travels_through_the_group(group):
    """With DEADQ set the message is dead-lettered on the destination QM: the MQDLH names the
    reason and destination, and the dead letter's MQMD is the original message's (IBM: the same
    as put by the original application but for Format): its context (PutApplName,
    UserIdentifier, PutDate/PutTime, PutQMgr), not the IGQ agent's, and its report options,
    COA and COD included - though the dead-letter queue, not being the destination, makes no
    such report. The exception report it asked for travels back through the group to ReplyToQ
    at ReplyToQMgr (QM1), made by IBM's rules for every queue-manager report (PASS_MSG_ID,
    PASS_DISCARD_AND_EXPIRY, PutApplType MQAT_QMGR)."""
    sender = MQ(group.url("QM1"), "PAYROLL")
    report = ["COA", "COD", "EXCEPTION_WITH_DATA", "PASS_DISCARD_AND_EXPIRY", "PASS_MSG_ID"]
    md = {"persistence": "PERSISTENT", "report": report, "reply_to_q": "REPLY.Q", "msg_id": "ab" * 24,
          "expiry": 36_000}
    sent = sender.put1("DEST.STUCK", "to the dead-letter queue", md=md, qmgr="QM2")["md"]
    assert sent["reply_to_qmgr"] == "QM1"

    receiver = MQ(group.url("QM2"))
    dead = receiver.get(receiver.open("DLQ", ["INPUT_SHARED"]), ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)
    header = json.loads(dead["data"])
    assert dead["md"]["format"] == "MQDEAD" and header["Reason"] == 2051 and header["DestQName"] == "DEST.STUCK"
    assert header["MsgDesc"]["msg_id"] == "ab" * 24
    for field in ("put_appl_name", "user_identifier", "put_date_time", "put_qmgr", "report", "msg_id"):
        assert dead["md"].get(field) == sent.get(field), field
    assert dead["md"]["put_appl_name"] == "PAYROLL" and dead["md"]["put_qmgr"] == "QM1"

    reply = sender.open("REPLY.Q", ["INPUT_SHARED"])
    report_msg = sender.get(reply, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)
    r = report_msg["md"]
    assert r["msg_type"] == "REPORT" and r["feedback"] == 2051
    assert r["correl_id"] == "ab" * 24  # MQRO_COPY_MSG_ID_TO_CORREL_ID (the default)
    assert r["msg_id"] == "ab" * 24  # MQRO_PASS_MSG_ID
    assert 0 < r["expiry"] <= 36_000  # MQRO_PASS_DISCARD_AND_EXPIRY: what remains, not unlimited
    assert r["put_appl_type"] == 7 and r["put_qmgr"] == "QM2"  # MQAT_QMGR, as every QM report
    assert r["persistence"] == "PERSISTENT" and r["format"] == "MQSTR"
    assert report_msg["data"] == "to the dead-letter queue"  # WITH_DATA: the first 100 bytes
    with mq_reason(2033):  # one report, not a local copy on QM2 as well
        receiver.get(receiver.open("REPLY.Q", ["INPUT_SHARED"]), ["NO_SYNCPOINT"])
    # No COA or COD for the dead letter's arrival on, or its get from, the dead-letter queue: a
    # COA QM2 makes now for QM1 is queued after any such report, and is the next to arrive.
    mark = receiver.put1("REPLY.Q", "sentinel", md={"report": ["COA"], "reply_to_q": "REPLY.Q",
                                                     "reply_to_qmgr": "QM1"})["md"]
    assert sender.get(reply, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)["md"]["correl_id"] == mark["msg_id"]


# ---- a message on the transmission queue that is no transmission message --------------------


def qmgr_state(group, qm: str) -> dict[str, Any]:
    """GET /v1/qmgr of ``qm``: its IGQ agent's state (IGQAGENT, IGQRETRIES, IGQRESTARTS, ...)."""
    return httpx.get(f"{group.url(qm)}/v1/qmgr", timeout=10).json()


def put_on_xmitq(group, addressee: str, data: str, **md: Any) -> dict[str, Any]:
    """An application's put of ``data`` straight to SYSTEM.QSG.TRANSMIT.QUEUE, addressed (by
    CorrelId) to ``addressee``'s IGQ agent: any application may put there."""
    app = MQ(group.url("QM1"), "ROGUE")
    return app.put1(IGQ_XMITQ, data, md={"correl_id": igq_correl_id(addressee), **md})["md"]


@pytest.mark.parametrize("data", [
    "not a transmission header",
    json.dumps({"StrucId": "XQH ", "RemoteQName": "DEST.OK", "RemoteQMgrName": "QM2", "MsgDesc": {},
                "MsgData": ""}),  # an MQXQH whose MsgDesc is no message descriptor
    json.dumps({"StrucId": "XQH ", "RemoteQName": "DEST.OK", "RemoteQMgrName": "QM2",
                "MsgDesc": {"msg_id": "00" * 24, "correl_id": "00" * 24, "priority": 0}, "MsgData": "%%%"}),
])
def test_a_malformed_transmission_message_is_dead_lettered_with_xmit_q_msg_error(group, data):
    """QM2 has a dead-letter queue: the agent moves the message there as it is, MQDLH Reason
    MQFB_XMIT_Q_MSG_ERROR (271), without ending abnormally, and goes on with the next message."""
    group.mqsc_ok("QM2", "DEFINE QLOCAL(DEST.OK) REPLACE")
    restarts = qmgr_state(group, "QM2")["IGQRESTARTS"]
    bad = put_on_xmitq(group, "QM2", data, persistence="PERSISTENT")
    MQ(group.url("QM1")).put1("DEST.OK", "behind it", qmgr="QM2")

    receiver = MQ(group.url("QM2"))
    dead = receiver.get(receiver.open("DLQ", ["INPUT_SHARED"]), ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)
    header = json.loads(dead["data"])
    assert dead["md"]["format"] == "MQDEAD" and header["Reason"] == 271  # MQFB_XMIT_Q_MSG_ERROR
    assert dead["md"]["msg_id"] == bad["msg_id"] and dead["md"]["persistence"] == "PERSISTENT"
    assert base64.b64decode(header["MsgData"]).decode() == data  # the message as it was
    assert header["DestQName"] == IGQ_XMITQ
    got = receiver.get(receiver.open("DEST.OK", ["INPUT_SHARED"]), ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)
    assert got["data"] == "behind it"  # the agent went on
    state = qmgr_state(group, "QM2")
    assert state["IGQAGENT"] == "RUNNING" and state["IGQRESTARTS"] == restarts  # no CSQM067E, no restart loop
    (res,) = group.mqsc("QM1", f"DISPLAY QLOCAL({IGQ_XMITQ}) CURDEPTH")
    assert res["objects"][0]["CURDEPTH"] == 0


def test_a_malformed_transmission_message_with_no_dead_letter_queue_stays_and_the_agent_retries(group):
    """QM1 has no dead-letter queue: the message stays on the transmission queue (never lost)
    and the agent goes into retry at IBM's intervals - not a restart every tenth of a second.
    (Last in the module: QM1's agent then waits out its first 60 s retry interval.)"""
    restarts = qmgr_state(group, "QM1")["IGQRESTARTS"]
    bad = put_on_xmitq(group, "QM1", "not a transmission header")
    wait_until(lambda: qmgr_state(group, "QM1")["IGQAGENT"] == "RETRY", 20, "QM1's agent in retry")
    state = qmgr_state(group, "QM1")
    assert "no valid transmission message" in state["IGQRETRYREASON"], state
    assert state["IGQRETRIES"] == 1 and state["IGQRESTARTS"] == restarts, state  # one retry, no restarts
    # still there, for a dead-letter queue or an operator: taken off here so nothing is left behind
    cleaner = MQ(group.url("QM1"))
    left = cleaner.get(cleaner.open(IGQ_XMITQ, ["INPUT_SHARED"]), ["NO_SYNCPOINT"], match={"msg_id": bad["msg_id"]})
    assert left["data"] == "not a transmission header"
