"""The nightly job's tables on a small hand-made day, against figures computed by hand.

The day (2025-06-01, UTC) - SQ is a shared queue (BOTHRESH 3), PQ a private queue of QM1:

hour 10  QM1 PAYROLL  CONN, OPEN SQ, PUT SQ 100 B (10:00:00.000, depth 1, 100 us),
                      PUT SQ 200 B (:01.000, depth 2, 200 us), PUT SQ 300 B (:02.000, depth 3, 300 us)
         QM2 BILLING  CONN, PUT SQ 400 B (:03.000, depth 4, 700 us)
         QM2 BILLING  GET SQ the 100 B message at :00.500 (residency 500 ms),
                      GET SQ the 200 B message at :03.000 (2000 ms)
         QM3 READER   CONN, GET SQ the 300 B message at :10.000 (8000 ms, BackoutCount 3 = poison),
                      BROWSE SQ the 400 B message
         QM1 PAYROLL  GET SQ fails 2033; PUT PQ 50 B (depth 1, 400 us); GET PQ it 100 ms later
                      (BackoutCount 1); CMIT
hour 11  QM2 BILLING  GET SQ the 400 B message at 11:00:03.000 (3 600 000 ms); BACK
         QM1 PAYROLL  PUT1 SQ 10 B (500 us), PUT SQ fails 2053
         happenings   EVENT 2224 on SQ (QM2), EXPIRY of 2 on SQ (QM1), TRIGGER on PQ (QM1),
                      PEER_RECOVERY of QM9 by QM3 (4 units of work), LOST 5 records (QM2)
plus one record of the day before and one of the day after (not counted).

Residency on SQ: 500, 2000, 8000, 3600000 ms -> p50 = 2000 + 0.5 * 6000 = 5000;
p95 at rank 0.95 * 3 = 2.85 -> 8000 + 0.85 * 3592000 = 3061200; p99 at 2.97 -> 3492240.
Work on SQ (puts + gets): QM1 4 + 0, QM2 1 + 3, QM3 0 + 1 -> shares 4/9, 4/9, 1/9; balance 1/4.
MQPUT latency of QM1: 100, 200, 300, 400, 500 us -> p50 300, p99 at 3.96 -> 496.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import Row
from pyspark.testing import assertDataFrameEqual

from app.activity.schema import FIELD_NAMES, MQI_VERBS
from spark_jobs.activity_daily import (
    compute_tables,
    prepare,
    read_activity,
    run_job,
)
from spark_jobs.schema import ACTIVITY_SCHEMA

DATE = "2025-06-01"
DAY = 1_748_736_000_000  # 2025-06-01T00:00:00Z
H10 = DAY + 10 * 3_600_000
H11 = H10 + 3_600_000


def rec(ts: int, qmgr: str, verb: str, **fields: Any) -> dict[str, Any]:
    appl = {"QM1": "PAYROLL", "QM2": "BILLING", "QM3": "READER"}[qmgr]
    out = {"v": 1, "ts": ts, "qsg": "QSG1", "qmgr": qmgr, "verb": verb, "cc": 0, "rc": 0}
    if verb in MQI_VERBS:  # happenings belong to no connection
        out.update(hconn=f"{qmgr}-1", appl=appl)
    out.update(fields)
    return out


SQ = {"object": "SQ", "qsgdisp": "SHARED"}
PQ = {"object": "PQ", "qsgdisp": "QMGR"}

RECORDS = [
    rec(H10, "QM1", "CONN", latency_us=10),
    rec(H10 + 1, "QM1", "OPEN", **SQ),
    rec(H10, "QM1", "PUT", size=100, depth=1, latency_us=100, **SQ),
    rec(H10 + 1000, "QM1", "PUT", size=200, depth=2, latency_us=200, **SQ),
    rec(H10 + 2000, "QM1", "PUT", size=300, depth=3, latency_us=300, **SQ),
    rec(H10 + 5, "QM2", "CONN"),
    rec(H10 + 3000, "QM2", "PUT", size=400, depth=4, latency_us=700, **SQ),
    rec(H10 + 500, "QM2", "GET", size=100, put_ts=H10, depth=3, backout_count=0, bothresh=3, **SQ),
    rec(H10 + 3000, "QM2", "GET", size=200, put_ts=H10 + 1000, depth=2, backout_count=0, bothresh=3, **SQ),
    rec(H10 + 6, "QM3", "CONN"),
    rec(H10 + 10_000, "QM3", "GET", size=300, put_ts=H10 + 2000, depth=1, backout_count=3, bothresh=3, **SQ),
    rec(H10 + 20_000, "QM3", "BROWSE", size=400, put_ts=H10 + 3000, depth=1, backout_count=0, bothresh=3, **SQ),
    rec(H10 + 30_000, "QM1", "GET", cc=2, rc=2033, bothresh=3, **SQ),
    rec(H10 + 40_000, "QM1", "PUT", size=50, depth=1, latency_us=400, **PQ),
    rec(H10 + 40_100, "QM1", "GET", size=50, put_ts=H10 + 40_000, depth=0, backout_count=1, bothresh=0, **PQ),
    rec(H10 + 50_000, "QM1", "CMIT"),
    rec(H11 + 3000, "QM2", "GET", size=400, put_ts=H10 + 3000, depth=0, backout_count=0, bothresh=3, **SQ),
    rec(H11 + 1_800_000, "QM1", "PUT1", size=10, depth=1, latency_us=500, **SQ),
    rec(H11 + 1_800_001, "QM1", "PUT", cc=2, rc=2053, latency_us=50, **SQ),
    rec(H11 + 5, "QM2", "EVENT", rc=2224, **SQ),
    rec(H11 + 6, "QM1", "EXPIRY", count=2, **SQ),
    rec(H11 + 7, "QM1", "TRIGGER", **PQ),
    rec(H11 + 8, "QM3", "PEER_RECOVERY", object="QM9", count=4),
    rec(H11 + 9, "QM2", "BACK"),
    rec(H11 + 10, "QM2", "LOST", count=5),
    rec(DAY - 1, "QM1", "PUT", size=999, depth=9, **SQ),           # the day before
    rec(DAY + 86_400_000, "QM1", "PUT", size=999, depth=9, **SQ),  # the day after
]


def as_frame(spark, records: list[dict[str, Any]]):
    return spark.createDataFrame([tuple(r.get(f) for f in FIELD_NAMES) for r in records], ACTIVITY_SCHEMA)


@pytest.fixture(scope="module")
def tables(spark):
    prepared = prepare(as_frame(spark, RECORDS), DATE).persist()
    yield compute_tables(prepared)
    prepared.unpersist()


def test_queues(tables):
    cols = ["queue", "qsgdisp", "puts", "gets", "browses", "bytes_put", "bytes_got", "residency_p50_ms",
            "residency_p95_ms", "residency_p99_ms", "residency_max_ms", "peak_depth", "failures", "backouts",
            "poison", "expired", "depth_events", "full_events", "service_interval_breaches", "triggers", "qmgrs",
            "balance", "max_work_share"]
    assertDataFrameEqual(tables["queues"].select(cols), [
        Row(queue="SQ", qsgdisp="SHARED", puts=5, gets=4, browses=1, bytes_put=1010, bytes_got=1000,
            residency_p50_ms=5000.0, residency_p95_ms=3061200.0, residency_p99_ms=3492240.0,
            residency_max_ms=3_600_000, peak_depth=4, failures=2, backouts=1, poison=1, expired=2,
            depth_events=1, full_events=0, service_interval_breaches=0, triggers=0, qmgrs=3,
            balance=0.25, max_work_share=4 / 9),
        Row(queue="PQ", qsgdisp="QMGR", puts=1, gets=1, browses=0, bytes_put=50, bytes_got=50,
            residency_p50_ms=100.0, residency_p95_ms=100.0, residency_p99_ms=100.0, residency_max_ms=100,
            peak_depth=1, failures=0, backouts=1, poison=0, expired=0, depth_events=0, full_events=0,
            service_interval_breaches=0, triggers=1, qmgrs=1, balance=None, max_work_share=None),
    ])


def test_queue_share_counts_idle_qmgrs_of_the_group(tables):
    assertDataFrameEqual(tables["queue_share"], [
        Row(queue="SQ", qmgr="QM1", puts=4, gets=0, work=4, put_share=0.8, get_share=0.0, work_share=4 / 9),
        Row(queue="SQ", qmgr="QM2", puts=1, gets=3, work=4, put_share=0.2, get_share=0.75, work_share=4 / 9),
        Row(queue="SQ", qmgr="QM3", puts=0, gets=1, work=1, put_share=0.0, get_share=0.25, work_share=1 / 9),
    ])


def test_queue_hourly(tables):
    rows = {(r["queue"], r["qmgr"], r["hour"]): r.asDict() for r in tables["queue_hourly"].collect()}
    assert set(rows) == {("SQ", "QM1", 10), ("SQ", "QM2", 10), ("SQ", "QM3", 10), ("PQ", "QM1", 10),
                         ("SQ", "QM1", 11), ("SQ", "QM2", 11), ("PQ", "QM1", 11)}
    qm2_10 = rows[("SQ", "QM2", 10)]
    assert (qm2_10["puts"], qm2_10["gets"], qm2_10["bytes_got"], qm2_10["peak_depth"]) == (1, 2, 300, 4)
    assert (qm2_10["residency_p50_ms"], qm2_10["residency_max_ms"]) == (1250.0, 2000)
    qm2_11 = rows[("SQ", "QM2", 11)]
    assert (qm2_11["gets"], qm2_11["residency_p99_ms"], qm2_11["depth_events"], qm2_11["peak_depth"]) \
        == (1, 3_600_000.0, 1, 0)
    qm1_11 = rows[("SQ", "QM1", 11)]
    assert (qm1_11["puts"], qm1_11["failures"], qm1_11["expired"]) == (1, 1, 2)
    assert rows[("PQ", "QM1", 11)]["triggers"] == 1
    assert rows[("SQ", "QM3", 10)]["poison"] == 1 and rows[("SQ", "QM3", 10)]["browses"] == 1


def test_qmgrs(tables):
    cols = ["qmgr", "calls", "puts", "gets", "bytes_put", "bytes_got", "connections", "commits", "backout_calls",
            "failures", "put_latency_p50_us", "put_latency_p99_us", "peer_recoveries", "expired", "events",
            "triggers", "lost_records"]
    assertDataFrameEqual(tables["qmgrs"].select(cols), [
        Row(qmgr="QM1", calls=11, puts=5, gets=1, bytes_put=660, bytes_got=50, connections=1, commits=1,
            backout_calls=0, failures=2, put_latency_p50_us=300.0, put_latency_p99_us=496.0, peer_recoveries=0,
            expired=2, events=0, triggers=1, lost_records=0),
        Row(qmgr="QM2", calls=6, puts=1, gets=3, bytes_put=400, bytes_got=700, connections=1, commits=0,
            backout_calls=1, failures=0, put_latency_p50_us=700.0, put_latency_p99_us=700.0, peer_recoveries=0,
            expired=0, events=1, triggers=0, lost_records=5),
        Row(qmgr="QM3", calls=3, puts=0, gets=1, bytes_put=0, bytes_got=300, connections=1, commits=0,
            backout_calls=0, failures=0, put_latency_p50_us=None, put_latency_p99_us=None, peer_recoveries=1,
            expired=0, events=0, triggers=0, lost_records=0),
    ])


def test_hourly_has_every_hour(tables):
    rows = [r.asDict() for r in tables["hourly"].collect()]
    assert [r["hour"] for r in rows] == list(range(24))
    by_hour = {r["hour"]: (r["calls"], r["puts"], r["gets"], r["failures"], r["connections"]) for r in rows}
    assert by_hour[10] == (16, 5, 4, 1, 3)
    assert by_hour[11] == (4, 1, 1, 1, 0)
    assert all(by_hour[h] == (0, 0, 0, 0, 0) for h in range(24) if h not in (10, 11))


def test_failures_by_reason_and_application(tables):
    assertDataFrameEqual(tables["failures"], [
        Row(qmgr="QM1", appl="PAYROLL", verb="GET", queue="SQ", rc=2033, reason_name="MQRC_NO_MSG_AVAILABLE", count=1),
        Row(qmgr="QM1", appl="PAYROLL", verb="PUT", queue="SQ", rc=2053, reason_name="MQRC_Q_FULL", count=1),
    ])


def test_applications_ranked_by_calls(tables):
    cols = ["rank", "appl", "calls", "connections", "puts", "gets", "bytes_put", "bytes_got", "failures", "qmgrs"]
    assertDataFrameEqual(tables["applications"].select(cols), [
        Row(rank=1, appl="PAYROLL", calls=11, connections=1, puts=5, gets=1, bytes_put=660, bytes_got=50, failures=2,
            qmgrs=1),
        Row(rank=2, appl="BILLING", calls=6, connections=1, puts=1, gets=3, bytes_put=400, bytes_got=700, failures=0,
            qmgrs=1),
        Row(rank=3, appl="READER", calls=3, connections=1, puts=0, gets=1, bytes_put=0, bytes_got=300, failures=0,
            qmgrs=1),
    ], checkRowOrder=True)


def test_happenings_include_kinds_the_job_does_not_know_by_name(tables):
    assertDataFrameEqual(tables["happenings"], [
        Row(verb="EVENT", object="SQ", qmgr="QM2", hour=11, rc=2224, reason_name="MQRC_Q_DEPTH_HIGH", records=1,
            count=1),
        Row(verb="EXPIRY", object="SQ", qmgr="QM1", hour=11, rc=0, reason_name=None, records=1, count=2),
        Row(verb="TRIGGER", object="PQ", qmgr="QM1", hour=11, rc=0, reason_name=None, records=1, count=1),
        Row(verb="PEER_RECOVERY", object="QM9", qmgr="QM3", hour=11, rc=0, reason_name=None, records=1, count=4),
        Row(verb="LOST", object=None, qmgr="QM2", hour=11, rc=0, reason_name=None, records=1, count=5),
    ])


def _write_store(root: Path, records: list[dict[str, Any]]) -> None:
    """Records as the writer ships them: one JSON line each, by date and QM."""
    for qmgr in ("QM1", "QM2", "QM3"):
        folder = root / f"date={DATE}" / f"qmgr={qmgr}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(r) for r in records if r["qmgr"] == qmgr]
        (folder / f"QSG1.{qmgr}.20250601T100000.000001.abcd.jsonl").write_text("\n".join(lines) + "\n")


def test_run_job_reads_the_store_and_replaces_a_rerun_day(spark, tmp_path):
    store, out = tmp_path / "activity", tmp_path / "reports"
    _write_store(store, RECORDS[:9])  # hour 10 up to QM2's second get
    # what the job must not read: an upload in progress, a spool file, and a torn last line
    part = store / f"date={DATE}" / "qmgr=QM1" / "_QSG1.QM1.x.jsonl.part"
    part.write_text(json.dumps(RECORDS[3]) + "\n")
    (store / ".spool" / "QSG1.QM1").mkdir(parents=True)
    (store / ".spool" / "QSG1.QM1" / "QSG1.QM1.y.jsonl.open").write_text(json.dumps(RECORDS[3]) + "\n")
    with open(store / f"date={DATE}" / "qmgr=QM2" / "QSG1.QM2.20250601T100000.000001.abcd.jsonl", "a") as f:
        f.write('{"v": 1, "ts": 17487')

    first = run_job(spark, DATE, str(store), str(out))
    assert (first["records"], first["totals"]["puts"], first["totals"]["gets"]) == (9, 4, 2)
    assert json.loads((out / DATE / "summary.json").read_text())["totals"]["puts"] == 4
    (out / DATE / "stale-marker").write_text("left by the first run")

    # the same day again, with the whole day now in the store
    for f in store.glob(f"date={DATE}/*/*.jsonl"):
        f.unlink()
    _write_store(store, RECORDS)
    second = run_job(spark, DATE, str(store), str(out))
    assert (second["records"], second["totals"]["puts"], second["totals"]["gets"]) == (25, 6, 5)
    assert not (out / DATE / "stale-marker").exists()  # replaced, not merged
    assert sorted(p.name for p in out.iterdir()) == [DATE, "_status"]  # no staging left behind
    assert sorted(p.name for p in (out / DATE / "tables").iterdir()) == sorted(
        ["queue_hourly", "queues", "queue_share", "qmgrs", "hourly", "failures", "applications", "happenings"])
    queues = {r["queue"]: r for r in spark.read.parquet(str(out / DATE / "tables" / "queues")).collect()}
    assert (queues["SQ"]["puts"], queues["SQ"]["gets"], queues["SQ"]["residency_p50_ms"]) == (5, 4, 5000.0)
    status = json.loads((out / "_status" / f"{DATE}.json").read_text())
    assert (status["status"], status["records"]) == ("OK", 25)
    summary = json.loads((out / DATE / "summary.json").read_text())
    assert summary["totals"]["poison"] == 1 and summary["totals"]["peer_recoveries"] == 1
    assert summary["failures_by_reason"] == [{"rc": 2033, "reason_name": "MQRC_NO_MSG_AVAILABLE", "count": 1},
                                             {"rc": 2053, "reason_name": "MQRC_Q_FULL", "count": 1}]


def test_a_day_without_records_gives_an_empty_report(spark, tmp_path):
    assert read_activity(spark, str(tmp_path / "nothing"), DATE).count() == 0
    summary = run_job(spark, DATE, str(tmp_path / "nothing"), str(tmp_path / "out"))
    assert summary["records"] == 0 and summary["totals"]["puts"] == 0
    assert len(summary["hourly"]) == 24
    assert "No activity records were found" in (tmp_path / "out" / DATE / "report.html").read_text()
