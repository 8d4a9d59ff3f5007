"""The nightly analytics job: one day of activity records -> Parquet tables, a JSON summary and
an HTML report (the counterpart of the reports people build from SMF 115/116 data).

Every table is a pure DataFrame-to-DataFrame function of the *prepared* records
(``prepare``), so each can be tested on a few hand-made rows; ``run_job`` is the thin part that
reads, caches, collects, writes and publishes; ``main`` parses arguments.

Tables (all for one UTC day; ``hour`` is 0-23 UTC):

* ``queue_hourly`` - per queue, QM and hour: puts, gets, browses, bytes, message residency
  p50/p95/p99/max (ms, from put time to destructive get), peak depth, failures, backouts
  (gets of messages with BackoutCount > 0), poison messages (BackoutCount >= BOTHRESH),
  expired messages, depth/full events, service interval breaches, triggers.
* ``queues`` - the same per queue for the whole day and group, plus how many QMs worked on it
  and how balanced they were (``balance`` = smallest / largest work share, 1 = even).
* ``queue_share`` - per shared queue and QM of the group: puts, gets and the QM's share of
  them (``work_share`` of puts + gets).
* ``qmgrs`` - per QM: calls, puts, gets, bytes, connections, commits, backouts, failures, MQPUT
  latency p50/p99, peer recoveries, expired messages, events, triggers, lost records.
* ``hourly`` - per hour for the whole group (all 24 hours, zeros included).
* ``failures`` - failed calls by QM, application, verb, queue and reason code.
* ``applications`` - per application, ranked by calls (the busiest first).
* ``happenings`` - records that are not MQI calls (events, triggers, expiry, peer recovery,
  IGQ, ...) by kind, queue, QM, hour and reason; new kinds appear here by themselves.

Percentiles are exact (Spark's ``percentile``: linear interpolation between the two nearest
ranks, as numpy's default), so they can be checked by hand.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from datetime import date as Date
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from app.activity.schema import MQI_VERBS, Verb
from app.analytics.status import write_status
from app.core.reasons import MQRC
from spark_jobs.schema import ACTIVITY_SCHEMA

log = logging.getLogger(__name__)

DAY_MS = 86_400_000
HOUR_MS = 3_600_000
JOB_VERSION = 1

#: Verbs whose ``object`` is a queue.
QUEUE_VERBS = ("PUT", "PUT1", "GET", "BROWSE", "OPEN", "CLOSE", "INQ", "SET", "EVENT", "TRIGGER",
               "EXPIRY", "IGQ")
_MQI = sorted(v.value for v in MQI_VERBS)
_DEPTH_EVENTS = (int(MQRC.Q_DEPTH_HIGH), int(MQRC.Q_DEPTH_LOW))
_FULL_EVENT = int(MQRC.Q_FULL)
_SERVICE_INTERVAL_HIGH = int(MQRC.Q_SERVICE_INTERVAL_HIGH)

#: Order in which ``run_job`` computes and writes the tables.
TABLES = ("queue_hourly", "queues", "queue_share", "qmgrs", "hourly", "failures", "applications",
          "happenings")


# ---- reading and preparing ----------------------------------------------------------------


def day_bounds(date: str) -> tuple[int, int]:
    """[start, end) of a UTC day in ms since the epoch."""
    start = int(datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=UTC).timestamp() * 1000)
    return start, start + DAY_MS


def read_activity(spark: SparkSession, activity_dir: str, date: str) -> DataFrame:
    """The records of one day's partition of the store (a folder or any Hadoop URI).

    Only complete files are there (the writer moves a file in when it is closed). A day with no
    partition gives no records rather than an error: a quiet day is a valid day.
    """
    path = f"{activity_dir.rstrip('/')}/date={date}"
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a live SparkContext has its JVM gateway
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    fs = hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    if not fs.exists(hadoop_path):
        return spark.createDataFrame([], ACTIVITY_SCHEMA)
    return (spark.read.schema(ACTIVITY_SCHEMA)
            .option("recursiveFileLookup", "true")        # date=.../qmgr=.../*.jsonl
            .option("pathGlobFilter", "*.{jsonl,jsonl.gz}")
            .option("mode", "PERMISSIVE")                 # a torn line becomes nulls, dropped below
            .json(path))


def prepare(records: DataFrame, date: str) -> DataFrame:
    """The columns every table uses, for records of ``date`` only.

    ``queue`` is the record's object for queue verbs; ``n`` the number of things a record
    stands for; ``residency_ms`` (destructive gets) = get time - put time.
    """
    start, end = day_bounds(date)
    ok = F.coalesce(F.col("cc"), F.lit(0)) < 2
    verb = F.col("verb")
    is_put = verb.isin("PUT", "PUT1") & ok
    is_get = (verb == "GET") & ok
    return (records
            .where(F.col("ts").isNotNull() & (F.col("ts") >= start) & (F.col("ts") < end))
            .select(
                "ts", "qsg", "qmgr", "appl", "verb", "qsgdisp", "rc", "depth", "backout_count",
                "bothresh", "latency_us",
                F.when(verb.isin(*QUEUE_VERBS), F.col("object")).alias("queue"),
                F.when(~verb.isin(*QUEUE_VERBS), F.col("object")).alias("target"),
                F.coalesce(F.col("cc"), F.lit(0)).alias("cc"),
                ((F.col("ts") - start) / HOUR_MS).cast("int").alias("hour"),
                F.coalesce(F.col("count"), F.lit(1)).alias("n"),
                F.coalesce(F.col("size"), F.lit(0)).alias("size"),
                is_put.alias("is_put"),
                is_get.alias("is_get"),
                (ok & verb.isin(*_MQI)).alias("ok_call"),
                (verb.isin(*_MQI) & (F.col("cc") == 2)).alias("failed"),
                F.when(is_get & F.col("put_ts").isNotNull(), F.col("ts") - F.col("put_ts")).alias("residency_ms"),
            ))


# ---- building blocks ----------------------------------------------------------------------


def _count(cond: Column) -> Column:
    return F.count_if(cond)


def _sum_if(cond: Column, value: Column) -> Column:
    return F.sum(F.when(cond, value).otherwise(F.lit(0))).cast("long")


def _queue_aggs() -> list[Column]:
    """Aggregates of queue records (shared by the hourly and the daily queue tables)."""
    verb = F.col("verb")
    ok = F.col("cc") < 2
    is_get = F.col("is_get")
    return [
        F.max(_qsgdisp_code()).alias("_qsgdisp"),
        _count(F.col("is_put")).alias("puts"),
        _count(is_get).alias("gets"),
        _count((verb == "BROWSE") & ok).alias("browses"),
        _sum_if(F.col("is_put"), F.col("size")).alias("bytes_put"),
        _sum_if(is_get, F.col("size")).alias("bytes_got"),
        F.max(F.when(verb.isin("PUT", "PUT1", "GET", "BROWSE") & ok, F.col("depth"))).alias("peak_depth"),
        _count(F.col("failed")).alias("failures"),
        _count(is_get & (F.col("backout_count") > 0)).alias("backouts"),
        _count(is_get & (F.col("bothresh") > 0) & (F.col("backout_count") >= F.col("bothresh"))).alias("poison"),
        _sum_if(verb == Verb.EXPIRY.value, F.col("n")).alias("expired"),
        _count((verb == Verb.EVENT.value) & F.col("rc").isin(*_DEPTH_EVENTS)).alias("depth_events"),
        _count((verb == Verb.EVENT.value) & (F.col("rc") == _FULL_EVENT)).alias("full_events"),
        _count((verb == Verb.EVENT.value) & (F.col("rc") == _SERVICE_INTERVAL_HIGH)).alias("service_interval_breaches"),
        _sum_if(verb == Verb.TRIGGER.value, F.col("n")).alias("triggers"),
    ]


# A queue's QSGDISP as a number while aggregating: max() of a string would take the whole
# aggregation off Spark's hash aggregation onto a sort of every record.
def _qsgdisp_code() -> Column:
    q = F.col("qsgdisp")
    return F.when(q == "SHARED", 3).when(q == "COPY", 2).when(q == "QMGR", 1)


def _qsgdisp_name() -> Column:
    c = F.col("_qsgdisp")
    return F.when(c == 3, "SHARED").when(c == 2, "COPY").when(c == 1, "QMGR")


def _with_residency(counts: DataFrame, prepared: DataFrame, keys: list[str]) -> DataFrame:
    """Residency percentiles of the destructive gets, joined to ``counts`` on ``keys``.

    A separate aggregation over the gets only: a percentile (an object aggregate) in the same
    aggregation as the counts would take them off Spark's fast code-generated hash aggregation.
    """
    residency = (prepared.where(F.col("residency_ms").isNotNull())
                 .groupBy(*keys)
                 .agg(F.percentile(F.col("residency_ms"), [0.5, 0.95, 0.99]).alias("_residency"),
                      F.max("residency_ms").alias("residency_max_ms")))
    return (counts.join(residency, keys, "left")
            .withColumn("residency_p50_ms", F.col("_residency")[0])
            .withColumn("residency_p95_ms", F.col("_residency")[1])
            .withColumn("residency_p99_ms", F.col("_residency")[2])
            .withColumn("qsgdisp", _qsgdisp_name())
            .drop("_residency", "_qsgdisp"))


_QUEUE_COLUMNS = ["qsgdisp", "puts", "gets", "browses", "bytes_put", "bytes_got", "residency_p50_ms",
                  "residency_p95_ms", "residency_p99_ms", "residency_max_ms", "peak_depth", "failures",
                  "backouts", "poison", "expired", "depth_events", "full_events", "service_interval_breaches",
                  "triggers"]


def _reason_names() -> Column:
    """rc -> IBM reason name, as a literal map (no Python UDF on the executors)."""
    pairs: list[Column] = []
    for rc in MQRC:
        pairs += [F.lit(int(rc)), F.lit(rc.mq_name)]
    return F.create_map(*pairs)


def _reason_name(rc: Column) -> Column:
    return F.coalesce(F.element_at(_reason_names(), rc), F.concat(F.lit("MQRC_"), rc.cast("string")))


def _queue_records(prepared: DataFrame) -> DataFrame:
    return prepared.where(F.col("queue").isNotNull())


# ---- the tables ---------------------------------------------------------------------------


def queue_hourly(prepared: DataFrame) -> DataFrame:
    """Per queue, QM and hour."""
    keys = ["queue", "qmgr", "hour"]
    counts = _queue_records(prepared).groupBy(*keys).agg(*_queue_aggs())
    return _with_residency(counts, prepared, keys).select(*keys, *_QUEUE_COLUMNS)


def queue_share(prepared: DataFrame) -> DataFrame:
    """Per shared queue and per QM of the group (every QM that wrote a record that day, so an
    idle QM shows a share of 0): puts, gets and the QM's shares of the queue's work."""
    qmgrs = prepared.select("qmgr").distinct()
    shared = _queue_records(prepared).where(F.col("qsgdisp") == "SHARED")
    work = shared.groupBy("queue", "qmgr").agg(_count(F.col("is_put")).alias("puts"),
                                               _count(F.col("is_get")).alias("gets"))
    grid = shared.select("queue").distinct().crossJoin(qmgrs)
    w = Window.partitionBy("queue")
    return (grid.join(work, ["queue", "qmgr"], "left")
            .fillna(0, ["puts", "gets"])
            .withColumn("work", F.col("puts") + F.col("gets"))
            .withColumn("put_share", F.try_divide(F.col("puts"), F.sum("puts").over(w)))
            .withColumn("get_share", F.try_divide(F.col("gets"), F.sum("gets").over(w)))
            .withColumn("work_share", F.try_divide(F.col("work"), F.sum("work").over(w)))
            .select("queue", "qmgr", "puts", "gets", "work", "put_share", "get_share", "work_share"))


def queues(prepared: DataFrame, share: DataFrame) -> DataFrame:
    """Per queue for the day; ``qmgrs`` = QMs that put or got; for shared queues ``balance`` =
    smallest / largest work share among the group's QMs (1 even, 0 one QM idle) and
    ``max_work_share``."""
    df = _queue_records(prepared).groupBy("queue").agg(
        *_queue_aggs(),
        F.count_distinct(F.when(F.col("is_put") | F.col("is_get"), F.col("qmgr"))).alias("qmgrs"))
    balance = share.groupBy("queue").agg(
        F.try_divide(F.min("work_share"), F.max("work_share")).alias("balance"),
        F.max("work_share").alias("max_work_share"))
    return (_with_residency(df, prepared, ["queue"]).join(balance, "queue", "left")
            .select("queue", *_QUEUE_COLUMNS, "qmgrs", "balance", "max_work_share"))


def qmgrs(prepared: DataFrame) -> DataFrame:
    """Per queue manager for the day."""
    verb = F.col("verb")
    ok_call = F.col("ok_call")
    latency = (prepared.where(F.col("is_put") & F.col("latency_us").isNotNull()).groupBy("qmgr")
               .agg(F.percentile(F.col("latency_us"), [0.5, 0.99]).alias("_lat")))
    df = prepared.groupBy("qmgr").agg(
        _count(verb.isin(*_MQI)).alias("calls"),
        _count(F.col("is_put")).alias("puts"),
        _count(F.col("is_get")).alias("gets"),
        _sum_if(F.col("is_put"), F.col("size")).alias("bytes_put"),
        _sum_if(F.col("is_get"), F.col("size")).alias("bytes_got"),
        _count(ok_call & (verb == "CONN")).alias("connections"),
        _count(ok_call & (verb == "CMIT")).alias("commits"),
        _count(ok_call & (verb == "BACK")).alias("backout_calls"),
        _count(F.col("failed")).alias("failures"),
        _count(verb == Verb.PEER_RECOVERY.value).alias("peer_recoveries"),
        _sum_if(verb == Verb.EXPIRY.value, F.col("n")).alias("expired"),
        _count(verb == Verb.EVENT.value).alias("events"),
        _sum_if(verb == Verb.TRIGGER.value, F.col("n")).alias("triggers"),
        _sum_if(verb == Verb.LOST.value, F.col("n")).alias("lost_records"),
    )
    return (df.join(latency, "qmgr", "left")
              .withColumn("put_latency_p50_us", F.col("_lat")[0])
              .withColumn("put_latency_p99_us", F.col("_lat")[1])
              .drop("_lat"))


def hourly(prepared: DataFrame) -> DataFrame:
    """Per hour for the whole group; every hour of the day is there, quiet ones with zeros."""
    verb = F.col("verb")
    spark = prepared.sparkSession
    hours = spark.range(24).select(F.col("id").cast("int").alias("hour"))
    df = prepared.groupBy("hour").agg(
        _count(verb.isin(*_MQI)).alias("calls"),
        _count(F.col("is_put")).alias("puts"),
        _count(F.col("is_get")).alias("gets"),
        _sum_if(F.col("is_put"), F.col("size")).alias("bytes_put"),
        _sum_if(F.col("is_get"), F.col("size")).alias("bytes_got"),
        _count(F.col("failed")).alias("failures"),
        _count(F.col("ok_call") & (verb == "CONN")).alias("connections"),
        F.max(F.when(verb.isin("PUT", "PUT1", "GET"), F.col("depth"))).alias("peak_depth"),
    )
    counts = ["calls", "puts", "gets", "bytes_put", "bytes_got", "failures", "connections"]
    return hours.join(df, "hour", "left").fillna(0, counts).orderBy("hour")


def failures(prepared: DataFrame) -> DataFrame:
    """Failed MQI calls (completion code 2) by QM, application, verb, queue and reason."""
    return (prepared.where(F.col("failed"))
            .groupBy("qmgr", "appl", "verb", "queue", "rc")
            .agg(F.count(F.lit(1)).alias("count"))
            .withColumn("reason_name", _reason_name(F.col("rc")))
            .select("qmgr", "appl", "verb", "queue", "rc", "reason_name", "count"))


def applications(prepared: DataFrame) -> DataFrame:
    """Per application (MQCONN appl_name), ranked by calls: ``rank`` 1 is the busiest."""
    verb = F.col("verb")
    df = (prepared.where(verb.isin(*_MQI) & F.col("appl").isNotNull())
          .groupBy("appl").agg(
              _count(F.col("ok_call") & (verb == "CONN")).alias("connections"),
              F.count(F.lit(1)).alias("calls"),
              _count(F.col("is_put")).alias("puts"),
              _count(F.col("is_get")).alias("gets"),
              _sum_if(F.col("is_put"), F.col("size")).alias("bytes_put"),
              _sum_if(F.col("is_get"), F.col("size")).alias("bytes_got"),
              _count(F.col("failed")).alias("failures"),
              F.count_distinct("qmgr").alias("qmgrs"),
              F.avg("latency_us").alias("avg_latency_us")))
    # One row per application: ranking them in a single partition is cheap (the constant key
    # says so, instead of Spark's warning about a window without one).
    rank = Window.partitionBy(F.lit(0)).orderBy(F.col("calls").desc(), F.col("appl"))
    return df.withColumn("rank", F.row_number().over(rank)).select(
        "rank", "appl", "calls", "connections", "puts", "gets", "bytes_put", "bytes_got", "failures",
        "qmgrs", "avg_latency_us")


def happenings(prepared: DataFrame) -> DataFrame:
    """Records that are not MQI calls, by kind, queue (or target), QM, hour and reason:
    ``records`` of them standing for ``count`` things."""
    return (prepared.where(~F.col("verb").isin(*_MQI))
            .withColumn("object", F.coalesce(F.col("queue"), F.col("target")))
            .groupBy("verb", "object", "qmgr", "hour", "rc")
            .agg(F.count(F.lit(1)).alias("records"), F.sum("n").cast("long").alias("count"))
            .withColumn("reason_name", F.when(F.col("rc") > 0, _reason_name(F.col("rc"))))
            .select("verb", "object", "qmgr", "hour", "rc", "reason_name", "records", "count"))


def compute_tables(prepared: DataFrame) -> dict[str, DataFrame]:
    """Every table of the day, by name (``TABLES`` order)."""
    share = queue_share(prepared)
    return {
        "queue_hourly": queue_hourly(prepared),
        "queues": queues(prepared, share),
        "queue_share": share,
        "qmgrs": qmgrs(prepared),
        "hourly": hourly(prepared),
        "failures": failures(prepared),
        "applications": applications(prepared),
        "happenings": happenings(prepared),
    }


# ---- the summary --------------------------------------------------------------------------


def _rows(df_rows: list[Any]) -> list[dict[str, Any]]:
    return [r.asDict() for r in df_rows]


def build_summary(date: str, records: int, qsgs: list[str], tables: dict[str, list[dict[str, Any]]],
                  generated_at: str, activity_dir: str) -> dict[str, Any]:
    """The JSON summary of a day (what ``/reports/{date}/summary.json`` serves and what the HTML
    report is rendered from)."""
    qm_rows = sorted(tables["qmgrs"], key=lambda r: r["qmgr"] or "")
    queue_rows = sorted(tables["queues"], key=lambda r: (-(r["puts"] + r["gets"]), r["queue"]))

    def total(rows: list[dict[str, Any]], key: str) -> int:
        return int(sum(r[key] or 0 for r in rows))

    by_reason: dict[tuple[int, str], int] = {}
    for f in tables["failures"]:
        key = (f["rc"], f["reason_name"])
        by_reason[key] = by_reason.get(key, 0) + f["count"]
    happenings_by_verb: dict[str, int] = {}
    for h in tables["happenings"]:
        happenings_by_verb[h["verb"]] = happenings_by_verb.get(h["verb"], 0) + h["count"]
    totals = {key: total(qm_rows, key) for key in (
        "calls", "puts", "gets", "bytes_put", "bytes_got", "connections", "commits", "backout_calls",
        "failures", "peer_recoveries", "expired", "events", "triggers", "lost_records")}
    totals.update({key: total(queue_rows, key) for key in (
        "backouts", "poison", "depth_events", "full_events", "service_interval_breaches")})
    return {
        "schema_version": JOB_VERSION,
        "date": date,
        "qsg": ",".join(sorted(q for q in qsgs if q)),
        "generated_at": generated_at,
        "activity_dir": activity_dir,
        "records": records,
        "totals": totals,
        "queues": queue_rows,
        "queue_share": sorted(tables["queue_share"], key=lambda r: (r["queue"], r["qmgr"])),
        "qmgrs": qm_rows,
        "hourly": sorted(tables["hourly"], key=lambda r: r["hour"]),
        "queue_hourly": sorted(tables["queue_hourly"], key=lambda r: (r["queue"], r["qmgr"], r["hour"])),
        "failures_by_reason": [{"rc": rc, "reason_name": name, "count": n}
                               for (rc, name), n in sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0][0]))],
        "failures": sorted(tables["failures"], key=lambda r: (-r["count"], r["rc"]))[:100],
        "applications": sorted(tables["applications"], key=lambda r: r["rank"])[:25],
        "happenings_by_kind": dict(sorted(happenings_by_verb.items())),
        "happenings": sorted(tables["happenings"], key=lambda r: (r["verb"], r["object"] or "", r["qmgr"] or "",
                                                                  r["hour"]))[:500],
    }


# ---- running ------------------------------------------------------------------------------


def spark_session(master: str = "local[*]", conf: dict[str, str] | None = None,
                  progress: bool = False) -> SparkSession:
    """A session for the job. Locally, Spark binds to the loopback address (the machines here
    have no resolvable host name for it) and the few shuffle partitions fit day-sized inputs."""
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (SparkSession.builder.master(master).appName("qsg-analytics")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", "8")
               .config("spark.ui.showConsoleProgress", "true" if progress else "false")
               .config("spark.driver.memory", "2g"))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN" if progress else "ERROR")
    return spark


class Steps:
    """Progress of a run: a rich progress bar on a terminal, one line per step otherwise."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.done = 0
        self.enabled = enabled
        self._bar: Any = None
        self._task: Any = None
        if enabled and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            # On stderr, with Spark's own stage progress bars; stdout keeps the result lines.
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                 TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                                 console=Console(stderr=True), transient=False)
            self._bar.start()
            self._task = self._bar.add_task("analytics", total=total)

    def step(self, text: str) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1, description=text)
        elif self.enabled:
            print(f"[{self.done}/{self.total}] {text}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def run_job(spark: SparkSession, date: str, activity_dir: str, output: str, *,
            progress: bool = False, clock: Callable[[], float] = time.time) -> dict[str, Any]:
    """Compute, write and publish the day's tables, summary and report; returns the summary.

    The day's output is assembled in a hidden staging folder and then swapped in for the old
    one, so re-running a day replaces its output (never duplicates it) and readers see either
    the old or the new report.
    """
    from app.reports.render import render_report

    Date.fromisoformat(date)  # a clear error for a malformed date
    started = clock()
    steps = Steps(len(TABLES) + 4, progress)
    try:
        prepared = prepare(read_activity(spark, activity_dir, date), date).persist()
        head = prepared.agg(F.count(F.lit(1)).alias("records"), F.collect_set("qsg").alias("qsgs")).first()
        assert head is not None  # an aggregate without grouping has exactly one row
        records, qsgs = int(head["records"]), list(head["qsgs"])
        steps.step(f"read {records} activity records of {date}")
        out = OutputFolder(spark, output)
        staging = out.child(f".staging-{date}-{uuid.uuid4().hex[:8]}")
        collected: dict[str, list[dict[str, Any]]] = {}
        try:
            for name, df in compute_tables(prepared).items():
                rows = df.collect()
                collected[name] = _rows(rows)
                # Written from the collected rows: each table is computed once.
                table = f"{staging}/tables/{name}"
                spark.createDataFrame(rows, df.schema).coalesce(1).write.mode("overwrite").parquet(table)
                verify_written(spark, name, table, len(rows))
                steps.step(f"{name}: {len(rows)} rows")
            generated_at = datetime.fromtimestamp(clock(), tz=UTC).isoformat(timespec="seconds")
            summary = build_summary(date, records, qsgs, collected, generated_at, activity_dir)
            summary["duration_s"] = round(clock() - started, 1)
            out.write_text(f"{staging}/summary.json", json.dumps(summary, indent=1, default=str))
            steps.step("summary.json")
            out.write_text(f"{staging}/report.html", render_report(summary))
            steps.step("report.html")
            out.publish(staging, out.child(date))
            if out.local is not None:  # /reports lists the runs of a local output folder
                write_status(out.local, date, "OK", records=records, duration_s=summary["duration_s"])
            steps.step(f"published {out.child(date)}")
        finally:
            out.delete(staging)
            prepared.unpersist()
        return summary
    finally:
        steps.close()


