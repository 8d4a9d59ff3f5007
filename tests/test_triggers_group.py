"""Triggering on shared queues across queue managers (docs/ibm-rules.md §3.2, notes a and b,
note 3b), and the trigger monitor starting a real HTTP application and a real program."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading

import orjson
import pytest

from tests.support.mq import MQ, MQFailed
from tests.support.mqsc import shared_q
from tests.support.redis_server import free_port

# On one redis-server and on a 3-master Redis Cluster (tests/conftest.py).
pytestmark = pytest.mark.group_suite


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2", "QM3"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1)\n"
                     "DEFINE QLOCAL(TRIG.INITQ) QSGDISP(GROUP)\n"  # a COPY initiation queue on every QM
                     "DEFINE PROCESS(TRIG.PROC) QSGDISP(GROUP) APPLICID('/bin/true') APPLTYPE(UNIX)\n"
                     "DEFINE QLOCAL(DLQ) QSGDISP(GROUP)")
    for qm in ("QM1", "QM2", "QM3"):
        g.mqsc_ok(qm, "ALTER QMGR DEADQ(DLQ)")
    return g


def app_queue(group, trigtype: str = "FIRST", extra: str = "") -> str:
    return shared_q(group, f"TRIGGER TRIGTYPE({trigtype}) INITQ(TRIG.INITQ) PROCESS(TRIG.PROC) {extra}", prefix="TRG")


class Monitor:
    """Holds a QM's initiation queue open for input, as a trigger monitor does."""

    def __init__(self, group, qm: str) -> None:
        self.mq = MQ(group.url(qm))
        self.h = self.mq.open("TRIG.INITQ", ["INPUT_SHARED"])

    def take(self, queue: str, n: int, wait_ms: int = 5000) -> list[dict]:
        """n trigger messages for ``queue`` (waiting), then none more for it."""
        got = []
        while len(got) < n:
            m = self.mq.get(self.h, ["WAIT", "NO_SYNCPOINT"], wait_ms=wait_ms)
            tm = orjson.loads(m["data"])
            if tm["QName"] == queue:
                got.append(tm)
        try:
            while True:
                tm = orjson.loads(self.mq.get(self.h, ["WAIT", "NO_SYNCPOINT"], wait_ms=500)["data"])
                assert tm["QName"] != queue, f"more than {n} trigger message(s) for {queue}"
        except MQFailed as exc:
            assert exc.reason == 2033
        return got

    def close(self) -> None:
        self.mq.disconnect()


def test_a_put_on_one_qmgr_triggers_on_another(group):
    q = app_queue(group)
    on_qm1 = Monitor(group, "QM1")  # only QM1 runs a trigger monitor
    MQ(group.url("QM2")).put1(q, "from QM2")
    (tm,) = on_qm1.take(q, 1)
    assert tm["ProcessName"] == "TRIG.PROC" and tm["ApplId"] == "/bin/true"
    on_qm1.close()


