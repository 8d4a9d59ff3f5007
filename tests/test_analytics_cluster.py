"""``qsg analytics run --master spark://...`` on a real standalone Spark cluster (a master and a
worker started by the test from pyspark's own ``spark-class``): the day's report is right, and
when the worker cannot reach the output folder (its own private copy of that path, as a node
without the shared storage has) the job fails loudly instead of publishing empty tables."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyspark
import pytest

from tests.support.cluster import free_port
from tests.support.waits import wait_until

DATE = "2025-06-01"
H10 = 1_748_736_000_000 + 10 * 3_600_000
SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"


def _record(ts: int, verb: str, **fields: object) -> dict[str, object]:
    return {"v": 1, "ts": ts, "qsg": "QSG1", "qmgr": "QM1", "verb": verb, "cc": 0, "rc": 0,
            "hconn": "QM1-1", "appl": "PAYROLL", **fields}


@pytest.fixture(scope="module")
def activity(tmp_path_factory) -> Path:
    store = tmp_path_factory.mktemp("activity")
    part = store / f"date={DATE}" / "qmgr=QM1"
    part.mkdir(parents=True)
    records = [_record(H10 + i, "PUT", object="SQ", qsgdisp="SHARED", size=100, depth=i + 1, latency_us=100)
               for i in range(7)]
    records.append(_record(H10 + 100, "GET", object="SQ", qsgdisp="SHARED", size=100, put_ts=H10, depth=6,
                           backout_count=0, bothresh=0))
    (part / "QSG1.QM1.20250601T100000.000001.test.jsonl").write_text(
        "\n".join(json.dumps(r) for r in records) + "\n")
    return store


def _start(args: list[str], log: Path, isolate: Path | None = None) -> subprocess.Popen:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"}
    command = [str(SPARK_CLASS), *args]
    if isolate is not None:
        # A private mount namespace with an empty tmpfs over ``isolate``: this process sees its
        # own, empty folder where the driver sees the real one (a node without shared storage).
        command = ["unshare", "-m", "sh", "-c", 'mount -t tmpfs tmpfs "$0" && exec "$@"', str(isolate), *command]
    return subprocess.Popen(command, env=env, stdout=open(log, "ab"), stderr=subprocess.STDOUT,
                            start_new_session=True)


@pytest.fixture
def standalone(tmp_path) -> Iterator:
    """Start a Spark master and (per call) a worker of 1 core; everything is killed at the end."""
    procs: list[subprocess.Popen] = []
    port, ui = free_port(), free_port()
    master = f"spark://127.0.0.1:{port}"
    procs.append(_start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                         "--webui-port", str(ui)], tmp_path / "master.log"))

    def workers() -> int:
        return len(httpx.get(f"http://127.0.0.1:{ui}/json/", timeout=2).json().get("workers", []))

    def add_worker(isolate: Path | None = None) -> str:
        procs.append(_start(["org.apache.spark.deploy.worker.Worker", master, "--cores", "1", "--memory", "1g",
                             "--webui-port", str(free_port())], tmp_path / f"worker{len(procs)}.log", isolate))
        wait_until(lambda: workers() >= 1, 60, "the worker registered with the master",
                   tolerate=(httpx.HTTPError, ValueError))
        return master

    yield add_worker
    for proc in procs:
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
        proc.wait()


def _run(master: str, activity: Path, output: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    return subprocess.run([sys.executable, "-m", "app.cli", "analytics", "run", "--date", DATE, "--activity-dir",
                           str(activity), "--output", str(output), "--master", master, "--no-progress",
                           "--conf", "spark.executor.memory=512m", "--conf", "spark.cores.max=1"],
                          env=env, capture_output=True, text=True, timeout=600)


def test_the_job_runs_on_a_standalone_master_and_worker(standalone, activity, tmp_path):
    master = standalone()
    output = tmp_path / "reports"
    done = _run(master, activity, output)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((output / DATE / "summary.json").read_text())
    assert (summary["records"], summary["totals"]["puts"], summary["totals"]["gets"]) == (8, 7, 1)
    assert json.loads((output / "_status" / f"{DATE}.json").read_text())["status"] == "OK"


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0,
                    reason="needs unshare and root to give the worker a private mount namespace")
def test_a_worker_that_cannot_reach_the_output_folder_fails_the_job(standalone, activity, tmp_path):
    output = tmp_path / "private" / "reports"
    output.parent.mkdir()
    master = standalone(isolate=output.parent)  # the worker writes into its own tmpfs copy
    done = _run(master, activity, output)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "read back" in done.stderr and "could not write the output folder" in done.stderr, done.stderr
    status = json.loads((output / "_status" / f"{DATE}.json").read_text())
    assert status["status"] == "FAILED" and "read back" in status["error"]
    assert not (output / DATE).exists()  # nothing published
