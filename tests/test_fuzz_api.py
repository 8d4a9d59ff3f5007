"""Bad input: schemathesis against the OpenAPI schema of a live queue manager (bounded in time)
finds no server error and no response that breaks the schema."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx


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


def test_schemathesis_on_the_message_verbs_of_a_real_handle(make_cluster, tmp_path):
    """The verbs that carry messages (put, get, their batches, put1) fuzzed on a real connection
    and handle (docs/howto/security.md, Limits), under small body limits: the cheap checks (handles, count, body size)
    and what follows them answer every generated body with an MQ reason, never a 5xx."""
    group = make_cluster(["QM1"], env={"QSG_MAX_MESSAGE_BODY_BYTES": "65536", "QSG_MAX_BODY_BYTES": "16384",
                                       "QSG_MAX_WAIT_MS": "200"})
    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\n"
                         "DEFINE QLOCAL(FUZZ.Q) QSGDISP(SHARED) CFSTRUCT(APPL1) MAXDEPTH(999999999)")
    url = group.url("QM1")
    hconn = httpx.post(f"{url}/v1/connections", json={}).json()["hconn"]
    r = httpx.post(f"{url}/v1/connections/{hconn}/objects", json={"object_name": "FUZZ.Q",
                                                                  "options": ["OUTPUT", "INPUT_SHARED", "BROWSE"]})
    assert r.status_code == 201, r.text
    hobj = r.json()["hobj"]
    # schemathesis.toml in the run's directory: the path parameters of every operation
    config = f'parameters = {{ "path.hconn" = "{hconn}", "path.hobj" = "{hobj}" }}\n'
    (tmp_path / "schemathesis.toml").write_text(config)
    cli = Path(sys.executable).with_name("schemathesis")
    out = subprocess.run(
        [str(cli), "run", f"{url}/openapi.json", "--checks", "not_a_server_error,response_schema_conformance",
         "--include-path-regex", r"/(put|get|put-batch|get-batch|put1)$", "--max-examples", "25",
         "--request-timeout", "10", "--seed", "20261127"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env={**os.environ, "NO_COLOR": "1"})
    assert out.returncode == 0, out.stdout[-4000:]
    counts = re.search(r"(\d+) generated, (\d+) passed", out.stdout)
    assert counts and int(counts.group(1)) == int(counts.group(2)) > 20, out.stdout[-2000:]
    # the fuzzing reached the queue: some generated put or put-batch was valid and put
    depth = group.mqsc_ok("QM1", "DISPLAY QLOCAL(FUZZ.Q) CURDEPTH")[0]["objects"][0]["CURDEPTH"]
    assert depth > 0
