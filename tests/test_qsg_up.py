"""`qsg up`, the README's run command: a local group whose printed URLs work, stopped by Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import httpx

from tests.support.mq import MQ
from tests.support.ports import free_port_block as _free_block
from tests.support.ports import ports_free


def test_qsg_up_runs_a_group_and_stops_on_ctrl_c(tmp_path):
    base = _free_block(4)
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "up", "--dir", str(tmp_path / "qsg"),
                             "--base-port", str(base + 1)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "Ctrl-C stops the group" in line:
                break
        text = "".join(lines)
        urls = {ln.split()[0]: next(w for w in ln.split() if w.startswith("http"))
                for ln in lines if ln.strip().startswith(("QM", "any"))}
        assert set(urls) == {"any", "QM1", "QM2", "QM3"}, text
        put_side, get_side = MQ(urls["QM1"]), MQ(urls["QM2"])
        put_side.put(put_side.open("APP.SHARED.Q", ["OUTPUT"]), "put on QM1")
        assert get_side.get(get_side.open("APP.SHARED.Q", ["INPUT_SHARED"]))["data"] == "put on QM1"
        via_entry_point = MQ(urls["any"])
        assert via_entry_point.hconn.split("-")[0] in ("QM1", "QM2", "QM3")
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "stopping the queue-sharing group" in out
    leftover = subprocess.run(["pgrep", "-f", str(tmp_path / "qsg")], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""  # its redis-server is gone too


def test_qsg_up_with_a_local_redis_cluster(tmp_path):
    """``qsg up --redis-cluster 3``: three masters started from redis-server, the QMs on them."""
    base = _free_block(3)
    nodes = next(p for p in (_free_block(3) for _ in range(50)) if p < 45000 and ports_free(p + 10000, 3))
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "up", "--dir", str(tmp_path / "qsg"), "--qmgrs", "2",
                             "--base-port", str(base + 1), "--redis-cluster", "3",
                             "--redis-cluster-port", str(nodes)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "Ctrl-C stops the group" in line or "qsg up:" in line:
                break
        text = "".join(lines)
        assert f"Redis Cluster of 3 masters at redis+cluster://127.0.0.1:{nodes}," in text, text
        urls = {ln.split()[0]: next(w for w in ln.split() if w.startswith("http"))
                for ln in lines if ln.strip().startswith("QM")}
        put_side, get_side = MQ(urls["QM1"]), MQ(urls["QM2"])
        put_side.put(put_side.open("APP.SHARED.Q", ["OUTPUT"]), "over the cluster")
        assert get_side.get(get_side.open("APP.SHARED.Q", ["INPUT_SHARED"]))["data"] == "over the cluster"
        info = subprocess.run(["redis-cli", "-p", str(nodes), "cluster", "info"], capture_output=True, text=True)
        assert "cluster_state:ok" in info.stdout and "cluster_known_nodes:3" in info.stdout
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    leftover = subprocess.run(["pgrep", "-f", str(tmp_path / "qsg")], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""  # its redis-server nodes are gone too


def test_qsg_up_with_authentication_on_still_makes_the_sample_definitions(tmp_path):
    """README: on first start `qsg up` defines APPL1, APP.SHARED.Q and SYSTEM.DEAD.LETTER.QUEUE
    (each QM's DEADQ) - with --auth on too, as a temporary administrator that is gone afterwards."""
    base = _free_block(3)
    workdir = tmp_path / "qsg"
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "up", "--dir", str(workdir), "--qmgrs", "2",
                             "--base-port", str(base + 1), "--auth", "on"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in proc.stdout:  # the URLs are printed once the sample definitions are made
            lines.append(line)
            if line.strip().startswith("QM2") or "qsg up:" in line:
                break
        urls = {ln.split()[0]: next(w for w in ln.split() if w.startswith("http"))
                for ln in lines if ln.strip().startswith("QM")}
        assert set(urls) == {"QM1", "QM2"}, "".join(lines)
        env = {**os.environ, "QSG_DATABASE_URL": f"sqlite:///{(workdir / 'qsg.db').resolve()}"}
        env.pop("QSG_REDIS_URL", None)
        cli = [sys.executable, "-m", "app.cli", "user"]
        added = subprocess.run([*cli, "add", "admin", "--admin", "--password-stdin"], input="pw-admin\n", env=env,
                               capture_output=True, text=True, timeout=60)
        assert added.returncode == 0, added.stderr
        users = subprocess.run([*cli, "list"], env=env, capture_output=True, text=True, timeout=60).stdout
        assert users.split() == ["admin", "ADMIN"]  # the temporary administrator is gone
        for qm, url in urls.items():
            r = httpx.post(f"{url}/v1/admin/mqsc", auth=("admin", "pw-admin"), timeout=30,
                           json={"script": "DISPLAY QMGR DEADQ\nDISPLAY QUEUE(*) TYPE(QLOCAL) WHERE(QUEUE LK APP.*)\n"
                                           "DISPLAY QLOCAL(SYSTEM.DEAD.LETTER.QUEUE)\nDISPLAY CFSTRUCT(APPL1)"})
            deadq, app_q, dlq, appl1 = r.json()["results"]
            assert deadq["objects"][0]["DEADQ"] == "SYSTEM.DEAD.LETTER.QUEUE", qm
            assert [o["QUEUE"] for o in app_q["objects"]] == ["APP.SHARED.Q"], qm
            assert dlq["completion_code"] == 0 and appl1["completion_code"] == 0, qm
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
