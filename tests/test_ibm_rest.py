"""IBM MQ messaging REST API compatibility over real HTTP on a real group (QM1, QM2).

The first tests replay, request for request, what IBM's samples in github
ibm-messaging/mq-dev-patterns send (only host and port differ, and http for https):
Rust-REST (Rust_REST_Post, Rust_REST_Delete), Swift-REST (MQSwift/HTTPRequestManager.swift),
serverless/openwhisk and aws-lambda-rest (lib/parambuilder.js + mqrestapi.js) and
serverless/azure-functions-rest-http-trigger (src/lib/ParamBuilder.js + MQRestAPI.js, v3).
The others check IBM's documented behaviour: headers, query parameters, status codes, the
CSRF rule and IBM's error body.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.support.mq import MQ, MQFailed
from tests.support.mqsc import shared_q
from tests.support.names import uniq

HEX48 = re.compile(r"[0-9a-f]{48}")
ERROR_KEYS = {"type", "messageId", "message", "explanation", "action", "completionCode", "reasonCode"}
# The samples' envrest.json: user app / passw0rd, CSRFTOKEN "" (authentication is not checked yet).
BASIC_AUTH = "Basic " + base64.b64encode(b"app:passw0rd").decode()


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", """
        DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)
        DEFINE QLOCAL(DEV.QUEUE.1) QSGDISP(SHARED) CFSTRUCT(APPL1)
        DEFINE QLOCAL(DEV.QUEUE.2) QSGDISP(SHARED) CFSTRUCT(APPL1)
        DEFINE QLOCAL(DEV.QUEUE.3) QSGDISP(SHARED) CFSTRUCT(APPL1)
    """)
    return g


@pytest.fixture
def http():
    with httpx.Client(timeout=60) as client:
        yield client


def msg_url(group, q: str, version: str = "v2", qmgr: str = "QM1", via: str = "QM1", resource: str = "message") -> str:
    return f"{group.url(via)}/ibmmq/rest/{version}/messaging/qmgr/{qmgr}/queue/{q}/{resource}"


def post(http, group, q, body="hello", version="v2", headers=None, **kw) -> httpx.Response:
    h = {"ibm-mq-rest-csrf-token": "", "Content-Type": "text/plain;charset=utf-8", **(headers or {})}
    return http.post(msg_url(group, q, version, **kw), content=body, headers=h)


def delete(http, group, q, version="v2", params=None, **kw) -> httpx.Response:
    return http.delete(msg_url(group, q, version, **kw), params=params, headers={"ibm-mq-rest-csrf-token": ""})


def assert_ibm_error(r: httpx.Response, status: int, message_id: str, reason: int | None = None) -> dict:
    """IBM's error body: {"error": [{type, messageId, message, explanation, action, completionCode,
    reasonCode}]}, the message starting with its messageId."""
    assert r.status_code == status, (status, r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json")
    (item,) = r.json()["error"]
    assert ERROR_KEYS <= set(item), item
    assert item["type"] == "rest" and item["messageId"] == message_id, item
    assert item["message"].startswith(f"{message_id}: ") and item["explanation"] and item["action"]
    if reason is not None:
        assert item["reasonCode"] == reason and item["completionCode"] == 2, item
    return item


def v1_browse(group, q: str, qm: str = "QM1") -> list[dict]:
    """Every message on the queue, browsed through the /v1 MQI API (nothing removed)."""
    m = MQ(group.url(qm))
    try:
        h = m.open(q, ["BROWSE"])
        out, mode = [], "BROWSE_FIRST"
        while True:
            try:
                out.append(m.get(h, [mode]))
            except MQFailed as exc:
                assert exc.reason == 2033, exc.body
                return out
            mode = "BROWSE_NEXT"
    finally:
        m.disconnect()
        m.http.close()




# ---- IBM's samples, replayed -------------------------------------------------------------------


def test_rust_rest_post_and_delete_samples(group, http):
    """Rust-REST: reqwest POST/DELETE to /ibmmq/rest/v1/.../queue/DEV.QUEUE.1/message with
    Content-type application/json (no charset), Basic auth and an empty CSRF token; the POST body
    is a line read from stdin (with its newline)."""
    url = f"{group.url('QM1')}/ibmmq/rest/v1/messaging/qmgr/QM1/queue/DEV.QUEUE.1/message"
    sample_headers = {"Content-type": "application/json", "Authorization": BASIC_AUTH,
                      "ibm-mq-rest-csrf-token": ""}
    r = http.post(url, headers=sample_headers, content="Hello from Rust\n")
    assert r.status_code == 201, r.text
    assert HEX48.fullmatch(r.headers["ibm-mq-md-messageId"]) and r.content == b""
    (on_queue,) = v1_browse(group, "DEV.QUEUE.1")
    # mqweb puts an MQSTR message, not persistent by default, at JMS priority 4
    assert on_queue["data"] == "Hello from Rust\n" and on_queue["md"]["format"] == "MQSTR"
    assert on_queue["md"]["persistence"] == "NOT_PERSISTENT" and on_queue["md"]["priority"] == 4
    assert on_queue["md"]["msg_id"] == r.headers["ibm-mq-md-messageId"]

    r = http.delete(url, headers=sample_headers)  # Rust_REST_Delete: destructive get
    assert r.status_code == 200, r.text
    assert r.text == "Hello from Rust\n"
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    assert r.headers["ibm-mq-md-messageId"] == on_queue["md"]["msg_id"]
    assert r.headers["ibm-mq-md-persistence"] == "nonPersistent"
    assert r.headers["ibm-mq-md-expiry"] == "unlimited"
    assert "ibm-mq-md-correlationId" not in r.headers  # no correlation id was set

    r = http.delete(url, headers=sample_headers)
    assert r.status_code == 204 and r.content == b""  # IBM: no message available


def test_swift_rest_put_and_get_samples(group, http):
    """Swift-REST (MQSwift): URLSession POST of JSONEncoder(OurData) and DELETE, both with
    Content-Type and Accept application/json, the CSRF token and Basic auth, to /ibmmq/rest/v1."""
    url = f"{group.url('QM1')}/ibmmq/rest/v1/messaging/qmgr/QM1/queue/DEV.QUEUE.2/message"
    sample_headers = {"Accept": "application/json", "Content-Type": "application/json",
                      "ibm-mq-rest-csrf-token": "", "Authorization": BASIC_AUTH}
    our_data = json.dumps({"greeting": "Message from Swift via REST", "date": "14:05 Tue, 3 Jun 2025"},
                          separators=(",", ":"))
    r = http.post(url, headers=sample_headers, content=our_data)
    assert r.status_code == 201, r.text
    r = http.delete(url, headers=sample_headers)
    assert r.status_code == 200, r.text
    # ResponseDataHandler.parseDataFile: JSONSerialization of the body must give the dictionary back
    assert r.json() == {"greeting": "Message from Swift via REST", "date": "14:05 Tue, 3 Jun 2025"}
    assert http.delete(url, headers=sample_headers).status_code == 204


def test_openwhisk_and_aws_lambda_samples_browse_then_delete_by_message_id(group, http):
    """serverless/openwhisk + aws-lambda-rest: parambuilder builds /ibmmq/rest/v2/...; headers
    Authorization, ibm-mq-rest-csrf-token '' and Content-Type text/plain. mqpost POSTs the
    message; the feed browses (GET) and reads ibm-mq-md-messageid; mqget DELETEs with
    params {messageId} from that header. 204 means the queue is empty."""
    url = f"{group.url('QM1')}/ibmmq/rest/v2/messaging/qmgr/QM1/queue/DEV.QUEUE.3/message"
    headers = {"Authorization": BASIC_AUTH, "ibm-mq-rest-csrf-token": "", "Content-Type": "text/plain"}
    first = "Message sent from MQPost cloud function action at Tue, 03 Jun 2025 14:05:00 GMT"
    second = "Message sent from AWS Serverless Lambda Post function at Tue, 03 Jun 2025 14:05:01 GMT"
    ids = []
    for text in (first, second):
        r = http.post(url, headers=headers, content=text)  # postMessage
        assert r.status_code == 201, r.text
        ids.append(r.headers["ibm-mq-md-messageid"])  # axios lower-cases header names

    r = http.get(url, headers=headers)  # browseForMsg
    assert r.status_code == 200 and r.text == first
    assert r.headers["ibm-mq-md-messageid"] == ids[0]
    assert http.get(url, headers=headers).headers["ibm-mq-md-messageid"] == ids[0]  # a browse removes nothing

    r = http.delete(url, headers=headers, params={"messageId": ids[1]})  # deleteMessage, by id
    assert r.status_code == 200 and r.text == second and r.headers["ibm-mq-md-messageid"] == ids[1]
    r = http.delete(url, headers=headers, params={"messageId": ids[1]})
    assert r.status_code == 204  # 'Message not found on queue'
    r = http.delete(url, headers=headers, params={"messageId": ids[0]})
    assert r.status_code == 200 and r.text == first
    assert http.get(url, headers=headers).status_code == 204  # 'Queue is empty'


def test_azure_functions_v3_sample_posts_a_batch_and_drains_it(group, http):
    """serverless/azure-functions-rest-http-trigger: ParamBuilder uses /ibmmq/rest/v3/ with
    csrf token 'abc' and Content-Type text/plain; postMessages sends 'msg : i of n' concurrently
    (Promise.all); processQueue DELETEs until 204, reading ibm-mq-md-messageid."""
    q = shared_q(group)
    url = f"{group.url('QM1')}/ibmmq/rest/v3/messaging/qmgr/QM1/queue/{q}/message"
    headers = {"Authorization": BASIC_AUTH, "ibm-mq-rest-csrf-token": "abc", "Content-Type": "text/plain"}
    texts = [f"Sample message : {i + 1} of 7" for i in range(7)]
    with ThreadPoolExecutor(max_workers=7) as pool:
        posted = list(pool.map(lambda t: http.post(url, headers=headers, content=t), texts))
    assert all(r.status_code == 201 for r in posted), [r.text for r in posted]
    assert all(re.fullmatch(r"ID:[0-9a-f]{48}", r.headers["ibm-mq-md-messageid"]) for r in posted)
    drained = {}
    while True:
        r = http.delete(url, headers=headers)
        if r.status_code == 204:
            break
        assert r.status_code == 200, r.text
        drained[r.headers["ibm-mq-md-messageid"]] = r.text
    assert sorted(drained.values()) == sorted(texts)
    assert set(drained) == {r.headers["ibm-mq-md-messageid"] for r in posted}


# ---- IBM's documented headers and parameters --------------------------------------------------


def test_documented_example_persistent_message_with_two_minute_expiry(group, http):
    """IBM's POST example: a persistent message with ibm-mq-md-expiry 120000 (milliseconds)."""
    q = shared_q(group)
    r = post(http, group, q, "Hello World!", headers={"ibm-mq-md-persistence": "persistent",
                                                      "ibm-mq-md-expiry": "120000"})
    assert r.status_code == 201, r.text
    (on_queue,) = v1_browse(group, q)
    assert on_queue["md"]["persistence"] == "PERSISTENT"
    assert 1100 <= on_queue["md"]["expiry"] <= 1200  # tenths of a second in the MQMD
    r = delete(http, group, q)
    assert r.status_code == 200 and r.text == "Hello World!"
    assert r.headers["ibm-mq-md-persistence"] == "persistent"
    remaining = int(r.headers["ibm-mq-md-expiry"])  # what remains, in milliseconds
    assert 100_000 <= remaining <= 120_000 and remaining % 100 == 0


