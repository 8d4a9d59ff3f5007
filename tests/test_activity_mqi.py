"""What the queue manager records for each MQI call, whatever its outcome."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from app.activity.hooks import note, parse_put_time, recorded
from app.activity.log import ActivityLog
from app.activity.schema import FIELD_NAMES, SCHEMA_VERSION, Verb, markdown_table
from app.activity.store import FolderStore
from app.activity.writer import ActivityWriter, Spool
from app.core.clock import ManualClock
from app.core.errors import MQError
from app.core.reasons import MQRC
from tests.support.inproc import inprocess_group
from tests.support.mq import MQFailed

T0 = 1_748_772_000_000  # 2025-06-01T10:00:00Z
ROOT = Path(__file__).resolve().parents[1]


def all_records(workdir: Path) -> list[dict[str, Any]]:
    out = []
    for f in sorted((workdir / "activity").glob("date=*/qmgr=*/*.jsonl")):
        out += [json.loads(line) for line in f.read_text().splitlines()]
    return out


async def test_every_verb_is_recorded_with_its_outcome(redis_url, tmp_path):
    clock = ManualClock(T0)
    async with inprocess_group(["QM1"], redis_url, tmp_path, clock) as qms:
        qm1 = qms["QM1"]
        await qm1.mqsc("DEFINE QLOCAL(LOCAL.Q) QSGDISP(QMGR) BOTHRESH(5) DEFPSIST(YES)\n"
                       "DEFINE QALIAS(ALIAS.Q) TARGET(LOCAL.Q)")
        app = await qm1.connect("  PAYROLL  ")
        alias = await app.open("ALIAS.Q", ["OUTPUT"])
        clock.advance(1000)
        put = (await app.put(alias, "0123456789", options=["SYNCPOINT"],
                             md={"priority": 7, "persistence": "PERSISTENT"}))["md"]
        await app.commit()
        with pytest.raises(MQFailed):
            await app.put1("NO.SUCH.Q", "x")
        q = await app.open("LOCAL.Q", ["INPUT_SHARED", "BROWSE", "INQUIRE"])
        await app.get(q, ["BROWSE_FIRST"])
        clock.advance(250)
        await app.get(q, ["SYNCPOINT_IF_PERSISTENT"])
        await app.backout()
        await app.call("GET", f"/v1/connections/{app.hconn}/objects/{q}/attributes")
        await app.close(q)
        await app.disconnect()
    records = all_records(tmp_path)
    by_verb: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_verb.setdefault(r["verb"], []).append(r)
    assert [r["verb"] for r in records] == ["CONN", "OPEN", "PUT", "CMIT", "PUT1", "OPEN", "BROWSE", "GET", "BACK",
                                            "INQ", "CLOSE", "DISC"]
    assert all(r["v"] == SCHEMA_VERSION and r["qsg"] == "QSG1" and r["qmgr"] == "QM1" for r in records)
    assert all(set(r) <= set(FIELD_NAMES) for r in records)  # only documented fields
    assert {r["appl"] for r in records} == {"PAYROLL"} and len({r["hconn"] for r in records}) == 1

    p = by_verb["PUT"][0]
    assert (p["object"], p["alias"], p["qsgdisp"]) == ("LOCAL.Q", "ALIAS.Q", "QMGR")  # through the alias
    assert (p["msg_id"], p["priority"], p["persistent"], p["size"], p["syncpoint"], p["depth"], p["ts"]) == \
        (put["msg_id"], 7, True, 10, True, 1, T0 + 1000)
    assert (p["cc"], p["rc"]) == (0, 0) and p["latency_us"] >= 0

    p1 = by_verb["PUT1"][0]
    assert (p1["object"], p1["cc"], p1["rc"]) == ("NO.SUCH.Q", 2, int(MQRC.UNKNOWN_OBJECT_NAME))

    b = by_verb["BROWSE"][0]
    assert (b["syncpoint"], b["depth"], b["put_ts"], b["msg_id"]) == (False, 1, T0 + 1000, put["msg_id"])
    g = by_verb["GET"][0]
    # SYNCPOINT_IF_PERSISTENT on a persistent message: inside the unit of work
    assert (g["syncpoint"], g["persistent"], g["depth"], g["put_ts"], g["ts"], g["bothresh"], g["backout_count"]) == \
        (True, True, 0, T0 + 1000, T0 + 1250, 5, 0)
    assert by_verb["OPEN"][0]["detail"] == "OUTPUT" and by_verb["OPEN"][1]["object"] == "LOCAL.Q"
    assert by_verb["INQ"][0]["object"] == "LOCAL.Q" and by_verb["CLOSE"][0]["object"] == "LOCAL.Q"


async def test_recording_can_be_switched_off(redis_url, tmp_path):
    async with inprocess_group(["QM1"], redis_url, tmp_path, ManualClock(T0), activity_enabled=False) as qms:
        await (await qms["QM1"].connect("APP")).disconnect()
    assert all_records(tmp_path) == []


class FakeQM:
    def __init__(self, activity: ActivityLog) -> None:
        self.activity = activity


class FakeMqi:
    """Just enough of ``Mqi`` for the decorator: ``qm.activity`` and a connection table."""

    def __init__(self, activity: ActivityLog) -> None:
        self.qm = FakeQM(activity)
        self.connections: dict[str, Any] = {}
        self.ran: list[str] = []

    @recorded(Verb.CMIT)
    async def commit(self, hconn: str) -> None:
        """MQCMIT."""
        self.ran.append(hconn)
        note(hconn, detail="noted")
        note("someone-else", detail="not for this call")
        if hconn == "bad":
            raise MQError(MQRC.BACKED_OUT, "the unit of work was backed out")
        if hconn == "bug":
            raise ZeroDivisionError


async def test_the_decorator_sees_success_failure_and_bugs_and_waits_for_room(tmp_path):
    spool = Spool(tmp_path / "spool", FolderStore(tmp_path / "store"), qsg="QSG1", qmgr="QM1")
    writer = ActivityWriter(spool, max_records=2, flush_s=60)
    mqi = FakeMqi(ActivityLog("QSG1", "QM1", ManualClock(T0), writer))
    assert FakeMqi.commit.__doc__ == "MQCMIT." and FakeMqi.commit.__name__ == "commit"
    await mqi.commit("ok")
    with pytest.raises(MQError):
        await mqi.commit("bad")
    assert writer.full
    # the buffer is full and the writer's task is not running: the next call waits for room
    blocked = asyncio.create_task(mqi.commit("bug"))
    done, _ = await asyncio.wait({blocked}, timeout=0.2)
    assert not done and mqi.ran == ["ok", "bad"]
    await writer.start()  # the writer drains the buffer, the call goes ahead
    with pytest.raises(ZeroDivisionError):
        await asyncio.wait_for(blocked, 10)
    await writer.stop()
    records = [json.loads(x) for f in sorted((tmp_path / "store").rglob("*.jsonl")) for x in f.read_text().splitlines()]
    assert [(r["hconn"], r["cc"], r["rc"], r["detail"]) for r in records] == [
        ("ok", 0, 0, "noted"), ("bad", 2, 2003, "noted"), ("bug", 2, 2195, "noted")]


def test_put_time_parsing():
    assert parse_put_time("2025-06-01T10:00:01.250Z") == T0 + 1250
    assert parse_put_time("not a time") is None


def test_the_analytics_guide_documents_the_schema():
    guide = (ROOT / "docs" / "howto" / "analytics.md").read_text()
    assert markdown_table() in guide


async def test_expired_messages_a_get_discards_are_recorded(redis_url, tmp_path):
    clock = ManualClock(T0)
    async with inprocess_group(["QM1"], redis_url, tmp_path, clock) as qms:
        qm1 = qms["QM1"]
        await qm1.mqsc("DEFINE QLOCAL(EXP.Q)")
        app = await qm1.connect("EXPIRER")
        q = await app.open("EXP.Q", ["OUTPUT", "INPUT_SHARED"])
        for _ in range(3):
            await app.put(q, "short-lived", md={"expiry": 10}, options=["NO_SYNCPOINT"])
        await app.put(q, "lasting", options=["NO_SYNCPOINT"])
        clock.advance(2000)  # the first three are past their second
        assert (await app.get(q, ["NO_SYNCPOINT"]))["data"] == "lasting"
        await app.disconnect()
    expiry = [r for r in all_records(tmp_path) if r["verb"] == "EXPIRY"]
    assert [(r["object"], r["count"], r["detail"]) for r in expiry] == [("EXP.Q", 3, "discarded by a get or browse")]
