"""The whole path with real ``qsg serve`` processes: calls over HTTP, activity shipped when the
queue managers get SIGTERM, then ``qsg analytics run`` on the day."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from app.cli import main
from tests.support.mq import MQ, mq_reason


@pytest.fixture(scope="module")
def shipped(make_cluster) -> dict[str, Any]:
    """QM1 puts 12 messages on a shared queue, QM2 gets them and fails one get; both stop."""
    cluster = make_cluster(["QM1", "QM2"])
    cluster.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\n"
                           "DEFINE QLOCAL(CLI.Q) QSGDISP(SHARED) CFSTRUCT(APPL1)")
    writer, reader = MQ(cluster.url("QM1"), "WRITER"), MQ(cluster.url("QM2"), "READER")
    out = writer.open("CLI.Q", ["OUTPUT"])
    put_ids = [writer.put(out, f"m{i}")["md"]["msg_id"] for i in range(12)]
    inp = reader.open("CLI.Q", ["INPUT_SHARED"])
    got_ids = [reader.get(inp)["md"]["msg_id"] for _ in range(12)]
    with mq_reason(2033):
        reader.get(inp)
    cluster.stop()  # SIGTERM: each QM ends its connections and ships its activity log
    return {"store": cluster.workdir / "activity", "put_ids": put_ids, "got_ids": got_ids}


def _records(store: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for f in sorted(store.glob("date=*/qmgr=*/*.jsonl"))
            for line in f.read_text().splitlines()]


def test_sigterm_ships_every_record(shipped):
    records = _records(shipped["store"])
    puts = {r["msg_id"]: r for r in records if r["verb"] == "PUT"}
    gets = [r for r in records if r["verb"] == "GET" and r["cc"] == 0]
    assert sorted(puts) == sorted(shipped["put_ids"]) and {r["qmgr"] for r in puts.values()} == {"QM1"}
    assert [g["msg_id"] for g in gets] == shipped["got_ids"] and {g["qmgr"] for g in gets} == {"QM2"}
    for g in gets:  # the put time lies within the MQPUT call (its record is stamped at the end)
        put = puts[g["msg_id"]]
        assert put["ts"] - put["latency_us"] / 1000 - 1 <= g["put_ts"] <= put["ts"] <= g["ts"]
    assert [(r["qmgr"], r["rc"]) for r in records if r["cc"] == 2] == [("QM2", 2033)]
    # shutdown ended the open connections: their DISC records are in the log too
    assert {(r["qmgr"], r["appl"]) for r in records if r["verb"] == "DISC"} == {("QM1", "WRITER"), ("QM2", "READER")}
    assert not list((shipped["store"] / ".spool").rglob("*.jsonl*"))


def test_qsg_analytics_run_reports_the_day(shipped, spark, tmp_path):
    # The calls may straddle midnight (UTC): every day in the store is run and added up.
    days = sorted(p.name.removeprefix("date=") for p in shipped["store"].glob("date=*"))
    totals = {"puts": 0, "gets": 0, "failures": 0}
    for day in days:
        result = CliRunner().invoke(main, ["analytics", "run", "--date", day, "--activity-dir", str(shipped["store"]),
                                           "--output", str(tmp_path), "--no-progress"])
        assert result.exit_code == 0, result.output
        assert f"report: {tmp_path / day / 'report.html'}" in result.output
        summary = json.loads((tmp_path / day / "summary.json").read_text())
        for key in totals:
            totals[key] += summary["totals"][key]
    assert totals == {"puts": 12, "gets": 12, "failures": 1}
    assert not spark.sparkContext._jsc.sc().isStopped()  # the caller's session was left running


def test_a_failed_run_exits_non_zero_and_is_reported(spark, tmp_path):
    result = CliRunner().invoke(main, ["analytics", "run", "--date", "2025-06-01", "--activity-dir",
                                       "nosuchfs://nowhere/activity", "--output", str(tmp_path), "--no-progress"])
    assert result.exit_code == 1
    status = json.loads((tmp_path / "_status" / "2025-06-01.json").read_text())
    assert status["status"] == "FAILED" and status["error"]
    assert "qsg analytics run: 2025-06-01:" in result.output
    bad = CliRunner().invoke(main, ["analytics", "run", "--date", "June 1st", "--output", str(tmp_path)])
    assert bad.exit_code == 2 and "YYYY-MM-DD" in bad.output


def test_a_run_for_today_says_what_the_spools_still_hold(make_fresh_cluster, spark, tmp_path):
    from datetime import UTC, datetime

    from app.activity.writer import unshipped
    from tests.support.waits import wait_until

    cluster = make_fresh_cluster(["QM1"])
    cluster.mqsc_ok("QM1", "DEFINE QLOCAL(TODAY.Q)")
    m = MQ(cluster.url("QM1"), "TODAY")
    h = m.open("TODAY.Q", ["OUTPUT"])
    for i in range(5):
        m.put(h, f"m{i}")
    store = cluster.workdir / "activity"
    today = datetime.now(UTC).date().isoformat()
    wait_until(lambda: unshipped(store, today)[1] >= 6, 20, "the QM's spool holding today's records")
    result = CliRunner().invoke(main, ["analytics", "run", "--date", today, "--activity-dir", str(store),
                                       "--output", str(tmp_path), "--no-progress"])
    assert result.exit_code == 0, result.output
    files, records = unshipped(store, today)
    assert f"note: {records} record(s) of {today} in {files} file(s) are still in the queue managers' spools" \
        in result.output, result.output