def test_correlation_id_reply_to_and_selection_by_correlation_id(group, http):
    q = shared_q(group)
    correl = "414d5120514d4144455620202020202067d8ce5923582f07"
    assert post(http, group, q, "first").status_code == 201
    r = post(http, group, q, "second", headers={"ibm-mq-md-correlationId": correl.upper(),
                                               "ibm-mq-md-replyTo": "REPLY.Q@QM2"})
    assert r.status_code == 201, r.text
    r = delete(http, group, q, params={"correlationId": correl})
    assert r.status_code == 200 and r.text == "second", r.text
    assert r.headers["ibm-mq-md-correlationId"] == correl
    assert r.headers["ibm-mq-md-replyTo"] == "REPLY.Q@QM2"
    assert delete(http, group, q, params={"correlationId": correl}).status_code == 204
    r = delete(http, group, q)
    assert r.text == "first" and "ibm-mq-md-replyTo" not in r.headers


def test_v3_priority_user_properties_and_application_correlation_id(group, http):
    q = shared_q(group, "DEFPRTY(2)")
    r = post(http, group, q, "low", version="v3")  # v3 without a priority: the queue's DEFPRTY
    assert r.status_code == 201
    r = post(http, group, q, "urgent", version="v3", headers={
        "ibm-mq-md-priority": "8", "ibm-mq-md-correlationId": "order-42",
        "ibm-mq-usr-region": "emea", "ibm-mq-usr-count": "3", "ibm-mq-usr-paid": "true",
        "ibm-mq-usr-code": '"12"', "ibm-mq-usr-ref": "007"})
    assert r.status_code == 201, r.text
    msg_id = r.headers["ibm-mq-md-messageId"]
    assert msg_id.startswith("ID:")
    on_queue = {m["data"]: m["md"] for m in v1_browse(group, q)}
    assert on_queue["low"]["priority"] == 2 and on_queue["urgent"]["priority"] == 8
    assert on_queue["urgent"]["correl_id"] == b"order-42".ljust(24, b"\0").hex()
    assert on_queue["urgent"]["properties"] == {"region": "emea", "count": 3, "paid": True, "code": "12",
                                                "ref": "007"}

    r = http.get(msg_url(group, q, "v2"))  # v2 shows neither priority nor properties, ids in hex
    assert r.text == "urgent" and r.headers["ibm-mq-md-correlationId"] == on_queue["urgent"]["correl_id"]
    assert "ibm-mq-md-priority" not in r.headers and "ibm-mq-usr-region" not in r.headers
    assert r.headers["ibm-mq-md-messageId"] == msg_id[3:]

    r = delete(http, group, q, version="v3", params={"correlationId": "order-42"})
    assert r.status_code == 200 and r.text == "urgent"
    assert r.headers["ibm-mq-md-correlationId"] == "order-42" and r.headers["ibm-mq-md-messageId"] == msg_id
    assert r.headers["ibm-mq-md-priority"] == "8"
    assert r.headers["ibm-mq-usr-region"] == "emea" and r.headers["ibm-mq-usr-count"] == "3"
    assert r.headers["ibm-mq-usr-paid"] == "true" and r.headers["ibm-mq-usr-ref"] == "007"
    assert r.headers["ibm-mq-usr-code"] == '"12"'  # a string that would read as a number stays quoted
    r = delete(http, group, q, version="v3")
    assert r.text == "low" and r.headers["ibm-mq-md-priority"] == "2"


