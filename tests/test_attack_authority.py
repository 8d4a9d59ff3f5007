"""Authority that follows every change, tried as an attacker would (docs/howto/security.md, What a
change ends, and when), against real queue-manager processes with authentication on, over real HTTP and
WebSocket (and a real headless Chromium for the cross-origin page):

5. a session re-resolves its principal after each security change: a revoked key's or a deleted
   user's session is refused and closed, a demoted administrator's MQSC is refused at once;
6. a WebSocket upgrade (or a state-changing call) from a page of another origin is refused,
   whatever credentials the browser attaches; the login cookie needs the CSRF header;
7. a new MQOPEN / MQPUT1 of an existing connection is checked against the current authority
   (handles already open keep theirs, as IBM);
8. MQCO_DELETE_PURGE of another user's permanent dynamic queue needs DLT on it;
and: a get that waits ends (2035, the message left on the queue) when its caller's credentials
stop holding; an unknown user costs the same argon2 check as a wrong password (counted by
/metrics), a burst of checks of one credential runs argon2 once, failed logins are throttled (a
burst of wrong passwords sent at once runs argon2 no more than the limit), an
unauthenticated upgrade is refused cleanly, /metrics hides queue names from non-administrators
when told (QSG_METRICS_ACCESS=summary)."""

from __future__ import annotations

import base64
import contextlib
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import orjson
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection
from websockets.sync.client import connect as ws_connect

from tests.support.redis_server import free_port
from tests.support.security import ADMIN, CSRF, assert_2035, mqsc, mqsc_ok, qsg_cli
from tests.support.waits import wait_until

ANSWER_S = 20.0
ALLOWED = "http://allowed.example:8080"


