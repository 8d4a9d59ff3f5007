"""The session transport (docs/api.md "Session transport") against real queue managers: frames
pipelined and answered in order per connection, an error answer per bad frame, a waiting get
that holds up only its own connection, the end of a socket backing out its connection's unit of
work and releasing an exclusive open (a client SIGKILLed), the upgrade authenticated as HTTP
requests are; and the pymqi-shaped client on a session by default, on HTTP by choice or when the
server offers no session."""

from __future__ import annotations

import asyncio
import base64
import os
import select
import signal
import subprocess
import sys
import textwrap

import httpx
import orjson
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection
from websockets.sync.client import connect as ws_connect

import app.client as pymqi
from app.client import CMQC, aio
from tests.support.mqsc import shared_q
from tests.support.redis_server import free_port
from tests.support.security import ADMIN, CSRF, qsg_cli
from tests.support.waits import wait_until

ANSWER_S = 20.0  # bound on waiting for any one answer frame


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    return g


def ws_url(group, qm: str = "QM1") -> str:
    return group.url(qm).replace("http://", "ws://") + "/v1/session"


def open_session(group, headers: dict[str, str] | None = None) -> ClientConnection:
    return ws_connect(ws_url(group), additional_headers=headers, compression=None, max_size=None, legacy=True)