def test_messagelist_v2_and_v3_with_limit_and_selection(group, http):
    q = shared_q(group)
    ids = [post(http, group, q, f"m{i}", headers={"ibm-mq-md-persistence": "persistent"} if i == 1 else None)
           .headers["ibm-mq-md-messageId"] for i in range(3)]
    r = http.get(msg_url(group, q, resource="messagelist"))
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    messages = r.json()["messages"]
    assert [m["messageId"] for m in messages] == ids
    assert messages[1]["persistence"] == "persistent" and messages[0]["persistence"] == "nonPersistent"
    assert all(m["format"] == "MQSTR" and m["expiry"] == "unlimited" and m["putDateTime"] for m in messages)
    assert "priority" not in messages[0]
    r = http.get(msg_url(group, q, "v3", resource="messagelist"), params={"limit": "2"})
    assert [m["messageId"] for m in r.json()["messages"]] == [f"ID:{i}" for i in ids[:2]]
    assert r.json()["messages"][0]["priority"] == 4  # a v2 put: JMS priority 4
    r = http.get(msg_url(group, q, resource="messagelist"), params={"messageId": ids[2]})
    assert [m["messageId"] for m in r.json()["messages"]] == [ids[2]]
    assert len(v1_browse(group, q)) == 3  # nothing was removed
    # IBM: a GET-inhibited queue lists as an empty array
    group.mqsc_ok("QM1", f"ALTER QLOCAL({q}) QSGDISP(SHARED) GET(DISABLED)")
    r = http.get(msg_url(group, q, resource="messagelist"))
    assert r.status_code == 200 and r.json() == {"messages": []}


