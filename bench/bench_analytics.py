"""Throughput of the nightly analytics job on a generated day of activity records.

    python bench/bench_analytics.py [--records 10000000] [--master local[2]] [--dir $TMPDIR/qsg-bench-analytics]

Generates one day of records (with Spark, in the store's layout and in the writer's exact JSON
form: one object per line, absent fields left out), then runs ``qsg analytics run`` for it in
a fresh process, as the nightly schedule does, and prints the wall time and records per second.
The generated day is kept (``--keep``) to re-run the job alone with ``--reuse``.

The mix: three QMs, 60 queues (20 shared), 40 applications; 33% MQPUT, 2% MQPUT1, 33% MQGET
(3% of them failing with 2033), 2% browse, 6% open/close, 2% connect/disconnect, 12% commit,
10% inquire; a few events, triggers and expiry records; message sizes 100 B - 10 KB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DAY_MS = 86_400_000


def generate(records: int, date: str, store: Path, master: str) -> float:
    """Write ``records`` records of ``date`` into ``store``; returns the seconds it took."""
    from pyspark.sql import functions as F

    from spark_jobs.activity_daily import day_bounds, spark_session

    started = time.perf_counter()
    spark = spark_session(master)
    day_start, _ = day_bounds(date)
    r = lambda salt: F.abs(F.xxhash64(F.col("id"), F.lit(salt)))  # noqa: E731 - a deterministic "random"
    u = lambda salt: (r(salt) % 1_000_000) / 1_000_000.0  # noqa: E731 - uniform in [0, 1)
    pick = u("verb")
    verb = (F.when(pick < 0.33, "PUT").when(pick < 0.35, "PUT1").when(pick < 0.68, "GET").when(pick < 0.70, "BROWSE")
            .when(pick < 0.73, "OPEN").when(pick < 0.76, "CLOSE").when(pick < 0.77, "CONN").when(pick < 0.78, "DISC")
            .when(pick < 0.90, "CMIT").when(pick < 0.9990, "INQ").when(pick < 0.9994, "EVENT")
            .when(pick < 0.9997, "TRIGGER").otherwise("EXPIRY"))
    queue_no = r("queue") % 60
    is_msg = F.col("verb").isin("PUT", "PUT1", "GET", "BROWSE")
    is_queue = is_msg | F.col("verb").isin("OPEN", "CLOSE", "INQ", "EVENT", "TRIGGER", "EXPIRY")
    failed = (F.col("verb") == "GET") & (u("fail") < 0.03)
    ok_msg = is_msg & ~failed
    is_get = F.col("verb").isin("GET", "BROWSE")
    mqi = ~F.col("verb").isin("EVENT", "TRIGGER", "EXPIRY")
    ts = F.lit(day_start) + (F.col("id") * (DAY_MS - 1) / records).cast("long")
    qmgr = F.concat(F.lit("QM"), (r("qm") % 3 + 1).cast("string"))
    df = (spark.range(records)
          .withColumn("verb", verb)
          .select(
              F.lit(1).alias("v"), ts.alias("ts"), F.lit("QSG1").alias("qsg"), qmgr.alias("qmgr"),
              F.when(mqi, F.concat(qmgr, F.lit("-"), F.lpad(F.hex(r("conn") % 5000), 24, "0"))).alias("hconn"),
              F.when(mqi, F.concat(F.lit("APPL"), (r("appl") % 40).cast("string"))).alias("appl"),
              F.col("verb"),
              F.when(is_queue, F.concat(F.lit("APP.QUEUE."), queue_no.cast("string"))).alias("object"),
              F.when(is_queue, F.when(queue_no < 20, "SHARED").otherwise("QMGR")).alias("qsgdisp"),
              F.when(ok_msg, F.lpad(F.hex(F.col("id")), 48, "0")).alias("msg_id"),
              F.when(ok_msg, F.lit("0" * 48)).alias("correl_id"),
              F.when(ok_msg, (r("prio") % 10).cast("int")).alias("priority"),
              F.when(ok_msg, u("pers") < 0.5).alias("persistent"),
              F.when(ok_msg, (r("size") % 9900 + 100)).alias("size"),
              F.when(is_msg, u("sync") < 0.7).alias("syncpoint"),
              F.when(failed, 2).otherwise(0).alias("cc"),
              F.when(failed, 2033).when(F.col("verb") == "EVENT", 2224).otherwise(0).alias("rc"),
              F.when(ok_msg, r("depth") % 5000).alias("depth"),
              F.when(ok_msg & is_get, ts - (F.pow(u("res"), 4) * 600_000).cast("long")).alias("put_ts"),
              F.when(ok_msg & is_get, F.when(u("bo") < 0.01, 3).otherwise(0).cast("int")).alias("backout_count"),
              F.when(ok_msg & is_get, F.lit(3)).alias("bothresh"),
              F.when(mqi, (r("lat") % 2000 + 150)).alias("latency_us"),
              F.when(F.col("verb") == "EXPIRY", (r("n") % 5 + 1)).alias("count"),
          ))
    # The store's layout: date=.../qmgr=.../*.jsonl, written one QM at a time.
    for qm in ("QM1", "QM2", "QM3"):
        folder = store / f"date={date}" / f"qmgr={qm}"
        (df.where(F.col("qmgr") == qm).select(F.to_json(F.struct(*df.columns)).alias("value"))
           .write.mode("overwrite").text(str(folder)))
        for part in folder.glob("part-*.txt"):
            part.rename(part.with_name(part.name[:-4] + ".jsonl"))
    spark.stop()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--date", default="2025-06-01")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "qsg-bench-analytics"))
    parser.add_argument("--reuse", action="store_true", help="run the job on the day generated earlier")
    parser.add_argument("--keep", action="store_true", help="keep the generated day")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    work = Path(args.dir)
    store, output = work / "activity", work / "reports"
    if not args.reuse:
        shutil.rmtree(work, ignore_errors=True)
        seconds = generate(args.records, args.date, store, args.master)
        size = sum(f.stat().st_size for f in store.rglob("*.jsonl"))
        print(f"generated {args.records:,} records ({size / 1e9:.2f} GB of JSON lines) in {seconds:.0f}s")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "app.cli", "analytics", "run", "--date", args.date,
                           "--activity-dir", str(store), "--output", str(output), "--master", args.master,
                           "--no-progress"], cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"the job failed:\n{done.stderr[-3000:]}")
    print(done.stdout.strip())
    print(f"nightly job, {args.records:,} records, master {args.master}, {os.cpu_count()} cores: "
          f"{elapsed:.0f}s wall (JVM start included), {args.records / elapsed:,.0f} records/s")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
