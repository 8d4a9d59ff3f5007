"""Bad input: schemathesis against the OpenAPI schema of a live queue manager (bounded in time)
finds no server error and no response that breaks the schema."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def test_schemathesis_finds_no_5xx_and_no_schema_breach(make_cluster, tmp_path):
    group = make_cluster(["QM1"])
    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\n"
                         "DEFINE QLOCAL(APP.Q) QSGDISP(SHARED) CFSTRUCT(APPL1)")
    cli = Path(sys.executable).with_name("schemathesis")
    out = subprocess.run(
        [str(cli), "run", f"{group.url('QM1')}/openapi.json", "--checks",
         "not_a_server_error,response_schema_conformance", "--max-examples", "15", "--request-timeout", "10",
         "--seed", "20261121"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env={**os.environ, "NO_COLOR": "1"})
    assert out.returncode == 0, out.stdout[-4000:]
    counts = re.search(r"(\d+) generated, (\d+) passed", out.stdout)
    assert counts and int(counts.group(1)) == int(counts.group(2)) > 100, out.stdout[-2000:]