def test_delete_with_wait_receives_a_message_put_while_it_waits(group, http):
    q = shared_q(group)
    with ThreadPoolExecutor(max_workers=1) as pool:
        waiting = pool.submit(delete, http, group, q, "v2", {"wait": "30000"}, via="QM2", qmgr="QM2")
        # the getter runs on QM2; the message is put through QM1 (a shared queue)
        group.wait_for_waiter(q)
        assert post(http, group, q, "worth the wait").status_code == 201
        r = waiting.result(timeout=60)
    assert r.status_code == 200 and r.text == "worth the wait"
    r = delete(http, group, q, params={"wait": "200"})  # nothing comes: 204 when the wait ends
    assert r.status_code == 204


def test_a_delete_whose_client_went_away_leaves_the_message(group, http):
    """A DELETE waits; its HTTP client gives up; a message then arrives: it is not taken for
    nobody (the call looks before it takes, and sees that its caller is gone)."""
    q = shared_q(group)
    port = group.qms["QM1"].port
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(f"DELETE /ibmmq/rest/v2/messaging/qmgr/QM1/queue/{q}/message?wait=60000 HTTP/1.1\r\n"
                 f"Host: 127.0.0.1:{port}\r\nibm-mq-rest-csrf-token: x\r\n\r\n".encode())
    group.wait_for_waiter(q)
    sock.close()  # the client gives up while the call waits
    assert post(http, group, q, "keep me").status_code == 201
    deadline = time.monotonic() + 30
    while input_handles(group, q) != 0:  # the call ended and closed its handle
        assert time.monotonic() < deadline, "the abandoned call never ended"
        time.sleep(0.02)
    assert [m["data"] for m in v1_browse(group, q)] == ["keep me"]


