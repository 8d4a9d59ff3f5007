"""Message expiry (docs/ibm-rules.md §4), on a real queue manager (real Redis and SQLite) run
in-process with an injected clock, so lifetimes pass without waiting."""

from __future__ import annotations

import base64

import orjson
import pytest

from app.core.errors import MQError
from tests.support.inproc import App, depth, mqsc


async def test_expiry_values_are_checked_and_no_report_is_made(qm):
    await mqsc(qm, "DEFINE QLOCAL(E.Q)")
    app = await App.connect(qm)
    h = await app.open("E.Q", ["OUTPUT"])
    for bad in (0, -5, -2, True, "10"):
        with pytest.raises(MQError) as info:
            await app.put(h, "x", expiry=bad, report=["EXPIRATION"], reply_to_q="REPLY.Q")
        assert info.value.reason == 2013
    assert await depth(qm, "E.Q") == 0 and await depth(qm, "REPLY.Q") == 0


async def test_get_returns_the_lifetime_that_remains(qm):
    await mqsc(qm, "DEFINE QLOCAL(E.Q)")
    app = await App.connect(qm)
    await app.put(await app.open("E.Q", ["OUTPUT"]), "x", expiry=100)
    await app.put(await app.open("E.Q", ["OUTPUT"]), "forever")
    qm.clock.advance(3_500)
    h = await app.open("E.Q", ["INPUT_SHARED"])
    assert (await app.get(h))["md"]["expiry"] == 65
    assert (await app.get(h))["md"]["expiry"] == -1


async def test_fifo_get_discards_every_expired_message_ahead_of_the_first_unexpired(qm):
    await mqsc(qm, "DEFINE QLOCAL(F.Q) MSGDLVSQ(FIFO)")
    app = await App.connect(qm)
    out = await app.open("F.Q", ["OUTPUT"])
    await app.put(out, "A", expiry=10, priority=9)
    await app.put(out, "B", expiry=50)
    await app.put(out, "C")
    await app.put(out, "D", expiry=10)
    qm.clock.advance(2_000)
    assert await depth(qm, "F.Q") == 4  # expired messages count until discarded
    h = await app.open("F.Q", ["INPUT_SHARED"])
    assert (await app.get(h))["data"] == "B"  # A discarded on the way
    assert await depth(qm, "F.Q") == 2  # C and the expired D
    assert (await app.get(h))["data"] == "C"
    with pytest.raises(MQError) as info:
        await app.get(h)
    assert info.value.reason == 2033
    assert await depth(qm, "F.Q") == 0  # D discarded by the get that found nothing


async def test_priority_get_discards_higher_and_earlier_equal_priority_only(qm):
    await mqsc(qm, "DEFINE QLOCAL(P.Q) MSGDLVSQ(PRIORITY)")
    app = await App.connect(qm)
    out = await app.open("P.Q", ["OUTPUT"])
    await app.put(out, "X1", priority=5, expiry=10)
    await app.put(out, "Y", priority=5, expiry=600)
    await app.put(out, "X2", priority=9, expiry=10)
    await app.put(out, "X3", priority=1, expiry=10)
    await app.put(out, "X4", priority=5, expiry=10)
    qm.clock.advance(5_000)
    h = await app.open("P.Q", ["INPUT_SHARED"])
    assert (await app.get(h))["data"] == "Y"
    assert await depth(qm, "P.Q") == 2  # X4 (equal priority, later) and X3 (lower) not discarded yet
    with pytest.raises(MQError):
        await app.get(h)
    assert await depth(qm, "P.Q") == 0


async def test_browse_and_match_options_never_return_an_expired_message(qm):
    await mqsc(qm, "DEFINE QLOCAL(M.Q)")
    app = await App.connect(qm)
    out = await app.open("M.Q", ["OUTPUT"])
    cid = "ab" * 24
    await app.put(out, "old", correl_id=cid, expiry=10)
    await app.put(out, "other", expiry=10)
    await app.put(out, "new", correl_id=cid)
    qm.clock.advance(2_000)
    h = await app.open("M.Q", ["INPUT_SHARED", "BROWSE"])
    first = await app.get(h, ["BROWSE_FIRST"])
    assert first["data"] == "new"  # browse discarded the two expired ones before it
    assert await depth(qm, "M.Q") == 1
    got = await app.get(h, match={"correl_id": cid})
    assert got["data"] == "new"


async def test_expired_messages_count_toward_maxdepth(qm):
    await mqsc(qm, "DEFINE QLOCAL(D.Q) MAXDEPTH(2)")
    app = await App.connect(qm)
    out = await app.open("D.Q", ["OUTPUT"])
    await app.put(out, "1", expiry=10)
    await app.put(out, "2", expiry=10)
    qm.clock.advance(2_000)
    with pytest.raises(MQError) as info:
        await app.put(out, "3")
    assert info.value.reason == 2053
    with pytest.raises(MQError):
        await app.get(await app.open("D.Q", ["INPUT_SHARED"]))
    await app.put(out, "3")  # the discards made room


async def wait_reports(app: App, hobj: str, n: int) -> list[dict]:
    """The expiration reports on the reply queue (sent by the QM's report task: wait for them)."""
    out = []
    for _ in range(n):
        out.append(await app.get(hobj, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000))
    return out


