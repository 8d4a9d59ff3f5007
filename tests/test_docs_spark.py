"""The guide that runs the nightly job on a standalone Spark cluster (docs/howto/scaling-out.md),
run as its reader runs it in a clone: a master and a worker from pyspark's own ``spark-class``,
then the analytics bench on ``local[*]`` and on that cluster (tests/support/doclabs.py says how a
page is read). The page's ports and the size of its generated day are variables with the
reader's defaults; the test gives free ports and a small day. No ``qsg up``: the page needs none.
"""

from __future__ import annotations

import re

from tests.support.doclabs import Clone, run_page
from tests.support.ports import free_port_block


def test_guide_scaling_out_runs_the_job_on_a_standalone_cluster(tmp_path):
    port = free_port_block(3)
    env = {"SPARK_MASTER_PORT": str(port), "SPARK_MASTER_WEBUI_PORT": str(port + 1),
           "SPARK_WORKER_WEBUI_PORT": str(port + 2), "RECORDS": "20000", "TMPDIR": str(tmp_path)}
    clone = Clone(tmp_path / "clone")
    out = run_page("howto/scaling-out.md", clone, timeout_s=900, env=env)
    runs = re.findall(r"^nightly job, 20,000 records, master ([^,\s]+), \d+ cores: \d+s wall", out, re.M)
    assert runs == ["local[*]", f"spark://127.0.0.1:{port}"], out
    # the job's own line, once per run: every generated record was read
    assert len(re.findall(r"^2025-06-01: 20000 records, \d+ puts", out, re.M)) == 2, out
    # the worker registered, and the second job's executor ran on it
    assert "registered with master" in (clone.folder / "spark-worker.log").read_text().lower()
    assert list((clone.folder / "spark-work").glob("app-*")), "no executor ran on the worker"
    assert not (tmp_path / "qsg-bench-analytics").exists()  # the bench removed its day