def input_handles(group, q: str) -> int:
    (status,) = group.mqsc_ok("QM1", f"DISPLAY QSTATUS({q})")
    return sum(row["IPPROCS"] for row in status["objects"] if row["QMNAME"] == "QM1")


# ---- CSRF, content types, invalid data -------------------------------------------------------


def test_csrf_header_is_required_for_post_and_delete_but_not_get(group, http):
    q = shared_q(group)
    r = http.post(msg_url(group, q), content="x", headers={"Content-Type": "text/plain"})
    item = assert_ibm_error(r, 403, "MQWB0100E")
    assert "ibm-mq-rest-csrf-token" in item["message"]
    assert v1_browse(group, q) == []  # nothing was put
    assert post(http, group, q, "x", headers={"ibm-mq-rest-csrf-token": "anything"}).status_code == 201
    assert_ibm_error(http.delete(msg_url(group, q)), 403, "MQWB0100E")
    assert http.get(msg_url(group, q)).status_code == 200  # a browse needs no token
    assert delete(http, group, q).status_code == 200  # blank token: accepted


def test_invalid_headers_and_query_parameters_are_400_with_ibm_error_body(group, http):
    q = shared_q(group)
    for headers in ({"ibm-mq-md-expiry": "soon"}, {"ibm-mq-md-expiry": "-5"},
                    {"ibm-mq-md-persistence": "durable"}, {"ibm-mq-md-correlationId": "not-hex"},
                    {"ibm-mq-md-replyTo": "BAD QUEUE NAME"}):
        item = assert_ibm_error(post(http, group, q, headers=headers), 400, "MQWB0302E")
        assert next(iter(headers)) in item["message"]
    assert_ibm_error(post(http, group, q, version="v3", headers={"ibm-mq-md-priority": "10"}), 400, "MQWB0302E")
    assert_ibm_error(post(http, group, q, headers={"Content-Type": "text/plain;charset=iso-8859-1"}),
                     400, "MQWB0305E")
    assert_ibm_error(post(http, group, q, headers={"Content-Type": "application/octet-stream"}), 415, "MQWB0306E")
    for params, version in (({"wait": "-1"}, "v2"), ({"wait": "soon"}, "v2"), ({"messageId": "abc"}, "v2"),
                            ({"messageId": "a" * 48}, "v3"), ({"correlationId": "x" * 30}, "v3")):
        assert_ibm_error(delete(http, group, q, version=version, params=params), 400, "MQWB0302E")
    assert v1_browse(group, q) == []