def verify_written(spark: SparkSession, name: str, path: str, expected: int) -> None:
    """Read a written table back and count its rows: Spark's executors write the files, and on a
    cluster whose executors cannot reach the output folder (a local path that is not shared
    storage) the write still "succeeds" - on each executor's own disk - and the driver would
    publish empty tables. Anything but the rows computed fails the job."""
    try:
        found = spark.read.parquet(path).count()
    except Exception as exc:  # AnalysisException: nothing readable there
        found, detail = -1, f" ({str(exc).splitlines()[0][:200]})"
    else:
        detail = ""
    if found != expected:
        raise RuntimeError(
            f"table {name}: {expected} rows computed but {max(found, 0)} read back from {path}{detail}: the "
            f"executors could not write the output folder (use storage that the driver and every worker "
            f"share, e.g. hdfs://, s3a:// or a shared mount)")


class OutputFolder:
    """The job's output folder through Hadoop's filesystem layer (Spark's own), so ``--output``
    may be a local folder or a URI (``file://``, ``hdfs://``, ``s3a://``, ...). A plain path is
    the local folder ``local``; for a URI ``local`` is None."""

    def __init__(self, spark: SparkSession, output: str) -> None:
        if "://" in output and not output.startswith("file://"):
            self.local: Path | None = None
            self.root = output.rstrip("/")
        else:
            self.local = Path(output.removeprefix("file://")).resolve()
            self.root = self.local.as_uri()
        jvm = spark.sparkContext._jvm
        assert jvm is not None  # a live SparkContext has its JVM gateway
        self._jvm = jvm
        self._fs = jvm.org.apache.hadoop.fs.Path(self.root).getFileSystem(
            spark.sparkContext._jsc.hadoopConfiguration())
        self._fs.mkdirs(self._path(self.root))

    def _path(self, uri: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(uri)

    def child(self, name: str) -> str:
        return f"{self.root}/{name}"

    def write_text(self, uri: str, text: str) -> None:
        stream = self._fs.create(self._path(uri), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def delete(self, uri: str) -> None:
        self._fs.delete(self._path(uri), True)

    def publish(self, staging: str, final: str) -> None:
        """Swap ``staging`` in as ``final``: two renames, so ``final`` is always one whole run
        (briefly absent between them, never a mix of two runs)."""
        head, _, tail = final.rpartition("/")
        old = f"{head}/.old-{tail}-{uuid.uuid4().hex[:8]}"
        if self._fs.exists(self._path(final)):
            self._fs.rename(self._path(final), self._path(old))
        if not self._fs.rename(self._path(staging), self._path(final)):
            raise RuntimeError(f"could not publish {staging} as {final}")
        self.delete(old)


def main(argv: list[str] | None = None) -> int:
    """``python -m spark_jobs.activity_daily --date ... --activity-dir ... --output ...`` (also
    what ``qsg analytics run`` calls)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--date", required=True)
    parser.add_argument("--activity-dir", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--master", default="local[*]")
    args = parser.parse_args(argv)
    spark = spark_session(args.master, progress=True)
    try:
        summary = run_job(spark, args.date, args.activity_dir, args.output, progress=True)
    finally:
        spark.stop()
    print(json.dumps(summary["totals"]))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