class Frames:
    """A raw session: send frames (each with the next id) and read answers."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.next_id = 0

    def send(self, method: str, path: str, body: object = None) -> int:
        self.next_id += 1
        self.ws.send(orjson.dumps({"id": self.next_id, "method": method, "path": path, "body": body}).decode())
        return self.next_id

    def answer(self) -> dict:
        return orjson.loads(self.ws.recv(timeout=ANSWER_S))

    def call(self, method: str, path: str, body: object = None) -> dict:
        frame_id = self.send(method, path, body)
        got = self.answer()
        assert got["id"] == frame_id, got
        return got

    def connect(self) -> str:
        got = self.call("POST", "/v1/connections", {"appl_name": "SESSION.TEST"})
        assert got["status"] == 201, got
        return got["body"]["hconn"]

    def open(self, hconn: str, queue: str, options: list[str]) -> str:
        got = self.call("POST", f"/v1/connections/{hconn}/objects", {"object_name": queue, "options": options})
        assert got["status"] == 201, got
        return got["body"]["hobj"]


def qstatus(group, queue: str) -> dict:
    return group.mqsc_ok("QM1", f"DISPLAY QSTATUS({queue})")[0]["objects"][0]


def reason(body: dict) -> int:
    return body["error"]["reason"]


# ---- frames -----------------------------------------------------------------------------------


def test_pipelined_frames_are_answered_in_order_and_got_in_order(group):
    q = shared_q(group)
    with open_session(group) as ws:
        s = Frames(ws)
        hconn = s.connect()
        hobj = s.open(hconn, q, ["OUTPUT", "INPUT_SHARED"])
        put = f"/v1/connections/{hconn}/objects/{hobj}/put"
        ids = [s.send("POST", put, {"data": f"message {i}", "options": ["NO_SYNCPOINT"]}) for i in range(50)]
        answers = [s.answer() for _ in ids]
        assert [a["id"] for a in answers] == ids and {a["status"] for a in answers} == {201}
        msg_ids = [a["body"]["md"]["msg_id"] for a in answers]
        assert msg_ids == sorted(msg_ids) and len(set(msg_ids)) == 50  # put in the order sent
        get = f"/v1/connections/{hconn}/objects/{hobj}/get"
        ids = [s.send("POST", get, {"options": ["NO_SYNCPOINT"]}) for _ in range(50)]
        answers = [s.answer() for _ in ids]
        assert [a["id"] for a in answers] == ids
        assert [a["body"]["data"] for a in answers] == [f"message {i}" for i in range(50)]
        assert [a["body"]["md"]["msg_id"] for a in answers] == msg_ids
        assert s.call("POST", get, {"options": ["NO_SYNCPOINT"]})["status"] == 404  # 2033, as over HTTP
        assert s.call("DELETE", f"/v1/connections/{hconn}")["status"] == 200


def test_every_frame_is_answered_as_its_http_call_and_a_bad_one_kills_nothing(group):
    q = shared_q(group)
    with open_session(group) as ws:
        s = Frames(ws)
        hconn = s.connect()
        hobj = s.open(hconn, q, ["OUTPUT"])
        put = f"/v1/connections/{hconn}/objects/{hobj}/put"
        first = s.send("POST", put, {"data": "before", "options": ["NO_SYNCPOINT"]})
        ws.send("this is not JSON")
        ws.send(orjson.dumps({"id": "no-path", "method": "GET"}).decode())
        ws.send(orjson.dumps({"method": "GET", "path": "/v1/qmgr"}).decode())  # no id
        unknown = s.send("GET", "/v1/no/such/thing")
        bad_md = s.send("POST", put, {"data": "x", "md": {"priority": "high"}})
        last = s.send("POST", put, {"data": "after", "options": ["NO_SYNCPOINT"]})
        answers = {}
        for _ in range(7):
            got = s.answer()
            answers.setdefault(got["id"], []).append(got)
        assert answers[first][0]["status"] == 201 and answers[last][0]["status"] == 201
        assert [(a["status"], reason(a["body"])) for a in answers[None]] == [(400, 2046), (400, 2046)]
        assert (answers["no-path"][0]["status"], reason(answers["no-path"][0]["body"])) == (400, 2046)
        # the same status and error body the HTTP call gives (the handle works over HTTP too)
        for frame_id, (method, path, body) in ((unknown, ("GET", "/v1/no/such/thing", None)),
                                               (bad_md, ("POST", put, {"data": "x", "md": {"priority": "high"}}))):
            http = httpx.request(method, group.url("QM1") + path, json=body)
            assert (answers[frame_id][0]["status"], answers[frame_id][0]["body"]) == (http.status_code, http.json())
        assert reason(answers[unknown][0]["body"]) == CMQC.MQRC_UNKNOWN_OBJECT_NAME
        assert reason(answers[bad_md][0]["body"]) == CMQC.MQRC_PRIORITY_ERROR
        assert qstatus(group, q)["CURDEPTH"] == 2  # the good puts on either side of the bad frames


def test_a_truncated_message_failed_frame_is_the_warning_the_http_call_gives(group):
    """MQRC_TRUNCATED_MSG_FAILED (a warning) on a session: status 200 with completion_code 1,
    reason 2080, the MQMD, the part that fits and the whole length; the message stays."""
    q = shared_q(group)
    with open_session(group) as ws:
        s = Frames(ws)
        hconn = s.connect()
        hobj = s.open(hconn, q, ["OUTPUT", "INPUT_SHARED"])
        assert s.call("POST", f"/v1/connections/{hconn}/objects/{hobj}/put",
                      {"data": "0123456789", "options": ["NO_SYNCPOINT"]})["status"] == 201
        got = s.call("POST", f"/v1/connections/{hconn}/objects/{hobj}/get",
                     {"options": ["NO_SYNCPOINT"], "buffer_length": 3})
        assert got["status"] == 200, got
        body = got["body"]
        assert (body["completion_code"], body["reason"], body["data"], body["data_length"]) == (1, 2080, "012", 10)
        assert qstatus(group, q)["CURDEPTH"] == 1  # still there
        got = s.call("POST", f"/v1/connections/{hconn}/objects/{hobj}/get", {"options": ["NO_SYNCPOINT"]})
        assert (got["status"], got["body"]["data"]) == (200, "0123456789")


def test_a_waiting_get_holds_up_only_its_own_connection(group):
    waited, other = shared_q(group), shared_q(group)
    with open_session(group) as ws:
        s = Frames(ws)
        reader, writer = s.connect(), s.connect()
        inq = s.open(reader, waited, ["INPUT_SHARED"])
        out = s.open(writer, other, ["OUTPUT"])
        to_waited = s.open(writer, waited, ["OUTPUT"])
        get = s.send("POST", f"/v1/connections/{reader}/objects/{inq}/get",
                     {"options": ["WAIT", "NO_SYNCPOINT"], "wait_ms": 30_000})
        group.wait_for_waiter(waited)
        puts = [s.send("POST", f"/v1/connections/{writer}/objects/{out}/put", {"data": str(i)}) for i in range(5)]
        assert [s.answer()["id"] for _ in puts] == puts  # answered while the get waits
        assert s.call("GET", "/v1/qmgr")["body"]["name"] == "QM1"  # so is a call of no connection
        put = s.send("POST", f"/v1/connections/{writer}/objects/{to_waited}/put",
                     {"data": "wake up", "options": ["NO_SYNCPOINT"]})
        answers = {a["id"]: a for a in (s.answer(), s.answer())}
        assert answers[put]["status"] == 201 and answers[get]["body"]["data"] == "wake up"
        assert s.call("POST", f"/v1/connections/{writer}/backout")["status"] == 200


def test_plain_get_of_the_session_path_says_to_upgrade(group):
    r = httpx.get(group.url("QM1") + "/v1/session")
    assert r.status_code == 426 and reason(r.json()) == CMQC.MQRC_OPTIONS_ERROR


# ---- the end of a socket ------------------------------------------------------------------------


def test_a_socket_closed_mid_unit_of_work_backs_it_out(group):
    q = shared_q(group)
    ws = open_session(group)
    s = Frames(ws)
    hconn = s.connect()
    hobj = s.open(hconn, q, ["OUTPUT"])
    for i in range(3):
        assert s.call("POST", f"/v1/connections/{hconn}/objects/{hobj}/put",
                      {"data": f"uncommitted {i}", "options": ["SYNCPOINT"]})["status"] == 201
    status = qstatus(group, q)
    assert status["UNCOM"] == "YES" and status["OPPROCS"] == 1
    ws.close()  # no MQCMIT, no MQDISC
    wait_until(lambda: qstatus(group, q)["UNCOM"] == "NO", what="the unit of work backed out")
    status = qstatus(group, q)
    assert status["CURDEPTH"] == 0 and status["OPPROCS"] == 0
    r = httpx.post(f"{group.url('QM1')}/v1/connections/{hconn}/commit")
    assert r.status_code == 404 and reason(r.json()) == CMQC.MQRC_HCONN_ERROR  # the connection ended


def test_mqdisc_on_a_session_commits_as_over_http(group):
    q = shared_q(group)
    with open_session(group) as ws:
        s = Frames(ws)
        hconn = s.connect()
        hobj = s.open(hconn, q, ["OUTPUT"])
        s.call("POST", f"/v1/connections/{hconn}/objects/{hobj}/put", {"data": "kept", "options": ["SYNCPOINT"]})
        assert s.call("DELETE", f"/v1/connections/{hconn}")["status"] == 200
    status = qstatus(group, q)
    assert (status["CURDEPTH"], status["UNCOM"]) == (1, "NO")


KILLED_CLIENT = textwrap.dedent("""
    import sys
    import app.client as pymqi
    from app.client import CMQC
    qmgr = pymqi.connect("QM1", None, sys.argv[1])
    assert qmgr.transport == "session", qmgr.transport
    queue = pymqi.Queue(qmgr, sys.argv[2], CMQC.MQOO_INPUT_EXCLUSIVE | CMQC.MQOO_OUTPUT)
    queue.put(b"in flight", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_SYNCPOINT))
    print("ready", flush=True)
    sys.stdin.read()  # holds the open until killed
