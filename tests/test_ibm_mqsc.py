"""The MQSC resource of IBM's administrative REST API on a real group (QM1, QM2):
``POST /ibmmq/rest/v2/admin/action/qmgr/{qmgr}/mqsc`` with IBM's runCommand and runCommandJSON
bodies and response shapes (IBM docs "POST - plain text MQSC command" / "POST - JSON formatted
command")."""

from __future__ import annotations

import httpx
import pytest

from tests.support.names import uniq

ERROR_KEYS = {"type", "messageId", "message", "explanation", "action", "completionCode", "reasonCode"}
HEADERS = {"Content-Type": "application/json", "ibm-mq-rest-csrf-token": "token"}


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    return g


@pytest.fixture
def http():
    with httpx.Client(timeout=60) as client:
        yield client


def mqsc_url(group, qmgr: str = "QM1", via: str = "QM1", version: str = "v2") -> str:
    return f"{group.url(via)}/ibmmq/rest/{version}/admin/action/qmgr/{qmgr}/mqsc"


def test_run_command_defines_and_displays(group, http):
    q = uniq("ADM")
    body = {"type": "runCommand", "parameters": {"command": f"DEFINE QLOCAL({q}) MAXDEPTH(5000)"}}
    r = http.post(mqsc_url(group), json=body, headers=HEADERS)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["overallCompletionCode"] == 0 and out["overallReasonCode"] == 0
    (item,) = out["commandResponse"]
    assert item["completionCode"] == 0 and item["reasonCode"] == 0
    assert any("CSQ9022I" in line for line in item["text"])  # z/OS: NORMAL COMPLETION

    r = http.post(mqsc_url(group), json={"type": "runCommand",
                                         "parameters": {"command": f"DISPLAY QLOCAL({q}) MAXDEPTH"}}, headers=HEADERS)
    (item,) = r.json()["commandResponse"]
    assert f"QUEUE({q})" in item["text"] and "MAXDEPTH(5000)" in item["text"]


def test_run_command_json_display_with_response_parameters(group, http):
    q = uniq("ADM")
    body = {"type": "runCommandJSON", "command": "define", "qualifier": "qlocal", "name": q,
            "parameters": {"maxdepth": 4000, "descr": "orders from the web shop", "qsgdisp": "shared",
                           "cfstruct": "APPL1", "defpsist": "yes"}}
    r = http.post(mqsc_url(group), json=body, headers=HEADERS)
    assert r.status_code == 200, r.text
    assert r.json() == {"commandResponse": [{"completionCode": 0, "reasonCode": 0}],
                        "overallCompletionCode": 0, "overallReasonCode": 0}
    body = {"type": "runCommandJSON", "command": "display", "qualifier": "qlocal", "name": q,
            "responseParameters": ["maxdepth", "descr", "curdepth"]}
    r = http.post(mqsc_url(group), json=body, headers=HEADERS)
    (item,) = r.json()["commandResponse"]
    params = item["parameters"]
    assert params["queue"] == q and params["maxdepth"] == 4000 and params["curdepth"] == 0
    assert params["descr"] == "orders from the web shop" and params["qsgdisp"] == "SHARED"
    assert set(params) == {"queue", "type", "qsgdisp", "maxdepth", "descr", "curdepth"}  # what was asked
    body["responseParameters"] = ["all"]
    (item,) = http.post(mqsc_url(group), json=body, headers=HEADERS).json()["commandResponse"]
    assert item["parameters"]["defpsist"] == "YES"


def test_a_failing_command_is_200_with_overall_3008(group, http):
    body = {"type": "runCommandJSON", "command": "display", "qualifier": "qlocal", "name": "NO.SUCH.Q"}
    r = http.post(mqsc_url(group), json=body, headers=HEADERS)
    assert r.status_code == 200
    out = r.json()
    assert out["overallCompletionCode"] == 2 and out["overallReasonCode"] == 3008  # MQRCCF_COMMAND_FAILED
    (item,) = out["commandResponse"]
    assert item["completionCode"] == 2 and item["reasonCode"] == 2085 and item["message"]
    r = http.post(mqsc_url(group), json={"type": "runCommand", "parameters": {"command": "DEFINE QLOCAL("}},
                  headers=HEADERS)
    assert r.status_code == 200 and r.json()["overallReasonCode"] == 3008


def test_csrf_media_type_and_body_errors(group, http):
    body = {"type": "runCommand", "parameters": {"command": "DISPLAY QMGR"}}
    r = http.post(mqsc_url(group), json=body)
    assert r.status_code == 403
    (item,) = r.json()["error"]
    assert ERROR_KEYS <= set(item) and item["messageId"] == "MQWB0100E" and item["qmgrName"] == "QM1"
    r = http.post(mqsc_url(group), content="DISPLAY QMGR",
                  headers={"Content-Type": "text/plain", "ibm-mq-rest-csrf-token": ""})
    assert r.status_code == 415 and r.json()["error"][0]["messageId"] == "MQWB0306E"
    for bad in (b"{not json", b'{"type": "runSomething"}', b'{"type": "runCommand", "parameters": {}}',
                b'{"type": "runCommandJSON", "command": "display"}'):
        r = http.post(mqsc_url(group), content=bad, headers=HEADERS)
        assert r.status_code == 400, (bad, r.text)
        assert r.json()["error"][0]["messageId"] == "MQWB2004E"


def test_another_queue_manager_runs_its_own_command(group, http):
    q = uniq("ADM")
    body = {"type": "runCommand", "parameters": {"command": f"DEFINE QLOCAL({q})"}}
    r = http.post(mqsc_url(group, qmgr="QM2", via="QM1"), json=body, headers=HEADERS)
    assert r.status_code == 200 and r.json()["overallCompletionCode"] == 0, r.text
    display = {"type": "runCommandJSON", "command": "display", "qualifier": "qlocal", "name": q}
    r = http.post(mqsc_url(group, qmgr="QM2", via="QM2"), json=display, headers=HEADERS)
    (on_qm2,) = r.json()["commandResponse"]
    assert on_qm2["parameters"]["qsgdisp"] == "QMGR"  # a private queue of QM2
    (on_qm1,) = http.post(mqsc_url(group), json=display, headers=HEADERS).json()["commandResponse"]
    assert on_qm1["reasonCode"] == 2085  # not defined on QM1
    r = http.post(mqsc_url(group, qmgr="QM7"), json=body, headers=HEADERS)
    assert r.status_code == 404
    (item,) = r.json()["error"]
    assert item["messageId"] == "MQWB0009E" and item["reasonCode"] == 2058 and item["qmgrName"] == "QM7"
