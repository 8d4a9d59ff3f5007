"""Expiry of a message on SYSTEM.QSG.TRANSMIT.QUEUE (docs/ibm-rules.md §4.7): both Expiry fields of a
transmission message - the MQMD's and the one in the MQXQH's MsgDesc - are decremented by the
time it waited, and an expiration report on one that expired there describes the
application's message, not the transmission header.

QM2's IGQ agent is stopped (IGQ(DISABLED) there), so what QM1 sends through the group stays on
the transmission queue. The real apps run in this process on one ``ManualClock`` (requests
through HTTP/ASGI, a real redis-server), which the tests step instead of letting time pass."""

from __future__ import annotations

import base64
import json

from app.core.clock import ManualClock
from app.core.igq import IGQ_XMITQ
from tests.support.inproc import inprocess_group
from tests.support.mq import mq_reason

T0 = 1_760_000_000_000
SETUP = (f"DEFINE CFSTRUCT(APPL1) RECOVER(YES)\n"
         f"DEFINE QLOCAL({IGQ_XMITQ}) QSGDISP(SHARED) CFSTRUCT(APPL1) USAGE(XMITQ)\n"
         f"DEFINE QLOCAL(REPLY.Q)\nALTER QMGR IGQ(ENABLED)")


def xqh(message: dict) -> dict:
    """The MQXQH a got transmission message carries (MQXMIT is no text format: base64)."""
    assert message["data_encoding"] == "base64"
    return json.loads(base64.b64decode(message["data"]))


async def test_both_expiry_fields_are_decremented_on_the_transmission_queue(redis_url, tmp_path):
    clock = ManualClock(T0)
    async with inprocess_group(["QM1", "QM2"], redis_url, tmp_path, clock, activity_enabled=False) as qms:
        await qms["QM1"].mqsc(SETUP)
        await qms["QM2"].mqsc("DEFINE QLOCAL(DEST.Q)")
        app = await qms["QM1"].connect("SENDER")
        await app.put1("DEST.Q", "on its way", md={"expiry": 300}, qmgr="QM2")
        clock.advance(10_400)  # 104 tenths on SYSTEM.QSG.TRANSMIT.QUEUE
        xmitq = await app.open(IGQ_XMITQ, ["BROWSE", "INPUT_SHARED"])
        browsed = await app.get(xmitq, ["BROWSE_FIRST", "NO_SYNCPOINT"])
        got = await app.get(xmitq, ["NO_SYNCPOINT"])
        for m in (browsed, got):
            header = xqh(m)
            assert m["md"]["format"] == "MQXMIT" and m["md"]["expiry"] == 196
            assert header["MsgDesc"]["expiry"] == 196  # docs/ibm-rules.md §4.7: the MQXQH's Expiry too
            assert base64.b64decode(header["MsgData"]) == b"on its way"


async def test_inner_expiry_shorter_than_the_outer_one_becomes_zero(redis_url, tmp_path):
    """docs/ibm-rules.md §4.7: an MQXQH put by an application straight on a transmission queue may carry a smaller
    inner Expiry; once that time has passed it is set to zero while the message is still got."""
    clock = ManualClock(T0)
    async with inprocess_group(["QM1"], redis_url, tmp_path, clock, activity_enabled=False) as qms:
        await qms["QM1"].mqsc(SETUP)
        app = await qms["QM1"].connect("MOVER")
        header = {"StrucId": "XQH ", "Version": 1, "RemoteQName": "Q", "RemoteQMgrName": "QM9",
                  "MsgDesc": {"expiry": 50, "format": "MQSTR"}, "MsgData": base64.b64encode(b"x").decode()}
        await app.put1(IGQ_XMITQ, json.dumps(header), md={"format": "MQXMIT", "expiry": 600})
        clock.advance(10_000)
        xmitq = await app.open(IGQ_XMITQ, ["INPUT_SHARED"])
        got = await app.get(xmitq, ["NO_SYNCPOINT"])
        assert got["md"]["expiry"] == 500 and xqh(got)["MsgDesc"]["expiry"] == 0