""")


def test_a_killed_client_releases_its_exclusive_open_at_once(group):
    q = shared_q(group)
    conn = f"127.0.0.1({group.qms['QM1'].port})"
    client = subprocess.Popen([sys.executable, "-c", KILLED_CLIENT, conn, q], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
    try:
        ready, _, _ = select.select([client.stdout], [], [], 60)
        assert ready and client.stdout.readline() == b"ready\n", client.stderr.read1(4000)
        other = pymqi.connect("QM1", None, conn)
        with pytest.raises(pymqi.MQMIError) as caught:
            pymqi.Queue(other, q, CMQC.MQOO_INPUT_EXCLUSIVE)
        assert caught.value.reason == CMQC.MQRC_OBJECT_IN_USE
        client.send_signal(signal.SIGKILL)
        client.wait(timeout=10)
        opened: list[pymqi.Queue] = []
        # the idle timeout is minutes away: this is the end of the socket, not the reaper
        wait_until(lambda: opened.append(pymqi.Queue(other, q, CMQC.MQOO_INPUT_EXCLUSIVE)) or True, timeout_s=10,
                   what="the exclusive open released", tolerate=(pymqi.MQMIError,))
        with pytest.raises(pymqi.MQMIError) as caught:  # and the killed client's put was backed out
            opened[0].get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT))
        assert caught.value.reason == CMQC.MQRC_NO_MSG_AVAILABLE
        other.disconnect()
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()


# ---- the pymqi-shaped client --------------------------------------------------------------------


def test_the_client_takes_a_session_by_default_and_http_by_choice(group, monkeypatch):
    q = shared_q(group)
    conn = f"127.0.0.1({group.qms['QM1'].port})"
    with pymqi.connect("QM1", None, conn) as qmgr:
        assert qmgr.transport == "session"
        pymqi.Queue(qmgr, q, CMQC.MQOO_OUTPUT).put(b"on a session", pymqi.MD(),
                                                    pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
    with pymqi.connect("QM1", None, conn, transport="http") as qmgr:
        assert qmgr.transport == "http"
        queue = pymqi.Queue(qmgr, q, CMQC.MQOO_INPUT_SHARED)
        assert queue.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT)) == b"on a session"
    monkeypatch.setenv("QSG_CLIENT_TRANSPORT", "http")
    with pymqi.connect("QM1", None, conn) as qmgr:
        assert qmgr.transport == "http"
    monkeypatch.setenv("QSG_CLIENT_TRANSPORT", "carrier-pigeon")
    with pytest.raises(pymqi.PYIFError):
        pymqi.QueueManager(None)


def test_the_client_falls_back_to_http_where_no_session_is_offered(group, tmp_path):
    """The group's entry point (`qsg gateway`) forwards HTTP only: the upgrade is refused."""
    port = free_port()
    gateway = subprocess.Popen([sys.executable, "-m", "app.cli", "gateway", "--port", str(port),
                                "--upstreams", f"QM1={group.url('QM1')}"], stdout=subprocess.DEVNULL,
                               stderr=open(tmp_path / "gateway.log", "wb"))
    try:
        wait_until(lambda: httpx.get(f"http://127.0.0.1:{port}/v1/health").status_code == 200,
                   what="the gateway up", tolerate=(httpx.HTTPError,))
        q = shared_q(group)
        with pymqi.connect("QM1", None, f"127.0.0.1({port})") as qmgr:
            assert qmgr.transport == "http"
            queue = pymqi.Queue(qmgr, q, CMQC.MQOO_OUTPUT | CMQC.MQOO_INPUT_SHARED)
            queue.put(b"through the gateway", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
            assert queue.get() == b"through the gateway"
    finally:
        gateway.terminate()
        gateway.wait(timeout=20)


def test_the_asyncio_client_pipelines_concurrent_calls_on_its_session(group):
    q = shared_q(group)

    async def scenario() -> None:
        async with await aio.connect("QM1", conn_info=f"127.0.0.1({group.qms['QM1'].port})") as qmgr:
            assert qmgr.transport == "session"
            queue = await aio.Queue.opened(qmgr, q, CMQC.MQOO_OUTPUT | CMQC.MQOO_INPUT_SHARED)
            mds = [pymqi.MD() for _ in range(40)]
            await asyncio.gather(*(queue.put(f"m{i}", md, pymqi.PMO(Options=CMQC.MQPMO_SYNCPOINT))
                                   for i, md in enumerate(mds)))
            await qmgr.commit()
            assert len({md.MsgId for md in mds}) == 40
            got = [await queue.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT)) for _ in mds]
            assert sorted(got) == sorted(f"m{i}".encode() for i in range(40))

    asyncio.run(scenario())