async def test_expiration_reports_every_variant(qm):
    await mqsc(qm, "DEFINE QLOCAL(R.Q)")
    app = await App.connect(qm)
    out = await app.open("R.Q", ["OUTPUT"])
    body = "x" * 300
    plain = await app.put(out, body, expiry=10, report=["EXPIRATION"], reply_to_q="REPLY.Q")
    with_data = await app.put(out, body, expiry=10, report=["EXPIRATION_WITH_DATA"], reply_to_q="REPLY.Q")
    full = await app.put(out, body, expiry=10, report=["EXPIRATION_WITH_FULL_DATA"], reply_to_q="REPLY.Q")
    await app.put(out, "p", expiry=10, report=["EXPIRATION", "PASS_CORREL_ID"], reply_to_q="REPLY.Q",
                  correl_id="cd" * 24)
    await app.put(out, "silent", expiry=10)  # asked for no report: none is made
    assert plain["reply_to_qmgr"] == "QM1"  # a blank ReplyToQMgr is filled in at put time
    qm.clock.advance(2_000)
    with pytest.raises(MQError):
        await app.get(await app.open("R.Q", ["INPUT_SHARED"]))
    reports = await wait_reports(app, await app.open("REPLY.Q", ["INPUT_SHARED"]), 4)
    by_correl = {r["md"]["correl_id"]: r for r in reports}
    assert set(by_correl) == {plain["msg_id"], with_data["msg_id"], full["msg_id"], "cd" * 24}
    for r in reports:
        assert r["md"]["msg_type"] == "REPORT" and r["md"]["feedback"] == 258 and r["md"]["expiry"] == -1
        assert r["md"]["put_appl_name"] == "QM1"
    assert by_correl[plain["msg_id"]]["data_length"] == 0
    assert by_correl[with_data["msg_id"]]["data"] == body[:100]
    assert by_correl[full["msg_id"]]["data"] == body
    with pytest.raises(MQError):  # exactly four
        await app.get(await app.open("REPLY.Q", ["INPUT_SHARED"]))


async def test_discard_and_report_are_not_part_of_the_unit_of_work(qm):
    await mqsc(qm, "DEFINE QLOCAL(U.Q)")
    app = await App.connect(qm)
    out = await app.open("U.Q", ["OUTPUT"])
    await app.put(out, "expired", expiry=10, report=["EXPIRATION"], reply_to_q="REPLY.Q")
    await app.put(out, "alive")
    qm.clock.advance(2_000)
    h = await app.open("U.Q", ["INPUT_SHARED"])
    assert (await app.get(h, ["SYNCPOINT"]))["data"] == "alive"
    await qm.mqi.backout(app.hconn)
    assert await app.drain(h) == ["alive"]  # the discard stands after the backout
    (report,) = await wait_reports(app, await app.open("REPLY.Q", ["INPUT_SHARED"]), 1)
    assert report["md"]["feedback"] == 258


async def test_an_undeliverable_report_goes_to_the_dead_letter_queue(qm):
    await mqsc(qm, "DEFINE QLOCAL(X.Q)")
    app = await App.connect(qm)
    await app.put(await app.open("X.Q", ["OUTPUT"]), "lost", expiry=10, report=["EXPIRATION_WITH_FULL_DATA"],
                  reply_to_q="NO.SUCH.REPLY.Q")
    qm.clock.advance(2_000)
    with pytest.raises(MQError):
        await app.get(await app.open("X.Q", ["INPUT_SHARED"]))
    (dead,) = await wait_reports(app, await app.open("DLQ", ["INPUT_SHARED"]), 1)
    header = orjson.loads(base64.b64decode(dead["data"]) if dead["data_encoding"] == "base64" else dead["data"])
    assert dead["md"]["format"] == "MQDEAD" and header["Reason"] == 2085
    assert header["DestQName"] == "NO.SUCH.REPLY.Q" and base64.b64decode(header["MsgData"]) == b"lost"


async def test_refresh_qmgr_type_expiry_discards_without_a_get(qm):
    await mqsc(qm, "DEFINE QLOCAL(RF1.Q)\nDEFINE QLOCAL(RF2.Q)\n"
                   "DEFINE QLOCAL(RFSH.Q) QSGDISP(SHARED) CFSTRUCT(APPL1)\nDEFINE QLOCAL(OTHER.Q)")
    app = await App.connect(qm)
    for name in ("RF1.Q", "RF2.Q", "RFSH.Q", "OTHER.Q"):
        out = await app.open(name, ["OUTPUT"])
        await app.put(out, "soon", expiry=10)
        await app.put(out, "later", expiry=1000)
    qm.clock.advance(2_000)
    (res,) = await mqsc(qm, "REFRESH QMGR TYPE(EXPIRY) NAME(RF*)")
    assert "3 queue(s) scanned, 3 expired message(s) discarded" in res["messages"][0]
    assert [await depth(qm, q) for q in ("RF1.Q", "RF2.Q", "RFSH.Q", "OTHER.Q")] == [1, 1, 1, 2]


async def test_exprint_scan_only_visits_queues_worth_it(qm):
    await mqsc(qm, "DEFINE QLOCAL(W1.Q)\nDEFINE QLOCAL(W2.Q)\nDEFINE QLOCAL(SH2.Q) QSGDISP(SHARED) CFSTRUCT(APPL1)")
    app = await App.connect(qm)
    await app.put(await app.open("W1.Q", ["OUTPUT"]), "soon", expiry=10)
    await app.put(await app.open("W2.Q", ["OUTPUT"]), "much later", expiry=100_000)
    await app.put(await app.open("SH2.Q", ["OUTPUT"]), "soon", expiry=10)
    qm.clock.advance(2_000)
    # candidates come from the structure's note of its expiring queues, not from every queue
    assert await qm.cf.expiry_candidates("QSG1.QM.QM1") == ["W1.Q"]
    assert await qm.expiry.scan(shared=False) == 1  # its own queues only
    assert await depth(qm, "SH2.Q") == 1
    assert await qm.expiry.scan(shared=True) == 1  # the shared-queue scanner also does the CF
    assert await qm.cf.expiry_candidates("QSG1.QM.QM1") == []
