"""The read resources of IBM's administrative REST API (installation, qmgr, queue), IBM's token
login without the CSRF header, and IBM's error body on every failure under ``/ibmmq/``: over
real HTTP on a real group (QM1, QM2) with authentication on."""

from __future__ import annotations

import httpx
import pytest

from tests.support.names import uniq
from tests.support.security import ADMIN, ALICE, CSRF, mqsc_ok, qsg_cli

ERROR_KEYS = {"type", "messageId", "msgId", "message", "explanation", "action", "completionCode", "reasonCode"}


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"], env={"QSG_AUTH": "on"})
    qsg_cli(g, "user", "add", "admin", "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    qsg_cli(g, "user", "add", "alice", "--password-stdin", stdin=ALICE[1] + "\n")
    mqsc_ok(g, "QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    return g


@pytest.fixture
def http():
    with httpx.Client(timeout=60, auth=ADMIN) as client:
        yield client


def admin_url(group, rest: str, version: str = "v1", via: str = "QM1") -> str:
    return f"{group.url(via)}/ibmmq/rest/{version}/admin/{rest}"


def assert_ibm_error(r: httpx.Response, status: int, message_id: str, reason: int | None = None) -> dict:
    """IBM's error body, the message starting with its id (under both of IBM's field names)."""
    assert r.status_code == status, (status, r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json")
    (item,) = r.json()["error"]
    assert ERROR_KEYS <= set(item), item
    assert item["type"] == "rest" and item["messageId"] == item["msgId"] == message_id, item
    assert item["message"].startswith(f"{message_id}: ") and item["explanation"] and item["action"]
    if reason is not None:
        assert item["reasonCode"] == reason and item["completionCode"] == 2, item
    return item


# ---- login ------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_login_needs_no_csrf_header_and_its_cookie_reads_the_admin_resources(group, version):
    with httpx.Client(base_url=group.url("QM2"), timeout=60) as client:
        r = client.post(f"/ibmmq/rest/{version}/login", json={"username": "admin", "password": ADMIN[1]})
        assert r.status_code == 204, r.text
        assert "LtpaToken2" in client.cookies
        r = client.get(f"/ibmmq/rest/{version}/admin/qmgr")
        assert r.status_code == 200, r.text
        # logging out is a DELETE: that one still needs the CSRF header
        assert_ibm_error(client.delete(f"/ibmmq/rest/{version}/login"), 403, "MQWB0100E")
        assert client.delete(f"/ibmmq/rest/{version}/login", headers=CSRF).status_code == 204
    r = httpx.post(f"{group.url('QM1')}/ibmmq/rest/v1/login", json={"username": "admin", "password": "wrong"})
    assert_ibm_error(r, 401, "MQWB0104E", 2035)


def test_without_credentials_401_in_ibm_shape(group):
    r = httpx.get(admin_url(group, "qmgr"))
    assert_ibm_error(r, 401, "MQWB0104E", 2035)
    assert r.headers["www-authenticate"].startswith("Basic")
    # the MQSC command processor decides what a user may display: alice has no ADMIN right
    r = httpx.get(admin_url(group, "qmgr/QM1/queue"), auth=ALICE)
    assert_ibm_error(r, 403, "MQWB0103E", 2035)


# ---- installation -----------------------------------------------------------------------------


def test_installation(group, http):
    for version in ("v1", "v2", "v3"):
        r = http.get(admin_url(group, "installation", version))
        assert r.status_code == 200, r.text
        assert r.json() == {"installation": [{"name": "QSG1", "platform": "zos", "version": "9.3.0.0"}]}
    (entry,) = http.get(admin_url(group, "installation"), params={"attributes": "*"}).json()["installation"]
    assert set(entry["extended"]) == {"level", "operatingSystem"} and entry["extended"]["level"]
    (entry,) = http.get(admin_url(group, "installation/QSG1"),
                        params={"attributes": "extended.operatingSystem"}).json()["installation"]
    assert set(entry["extended"]) == {"operatingSystem"}
    assert_ibm_error(http.get(admin_url(group, "installation/OTHER")), 404, "MQWB0001E")
    item = assert_ibm_error(http.get(admin_url(group, "installation"), params={"attributes": "extended.path"}),
                            400, "MQWB0302E")
    assert "attributes" in item["message"]


# ---- qmgr -------------------------------------------------------------------------------------


def test_qmgr_lists_the_group_with_state_and_status(group, http):
    r = http.get(admin_url(group, "qmgr"))
    assert r.status_code == 200, r.text
    assert r.json() == {"qmgr": [{"name": "QM1", "state": "running"}, {"name": "QM2", "state": "running"}]}
    assert http.get(admin_url(group, "qmgr", "v2", via="QM2")).json() == r.json()

    # a connection on QM2 shows in QM2's connectionCount, asked through QM1
    hconn = http.post(f"{group.url('QM2')}/v1/connections").json()["hconn"]
    try:
        r = http.get(admin_url(group, "qmgr"), params={"status": "*"})
        by_name = {q["name"]: q for q in r.json()["qmgr"]}
        for qm in ("QM1", "QM2"):
            status = by_name[qm]["status"]
            assert set(status) == {"started", "channelInitiatorState", "connectionCount", "publishSubscribeState"}
            assert status["started"].endswith("Z") and status["started"][10] == "T"
        assert by_name["QM2"]["status"]["connectionCount"] >= 1
        r = http.get(admin_url(group, "qmgr/QM2"), params={"status": "status.connectionCount"})
        assert r.json() == {"qmgr": [{"name": "QM2", "state": "running",
                                      "status": {"connectionCount": by_name["QM2"]["status"]["connectionCount"]}}]}
    finally:
        http.delete(f"{group.url('QM2')}/v1/connections/{hconn}")
    assert http.get(admin_url(group, "qmgr/QM1")).json() == {"qmgr": [{"name": "QM1", "state": "running"}]}
    assert http.get(admin_url(group, "qmgr"), params={"state": "ended"}).json() == {"qmgr": []}


def test_qmgr_errors(group, http):
    item = assert_ibm_error(http.get(admin_url(group, "qmgr/QM9")), 404, "MQWB0009E", 2058)
    assert item["qmgrName"] == "QM9"
    assert_ibm_error(http.get(admin_url(group, "qmgr"), params={"state": "sleeping"}), 400, "MQWB0302E")
    assert_ibm_error(http.get(admin_url(group, "qmgr"), params={"status": "status.uptime"}), 400, "MQWB0302E")
    assert_ibm_error(http.get(admin_url(group, "qmgr"), params={"attributes": "*"}), 400, "MQWB0302E")
    item = assert_ibm_error(http.get(admin_url(group, "qmgr"), params={"colour": "red"}), 400, "MQWB0302E")
    assert "colour" in item["message"]


def test_a_stopped_queue_manager_is_ended(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.qms["QM2"].stop()
    with httpx.Client(timeout=60) as http:
        r = http.get(admin_url(g, "qmgr"), params={"status": "*"})
        assert r.status_code == 200, r.text
        (qm1, qm2) = r.json()["qmgr"]
        assert qm1["name"] == "QM1" and qm1["state"] == "running" and "status" in qm1
        assert qm2 == {"name": "QM2", "state": "ended"}
        assert http.get(admin_url(g, "qmgr/QM2")).json() == {"qmgr": [{"name": "QM2", "state": "ended"}]}
        assert http.get(admin_url(g, "qmgr"), params={"state": "ended"}).json() == {"qmgr": [qm2]}
        # the queues of a stopped queue manager cannot be asked for: IBM's 503
        assert_ibm_error(http.get(admin_url(g, "qmgr/QM2/queue")), 503, "MQWB0300E", 2059)


# ---- queue ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def queues(group):
    """A shared queue with two messages, a private local queue, an alias and a remote queue,
    all under one unique prefix."""
    prefix = uniq("ADMQ", 6)
    shared, private, alias, remote = (f"{prefix}.{s}" for s in ("SHARED", "PRIVATE", "ALIAS", "REMOTE"))
    mqsc_ok(group, "QM1", f"""
        DEFINE QLOCAL({shared}) QSGDISP(SHARED) CFSTRUCT(APPL1) MAXDEPTH(5000) DESCR('orders')
        DEFINE QLOCAL({private}) TRIGGER TRIGTYPE(EVERY) INITQ(SYSTEM.CICS.INITIATION.QUEUE) QDPHIEV(ENABLED)
        DEFINE QALIAS({alias}) TARGET({private})
        DEFINE QREMOTE({remote}) RNAME(THEIR.Q) RQMNAME(QMX) XMITQ(QMX.XMIT)
    """)
    for text in ("one", "two"):
        r = httpx.post(f"{group.url('QM2')}/ibmmq/rest/v2/messaging/qmgr/QM2/queue/{shared}/message",
                       content=text, headers={**CSRF, "content-type": "text/plain"}, auth=ADMIN)
        assert r.status_code == 201, r.text
    return {"prefix": prefix, "shared": shared, "private": private, "alias": alias, "remote": remote}


def get_queues(http, group, params=None, path="qmgr/QM1/queue", version="v1") -> list[dict]:
    r = http.get(admin_url(group, path, version), params=params)
    assert r.status_code == 200, r.text
    return r.json()["queue"]


def test_queue_list_by_generic_name_gives_name_and_type(group, http, queues):
    found = get_queues(http, group, {"name": queues["prefix"] + ".*"})
    assert sorted(found, key=lambda q: q["name"]) == [
        {"name": queues["alias"], "type": "alias"}, {"name": queues["private"], "type": "local"},
        {"name": queues["remote"], "type": "remote"}, {"name": queues["shared"], "type": "local"}]
    assert get_queues(http, group, {"name": queues["prefix"] + ".*"}, version="v2") == found
    assert [q["name"] for q in get_queues(http, group, {"name": queues["prefix"] + ".*", "type": "alias"})] \
        == [queues["alias"]]
    assert [q["name"] for q in get_queues(http, group, {"name": queues["prefix"] + ".*",
                                                        "queueSharingGroupDisposition": "shared"})] \
        == [queues["shared"]]
    assert get_queues(http, group, {"name": queues["prefix"] + ".*", "type": "model"}) == []


def test_queue_attributes_and_status_in_ibm_groups(group, http, queues):
    (q,) = get_queues(http, group, {"attributes": "*", "status": "*"}, path=f"qmgr/QM1/queue/{queues['shared']}")
    assert q["name"] == queues["shared"] and q["type"] == "local"
    assert q["general"] == {"description": "orders", "inhibitGet": False, "inhibitPut": False,
                            "isTransmissionQueue": False}
    assert q["storage"]["maximumDepth"] == 5000 and q["storage"]["couplingFacilityStructureName"] == "APPL1"
    assert q["storage"]["messageDeliverySequence"] == "priority"
    assert q["queueSharingGroup"] == {"disposition": "shared"}
    assert q["trigger"]["enabled"] is False and q["events"]["depth"]["fullEnabled"] is True
    assert q["timestamps"]["altered"].endswith(".000Z")
    # the shared queue's depth is the group's; the open counts are this queue manager's
    assert q["status"] == {"currentDepth": 2, "openInputCount": 0, "openOutputCount": 0}
    assert "remote" not in q and "alias" not in q

    (q,) = get_queues(http, group, {"attributes": "storage.maximumDepth", "status": "status.currentDepth"},
                      path=f"qmgr/QM1/queue/{queues['shared']}")
    assert q == {"name": queues["shared"], "type": "local", "storage": {"maximumDepth": 5000},
                 "status": {"currentDepth": 2}}
    (q,) = get_queues(http, group, {"attributes": "trigger,events.depth"},
                      path=f"qmgr/QM1/queue/{queues['private']}")
    assert q["trigger"]["enabled"] is True and q["trigger"]["type"] == "every"
    assert q["trigger"]["initiationQueueName"] == "SYSTEM.CICS.INITIATION.QUEUE"
    assert q["events"]["depth"]["highEnabled"] is True and set(q) == {"name", "type", "trigger", "events"}
    (q,) = get_queues(http, group, {"attributes": "*", "status": "*"}, path=f"qmgr/QM1/queue/{queues['alias']}")
    assert q["alias"] == {"targetName": queues["private"], "targetType": "queue"} and "status" not in q
    (q,) = get_queues(http, group, {"attributes": "remote"}, path=f"qmgr/QM1/queue/{queues['remote']}")
    assert q["remote"] == {"qmgrName": "QMX", "queueName": "THEIR.Q", "transmissionQueueName": "QMX.XMIT"}


def test_queue_filter(group, http, queues):
    prefix = queues["prefix"] + ".*"
    found = get_queues(http, group, {"name": prefix, "filter": "status.currentDepth:greaterThan:0",
                                     "status": "status.currentDepth"})
    assert found == [{"name": queues["shared"], "type": "local", "status": {"currentDepth": 2}}]
    found = get_queues(http, group, {"name": prefix, "filter": "trigger.enabled:equalTo:true"})
    assert found == [{"name": queues["private"], "type": "local"}]
    found = get_queues(http, group, {"name": prefix, "filter": "general.description:equalTo:ord*"})
    assert [q["name"] for q in found] == [queues["shared"]]
    assert_ibm_error(http.get(admin_url(group, "qmgr/QM1/queue"), params={"filter": "storage.depth:equalTo:1"}),
                     400, "MQWB0302E")
    assert_ibm_error(http.get(admin_url(group, "qmgr/QM1/queue"), params={"filter": "status.currentDepth:over:1"}),
                     400, "MQWB0302E")


def test_queue_of_another_queue_manager_is_that_queue_managers(group, http):
    q = uniq("ADMPRIV")
    mqsc_ok(group, "QM2", f"DEFINE QLOCAL({q}) MAXDEPTH(77)")
    (found,) = get_queues(http, group, {"attributes": "storage.maximumDepth", "status": "*"},
                          path=f"qmgr/QM2/queue/{q}")
    assert found["storage"] == {"maximumDepth": 77} and found["status"]["currentDepth"] == 0
    assert get_queues(http, group, {"name": q}, path="qmgr/QM2/queue") == [{"name": q, "type": "local"}]
    # QM1 has no such queue: IBM's 404 with the MQ reason
    item = assert_ibm_error(http.get(admin_url(group, f"qmgr/QM1/queue/{q}")), 404, "MQWB0004E", 2085)
    assert item["qmgrName"] == "QM1"
    assert_ibm_error(http.get(admin_url(group, f"qmgr/QM2/queue/{q}.NOT")), 404, "MQWB0004E", 2085)


def test_queue_errors(group, http, queues):
    assert_ibm_error(http.get(admin_url(group, "qmgr/QM1/queue/NO.SUCH.QUEUE")), 404, "MQWB0004E", 2085)
    assert_ibm_error(http.get(admin_url(group, "qmgr/QM1/queue/NO.SUCH.QUEUE"), params={"attributes": "*"}),
                     404, "MQWB0004E", 2085)
    item = assert_ibm_error(http.get(admin_url(group, "qmgr/QM7/queue")), 404, "MQWB0009E", 2058)
    assert item["qmgrName"] == "QM7"
    for params in ({"type": "topic"}, {"attributes": "storage.depth"}, {"attributes": "status.currentDepth"},
                   {"status": "status.lastGet"}, {"queueSharingGroupDisposition": "everywhere"},
                   {"name": "BAD NAME"}, {"name": "A*B"}, {"commandScope": "*"}):
        assert_ibm_error(http.get(admin_url(group, "qmgr/QM1/queue"), params=params), 400, "MQWB0302E")
    # a queue name in the path is one name, not a generic one
    assert_ibm_error(http.get(admin_url(group, "qmgr/QM1/queue/ABC*")), 400, "MQWB0004E", 2152)


# ---- any failure on an /ibmmq/ path -----------------------------------------------------------


def test_unknown_paths_and_methods_answer_in_ibm_shape(group, http):
    for path in ("/ibmmq/rest/v1/nothing", "/ibmmq/rest/v9/admin/qmgr", "/ibmmq/elsewhere",
                 "/ibmmq/rest/v3/admin/qmgr/QM1/queue"):  # IBM's v3 has no queue resource
        item = assert_ibm_error(http.get(f"{group.url('QM1')}{path}"), 404, "MQWB0000E")
        assert path in item["message"]
    r = http.put(admin_url(group, "qmgr"), headers=CSRF)
    item = assert_ibm_error(r, 405, "MQWB0000E")
    assert "PUT" in item["message"] and "GET" in r.headers["allow"]
    # the emulator's own API keeps its own error body
    r = http.get(f"{group.url('QM1')}/v1/nothing")
    assert r.status_code == 404 and r.json()["error"]["reason"] == 2085


def test_openapi_lists_the_admin_resources(group, http):
    paths = http.get(f"{group.url('QM1')}/openapi.json").json()["paths"]
    for version in ("v1", "v2"):
        for rest in ("installation", "qmgr", "qmgr/{qmgr}", "qmgr/{qmgr}/queue", "qmgr/{qmgr}/queue/{queue}"):
            assert set(paths[f"/ibmmq/rest/{version}/admin/{rest}"]) == {"get"}, (version, rest)
    assert "/ibmmq/rest/v3/admin/qmgr" in paths and "/ibmmq/rest/v3/admin/qmgr/{qmgr}/queue" not in paths