# ---- authentication -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def secured(make_cluster):
    g = make_cluster(["QM1"], env={"QSG_AUTH": "on"})
    qsg_cli(g, "user", "add", "admin", "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    return g


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_the_upgrade_is_authenticated_as_an_http_request_is(secured):
    for headers in (None, basic(ADMIN[0], "wrong"), {"X-API-Key": "qsg_00_not-a-key"}):
        with pytest.raises(InvalidStatus) as refused:
            open_session(secured, headers)
        response = refused.value.response
        assert response.status_code == 401, response
        body = orjson.loads(response.body)
        assert body["error"]["reason"] == 2035 and body["error"]["reason_name"] == "MQRC_NOT_AUTHORIZED"
    with open_session(secured, basic(*ADMIN)) as ws:  # every frame runs as the upgrade's user
        s = Frames(ws)
        defined = s.call("POST", "/v1/admin/mqsc", {"script": "DEFINE QLOCAL(SESSION.AUTH.Q) REPLACE"})
        assert defined["status"] == 200 and defined["body"]["results"][0]["completion_code"] == 0, defined
        hconn = s.connect()
        got = s.call("POST", f"/v1/connections/{hconn}/put1",
                     {"object_name": "SESSION.AUTH.Q", "data": "x", "options": ["NO_SYNCPOINT"]})
        assert got["status"] == 201 and got["body"]["md"]["user_identifier"] == ADMIN[0], got
    with pytest.raises(pymqi.MQMIError) as caught:  # the client reports the refusal as MQCONN would
        pymqi.connect("QM1", None, f"127.0.0.1({secured.qms['QM1'].port})", ADMIN[0], "wrong")
    assert caught.value.reason == CMQC.MQRC_NOT_AUTHORIZED


def test_a_cross_site_upgrade_is_not_authenticated_by_cookie(secured):
    login = httpx.post(f"{secured.url('QM1')}/ibmmq/rest/v2/login", headers=CSRF,
                       json={"username": ADMIN[0], "password": ADMIN[1]})
    assert login.status_code == 204, login.text
    cookie = "; ".join(f"{k}={v}" for k, v in login.cookies.items())
    with open_session(secured, {"Cookie": cookie}) as ws:  # no Origin: not a web page
        assert Frames(ws).call("GET", "/v1/qmgr")["status"] == 200
    with pytest.raises(InvalidStatus) as refused:  # a page of another origin: refused whatever it sends
        open_session(secured, {"Cookie": cookie, "Origin": "https://elsewhere.example"})
    assert refused.value.response.status_code == 403
    assert orjson.loads(refused.value.response.body)["error"]["reason"] == 2035