def test_racing_puts_give_one_first_trigger_per_monitoring_qmgr(group):
    q = app_queue(group)
    monitors = [Monitor(group, "QM1"), Monitor(group, "QM2")]
    barrier = threading.Barrier(6)

    def put(qm: str) -> None:
        mq = MQ(group.url(qm))
        h = mq.open(q, ["OUTPUT"])
        barrier.wait()
        for i in range(5):
            mq.put(h, f"{qm}-{i}")

    threads = [threading.Thread(target=put, args=(qm,)) for qm in ("QM1", "QM2", "QM3") * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for m in monitors:
        assert len(m.take(q, 1)) == 1
        m.close()


def test_exclusive_input_anywhere_stops_every_qmgr(group):
    q = app_queue(group)
    monitor = Monitor(group, "QM1")
    holder = MQ(group.url("QM3"))
    h = holder.open(q, ["INPUT_EXCLUSIVE"])
    MQ(group.url("QM2")).put1(q, "x")
    monitor.take(q, 0)
    holder.close(h)  # QM3's last server closes with a message waiting: QM3 has no monitor
    monitor.take(q, 0)
    monitor.close()


def test_others_open_for_input_means_first_with_priority_zero(group):
    q = app_queue(group, "DEPTH", "TRIGDPTH(5) TRIGMPRI(7)")
    monitor = Monitor(group, "QM1")
    reader = MQ(group.url("QM2"))
    h = reader.open(q, ["INPUT_SHARED"])  # another QM serves the queue
    MQ(group.url("QM3")).put1(q, "low priority", md={"priority": 1})
    (tm,) = monitor.take(q, 1)  # QM1 evaluates as FIRST, priority 0: one message is enough
    assert tm["QName"] == q
    reader.get(h)
    reader.close(h)  # all closed again: back to DEPTH(5) with TRIGMPRI(7)
    MQ(group.url("QM3")).put1(q, "again", md={"priority": 1})
    monitor.take(q, 0)
    monitor.close()


def test_shared_queues_count_committed_messages_only(group):
    q = app_queue(group)
    monitor = Monitor(group, "QM1")
    writer = MQ(group.url("QM2"))
    h = writer.open(q, ["OUTPUT"])
    writer.put(h, "in a unit of work", options=["SYNCPOINT"])
    monitor.take(q, 0)
    writer.commit()
    assert len(monitor.take(q, 1)) == 1
    monitor.close()


class _Recorder(http.server.BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Recorder.received.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def test_trigger_monitor_starts_http_applications_programs_and_dead_letters_failures(group, tmp_path):
    _Recorder.received.clear()  # the module runs once per coupling facility (group_suite)
    port = free_port()
    server = http.server.HTTPServer(("127.0.0.1", port), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    marker = tmp_path / "started.json"
    program = tmp_path / "app.py"
    program.write_text(f"import sys, pathlib\npathlib.Path({str(marker)!r}).write_text(sys.argv[1])\n")
    group.mqsc_ok("QM2", f"""
        DEFINE QLOCAL(TM.INITQ)
        DEFINE PROCESS(TM.HTTP) APPLICID('http://127.0.0.1:{port}/start') APPLTYPE(UNIX) USERDATA('http')
        DEFINE PROCESS(TM.PROG) APPLICID('{sys.executable} {program}') APPLTYPE(UNIX)
        DEFINE PROCESS(TM.BROKEN) APPLICID('http://127.0.0.1:{free_port()}/nobody') APPLTYPE(UNIX)
        DEFINE QLOCAL(TM.A) TRIGGER INITQ(TM.INITQ) PROCESS(TM.HTTP)
        DEFINE QLOCAL(TM.B) TRIGGER INITQ(TM.INITQ) PROCESS(TM.PROG)
        DEFINE QLOCAL(TM.C) TRIGGER INITQ(TM.INITQ) PROCESS(TM.BROKEN)""")
    monitor = subprocess.Popen([sys.executable, "-m", "app.cli", "trigmon", "--url", group.url("QM2"),
                                "--initq", "TM.INITQ", "--timeout", "2"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ})
    try:
        assert "serving TM.INITQ" in monitor.stdout.readline()
        mq = MQ(group.url("QM2"))
        for q in ("TM.A", "TM.B", "TM.C"):
            mq.put1(q, "work")
        dlq = mq.open("DLQ", ["INPUT_SHARED"])
        dead = mq.get(dlq, ["WAIT", "NO_SYNCPOINT"], wait_ms=30_000)  # TM.C's application is unreachable
        header = json.loads(dead["data"])
        assert dead["md"]["format"] == "MQDEAD" and header["Reason"] == 265
        assert json.loads(header["MsgData"])["QName"] == "TM.C"
        assert [r["QName"] for r in _Recorder.received] == ["TM.A"]
        assert _Recorder.received[0]["UserData"] == "http"
        assert json.loads(marker.read_text())["QName"] == "TM.B"
    finally:
        monitor.terminate()
        monitor.wait(timeout=20)
        server.shutdown()