def test_mq_reasons_map_onto_ibm_statuses(group, http):
    item = assert_ibm_error(post(http, group, "NO.SUCH.QUEUE"), 404, "MQWB0004E", 2085)
    assert "MQRC_UNKNOWN_OBJECT_NAME" in item["message"]
    assert_ibm_error(delete(http, group, "NO.SUCH.QUEUE"), 404, "MQWB0004E", 2085)
    assert_ibm_error(http.get(msg_url(group, "NO.SUCH.QUEUE", resource="messagelist")), 404, "MQWB0004E", 2085)
    q = shared_q(group, "PUT(DISABLED) GET(DISABLED)")
    item = assert_ibm_error(post(http, group, q), 500, "MQWB0004E", 2051)  # an error code from IBM MQ
    assert "MQRC_PUT_INHIBITED" in item["message"] and "qmgrName" not in item  # not for messaging
    assert_ibm_error(delete(http, group, q), 500, "MQWB0004E", 2016)


def test_a_message_too_big_for_the_queue_is_400_and_nothing_is_put(group, http):
    """A 20 MB body to a queue of MAXMSGL 4 MB: the put fails with MQRC_MSG_TOO_BIG_FOR_Q (2030),
    which IBM's status table files under 400 "invalid data provided" (the client sent a message
    the queue cannot take), never a 500; nothing reaches the queue."""
    q = shared_q(group, "MAXMSGL(4194304)")
    item = assert_ibm_error(post(http, group, q, "x" * (20 * 1024 * 1024)), 400, "MQWB0004E", 2030)
    assert "MQRC_MSG_TOO_BIG_FOR_Q" in item["message"]
    for version in ("v1", "v3"):
        assert_ibm_error(post(http, group, q, "y" * (4194304 + 1), version=version), 400, "MQWB0004E", 2030)
    assert v1_browse(group, q) == []
    assert post(http, group, q, "z" * 4194304).status_code == 201  # exactly MAXMSGL fits


