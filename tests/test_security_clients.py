"""Credentials in the pymqi-shaped client (app.client, sync and asyncio) and in `qsg trigmon`,
against real queue managers with authentication on: pymqi's user/password (MQCSP), an API key,
MQRC_NOT_AUTHORIZED (2035) for wrong ones; a trigger monitor that authenticates and starts a
triggered application."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading

import pytest

import app.client as pymqi
from app.client import CMQC, aio
from app.client.core import Credentials, credentials_of
from tests.support.mq import MQ
from tests.support.redis_server import free_port
from tests.support.security import ADMIN, ALICE, admin_shared_q, mqsc_ok, qsg_cli

NO_SYNC = pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT)


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"], env={"QSG_AUTH": "on"})
    qsg_cli(g, "user", "add", "admin", "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    qsg_cli(g, "user", "add", "alice", "--password-stdin", stdin=ALICE[1] + "\n")
    mqsc_ok(g, "QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5)\n"
                      "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(CONNECT)\n"
                      "SET AUTHREC PROFILE('CQ.*') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(PUT,GET)")
    return g


def conn_name(group, qm: str) -> str:
    return f"127.0.0.1({group.qms[qm].port})"


def reason_of(call) -> pymqi.MQMIError:
    with pytest.raises(pymqi.MQMIError) as caught:
        call()
    return caught.value


# ---- the client -------------------------------------------------------------------------------


def test_credentials_as_pymqi_takes_them():
    assert credentials_of() is None
    assert credentials_of("alice", b"s\xc3\xa9cret") == Credentials("alice", "s\u00e9cret")
    assert credentials_of(b"alice", "") == Credentials("alice", "")  # an empty password is one
    assert Credentials("alice", "pw").headers() == {"Authorization": "Basic YWxpY2U6cHc="}
    assert credentials_of(api_key="qsg_ab_cd").headers() == {"X-API-Key": "qsg_ab_cd"}
    assert credentials_of(csp=pymqi.CSP(CSPUserId="bob", CSPPassword="pw")) == Credentials("bob", "pw")
    assert credentials_of(csp=pymqi.CSP(AuthenticationType=CMQC.MQCSP_AUTH_NONE, CSPUserId="bob")) is None
    with pytest.raises(ValueError, match="Password must not be None"):
        credentials_of("alice", None)
    with pytest.raises(ValueError, match="not both"):
        credentials_of("alice", "pw", "qsg_ab_cd")
    assert "pw" not in repr(Credentials("alice", "pw")) and "pw" not in repr(pymqi.CSP(CSPPassword="pw"))


def test_connect_put_and_get_with_user_and_password(group):
    q = admin_shared_q(group, prefix="CQ")
    writer = pymqi.connect("QM1", "DEV.APP.SVRCONN", conn_name(group, "QM1"), *ALICE)
    queue = pymqi.Queue(writer, q, CMQC.MQOO_OUTPUT)
    md = pymqi.MD(Format=CMQC.MQFMT_STRING)
    queue.put(b"with credentials", md, pymqi.PMO(Options=CMQC.MQPMO_SYNCPOINT))
    writer.commit()
    writer.disconnect()

    reader = pymqi.QueueManager(None)
    cd = pymqi.CD(ChannelName=b"DEV.APP.SVRCONN", ConnectionName=conn_name(group, "QM2").encode())
    reader.connect_with_options("QM2", cd=cd, user=ALICE[0], password=ALICE[1])
    got = pymqi.MD()
    inq = pymqi.Queue(reader, q, CMQC.MQOO_INPUT_SHARED)
    assert inq.get(None, got, pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT,
                                        WaitInterval=10_000)) == b"with credentials"
    assert got.UserIdentifier.strip() == b"alice" and got.MsgId == md.MsgId
    # the queue manager's rights still apply: alice may not browse
    err = reason_of(lambda: pymqi.Queue(reader, q, CMQC.MQOO_BROWSE))
    assert (err.comp, err.reason) == (CMQC.MQCC_FAILED, CMQC.MQRC_NOT_AUTHORIZED)
    reader.disconnect()


def test_wrong_or_missing_credentials_fail_with_2035(group):
    for call in (lambda: pymqi.connect("QM1", "CH", conn_name(group, "QM1"), ALICE[0], "wrong"),
                 lambda: pymqi.connect("QM1", "CH", conn_name(group, "QM1"), "nobody", "x"),
                 lambda: pymqi.connect("QM1", "CH", conn_name(group, "QM1")),
                 lambda: pymqi.connect("QM1", "CH", conn_name(group, "QM1"), api_key="qsg_00_not-a-key"),
                 lambda: pymqi.QueueManager(None).connect_with_options(
                     "QM2", cd=pymqi.CD(ConnectionName=conn_name(group, "QM2")), user=ALICE[0], password="wrong")):
        err = reason_of(call)
        assert (err.comp, err.reason) == (CMQC.MQCC_FAILED, CMQC.MQRC_NOT_AUTHORIZED), err
        assert "MQRC_NOT_AUTHORIZED" in err.errorAsString()


def test_api_key_and_mqcsp(group):
    q = admin_shared_q(group, prefix="CQ")
    key = qsg_cli(group, "user", "key", "alice").stdout.strip()
    with pymqi.connect("QM2", None, conn_name(group, "QM2"), api_key=key) as qmgr:
        qmgr.put1(q, b"by key", pymqi.MD(), NO_SYNC)
    qmgr = pymqi.QueueManager(None)
    qmgr.connect_with_options("QM1", cd=pymqi.CD(ConnectionName=conn_name(group, "QM1")),
                              csp=pymqi.CSP(CSPUserId=ALICE[0], CSPPassword=ALICE[1]))
    queue = pymqi.Queue(qmgr, q, CMQC.MQOO_INPUT_SHARED)
    assert queue.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT)) == b"by key"
    qmgr.disconnect()


async def test_asyncio_client_with_credentials(group):
    q = admin_shared_q(group, prefix="CQ")
    async with await aio.connect("QM1", conn_info=conn_name(group, "QM1"), user=ALICE[0],
                                 password=ALICE[1]) as qmgr:
        await qmgr.put1(q, b"async", pymqi.MD(), NO_SYNC)
        queue = await aio.Queue.opened(qmgr, q, CMQC.MQOO_INPUT_SHARED)
        assert await queue.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT)) == b"async"
    with pytest.raises(pymqi.MQMIError) as caught:
        await aio.connect("QM2", conn_info=conn_name(group, "QM2"), user=ALICE[0], password="wrong")
    assert caught.value.reason == CMQC.MQRC_NOT_AUTHORIZED
    qmgr = aio.QueueManager(None)
    await qmgr.connect_with_options("QM2", cd=pymqi.CD(ConnectionName=conn_name(group, "QM2")),
                                    user=ALICE[0], password=ALICE[1])
    assert qmgr.qmgr_name == "QM2"
    await qmgr.disconnect()


# ---- the trigger monitor ----------------------------------------------------------------------


class _Application(http.server.BaseHTTPRequestHandler):
    """The triggered application: records the MQTM it is started with."""

    received: list[dict] = []
    started = threading.Event()

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Application.received.append({"tm": json.loads(body), "authorization": self.headers.get("Authorization")})
        self.send_response(200)
        self.end_headers()
        _Application.started.set()

    def log_message(self, *args) -> None:
        pass


def trigmon(group, *args: str, env: dict[str, str]) -> subprocess.Popen:
    clean = {k: v for k, v in os.environ.items() if k not in ("QSG_PASSWORD", "QSG_API_KEY", "QSG_USER")}
    return subprocess.Popen([sys.executable, "-m", "app.cli", "trigmon", "--url", group.url("QM1"), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
                            env={**clean, **env})


def test_trigger_monitor_authenticates_and_starts_the_application(group):
    port = free_port()
    server = http.server.HTTPServer(("127.0.0.1", port), _Application)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    qsg_cli(group, "user", "add", "monitor", "--password-stdin", stdin="monitor-secret\n")
    mqsc_ok(group, "QM1", f"""
        DEFINE QLOCAL(TM.DLQ)
        ALTER QMGR DEADQ(TM.DLQ)
        DEFINE QLOCAL(TM.INITQ)
        DEFINE PROCESS(TM.APP) APPLICID('http://127.0.0.1:{port}/start') APPLTYPE(UNIX)
        DEFINE QLOCAL(TM.WORK) TRIGGER INITQ(TM.INITQ) PROCESS(TM.APP)
        SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('monitor') AUTHADD(CONNECT)
        SET AUTHREC PROFILE('TM.INITQ') OBJTYPE(QUEUE) PRINCIPAL('monitor') AUTHADD(GET)
        SET AUTHREC PROFILE('TM.DLQ') OBJTYPE(QUEUE) PRINCIPAL('monitor') AUTHADD(PUT)""")
    # wrong credentials: the monitor says so and ends
    bad = trigmon(group, "--initq", "TM.INITQ", env={"QSG_API_KEY": "qsg_00_not-a-key"})
    out, _ = bad.communicate(timeout=60)
    assert bad.returncode == 2 and "2035" in out, out
    bad = trigmon(group, "--initq", "TM.INITQ", "--user", "monitor", env={})  # no password, no terminal
    out, _ = bad.communicate(timeout=60)
    assert bad.returncode == 2 and "QSG_PASSWORD" in out, out
    # the password from the environment, never from the command line
    monitor = trigmon(group, "--initq", "TM.INITQ", "--user", "monitor", "--timeout", "5",
                      env={"QSG_PASSWORD": "monitor-secret"})
    try:
        assert "serving TM.INITQ" in monitor.stdout.readline()
        MQ(group.url("QM1"), auth=ADMIN).put1("TM.WORK", "work")
        assert _Application.started.wait(timeout=30), "the triggered application was not started"
        (start,) = _Application.received
        assert start["tm"]["QName"] == "TM.WORK" and start["tm"]["ProcessName"] == "TM.APP"
        assert start["authorization"] is None  # the monitor's credentials are for the queue manager only
    finally:
        monitor.terminate()
        monitor.wait(timeout=20)
        server.shutdown()