async def test_expiration_report_on_the_transmission_queue_describes_the_application_message(redis_url, tmp_path):
    clock = ManualClock(T0)
    async with inprocess_group(["QM1", "QM2"], redis_url, tmp_path, clock, activity_enabled=False) as qms:
        await qms["QM1"].mqsc(SETUP)
        await qms["QM2"].mqsc("DEFINE QLOCAL(DEST.Q)")
        app = await qms["QM1"].connect("SENDER")
        text = "the application's data " * 10  # 230 bytes: WITH_DATA carries the first 100
        identity = {"user_identifier": "ALICE", "appl_identity_data": "ORDER-42", "accounting_token": "ab" * 32}
        sent = (await app.put1("DEST.Q", text, qmgr="QM2", options=["NO_SYNCPOINT", "SET_IDENTITY_CONTEXT"], md={
            "expiry": 10, "format": "MQSTR", "reply_to_q": "REPLY.Q", "report": ["EXPIRATION_WITH_DATA"],
            "correl_id": "cc" * 24, **identity}))["md"]
        clock.advance(2_000)
        xmitq = await app.open(IGQ_XMITQ, ["INPUT_SHARED"])
        with mq_reason(2033):  # the get discards the expired message
            await app.get(xmitq, ["NO_SYNCPOINT"])
        reply = await app.open("REPLY.Q", ["INPUT_SHARED"])
        report = await app.get(reply, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)
        assert report["md"]["feedback"] == 258 and report["md"]["msg_type"] == "REPORT"
        assert report["md"]["format"] == "MQSTR"  # the application's, not MQXMIT
        assert report["data"] == text[:100]  # its data, as EXPIRATION_WITH_DATA asks
        assert report["md"]["correl_id"] == sent["msg_id"]  # about the application's message
        # its user context is the original message's (IBM), its origin context the QM's
        assert {k: report["md"][k] for k in identity} == identity
        assert (report["md"]["put_appl_type"], report["md"]["put_appl_name"]) == (7, "QM1")


async def test_expiration_report_on_a_put_batch_through_the_group_describes_the_application_message(
        redis_url, tmp_path):
    """A put-batch to a queue of another queue manager (each message a transmission message on
    SYSTEM.QSG.TRANSMIT.QUEUE, as MQPUT makes it): each message that expires there is reported
    as the application's message, its data the first 100 bytes of the application's."""
    clock = ManualClock(T0)
    async with inprocess_group(["QM1", "QM2"], redis_url, tmp_path, clock, activity_enabled=False) as qms:
        await qms["QM1"].mqsc(SETUP)
        await qms["QM2"].mqsc("DEFINE QLOCAL(DEST.Q)")
        app = await qms["QM1"].connect("SENDER")
        texts = [f"batch message {i}: " + "the application's data " * 10 for i in range(2)]
        h = await app.open("DEST.Q", ["OUTPUT"], qmgr="QM2")
        md = {"expiry": 10, "format": "MQSTR", "reply_to_q": "REPLY.Q", "report": ["EXPIRATION_WITH_DATA"]}
        sent = await app.call("POST", f"/v1/connections/{app.hconn}/objects/{h}/put-batch",
                              {"options": ["NO_SYNCPOINT"], "messages": [{"md": md, "data": t} for t in texts]})
        clock.advance(2_000)
        xmitq = await app.open(IGQ_XMITQ, ["INPUT_SHARED"])
        with mq_reason(2033):  # the get discards the expired messages
            await app.get(xmitq, ["NO_SYNCPOINT"])
        reply = await app.open("REPLY.Q", ["INPUT_SHARED"])
        reports = [await app.get(reply, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000) for _ in texts]
        assert [r["md"]["feedback"] for r in reports] == [258, 258]
        assert [r["md"]["format"] for r in reports] == ["MQSTR", "MQSTR"]  # the application's, not MQXMIT
        assert sorted(r["data"] for r in reports) == sorted(t[:100] for t in texts)
        assert sorted(r["md"]["correl_id"] for r in reports) == sorted(m["msg_id"] for m in sent["md"])