def test_a_body_over_the_transport_limit_is_413_in_ibm_error_body(group, http):
    """A Content-Length over the message-body limit (app/api/limits.py) is refused before the body
    is read: on IBM's paths in IBM's error body, 413 with MQRC_DATA_LENGTH_ERROR (2010), not a
    500; nothing is put."""
    q = shared_q(group)
    port = int(group.url("QM1").rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall((f"POST /ibmmq/rest/v2/messaging/qmgr/QM1/queue/{q}/message HTTP/1.1\r\n"
                      "Host: 127.0.0.1\r\nibm-mq-rest-csrf-token: x\r\n"
                      "Content-Type: text/plain;charset=utf-8\r\nContent-Length: 999999999999\r\n\r\n").encode())
        raw = b""
        for _ in range(1000):  # the answer closes the connection (the unread body is never read)
            chunk = sock.recv(65536)
            if not chunk:
                break
            raw += chunk
    head, body = raw.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 413 "), head
    (item,) = json.loads(body)["error"]
    assert item["messageId"] == "MQWB0004E" and item["reasonCode"] == 2010 and item["completionCode"] == 2, item
    assert v1_browse(group, q) == []


def test_a_message_that_is_not_text_is_left_on_the_queue(group, http):
    q = shared_q(group)
    m = MQ(group.url("QM1"))
    try:
        h = m.open(q, ["OUTPUT"])
        m.put(h, base64.b64encode(b"\x00\xffbinary").decode(), md={"format": ""}, encoding="base64")
    finally:
        m.disconnect()
        m.http.close()
    item = assert_ibm_error(delete(http, group, q), 500, "MQWB0303E")
    assert item["reasonCode"] == 2110
    assert_ibm_error(http.get(msg_url(group, q)), 500, "MQWB0303E")
    assert len(v1_browse(group, q)) == 1  # still there


# ---- the queue manager named in the URL --------------------------------------------------------


def test_a_call_naming_another_queue_manager_is_served_by_that_queue_manager(group, http):
    """QM1's endpoint forwards to QM2 (until IGQ): a QM2 private queue is reached through QM1."""
    q = uniq("PRIV")
    group.mqsc_ok("QM2", f"DEFINE QLOCAL({q})")
    r = post(http, group, q, "for QM2", qmgr="QM2", via="QM1")
    assert r.status_code == 201, r.text
    assert HEX48.fullmatch(r.headers["ibm-mq-md-messageId"])
    (on_qm2,) = v1_browse(group, q, qm="QM2")
    assert on_qm2["data"] == "for QM2" and on_qm2["md"]["put_qmgr"] == "QM2"
    # the same name on QM1 is not defined: the call really was served by QM2
    assert_ibm_error(post(http, group, q, "x", qmgr="QM1", via="QM1"), 404, "MQWB0004E", 2085)
    r = http.get(msg_url(group, q, qmgr="QM2", via="QM1", resource="messagelist"))
    assert [m["messageId"] for m in r.json()["messages"]] == [on_qm2["md"]["msg_id"]]
    r = delete(http, group, q, qmgr="QM2", via="QM1")
    assert r.status_code == 200 and r.text == "for QM2"
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    # IBM's errors of the serving queue manager come back unchanged
    assert_ibm_error(delete(http, group, "NO.SUCH.QUEUE", qmgr="QM2", via="QM1"), 404, "MQWB0004E", 2085)


def test_an_unknown_queue_manager_is_404_and_a_stopped_one_503(make_cluster, http):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", "DEFINE QLOCAL(LOCAL.Q)")
    item = assert_ibm_error(post(http, g, "LOCAL.Q", qmgr="QM9"), 404, "MQWB0300E", 2058)
    assert "QM9" in item["message"]
    g.qms["QM2"].stop()
    item = assert_ibm_error(post(http, g, "LOCAL.Q", qmgr="QM2"), 503, "MQWB0300E", 2059)
    assert "QM2" in item["message"]
    assert_ibm_error(delete(http, g, "LOCAL.Q", qmgr="QM2"), 503, "MQWB0300E", 2059)
    assert post(http, g, "LOCAL.Q", qmgr="QM1").status_code == 201  # QM1 itself serves on


def test_openapi_lists_the_ibm_resources(group, http):
    paths = http.get(f"{group.url('QM1')}/openapi.json").json()["paths"]
    for version in ("v1", "v2", "v3"):
        assert set(paths[f"/ibmmq/rest/{version}/messaging/qmgr/{{qmgr}}/queue/{{queue}}/message"]) == \
            {"post", "delete", "get"}
        assert f"/ibmmq/rest/{version}/admin/action/qmgr/{{qmgr}}/mqsc" in paths