@pytest.fixture(scope="module")
def group(make_cluster):
    # a long cache: whatever changes at once below is the broadcast, never an expiry
    g = make_cluster(["QM1", "QM2"], env={
        "QSG_AUTH": "on", "QSG_AUTH_CACHE_S": "600", "QSG_AUTH_FAIL_LIMIT": "3",
        "QSG_AUTH_FAIL_LIMIT_CLIENT": "1000", "QSG_METRICS_ACCESS": "summary", "QSG_ALLOWED_ORIGINS": ALLOWED})
    qsg_cli(g, "user", "add", ADMIN[0], "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    mqsc_ok(g, "QM1", "DEFINE QLOCAL(ATTACK.Q) REPLACE")
    return g


def add_user(group, name: str, *flags: str, password: str | None = None) -> tuple[str, str]:
    password = password or f"{name}-secret"
    qsg_cli(group, "user", "add", name, *flags, "--password-stdin", stdin=password + "\n")
    return name, password


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def ws_url(group, qm: str = "QM1") -> str:
    return group.url(qm).replace("http://", "ws://") + "/v1/session"


def open_session(group, headers: dict[str, str] | None = None, qm: str = "QM1") -> ClientConnection:
    return ws_connect(ws_url(group, qm), additional_headers=headers, compression=None, max_size=None,
                      open_timeout=ANSWER_S)


class Frames:
    """A raw session: one call at a time, its answer frame."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.next_id = 0

    def call(self, method: str, path: str, body: object = None) -> dict:
        self.next_id += 1
        self.ws.send(orjson.dumps({"id": self.next_id, "method": method, "path": path, "body": body}).decode())
        answer = orjson.loads(self.ws.recv(timeout=ANSWER_S))
        assert answer["id"] == self.next_id, answer
        return answer

    def mqsc(self, script: str) -> dict:
        return self.call("POST", "/v1/admin/mqsc", {"script": script})


def refused_or_closed(frames: Frames, script: str) -> str:
    """What a session whose credentials no longer hold does with an MQSC frame: 'refused' (a 2035
    answer) or 'closed' (the socket closed with 1008, policy violation). Never runs it."""
    try:
        answer = frames.mqsc(script)
    except ConnectionClosed as closed:
        assert closed.rcvd is not None and closed.rcvd.code == 1008, closed
        return "closed"
    assert answer["status"] == 403 and answer["body"]["error"]["reason"] == 2035, answer
    return "refused"


def authrec_entities(group, profile: str) -> set[str]:
    rows = mqsc(group, "QM1", f"DISPLAY AUTHREC PROFILE('{profile}') OBJTYPE(QUEUE) MATCH(EXACT)")
    return {o.get("ENTITY", "") for r in rows for o in r.get("objects", [])}


# ---- 5. a session follows revoke, --replace and delete --------------------------------------------

def test_a_revoked_keys_session_is_closed_and_runs_nothing_more(group):
    add_user(group, "keyadm", "--admin")
    key = qsg_cli(group, "user", "key", "keyadm").stdout.strip()
    with open_session(group, {"X-API-Key": key}, qm="QM2") as ws:
        s = Frames(ws)
        first = s.mqsc("SET AUTHREC PROFILE('REVOKED.A') OBJTYPE(QUEUE) PRINCIPAL('keyadm') AUTHADD(ALL)")
        assert first["status"] == 200 and first["body"]["results"][0]["completion_code"] == 0, first
        qsg_cli(group, "user", "revoke", "keyadm")  # returns once every QM applied it
        what = refused_or_closed(s, "SET AUTHREC PROFILE('REVOKED.B') OBJTYPE(QUEUE) PRINCIPAL('keyadm') "
                                    "AUTHADD(ALL)")
        assert what in ("refused", "closed")
        with pytest.raises(ConnectionClosed) as closed:  # and the socket ends (its connections too)
            for _ in range(3):
                s.mqsc("DISPLAY QMGR")
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    assert "keyadm" not in authrec_entities(group, "REVOKED.B")


def test_a_demoted_admins_session_loses_admin_at_once(group):
    user = add_user(group, "demoted", "--admin")
    mqsc_ok(group, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('demoted') AUTHADD(CONNECT)")
    with open_session(group, basic(*user)) as ws:
        s = Frames(ws)
        ok = s.mqsc("SET AUTHREC PROFILE('DEMOTED.A') OBJTYPE(QUEUE) PRINCIPAL('demoted') AUTHADD(ALL)")
        assert ok["body"]["results"][0]["completion_code"] == 0, ok
        add_user(group, "demoted", "--replace", password=user[1])  # same password, no --admin
        after = s.mqsc("SET AUTHREC PROFILE('DEMOTED.B') OBJTYPE(QUEUE) PRINCIPAL('demoted') AUTHADD(ALL)")
        assert after["status"] == 200 and after["body"]["results"][0]["reason"] == 2035, after
        # still a session of a valid user: what the user may do still works
        assert s.call("POST", "/v1/connections", {})["status"] == 201
    assert "demoted" not in authrec_entities(group, "DEMOTED.B")


def test_a_deleted_users_session_is_closed(group):
    user = add_user(group, "gone", "--admin")
    with open_session(group, basic(*user), qm="QM2") as ws:
        s = Frames(ws)
        assert s.call("GET", "/v1/qmgr")["status"] == 200
        qsg_cli(group, "user", "delete", "gone")
        assert refused_or_closed(s, "SET AUTHREC PROFILE('GONE.B') OBJTYPE(QUEUE) PRINCIPAL('gone') "
                                    "AUTHADD(ALL)") in ("refused", "closed")
    assert "gone" not in authrec_entities(group, "GONE.B")


def test_an_authrec_change_reaches_an_open_session(group):
    user = add_user(group, "clerk")
    mqsc_ok(group, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('clerk') AUTHADD(CONNECT,ALLADM)")
    with open_session(group, basic(*user)) as ws:
        s = Frames(ws)
        assert s.mqsc("DISPLAY QMGR")["body"]["results"][0]["completion_code"] == 0
        mqsc_ok(group, "QM2", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('clerk') AUTHRMV(ALLADM)")  # on the other QM
        assert s.mqsc("DISPLAY QMGR")["body"]["results"][0]["reason"] == 2035


def test_a_deleted_admins_console_stream_ends(group):
    user = add_user(group, "streamer", "--admin")
    # a read timeout below the stream's 15 s keep-alive: a stream that goes on fails the test
    timeout = httpx.Timeout(ANSWER_S, read=10.0)
    with httpx.stream("GET", f"{group.url('QM2')}/console/events", auth=user, timeout=timeout) as events:
        lines = events.iter_lines()
        assert next(line for line in lines if line.startswith("data: "))
        qsg_cli(group, "user", "delete", "streamer")
        ended = False
        for count, _ in enumerate(lines):  # no more snapshots for a deleted user: the stream ends
            if count > 50:
                break
        else:
            ended = True
        assert ended
    assert_2035(httpx.get(f"{group.url('QM2')}/console/state", auth=user), 401)


# ---- a get that waits follows revoke and delete ----------------------------------------------------

def get_waiting(group, q: str, auth: httpx.Auth | tuple[str, str] | None = None,
                headers: dict[str, str] | None = None) -> tuple[threading.Thread, list[httpx.Response]]:
    """MQCONN, MQOPEN and an MQGET that waits up to 30 s on ``q`` of QM1, the get in a thread; it
    returns once the queue manager shows the get in progress (the handle's HSTATE ACTIVE)."""
    with httpx.Client(base_url=group.url("QM1"), auth=auth, headers=headers, timeout=60) as client:
        hconn = client.post("/v1/connections").json()["hconn"]
        hobj = client.post(f"/v1/connections/{hconn}/objects", json={"object_name": q, "options": ["INPUT_SHARED"]}
                           ).json()["hobj"]
    answers: list[httpx.Response] = []
    thread = threading.Thread(target=lambda: answers.append(httpx.post(
        f"{group.url('QM1')}/v1/connections/{hconn}/objects/{hobj}/get", auth=auth, headers=headers, timeout=60,
        json={"options": ["WAIT", "NO_SYNCPOINT"], "wait_ms": 30_000})))
    thread.start()
    wait_until(lambda: [o.get("HSTATE") for r in mqsc(group, "QM1", f"DISPLAY QSTATUS({q}) TYPE(HANDLE) ALL")
                        for o in r.get("objects", [])] == ["ACTIVE"], ANSWER_S, "the get waiting")
    return thread, answers


def depth(group, q: str) -> int:
    [row] = mqsc(group, "QM1", f"DISPLAY QLOCAL({q}) CURDEPTH")[0]["objects"]
    return int(row["CURDEPTH"])


@pytest.mark.parametrize("change", ["delete", "revoke"])
def test_a_waiting_get_ends_when_its_callers_credentials_stop_holding(group, change):
    """A user's MQGET waits; the user is deleted (or the API key it called with revoked): the get
    ends with MQRC_NOT_AUTHORIZED - what the same call answers if made now - and a message put
    afterwards stays on the queue instead of going to a caller who may no longer take it."""
    name, q = f"waiter{change}", f"WAIT.{change.upper()}.Q"
    user = add_user(group, name)
    mqsc_ok(group, "QM1", f"DEFINE QLOCAL({q}) REPLACE\n"
                          f"SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('{name}') AUTHADD(CONNECT)\n"
                          f"SET AUTHREC PROFILE('{q}') OBJTYPE(QUEUE) PRINCIPAL('{name}') AUTHADD(GET)")
    if change == "delete":
        thread, answers = get_waiting(group, q, auth=user)
        qsg_cli(group, "user", "delete", name)  # returns once every QM applied it
    else:
        key = qsg_cli(group, "user", "key", name).stdout.strip()
        thread, answers = get_waiting(group, q, headers={"X-API-Key": key})
        qsg_cli(group, "user", "revoke", name)
    with httpx.Client(base_url=group.url("QM1"), auth=ADMIN, timeout=60) as admin:
        hconn = admin.post("/v1/connections").json()["hconn"]
        r = admin.post(f"/v1/connections/{hconn}/put1", json={"object_name": q, "data": "not for the revoked",
                                                               "options": ["NO_SYNCPOINT"]})
        assert r.status_code == 201, r.text
    thread.join(ANSWER_S * 2)
    assert not thread.is_alive()
    [answer] = answers
    assert_2035(answer)
    assert "no longer hold" in answer.json()["error"]["message"]
    assert depth(group, q) == 1


# ---- 6. cross-origin pages -------------------------------------------------------------------------
# ---- 6. cross-origin pages -------------------------------------------------------------------------

def test_a_cross_origin_upgrade_is_refused_whatever_the_credentials(group):
    port = group.qms["QM1"].port
    for origin in ("http://127.0.0.1:1", f"http://localhost:{port}", "null", "https://elsewhere.example"):
        for creds in (basic(*ADMIN), {}):
            with pytest.raises(InvalidStatus) as refused:
                open_session(group, {**creds, "Origin": origin})
            response = refused.value.response
            assert response.status_code == 403, (origin, response)
            assert orjson.loads(response.body)["error"]["reason"] == 2035
    for origin in (f"http://127.0.0.1:{port}", ALLOWED, None):  # its own origin, the allowed one, no page
        headers = basic(*ADMIN) | ({"Origin": origin} if origin else {})
        with open_session(group, headers) as ws:
            assert Frames(ws).call("GET", "/v1/qmgr")["status"] == 200


def test_cross_origin_state_changes_are_refused_and_cookies_need_the_csrf_header(group):
    url = group.url("QM1")
    r = httpx.post(f"{url}/v1/admin/mqsc", json={"script": "DEFINE QLOCAL(EVIL.POST)"}, auth=ADMIN,
                   headers={"Origin": "http://127.0.0.1:1"})
    assert_2035(r, 403)
    assert httpx.get(f"{url}/v1/qmgr", auth=ADMIN, headers={"Origin": "http://127.0.0.1:1"}).status_code == 200
    with httpx.Client(base_url=url) as browser:
        assert browser.post("/ibmmq/rest/v1/login", json={"username": ADMIN[0], "password": ADMIN[1]},
                            headers=CSRF).status_code == 204
        assert_2035(browser.post("/v1/admin/mqsc", json={"script": "DEFINE QLOCAL(EVIL.COOKIE)"}), 401)
        ok = browser.post("/v1/admin/mqsc", json={"script": "DISPLAY QMGR"}, headers=CSRF)
        assert ok.status_code == 200 and ok.json()["results"][0]["completion_code"] == 0
    rows = mqsc(group, "QM1", "DISPLAY QLOCAL(EVIL.*)")
    assert not any(o for r in rows for o in r.get("objects", [])), rows


def test_a_rebound_host_name_is_not_the_queue_managers_own_origin(group):
    """DNS rebinding: a page's own name, pointed at 127.0.0.1 by its owner, sends Origin and Host
    of that name: same-origin by the Host header alone. Only an address or localhost counts so."""
    port = group.qms["QM1"].port
    rebound = {"Origin": f"http://rebind.evil.example:{port}", "Host": f"rebind.evil.example:{port}"}
    r = httpx.post(f"{group.url('QM1')}/v1/admin/mqsc", json={"script": "DEFINE QLOCAL(EVIL.REBOUND)"}, auth=ADMIN,
                   headers=rebound)
    assert_2035(r, 403)
    with pytest.raises(InvalidStatus) as refused:
        open_session(group, {**basic(*ADMIN), **rebound})
    assert refused.value.response.status_code == 403
    same = {"Origin": f"http://localhost:{port}", "Host": f"localhost:{port}"}  # the address itself: its own
    r = httpx.post(f"{group.url('QM1')}/v1/admin/mqsc", json={"script": "DISPLAY QMGR"}, auth=ADMIN, headers=same)
    assert r.status_code == 200, r.text
    rows = mqsc(group, "QM1", "DISPLAY QLOCAL(EVIL.*)")
    assert not any(o for r in rows for o in r.get("objects", [])), rows


ATTACK_PAGE = """<!doctype html><title>pending</title><script>
const ws = new WebSocket("%s");
ws.onopen = () => ws.send(JSON.stringify({id: 1, method: "POST", path: "/v1/admin/mqsc",
  body: {script: "DEFINE QLOCAL(EVIL.BROWSER)"}}));
ws.onmessage = (e) => { document.title = "answered " + e.data; };
ws.onclose = (e) => { if (!document.title.startsWith("answered")) document.title = "closed " + e.code; };
</script>"""


def serve_page(html: str) -> tuple[ThreadingHTTPServer, int]:
    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    port = free_port()
    server = ThreadingHTTPServer(("127.0.0.1", port), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, port


@contextlib.contextmanager
def entry_point(group, tmp_path: Path) -> Iterator[str]:
    """``qsg gateway`` in front of the group's queue managers: its URL, once it answers."""
    port = free_port()
    upstreams = ",".join(f"{name}={group.url(name)}" for name in group.qms)
    gateway = subprocess.Popen([sys.executable, "-m", "app.cli", "gateway", "--port", str(port),
                                "--upstreams", upstreams],
                               stdout=subprocess.DEVNULL, stderr=open(tmp_path / "gateway.log", "wb"))
    try:
        entry = f"http://127.0.0.1:{port}"
        wait_until(lambda: httpx.get(f"{entry}/v1/health").status_code == 200, what="the entry point up",
                   tolerate=(httpx.HTTPError,))
        yield entry
    finally:
        gateway.terminate()
        gateway.wait(timeout=20)


def test_through_the_entry_point_its_own_origin_is_allowed_and_others_refused(group, tmp_path: Path):
    with entry_point(group, tmp_path) as entry:
        call = {"json": {"script": "DISPLAY QMGR"}, "auth": ADMIN}
        own = httpx.post(f"{entry}/v1/admin/mqsc", headers={"Origin": entry}, **call)
        assert own.status_code == 200, own.text
        forged = {"Origin": "http://127.0.0.1:1", "X-Forwarded-Host": "127.0.0.1:1"}  # not passed on
        assert_2035(httpx.post(f"{entry}/v1/admin/mqsc", headers=forged, **call), 403)


def test_a_call_from_the_qms_own_page_forwarded_to_another_qm_is_not_refused_there(group):
    mqsc_ok(group, "QM2", "DEFINE QLOCAL(FORWARDED.Q) REPLACE")
    url = group.url("QM1")
    r = httpx.post(f"{url}/ibmmq/rest/v2/messaging/qmgr/QM2/queue/FORWARDED.Q/message", content="from QM1's page",
                   headers={**CSRF, "Content-Type": "text/plain", "Origin": url}, auth=ADMIN)
    assert r.status_code == 201, r.text
    r = httpx.post(f"{url}/ibmmq/rest/v2/messaging/qmgr/QM2/queue/FORWARDED.Q/message", content="from elsewhere",
                   headers={**CSRF, "Content-Type": "text/plain", "Origin": "http://127.0.0.1:1"}, auth=ADMIN)
    assert r.status_code == 403 and r.json()["error"][0]["reasonCode"] == 2035, r.text


def test_a_page_on_another_port_cannot_ride_the_browsers_credentials(group, tmp_path: Path):
    from playwright.sync_api import sync_playwright

    url = group.url("QM1")
    server, port = serve_page(ATTACK_PAGE % ws_url(group))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                        args=["--headless", "--no-sandbox", "--disable-gpu"])
            try:
                # the administrator's browser holds basic credentials for the queue manager
                context = browser.new_context(http_credentials={"username": ADMIN[0], "password": ADMIN[1]})
                page = context.new_page()
                assert page.goto(f"{url}/v1/qmgr").status == 200
                # the same script on the queue manager's own origin works: the credentials ride along
                own = page.evaluate("""(u) => new Promise((done) => {
                    const ws = new WebSocket(u);
                    ws.onopen = () => ws.send(JSON.stringify({id: 1, method: "GET", path: "/v1/qmgr"}));
                    ws.onmessage = (e) => { done(JSON.parse(e.data).status); ws.close(); };
                    ws.onclose = (e) => done("closed " + e.code);
                })""", ws_url(group))
                assert own == 200, own
                # a page of another port of the same host: refused
                page.goto(f"http://127.0.0.1:{port}/")
                page.wait_for_function("!document.title.startsWith('pending')", timeout=15000)
                assert page.title().startswith("closed"), page.title()
            finally:
                browser.close()
    finally:
        server.shutdown()
    rows = mqsc(group, "QM1", "DISPLAY QLOCAL(EVIL.*)")
    assert not any(o for r in rows for o in r.get("objects", [])), rows


def test_the_console_logs_in_with_a_cookie_not_basic_credentials(group):
    from playwright.sync_api import expect, sync_playwright

    url = group.url("QM1")
    refused = httpx.get(f"{url}/console/state")
    assert refused.status_code == 401 and "www-authenticate" not in refused.headers
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                    args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            context = browser.new_context()
            page = context.new_page()
            page.goto(f"{url}/console")
            expect(page.locator("#login")).to_be_visible(timeout=15000)
            page.fill("#login-user", ADMIN[0])
            page.fill("#login-password", ADMIN[1])
            page.click("#login-form button")
            expect(page.locator("#title")).to_have_text("QM1 of QSG1", timeout=15000)
            page.fill("#mqsc-script", "DISPLAY QLOCAL(ATTACK.Q) CURDEPTH")
            page.click("#mqsc-form button")
            expect(page.locator("#mqsc-output")).to_contain_text("CSQ9022I", timeout=15000)
            (cookie,) = [c for c in context.cookies() if c["name"] == "LtpaToken2"]
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
            page.click("#logout")
            expect(page.locator("#login")).to_be_visible(timeout=15000)
        finally:
            browser.close()


# ---- 7. new opens of old connections get the current authority ----------------------------------

def mqconn(group, auth, qm: str = "QM1") -> str:
    r = httpx.post(f"{group.url(qm)}/v1/connections", json={}, auth=auth)
    assert r.status_code == 201, r.text
    return r.json()["hconn"]


def mqopen(group, auth, hconn: str, queue: str, options: list[str], qm: str = "QM1") -> httpx.Response:
    return httpx.post(f"{group.url(qm)}/v1/connections/{hconn}/objects", auth=auth,
                      json={"object_name": queue, "options": options})


def test_a_demoted_admins_old_connection_opens_nothing_new(group):
    user = add_user(group, "oldadm", "--admin")
    mqsc_ok(group, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('oldadm') AUTHADD(CONNECT)")
    hconn = mqconn(group, user)
    held = mqopen(group, user, hconn, "ATTACK.Q", ["OUTPUT"])
    assert held.status_code == 201, held.text
    add_user(group, "oldadm", "--replace", password=user[1])  # no longer an administrator
    assert_2035(mqopen(group, user, hconn, "ATTACK.Q", ["OUTPUT"]))
    put1 = httpx.post(f"{group.url('QM1')}/v1/connections/{hconn}/put1", auth=user,
                      json={"object_name": "ATTACK.Q", "data": "x", "options": ["NO_SYNCPOINT"]})
    assert_2035(put1)
    # IBM: the handle opened before keeps the access it was opened with
    hobj = held.json()["hobj"]
    put = httpx.post(f"{group.url('QM1')}/v1/connections/{hconn}/objects/{hobj}/put", auth=user,
                     json={"data": "kept", "options": ["NO_SYNCPOINT"]})
    assert put.status_code == 201, put.text


def test_a_user_moved_out_of_a_group_no_longer_opens_its_queue(group):
    mqsc_ok(group, "QM1", "DEFINE QLOCAL(TEAM.Q) REPLACE\n"
                          "SET AUTHREC OBJTYPE(QMGR) GROUP('team') AUTHADD(CONNECT)\n"
                          "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('mover') AUTHADD(CONNECT)\n"
                          "SET AUTHREC PROFILE('TEAM.Q') OBJTYPE(QUEUE) GROUP('team') AUTHADD(GET,PUT,INQ)")
    user = add_user(group, "mover", "--group", "team")
    hconn = mqconn(group, user)
    first = mqopen(group, user, hconn, "TEAM.Q", ["INPUT_SHARED"])
    assert first.status_code == 201, first.text
    add_user(group, "mover", "--replace", password=user[1])  # out of the group
    assert_2035(mqopen(group, user, hconn, "TEAM.Q", ["INPUT_SHARED"]))
    # and an AUTHRMV made on another QM reaches the open of an old connection too
    add_user(group, "mover", "--replace", "--group", "team", password=user[1])
    assert mqopen(group, user, hconn, "TEAM.Q", ["OUTPUT"]).status_code == 201
    mqsc_ok(group, "QM2", "SET AUTHREC PROFILE('TEAM.Q') OBJTYPE(QUEUE) GROUP('team') AUTHRMV(PUT)")
    assert_2035(mqopen(group, user, hconn, "TEAM.Q", ["OUTPUT"]))


# ---- 8. MQCO_DELETE_PURGE of another user's permanent dynamic queue ----------------------------

def test_delete_purge_of_anothers_permanent_dynamic_queue_needs_dlt(group):
    mqsc_ok(group, "QM1", "DEFINE QMODEL(PERM.MODEL) DEFTYPE(PERMDYN) REPLACE\n"
                          "SET AUTHREC OBJTYPE(QMGR) GROUP('dyn') AUTHADD(CONNECT)\n"
                          "SET AUTHREC PROFILE('PERM.MODEL') OBJTYPE(QUEUE) PRINCIPAL('maker') AUTHADD(GET,PUT)\n"
                          "SET AUTHREC PROFILE('PERMDYN.**') OBJTYPE(QUEUE) PRINCIPAL('maker') AUTHADD(GET,PUT)\n"
                          "SET AUTHREC PROFILE('PERMDYN.**') OBJTYPE(QUEUE) PRINCIPAL('peeker') AUTHADD(BROWSE)")
    maker = add_user(group, "maker", "--group", "dyn")
    peeker = add_user(group, "peeker", "--group", "dyn")
    mine = mqconn(group, maker)
    opened = httpx.post(f"{group.url('QM1')}/v1/connections/{mine}/objects", auth=maker,
                        json={"object_name": "PERM.MODEL", "dynamic_q_name": "PERMDYN.MAKER",
                              "options": ["INPUT_SHARED", "OUTPUT"]})
    assert opened.status_code == 201, opened.text
    queue = opened.json().get("resolved_q_name") or "PERMDYN.MAKER"
    hobj = opened.json()["hobj"]
    put = httpx.post(f"{group.url('QM1')}/v1/connections/{mine}/objects/{hobj}/put", auth=maker,
                     json={"data": "precious", "options": ["NO_SYNCPOINT"]})
    assert put.status_code == 201, put.text

    theirs = mqconn(group, peeker)
    browse = mqopen(group, peeker, theirs, queue, ["BROWSE"])
    assert browse.status_code == 201, browse.text
    close = httpx.request("DELETE", f"{group.url('QM1')}/v1/connections/{theirs}/objects/{browse.json()['hobj']}",
                          auth=peeker, json={"options": ["DELETE_PURGE"]})
    assert_2035(close)
    rows = mqsc(group, "QM1", f"DISPLAY QLOCAL({queue}) CURDEPTH")
    assert rows[0]["completion_code"] == 0 and rows[0]["objects"][0]["CURDEPTH"] == 1, rows

    # with DLT on the queue (its current authority) another user's handle may delete it
    mqsc_ok(group, "QM1", f"SET AUTHREC PROFILE('{queue}') OBJTYPE(QUEUE) PRINCIPAL('peeker') AUTHADD(BROWSE,DLT)")
    close = httpx.request("DELETE", f"{group.url('QM1')}/v1/connections/{theirs}/objects/{browse.json()['hobj']}",
                          auth=peeker, json={"options": ["DELETE_PURGE"]})
    assert close.status_code in (200, 204), close.text
    assert mqsc(group, "QM1", f"DISPLAY QLOCAL({queue})")[0]["reason"] == 2085


def test_the_creating_handle_deletes_its_permanent_dynamic_queue_without_dlt(group):
    mqsc_ok(group, "QM1", "DEFINE QMODEL(PERM.MODEL) DEFTYPE(PERMDYN) REPLACE\n"
                          "SET AUTHREC OBJTYPE(QMGR) GROUP('dyn') AUTHADD(CONNECT)\n"
                          "SET AUTHREC PROFILE('PERM.MODEL') OBJTYPE(QUEUE) PRINCIPAL('maker2') AUTHADD(GET,PUT)\n"
                          "SET AUTHREC PROFILE('PERMDYN.**') OBJTYPE(QUEUE) PRINCIPAL('maker2') AUTHADD(GET,PUT)")
    maker = add_user(group, "maker2", "--group", "dyn")
    hconn = mqconn(group, maker)
    opened = httpx.post(f"{group.url('QM1')}/v1/connections/{hconn}/objects", auth=maker,
                        json={"object_name": "PERM.MODEL", "dynamic_q_name": "PERMDYN.MAKER2", "options": ["OUTPUT"]})
    assert opened.status_code == 201, opened.text
    close = httpx.request("DELETE", f"{group.url('QM1')}/v1/connections/{hconn}/objects/{opened.json()['hobj']}",
                          auth=maker, json={"options": ["DELETE"]})
    assert close.status_code in (200, 204), close.text


# ---- smaller: argon2 for unknown users, coalescing, throttle, clean refusal, /metrics ------------

def checks(group, qm: str = "QM1") -> dict[str, float]:
    text = httpx.get(f"{group.url(qm)}/metrics", auth=ADMIN).text
    out = {}
    for kind, value in re.findall(r'^qsg_auth_password_checks_total\{kind="(\w+)"\} (\S+)$', text, re.M):
        out[kind] = float(value)
    out["throttled"] = float(re.search(r"^qsg_auth_throttled_total (\S+)$", text, re.M).group(1))
    return out


def test_an_unknown_user_costs_the_same_argon2_as_a_wrong_password(group):
    add_user(group, "known")
    before = checks(group)
    assert_2035(httpx.get(f"{group.url('QM1')}/v1/qmgr", auth=("nobody-here", "guess")), 401)
    middle = checks(group)
    assert middle["unknown"] == before["unknown"] + 1 and middle["known"] == before["known"]
    assert_2035(httpx.get(f"{group.url('QM1')}/v1/qmgr", auth=("known", "wrong")), 401)
    after = checks(group)
    assert after["known"] == middle["known"] + 1 and after["unknown"] == middle["unknown"]
    # an unknown API key, likewise
    assert_2035(httpx.get(f"{group.url('QM1')}/v1/qmgr", headers={"X-API-Key": "qsg_0000_nope"}), 401)
    assert checks(group)["unknown"] == after["unknown"] + 1


def test_a_burst_of_one_credential_runs_argon2_once(group):
    user = add_user(group, "burst")
    before = checks(group, "QM2")["known"]
    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda _: httpx.get(f"{group.url('QM2')}/v1/qmgr", auth=user, timeout=60).status_code,
                              range(8)))
    assert codes == [200] * 8
    assert checks(group, "QM2")["known"] == before + 1


def test_failed_logins_are_throttled_per_user(group):
    user = add_user(group, "victim")
    verified = add_user(group, "steady")
    url = group.url("QM2")
    assert httpx.get(f"{url}/v1/qmgr", auth=verified).status_code == 200  # verified before the attack
    before = checks(group, "QM2")
    for _ in range(3):  # QSG_AUTH_FAIL_LIMIT
        assert_2035(httpx.get(f"{url}/v1/qmgr", auth=(user[0], "wrong")), 401)
        assert_2035(httpx.get(f"{url}/v1/qmgr", auth=(verified[0], "wrong")), 401)
    known = checks(group, "QM2")["known"]
    assert known == before["known"] + 6
    refused = httpx.get(f"{url}/v1/qmgr", auth=user)  # even the right password: no argon2 now
    assert_2035(refused, 401)
    assert "too many failed attempts" in refused.json()["error"]["message"]
    after = checks(group, "QM2")
    assert after["known"] == known and after["throttled"] == before["throttled"] + 1
    # a credential verified before the attack still passes (no argon2 needed)
    assert httpx.get(f"{url}/v1/qmgr", auth=verified).status_code == 200
    # another QM has its own count: the user can still log in there
    assert httpx.get(f"{group.url('QM1')}/v1/qmgr", auth=user).status_code == 200


def test_an_unauthenticated_upgrade_is_refused_cleanly(group):
    log_path = group.qms["QM1"].log_path
    start = log_path.stat().st_size
    for headers in (None, basic("admin", "wrong")):
        with pytest.raises(InvalidStatus) as refused:
            open_session(group, headers)
        assert refused.value.response.status_code == 401
        assert orjson.loads(refused.value.response.body)["error"]["reason"] == 2035
    assert httpx.get(f"{group.url('QM1')}/v1/health").status_code == 200
    with log_path.open("rb") as log:
        log.seek(start)
        written = log.read().decode(errors="replace")
    assert "without completing handshake" not in written and "ERROR" not in written, written


def test_metrics_hide_queue_names_from_non_administrators(group):
    user = add_user(group, "watcher")
    mqsc_ok(group, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('watcher') AUTHADD(CONNECT)")
    theirs = httpx.get(f"{group.url('QM1')}/metrics", auth=user)
    assert theirs.status_code == 200
    assert "qsg_connections" in theirs.text and 'queue="ATTACK.Q"' not in theirs.text
    admins = httpx.get(f"{group.url('QM1')}/metrics", auth=ADMIN)
    assert 'queue="ATTACK.Q"' in admins.text


def test_metrics_only_for_administrators_when_told(make_cluster):
    secured = make_cluster(["QM1"], env={"QSG_AUTH": "on", "QSG_METRICS_ACCESS": "admin"})
    qsg_cli(secured, "user", "add", ADMIN[0], "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    user = add_user(secured, "viewer")
    assert_2035(httpx.get(f"{secured.url('QM1')}/metrics", auth=user), 403)
    assert httpx.get(f"{secured.url('QM1')}/metrics", auth=ADMIN).status_code == 200


# ---- the pure parts -----------------------------------------------------------------------------

def test_origins_are_compared_normalized():
    from types import SimpleNamespace

    from app.api.auth import normalize_origin, origin_allowed

    assert normalize_origin("HTTP://Example.COM:80/") == "http://example.com"
    assert normalize_origin("https://h:443") == "https://h" and normalize_origin("https://h:8443") == "https://h:8443"
    assert normalize_origin("null") == "" and normalize_origin("file://x") == ""
    settings = SimpleNamespace(advertised_url="http://qm1:9441", allowed_origins="https://gw.example, http://x:1")
    scope = {"scheme": "http"}
    for origin, allowed in (("http://127.0.0.1:9441", True), ("http://qm1:9441", True), ("https://gw.example", True),
                            ("http://x:1", True), ("http://127.0.0.1:9442", False), ("https://127.0.0.1:9441", False),
                            ("null", False)):
        headers = {"host": "127.0.0.1:9441", "origin": origin}
        assert origin_allowed(scope, headers, settings) is allowed, origin
    assert origin_allowed(scope, {"host": "127.0.0.1:9441"}, settings)  # no Origin: not a web page
    through = {"host": "qm1:9441", "x-forwarded-host": "127.0.0.1:9440", "x-forwarded-proto": "http"}
    assert origin_allowed(scope, through | {"origin": "http://127.0.0.1:9440"}, settings)  # the entry point's page
    assert not origin_allowed(scope, through | {"origin": "http://127.0.0.1:9999"}, settings)
    # a Host (or forwarded host) that is a name is no proof of origin: DNS rebinding points any name at
    # 127.0.0.1; names count only as the advertised URL or QSG_ALLOWED_ORIGINS list them
    named = {"host": "gw:9440", "x-forwarded-host": "gw:9440"}
    assert not origin_allowed(scope, named | {"origin": "http://gw:9440"}, settings)
    assert origin_allowed(scope, {"host": "qm1:9441", "origin": "http://qm1:9441"}, settings)  # advertised


def test_the_throttle_counts_within_its_window_per_user_and_client():
    from app.security.service import AuthenticationFailed, Throttle

    throttle = Throttle(limit_user=2, limit_client=3, window_s=3600)
    throttle.failed("eve", "10.0.0.1")
    throttle.check("eve", "10.0.0.1")
    throttle.failed("eve", "10.0.0.1")
    with pytest.raises(AuthenticationFailed, match="too many failed attempts"):
        throttle.check("eve", "10.0.0.2")  # the user, from anywhere
    throttle.check("bob", "10.0.0.2")
    throttle.failed("bob", "10.0.0.1")
    with pytest.raises(AuthenticationFailed):
        throttle.check("carl", "10.0.0.1")  # the address, for any user
    assert throttle.refused == 2
    now = [1000.0]
    timed = Throttle(limit_user=1, limit_client=5, window_s=60, clock=lambda: now[0])
    timed.failed("eve", "10.0.0.1")
    with pytest.raises(AuthenticationFailed):
        timed.check("eve", "10.0.0.1")
    now[0] += 60.5  # the window has passed
    timed.check("eve", "10.0.0.1")


def test_checks_under_way_count_against_the_throttle():
    """A burst sent all at once passes no more checks than the limit: each check under way counts
    as a failure until it ends (then a failure stays one, a success does not)."""
    from app.security.service import AuthenticationFailed, Throttle

    throttle = Throttle(limit_user=10, limit_client=2, window_s=3600)
    for name in ("a", "b"):
        throttle.check(name, "10.0.0.9")
        throttle.started(name, "10.0.0.9")
    with pytest.raises(AuthenticationFailed):
        throttle.check("c", "10.0.0.9")  # two under way from this address, none ended yet
    throttle.check("c", "10.0.0.8")  # another address is not held up
    throttle.ended("a", "10.0.0.9")  # a succeeded
    throttle.check("c", "10.0.0.9")
    throttle.started("c", "10.0.0.9")
    throttle.ended("b", "10.0.0.9")
    throttle.failed("b", "10.0.0.9")  # b failed: it stays counted
    with pytest.raises(AuthenticationFailed):
        throttle.check("d", "10.0.0.9")


def test_a_storm_of_wrong_passwords_from_one_address_does_not_hold_up_other_users(make_cluster):
    """Thirty-two wrong passwords sent at once from one address (127.0.0.2) run argon2 at most
    QSG_AUTH_FAIL_LIMIT_CLIENT times - the rest are refused without it - so the queue manager's
    CPU and its argon2 pool stay free: during the storm a verified user's calls and another
    user's first login (from 127.0.0.1) all answer."""
    limit = 4
    g = make_cluster(["QM1"], env={"QSG_AUTH": "on", "QSG_AUTH_FAIL_LIMIT_CLIENT": str(limit)})
    qsg_cli(g, "user", "add", ADMIN[0], "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    worker, late = add_user(g, "worker"), add_user(g, "latecomer")
    url = g.url("QM1")
    assert httpx.get(f"{url}/v1/qmgr", auth=worker, timeout=60).status_code == 200  # verified before
    before = checks(g)
    start = threading.Barrier(33)

    def storm(i: int) -> int:
        with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2"), timeout=120) as attacker:
            start.wait(60)
            return attacker.get(f"{url}/v1/qmgr", auth=(f"guess{i % 8}", "wrong")).status_code

    with ThreadPoolExecutor(32) as pool:
        storming = [pool.submit(storm, i) for i in range(32)]
        start.wait(60)
        answered = [httpx.get(f"{url}/v1/qmgr", auth=worker, timeout=120).status_code for _ in range(10)]
        first_login = httpx.get(f"{url}/v1/qmgr", auth=late, timeout=120).status_code
        storm_codes = [f.result(180) for f in storming]
    after = checks(g)
    assert storm_codes == [401] * 32
    assert answered == [200] * 10 and first_login == 200
    runs = after["known"] + after["unknown"] - before["known"] - before["unknown"]
    assert runs <= limit + 1, runs  # the storm's (at most the limit) and the latecomer's
    assert after["throttled"] - before["throttled"] >= 32 - limit


def _wrong_passwords(url: str, n: int, source: str = "127.0.0.1",
                     forwarded: Callable[[int], str] | None = None) -> None:
    """``n`` wrong passwords of different users from ``source`` (their own X-Forwarded-For each)."""
    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=60) as client:
        for i in range(n):
            headers = {"X-Forwarded-For": forwarded(i)} if forwarded else {}
            assert client.get(f"{url}/v1/qmgr", auth=(f"nobody{i}", "wrong"), headers=headers).status_code == 401


def test_a_forged_x_forwarded_for_does_not_dodge_the_address_throttle(make_fresh_cluster):
    """Nobody's X-Forwarded-For is believed by default (uvicorn's own default believes any local
    process): wrong passwords under a new forged address each are still counted against the
    address they came from, which is throttled past QSG_AUTH_FAIL_LIMIT_CLIENT."""
    g = make_fresh_cluster(["QM1"], env={"QSG_AUTH": "on", "QSG_AUTH_FAIL_LIMIT_CLIENT": "3"})
    qsg_cli(g, "user", "add", ADMIN[0], "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    assert httpx.get(f"{g.url('QM1')}/v1/qmgr", auth=ADMIN, timeout=60).status_code == 200  # (remembered)
    before = checks(g)
    _wrong_passwords(g.url("QM1"), 6, forwarded=lambda i: f"10.66.0.{i}")
    assert checks(g)["throttled"] - before["throttled"] == 3  # the 4th, 5th and 6th: the address's limit


def test_through_a_trusted_entry_point_each_client_has_its_own_throttle(make_fresh_cluster, tmp_path: Path):
    """``qsg gateway`` names its client in X-Forwarded-For (replacing what the client sent) and the
    queue managers believe it from the addresses in QSG_TRUSTED_PROXIES: one client's wrong
    passwords through the entry point throttle that client, not everyone behind the entry point."""
    g = make_fresh_cluster(["QM1"], env={"QSG_AUTH": "on", "QSG_AUTH_FAIL_LIMIT_CLIENT": "3",
                                         "QSG_TRUSTED_PROXIES": "127.0.0.1"})
    qsg_cli(g, "user", "add", ADMIN[0], "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    assert httpx.get(f"{g.url('QM1')}/v1/qmgr", auth=ADMIN, timeout=60).status_code == 200
    with entry_point(g, tmp_path) as entry:
        before = checks(g)
        # the attacker at 127.0.0.2, posing as a new address each time
        _wrong_passwords(entry, 5, source="127.0.0.2", forwarded=lambda i: f"10.66.0.{i}")
        assert checks(g)["throttled"] - before["throttled"] == 2
        # another client of the entry point still has its tries (argon2 runs: not throttled)
        before = checks(g)
        _wrong_passwords(entry, 2, source="127.0.0.3")
        assert checks(g)["throttled"] == before["throttled"]
