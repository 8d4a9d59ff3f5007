"""The MQI verbs over real HTTP on a real group of three queue managers (SQLite repository):
connections, open options, ordering, matching, browse, syncpoint, MQMD rules, queue limits,
truncation, the 63 KB rule of CF structures, get-with-wait across queue managers, MQINQ/MQSET,
malformed requests and the idle timeout. Every failure is checked for its reason code AND the
HTTP status of docs/api.md §2."""

from __future__ import annotations

import base64
import re
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.support.mq import MQ, MQFailed, connections, mq_reason
from tests.support.mqsc import shared_q
from tests.support.names import uniq

# On one redis-server and on a 3-master Redis Cluster (tests/conftest.py).
pytestmark = pytest.mark.group_suite

NO_ID = "0" * 48
HEX48 = re.compile(r"[0-9a-f]{48}")


# ---- the group and small helpers ------------------------------------------------------------


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2", "QM3"])
    g.mqsc_ok("QM1", """
        DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)
        DEFINE CFSTRUCT(LEVEL3)
        DEFINE CFSTRUCT(LEVEL4) CFLEVEL(4)
    """)
    return g


@pytest.fixture(scope="module")
def pool():
    with ThreadPoolExecutor(max_workers=8) as executor:
        yield executor


@pytest.fixture
def connect(group):
    """Factory of connections (MQCONN) to a queue manager; all disconnected after the test."""
    yield from connections(group, "PYTEST")


def private_q(group, qm: str = "QM1", attrs: str = "") -> str:
    q = uniq("PQ")
    group.mqsc_ok(qm, f"DEFINE QLOCAL({q}) {attrs}")
    return q


def put_exact(m: MQ, hobj: str, data: str = "x", md: dict | None = None, options: list[str] | None = None,
              **extra: Any) -> dict[str, Any]:
    """MQPUT sending exactly these options ([] = none given: inside the unit of work on z/OS)."""
    body: dict[str, Any] = {"data": data, "options": options or [], **extra}
    if md is not None:
        body["md"] = md
    return m.call("POST", f"/v1/connections/{m.hconn}/objects/{hobj}/put", body)


def request(m: MQ, method: str, path: str, body: Any = None, **kw: Any) -> httpx.Response:
    """A raw request on this connection's server (``{h}`` in ``path`` is the hconn)."""
    if body is not None:
        kw["json"] = body
    return m.http.request(method, path.replace("{h}", m.hconn), **kw)


def assert_error(r: httpx.Response, reason: int, status: int, comp: int = 2) -> dict[str, Any]:
    assert r.status_code == status, (reason, r.status_code, r.text)
    err = r.json()["error"]
    assert err["reason"] == reason, (reason, r.text)
    assert err["completion_code"] == comp and err["reason_name"].startswith("MQRC") and err["message"]
    return err


def depth(m: MQ, hinq: str) -> int:
    return m.inquire(hinq)["CURDEPTH"]


def display_depth(group, qm: str, q: str) -> int:
    (res,) = group.mqsc(qm, f"DISPLAY QLOCAL({q}) CURDEPTH")
    assert res["completion_code"] == 0, res
    return res["objects"][0]["CURDEPTH"]




# ---- MQCONN / MQDISC / handles ---------------------------------------------------------------


def test_mqconn_and_mqdisc_commit_the_unit_of_work_and_close_handles(group, connect):
    q = shared_q(group)
    url = group.url("QM1")
    r = httpx.post(f"{url}/v1/connections", json={"appl_name": "PAYROLL"})
    assert r.status_code == 201 and r.json()["qmgr"] == "QM1" and r.json()["hconn"]
    assert httpx.delete(f"{url}/v1/connections/{r.json()['hconn']}").status_code == 200
    r = httpx.post(f"{url}/v1/connections")  # no body: a default appl_name
    assert r.status_code == 201
    httpx.delete(f"{url}/v1/connections/{r.json()['hconn']}")

    m = connect("QM1")
    h = m.open(q, ["OUTPUT"])
    r = httpx.post(f"{url}/v1/connections/{m.hconn}/objects", json={"object_name": q, "options": ["OUTPUT"]})
    assert r.status_code == 201 and r.json()["qsgdisp"] == "SHARED" and r.json()["object_name"] == q
    put_exact(m, h, "in the unit of work", options=["SYNCPOINT"])
    other = connect("QM2")
    hin = other.open(q, ["INPUT_SHARED", "INQUIRE"])
    with mq_reason(2033, 404):
        other.get(hin)
    watcher = connect("QM1")
    hq = watcher.open(q, ["INQUIRE"])
    assert watcher.inquire(hq)["OPPROCS"] == 2

    r = request(m, "DELETE", "/v1/connections/{h}")
    assert r.status_code == 200 and r.json()["reason"] == 0
    assert other.get(hin)["data"] == "in the unit of work"  # MQDISC committed the put
    assert watcher.inquire(hq)["OPPROCS"] == 0  # and closed both handles
    with mq_reason(2018, 404):
        m.put(h, "after MQDISC")
    with mq_reason(2018, 404):
        m.disconnect()


def test_bad_hconn_and_bad_hobj(group, connect):
    q = shared_q(group)
    m = connect("QM1")
    h = m.open(q, ["INPUT_SHARED", "OUTPUT", "INQUIRE", "SET", "BROWSE"])
    bad = MQ(group.url("QM1"), connect=False)
    bad.hconn = "QM1-000000000000000000000000"
    try:
        with mq_reason(2018, 404):
            bad.open(q, ["OUTPUT"])
        with mq_reason(2018, 404):
            bad.commit()
        with mq_reason(2018, 404):
            bad.backout()
        with mq_reason(2018, 404):
            bad.put1(q, "x")
        with mq_reason(2018, 404):
            bad.get(h)
    finally:
        bad.http.close()
    # an hconn of QM1 is not a connection of QM2
    on_qm2 = MQ(group.url("QM2"), connect=False)
    on_qm2.hconn = m.hconn
    try:
        with mq_reason(2018, 404):
            on_qm2.open(q, ["OUTPUT"])
    finally:
        on_qm2.http.close()
    for call in (lambda: m.put("999", "x"), lambda: m.get("999"), lambda: m.inquire("999"),
                 lambda: m.set("999", {"PUT": "DISABLED"}), lambda: m.close("999")):
        with mq_reason(2019, 404):
            call()
    m.close(h)
    with mq_reason(2019, 404):
        m.close(h)
    with mq_reason(2019, 404):
        m.put(h, "closed handle")


# ---- open options ----------------------------------------------------------------------------


def test_input_exclusive_and_shared_conflict_across_queue_managers(group, connect):
    q = shared_q(group)
    m1, m2, m3 = connect("QM1"), connect("QM2"), connect("QM3")
    h1 = m1.open(q, ["INPUT_EXCLUSIVE"])
    with mq_reason(2042, 409):
        m2.open(q, ["INPUT_SHARED"])
    with mq_reason(2042, 409):
        m3.open(q, ["INPUT_EXCLUSIVE"])
    with mq_reason(2042, 409):
        m1.open(q, ["INPUT_SHARED"])  # the same QM too
    m2.close(m2.open(q, ["OUTPUT", "BROWSE", "INQUIRE"]))  # non-input opens are not affected
    m1.close(h1)

    h2 = m2.open(q, ["INPUT_SHARED"])  # and vice versa
    with mq_reason(2042, 409):
        m1.open(q, ["INPUT_EXCLUSIVE"])
    h3 = m3.open(q, ["INPUT_SHARED"])
    m2.close(h2)
    with mq_reason(2042, 409):
        m1.open(q, ["INPUT_EXCLUSIVE"])  # QM3 still has it open shared
    m3.close(h3)
    m1.close(m1.open(q, ["INPUT_EXCLUSIVE"]))


def test_input_as_q_def_follows_defsopt_and_noshare(group, connect):
    m1, m2, m3 = connect("QM1"), connect("QM2"), connect("QM3")
    shared_default = shared_q(group, "DEFSOPT(SHARED)")
    m1.open(shared_default, ["INPUT_AS_Q_DEF"])
    m2.open(shared_default, ["INPUT_AS_Q_DEF"])
    m3.open(shared_default, ["INPUT_SHARED"])
    with mq_reason(2042, 409):
        m3.open(shared_default, ["INPUT_EXCLUSIVE"])

    excl_default = shared_q(group, "DEFSOPT(EXCL)")
    m1.open(excl_default, ["INPUT_AS_Q_DEF"])
    with mq_reason(2042, 409):
        m2.open(excl_default, ["INPUT_SHARED"])
    with mq_reason(2042, 409):
        m3.open(excl_default, ["INPUT_AS_Q_DEF"])

    zos_default = shared_q(group)  # z/OS default DEFSOPT(EXCL)
    m1.open(zos_default, ["INPUT_AS_Q_DEF"])
    with mq_reason(2042, 409):
        m2.open(zos_default, ["INPUT_SHARED"])

    noshare = shared_q(group, "NOSHARE DEFSOPT(SHARED)")
    m1.open(noshare, ["INPUT_SHARED"])  # treated as INPUT_EXCLUSIVE
    with mq_reason(2042, 409):
        m2.open(noshare, ["INPUT_SHARED"])
    with mq_reason(2042, 409):
        m1.open(noshare, ["INPUT_AS_Q_DEF"])


def test_open_option_and_name_errors(group, connect):
    q = shared_q(group)
    base = private_q(group, "QM1")
    broken_alias = uniq("ALIAS")
    group.mqsc_ok("QM1", f"DEFINE QALIAS({broken_alias}) TARGET(NO.SUCH.BASE.Q)")
    m = connect("QM1")
    path = "/v1/connections/{h}/objects"
    for options in ([], ["FAIL_IF_QUIESCING"], ["BOGUS"], ["INPUT_SHARED", "INPUT_EXCLUSIVE"],
                    ["INPUT_AS_Q_DEF", "INPUT_SHARED"], ["OUTPUT", "SYNCPOINT"]):
        assert_error(request(m, "POST", path, {"object_name": q, "options": options}), 2046, 400)
    for options in ("OUTPUT", [7], None, {"OUTPUT": True}):  # malformed: still MQRC_OPTIONS_ERROR
        assert_error(request(m, "POST", path, {"object_name": q, "options": options}), 2046, 400)
    for qmgr in ("", "QM1", "QSG1"):  # this QM, by no name, its own name or the group's
        r = request(m, "POST", path, {"object_name": q, "object_qmgr": qmgr, "options": ["OUTPUT"]})
        assert r.status_code == 201 and r.json()["resolved_qmgr"] == "QSG1", r.text
    r = request(m, "POST", path, {"object_name": base, "options": ["OUTPUT"]})
    assert r.status_code == 201 and (r.json()["resolved_qmgr"], r.json()["qsgdisp"]) == ("QM1", "QMGR")
    err = assert_error(request(m, "POST", path, {"object_name": "NO.SUCH.Q", "options": ["OUTPUT"]}), 2085, 404)
    assert "NO.SUCH.Q" in err["message"]
    for name in ("BAD NAME", "BAD*", "X" * 49, ""):
        assert_error(request(m, "POST", path, {"object_name": name, "options": ["OUTPUT"]}), 2152, 400)
    assert_error(request(m, "POST", path, {"object_name": broken_alias, "options": ["OUTPUT"]}), 2082, 404)
    assert_error(request(m, "POST", "/v1/connections/{h}/put1",
                         {"object_name": broken_alias, "data": "x", "options": ["NO_SYNCPOINT"]}), 2082, 404)
    # put and get options
    h = m.open(base, ["INPUT_SHARED", "OUTPUT", "BROWSE"])
    for options in (["SYNCPOINT", "NO_SYNCPOINT"], ["WAIT"], ["BROWSE_FIRST"], ["NOPE"]):
        assert_error(request(m, "POST", f"/v1/connections/{{h}}/objects/{h}/put",
                             {"data": "x", "options": options}), 2046, 400)
    m.put(h, "one")
    for options in (["WAIT", "NO_WAIT"], ["SYNCPOINT", "NO_SYNCPOINT"], ["SYNCPOINT", "SYNCPOINT_IF_PERSISTENT"],
                    ["BROWSE_FIRST", "BROWSE_NEXT"], ["BROWSE_FIRST", "MSG_UNDER_CURSOR"],
                    ["BROWSE_FIRST", "SYNCPOINT"], ["NEW_MSG_ID"]):
        assert_error(request(m, "POST", f"/v1/connections/{{h}}/objects/{h}/get", {"options": options}), 2046, 400)
    assert m.drain(h) == ["one"]  # nothing was taken by the failed calls


# ---- ordering --------------------------------------------------------------------------------


def test_priority_delivery_is_priority_order_fifo_within_priority(group, connect):
    q = shared_q(group, "MSGDLVSQ(PRIORITY)")
    m1, m2 = connect("QM1"), connect("QM2")
    h1, h2 = m1.open(q, ["OUTPUT"]), m2.open(q, ["OUTPUT"])
    for i, (prio, text) in enumerate([(1, "a"), (5, "b"), (1, "c"), (9, "d"), (5, "e"), (0, "f"), (9, "g")]):
        (m1, m2)[i % 2].put((h1, h2)[i % 2], text, md={"priority": prio})
    m3 = connect("QM3")
    hin = m3.open(q, ["INPUT_SHARED"])
    out = []
    while True:
        try:
            msg = m3.get(hin)
        except MQFailed as exc:
            assert exc.reason == 2033
            break
        out.append((msg["data"], msg["md"]["priority"]))
    assert out == [("d", 9), ("g", 9), ("b", 5), ("e", 5), ("a", 1), ("c", 1), ("f", 0)]


def test_fifo_delivery_ignores_priority(group, connect):
    q = shared_q(group, "MSGDLVSQ(FIFO)")
    m = connect("QM1")
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    for prio, text in [(1, "a"), (9, "b"), (5, "c"), (0, "d")]:
        m.put(h, text, md={"priority": prio})
    got = [m.get(h) for _ in range(4)]
    assert [g["data"] for g in got] == ["a", "b", "c", "d"]
    assert [g["md"]["priority"] for g in got] == [1, 9, 5, 0]  # the MQMD keeps what was put


def test_backed_out_message_returns_to_its_original_place(group, connect):
    q = shared_q(group)
    m1, m2 = connect("QM1"), connect("QM2")
    hout = m2.open(q, ["OUTPUT"])
    hin = m1.open(q, ["INPUT_SHARED"])
    m2.put(hout, "A", md={"priority": 5})
    m2.put(hout, "B", md={"priority": 5})
    first = m1.get(hin, options=["SYNCPOINT"])
    assert first["data"] == "A" and first["md"]["backout_count"] == 0
    m2.put(hout, "C", md={"priority": 5})  # later messages of the same priority
    m2.put(hout, "D", md={"priority": 7})  # a higher priority still comes first
    m1.backout()
    got = [m1.get(hin) for _ in range(4)]
    assert [g["data"] for g in got] == ["D", "A", "B", "C"]
    assert [g["md"]["backout_count"] for g in got] == [0, 1, 0, 0]
    # a second backout counts again
    m2.put(hout, "E")
    assert m1.get(hin, options=["SYNCPOINT"])["md"]["backout_count"] == 0
    m1.backout()
    assert m1.get(hin, options=["SYNCPOINT"])["md"]["backout_count"] == 1
    m1.backout()
    assert m1.get(hin, options=["SYNCPOINT"])["md"]["backout_count"] == 2
    m1.commit()
    with mq_reason(2033, 404):
        m1.get(hin)


# ---- matching and identifiers ----------------------------------------------------------------


def test_match_by_msg_id_correl_id_and_both(group, connect):
    q = shared_q(group)
    m1, m2 = connect("QM1"), connect("QM2")
    hout = m1.open(q, ["OUTPUT"])
    id1, id2 = "A1" * 24, "b2" * 24
    c1, c2 = "C1" * 24, "d2" * 24
    p1 = m1.put(hout, "one", md={"msg_id": id1, "correl_id": c1})
    assert p1["md"]["msg_id"] == id1.lower() and p1["md"]["correl_id"] == c1.lower()
    m1.put(hout, "two", md={"msg_id": id2, "correl_id": c1})
    m1.put(hout, "three", md={"msg_id": id1, "correl_id": c2})  # msg_ids need not be unique
    m1.put(hout, "four")
    hin = m2.open(q, ["INPUT_SHARED"])
    assert m2.get(hin, match={"msg_id": id1, "correl_id": c2})["data"] == "three"
    assert m2.get(hin, match={"correl_id": c1.upper()})["data"] == "one"
    with mq_reason(2033, 404):
        m2.get(hin, match={"msg_id": id1, "correl_id": c1})  # "one" is gone
    with mq_reason(2033, 404):
        m2.get(hin, match={"msg_id": "ee" * 24})
    got = m2.get(hin, match={"msg_id": id2})
    assert got["data"] == "two" and got["md"]["msg_id"] == id2 and got["md"]["correl_id"] == c1.lower()
    last = m2.get(hin, match={"msg_id": NO_ID, "correl_id": NO_ID})  # all zeros matches anything
    assert last["data"] == "four" and last["md"]["correl_id"] == NO_ID and HEX48.fullmatch(last["md"]["msg_id"])
    for bad in ({"msg_id": "XYZ"}, {"msg_id": "0" * 47}, {"correl_id": "g" * 48}, {"group_id": "g" * 48},
                {"priority": 1}, {"msg_id": 12}):
        assert_error(request(m2, "POST", f"/v1/connections/{{h}}/objects/{hin}/get",
                             {"options": [], "match": bad}), 2026, 400)


def test_new_msg_id_and_new_correl_id(group, connect):
    q = private_q(group, "QM2")
    m = connect("QM2")
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    given = "ab" * 24
    r = m.put(h, "x", md={"msg_id": given, "correl_id": given}, options=["NO_SYNCPOINT", "NEW_MSG_ID"])
    assert r["md"]["msg_id"] != given and HEX48.fullmatch(r["md"]["msg_id"]) and r["md"]["correl_id"] == given
    r2 = m.put(h, "y", options=["NO_SYNCPOINT", "NEW_CORREL_ID"])
    assert HEX48.fullmatch(r2["md"]["correl_id"]) and r2["md"]["correl_id"] != NO_ID
    assert r2["md"]["correl_id"] != r2["md"]["msg_id"]
    assert m.get(h, match={"correl_id": r2["md"]["correl_id"]})["data"] == "y"
    assert m.get(h, match={"msg_id": r["md"]["msg_id"]})["data"] == "x"


def test_msg_ids_are_unique_across_queue_managers(group, connect):
    q = shared_q(group)
    conns = [connect(qm) for qm in ("QM1", "QM2", "QM3")]
    handles = [c.open(q, ["OUTPUT"]) for c in conns]
    put_ids = [conns[i % 3].put(handles[i % 3], f"m{i}")["md"]["msg_id"] for i in range(200)]
    assert len(set(put_ids)) == 200 and all(HEX48.fullmatch(i) for i in put_ids)
    reader = connect("QM2")
    hin = reader.open(q, ["INPUT_SHARED"])
    got = [reader.get(hin)["md"]["msg_id"] for _ in range(200)]
    assert got == put_ids


# ---- browse ----------------------------------------------------------------------------------


def test_browse_first_next_and_msg_under_cursor(group, connect):
    q = shared_q(group)
    m = connect("QM1")
    hout = m.open(q, ["OUTPUT"])
    for text in ("A", "B", "C"):
        m.put(hout, text)
    h = m.open(q, ["BROWSE", "INPUT_SHARED"])
    assert m.get(h, options=["BROWSE_FIRST"])["data"] == "A"
    assert m.get(h, options=["BROWSE_NEXT"])["data"] == "B"
    assert m.get(h, options=["BROWSE_NEXT"])["data"] == "C"
    with mq_reason(2033, 404):
        m.get(h, options=["BROWSE_NEXT"])
    assert m.get(h, options=["BROWSE_FIRST"])["data"] == "A"
    assert m.get(h, options=["BROWSE_NEXT"])["data"] == "B"
    taken = m.get(h, options=["MSG_UNDER_CURSOR", "NO_SYNCPOINT"])
    assert taken["data"] == "B"  # exactly the browsed message
    with mq_reason(2034, 404):
        m.get(h, options=["MSG_UNDER_CURSOR", "NO_SYNCPOINT"])  # already taken
    assert m.get(h, options=["BROWSE_NEXT"])["data"] == "C"  # the cursor carries on after B
    assert m.get(h, options=["BROWSE_FIRST"])["data"] == "A"
    assert m.drain(h) == ["A", "C"]
    # browse is not destructive and sees new messages
    m.put(hout, "D")
    fresh = m.open(q, ["BROWSE", "INPUT_SHARED"])
    with mq_reason(2034, 404):
        m.get(fresh, options=["MSG_UNDER_CURSOR"])  # nothing browsed yet
    assert m.get(fresh, options=["BROWSE_NEXT"])["data"] == "D"  # BROWSE_NEXT first = BROWSE_FIRST
    assert m.get(fresh, options=["BROWSE_FIRST"])["data"] == "D"
    assert m.drain(fresh) == ["D"]


def test_msg_under_cursor_taken_by_another_queue_manager(group, connect):
    q = shared_q(group)
    m1, m2 = connect("QM1"), connect("QM2")
    m1.put(m1.open(q, ["OUTPUT"]), "contested")
    hb = m1.open(q, ["BROWSE", "INPUT_SHARED"])
    assert m1.get(hb, options=["BROWSE_FIRST"])["data"] == "contested"
    h2 = m2.open(q, ["INPUT_SHARED"])
    assert m2.get(h2)["data"] == "contested"
    with mq_reason(2034, 404):
        m1.get(hb, options=["MSG_UNDER_CURSOR", "NO_SYNCPOINT"])


def test_browse_needs_browse_open_and_msg_under_cursor_needs_input(group, connect):
    q = shared_q(group)
    m = connect("QM3")
    h_in = m.open(q, ["INPUT_SHARED", "OUTPUT"])
    m.put(h_in, "x")
    for mode in ("BROWSE_FIRST", "BROWSE_NEXT"):
        with mq_reason(2036, 400):
            m.get(h_in, options=[mode])
    h_browse = m.open(q, ["BROWSE"])
    assert m.get(h_browse, options=["BROWSE_FIRST"])["data"] == "x"
    with mq_reason(2037, 400):
        m.get(h_browse, options=["MSG_UNDER_CURSOR"])
    with mq_reason(2037, 400):
        m.get(h_browse)
    assert m.drain(h_in) == ["x"]


# ---- syncpoint -------------------------------------------------------------------------------


@pytest.mark.parametrize("options", [[], ["SYNCPOINT"]], ids=["default", "SYNCPOINT"])
def test_put_in_unit_of_work_invisible_until_commit(group, connect, options):
    q = shared_q(group)
    m1, m2 = connect("QM1"), connect("QM2")
    h1 = m1.open(q, ["OUTPUT", "INPUT_SHARED", "BROWSE"])
    put_exact(m1, h1, "uncommitted", options=options)
    h2 = m2.open(q, ["INPUT_SHARED", "BROWSE"])
    with mq_reason(2033, 404):
        m2.get(h2)
    with mq_reason(2033, 404):
        m2.get(h2, options=["BROWSE_FIRST"])
    with mq_reason(2033, 404):
        m1.get(h1)  # not even the putter sees it
    m1.commit()
    got = m2.get(h2)
    assert got["data"] == "uncommitted" and got["md"]["backout_count"] == 0
    # backed out instead of committed: gone
    put_exact(m1, h1, "rolled back", options=options)
    m1.backout()
    with mq_reason(2033, 404):
        m2.get(h2)


def test_put_no_syncpoint_is_visible_at_once_and_survives_backout(group, connect):
    q = shared_q(group)
    m1, m2 = connect("QM1"), connect("QM2")
    put_exact(m1, m1.open(q, ["OUTPUT"]), "now", options=["NO_SYNCPOINT"])
    m1.backout()
    assert m2.get(m2.open(q, ["INPUT_SHARED"]))["data"] == "now"


def test_get_in_unit_of_work_hidden_from_others_and_restored_by_backout(group, connect):
    q = shared_q(group)
    m1, m2 = connect("QM1"), connect("QM2")
    m2.put(m2.open(q, ["OUTPUT"]), "payload")
    h1 = m1.open(q, ["INPUT_SHARED"])
    assert m1.get(h1, options=[])["data"] == "payload"  # default: inside the unit of work
    h2 = m2.open(q, ["INPUT_SHARED", "BROWSE"])
    with mq_reason(2033, 404):
        m2.get(h2)
    with mq_reason(2033, 404):
        m2.get(h2, options=["BROWSE_FIRST"])
    m1.backout()
    got = m2.get(h2, options=["SYNCPOINT"])
    assert got["data"] == "payload" and got["md"]["backout_count"] == 1
    m2.commit()
    m2.backout()  # nothing left to back out
    with mq_reason(2033, 404):
        m1.get(h1)


def test_get_no_syncpoint_is_final(group, connect):
    q = shared_q(group)
    m = connect("QM1")
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    m.put(h, "gone")
    assert m.get(h, options=["NO_SYNCPOINT"])["data"] == "gone"
    m.backout()
    with mq_reason(2033, 404):
        m.get(h)


def test_syncpoint_if_persistent(group, connect):
    q = shared_q(group)
    m1, m2 = connect("QM1"), connect("QM2")
    hout = m1.open(q, ["OUTPUT"])
    m1.put(hout, "persistent", md={"persistence": "PERSISTENT"})
    m1.put(hout, "not persistent", md={"persistence": "NOT_PERSISTENT"})
    h2 = m2.open(q, ["INPUT_SHARED"])
    assert m2.get(h2, options=["SYNCPOINT_IF_PERSISTENT"])["data"] == "persistent"
    assert m2.get(h2, options=["SYNCPOINT_IF_PERSISTENT"])["data"] == "not persistent"
    m2.backout()
    got = m2.get(h2)
    assert (got["data"], got["md"]["backout_count"], got["md"]["persistence"]) == ("persistent", 1, "PERSISTENT")
    with mq_reason(2033, 404):
        m2.get(h2)


def test_curdepth_follows_ibm_rules_for_units_of_work(group, connect):
    q = shared_q(group)
    m1, m2 = connect("QM1"), connect("QM2")
    h1 = m1.open(q, ["OUTPUT", "INPUT_SHARED"])
    hinq = m2.open(q, ["INQUIRE"])
    put_exact(m1, h1, "one", options=["SYNCPOINT"])
    assert depth(m2, hinq) == 1 and display_depth(group, "QM3", q) == 1  # counted before commit
    m1.commit()
    assert depth(m2, hinq) == 1
    assert m1.get(h1, options=["SYNCPOINT"])["data"] == "one"
    assert depth(m2, hinq) == 0 and display_depth(group, "QM3", q) == 0  # decremented before commit
    m1.backout()
    assert depth(m2, hinq) == 1 and display_depth(group, "QM2", q) == 1  # restored
    m1.get(h1, options=["SYNCPOINT"])
    m1.commit()
    assert depth(m2, hinq) == 0
    put_exact(m1, h1, "two")
    assert depth(m2, hinq) == 1
    m1.backout()
    assert depth(m2, hinq) == 0 and display_depth(group, "QM1", q) == 0


def test_unit_of_work_spanning_shared_and_private_queues(group, connect):
    shared, private = shared_q(group), private_q(group, "QM1")
    m, other = connect("QM1"), connect("QM1")
    hs, hp = m.open(shared, ["OUTPUT", "INPUT_SHARED"]), m.open(private, ["OUTPUT", "INPUT_SHARED"])
    os_, op = other.open(shared, ["INPUT_SHARED", "BROWSE"]), other.open(private, ["INPUT_SHARED", "BROWSE"])
    put_exact(m, hs, "S", options=["SYNCPOINT"])
    put_exact(m, hp, "P", options=["SYNCPOINT"])
    for h in (os_, op):
        with mq_reason(2033, 404):
            other.get(h, options=["BROWSE_FIRST"])
    m.commit()
    assert other.get(os_, options=["BROWSE_FIRST"])["data"] == "S"
    assert other.get(op, options=["BROWSE_FIRST"])["data"] == "P"
    assert m.get(hs, options=["SYNCPOINT"])["data"] == "S"
    assert m.get(hp, options=["SYNCPOINT"])["data"] == "P"
    m.backout()
    s, p = other.get(os_, options=["SYNCPOINT"]), other.get(op, options=["SYNCPOINT"])
    assert (s["data"], s["md"]["backout_count"], p["data"], p["md"]["backout_count"]) == ("S", 1, "P", 1)
    other.commit()
    for h in (hs, hp):
        with mq_reason(2033, 404):
            m.get(h)
    assert display_depth(group, "QM1", shared) == 0 and display_depth(group, "QM1", private) == 0
    # MQDISC commits both structures of the unit of work too
    put_exact(m, hs, "S2", options=[])
    put_exact(m, hp, "P2", options=[])
    m.disconnect()
    assert other.get(os_)["data"] == "S2" and other.get(op)["data"] == "P2"


# ---- MQMD ------------------------------------------------------------------------------------


def test_md_validation_reasons(group, connect):
    q = shared_q(group)
    m = connect("QM1")
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    path = f"/v1/connections/{{h}}/objects/{h}/put"
    cases = [
        ({"msg_id": "not hex at all"}, 2026), ({"msg_id": "0" * 46}, 2026), ({"correl_id": "z" * 48}, 2026),
        ({"colour": "blue"}, 2026), ({"format": "TOO.LONG.FORMAT"}, 2026), ({"feedback": "x"}, 2014),
        ({"persistence": "YES"}, 2047), ({"persistence": 1}, 2047),
        ({"priority": -2}, 2050), ({"priority": "high"}, 2050), ({"priority": True}, 2050),
        ({"priority": 3.5}, 2050), ({"priority": None}, 2050),
        ({"expiry": 0}, 2013), ({"expiry": -5}, 2013), ({"expiry": "soon"}, 2013),
        ({"msg_type": "BOGUS"}, 2029), ({"msg_type": "REQUEST"}, 2027),
        ({"report": ["BOGUS"]}, 2061),
    ]
    for md, reason in cases:
        assert_error(request(m, "POST", path, {"md": md, "data": "x", "options": ["NO_SYNCPOINT"]}), reason, 400)
    for md in ("text", [1, 2], 5):
        assert_error(request(m, "POST", path, {"md": md, "data": "x", "options": ["NO_SYNCPOINT"]}), 2026, 400)
    r = request(m, "POST", "/v1/connections/{h}/put1",
                {"object_name": q, "md": {"priority": 11}, "data": "x", "options": ["NO_SYNCPOINT"]})
    assert r.status_code == 200 and r.json()["completion_code"] == 1 and r.json()["reason"] == 2049
    got = m.get(h)
    assert got["data"] == "x" and got["md"]["priority"] == 11
    with mq_reason(2033, 404):
        m.get(h)  # every failed put left nothing behind


def test_priority_above_nine_is_a_warning_and_queued_at_nine(group, connect):
    q = shared_q(group)
    m = connect("QM2")
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    m.put(h, "nine", md={"priority": 9})
    r = request(m, "POST", f"/v1/connections/{{h}}/objects/{h}/put",
                {"md": {"priority": 10}, "data": "ten", "options": ["NO_SYNCPOINT"]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["completion_code"] == 1 and body["reason"] == 2049 and body["md"]["priority"] == 10
    m.put(h, "eight", md={"priority": 8})
    got = [m.get(h) for _ in range(3)]
    assert [g["data"] for g in got] == ["nine", "ten", "eight"]  # at priority 9, after the earlier 9
    assert got[1]["md"]["priority"] == 10  # the MQMD keeps the value the application gave


def test_md_defaults_from_queue_and_alias(group, connect):
    q = private_q(group, "QM1", "DEFPRTY(4) DEFPSIST(YES)")
    alias = uniq("AL")
    group.mqsc_ok("QM1", f"DEFINE QALIAS({alias}) TARGET({q}) DEFPRTY(7) DEFPSIST(NO)")
    m = connect("QM1", "PAYROLL")
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    ha = m.open(alias, ["OUTPUT"])
    direct = m.put(h, "direct")["md"]
    assert (direct["priority"], direct["persistence"]) == (4, "PERSISTENT")
    via_alias = m.put(ha, "via alias")["md"]
    assert (via_alias["priority"], via_alias["persistence"]) == (7, "NOT_PERSISTENT")
    explicit = m.put(ha, "explicit", md={"priority": 2, "persistence": "PERSISTENT"})["md"]
    assert (explicit["priority"], explicit["persistence"]) == (2, "PERSISTENT")
    assert m.put1(alias, "put1 via alias")["md"]["priority"] == 7
    # the default is the value at the time of the put, not at the time of the open
    group.mqsc_ok("QM1", f"ALTER QALIAS({alias}) DEFPRTY(1)\nALTER QLOCAL({q}) DEFPRTY(6) DEFPSIST(NO)")
    assert m.put(ha, "after alter")["md"]["priority"] == 1
    after = m.put(h, "after alter direct")["md"]
    assert (after["priority"], after["persistence"]) == (6, "NOT_PERSISTENT")
    got = {g["data"]: g["md"] for g in (m.get(h) for _ in range(6))}
    assert got["direct"]["priority"] == 4 and got["via alias"]["priority"] == 7
    assert got["direct"]["persistence"] == "PERSISTENT"


def test_md_context_fields_and_defaults(group, connect):
    q = shared_q(group)
    putter = connect("QM2", "PAYROLL")
    before = datetime.now(UTC)
    put = putter.put(putter.open(q, ["OUTPUT"]), "context",
                     md={"reply_to_q": "REPLY.Q", "reply_to_qmgr": "QM2", "msg_type": "REQUEST", "feedback": 0,
                         "report": ["EXCEPTION", "PASS_CORREL_ID"], "format": "MQSTR", "expiry": 600})["md"]
    reader = connect("QM3")
    got = reader.get(reader.open(q, ["INPUT_SHARED"]))
    md = got["md"]
    assert md["put_appl_name"] == "PAYROLL" and md["put_qmgr"] == "QM2" and md["backout_count"] == 0
    assert md["msg_id"] == put["msg_id"] and md["put_date_time"] == put["put_date_time"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", md["put_date_time"]), md["put_date_time"]
    stamp = datetime.strptime(md["put_date_time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert before - timedelta(seconds=5) <= stamp <= datetime.now(UTC) + timedelta(seconds=5)
    assert (md["reply_to_q"], md["reply_to_qmgr"], md["msg_type"], md["format"]) \
        == ("REPLY.Q", "QM2", "REQUEST", "MQSTR")
    assert set(md["report"]) == {"EXCEPTION", "PASS_CORREL_ID"} and 0 < md["expiry"] <= 600
    assert got["data"] == "context" and got["data_encoding"] == "utf-8" and got["data_length"] == 7
    # the defaults of an empty md
    plain = putter.put1(q, "plain")["md"]
    assert (plain["priority"], plain["persistence"], plain["msg_type"], plain["format"], plain["expiry"],
            plain["correl_id"], plain["report"]) == (0, "NOT_PERSISTENT", "DATAGRAM", "MQSTR", -1, NO_ID, [])
    # the output fields of a put are the queue manager's, whatever the application sends
    forged = putter.put1(q, "forged", md={"put_appl_name": "OTHER", "put_qmgr": "QM9", "backout_count": 5})["md"]
    assert (forged["put_appl_name"], forged["put_qmgr"], forged["backout_count"]) == ("PAYROLL", "QM2", 0)


def test_md_character_set_group_and_segment_fields_round_trip(group, connect):
    q = shared_q(group)
    putter, reader = connect("QM1"), connect("QM2")
    h = putter.open(q, ["OUTPUT"])
    group_id = "ab" * 24
    fields = {"encoding": 785, "coded_char_set_id": 1047, "group_id": group_id, "msg_seq_number": 3,
              "offset": 0, "msg_flags": ["LAST_MSG_IN_GROUP", "MSG_IN_GROUP"], "original_length": 10}
    put = putter.put(h, "grouped", md=fields, options=["NO_SYNCPOINT"])["md"]
    putter.put(h, "q-mgr ccsid", md={"coded_char_set_id": 0}, options=["NO_SYNCPOINT"])
    plain = putter.put(h, "plain", options=["NO_SYNCPOINT"])["md"]
    hin = reader.open(q, ["INPUT_SHARED"])
    got = reader.get(hin)["md"]
    for md in (put, got):  # IBM's order of MsgFlags, whatever order they came in
        assert {k: md[k] for k in fields} == {**fields, "msg_flags": ["MSG_IN_GROUP", "LAST_MSG_IN_GROUP"]}, md
    # MQCCSI_Q_MGR becomes the queue manager's CCSID (500 on z/OS by default) at MQPUT
    assert reader.get(hin)["md"]["coded_char_set_id"] == 500
    # an MQMD naming none of them: this API's text is UTF-8 (1208), x86 encoding, not in a group
    got_plain = reader.get(hin)["md"]
    for md in (plain, got_plain):
        assert (md["coded_char_set_id"], md["encoding"], md["group_id"], md["msg_seq_number"], md["offset"],
                md["msg_flags"], md["original_length"]) == (1208, 546, NO_ID, 1, 0, [], -1)
        assert md["put_appl_type"] == 6 and md["accounting_token"] == "0" * 64 and md["appl_identity_data"] == ""


@pytest.mark.parametrize("md, reason", [
    ({"msg_flags": ["NOT_A_FLAG"]}, 2249), ({"msg_flags": "SEGMENT"}, 2249), ({"msg_seq_number": 0}, 2250),
    ({"offset": -1}, 2251), ({"original_length": -2}, 2252), ({"group_id": "xyz"}, 2026),
    ({"coded_char_set_id": 70000}, 2026), ({"encoding": "native"}, 2026),
])
def test_md_group_and_character_set_field_errors(group, connect, md, reason):
    q = shared_q(group)
    m = connect("QM1")
    r = request(m, "POST", f"/v1/connections/{{h}}/objects/{m.open(q, ['OUTPUT'])}/put", {"data": "x", "md": md})
    assert_error(r, reason, 400)


def test_context_fields_are_ignored_without_a_set_context_option(group, connect):
    q = shared_q(group)
    m = connect("QM1", "HONEST")
    forged = m.put1(q, "x", md={"user_identifier": "SOMEONE", "appl_identity_data": "forged",
                                "accounting_token": "ff" * 32, "put_appl_type": 99, "appl_origin_data": "ABCD",
                                "put_appl_name": "OTHER"}, options=["NO_SYNCPOINT"])["md"]
    assert (forged["appl_identity_data"], forged["accounting_token"], forged["put_appl_type"],
            forged["appl_origin_data"], forged["put_appl_name"]) == ("", "0" * 64, 6, "", "HONEST")
    assert forged["user_identifier"] != "SOMEONE"


def test_base64_bodies_round_trip_binary_bytes(group, connect):
    q = shared_q(group)
    m1, m2 = connect("QM1"), connect("QM2")
    payload = bytes(range(256)) * 3
    h = m1.open(q, ["OUTPUT"])
    m1.put(h, base64.b64encode(payload).decode(), encoding="base64")
    m1.put(h, base64.b64encode(b"plain text").decode(), md={"format": "BINARY"}, encoding="base64")
    m1.put(h, base64.b64encode("héllo".encode()).decode(), encoding="base64")
    m1.put(h, "")
    hin = m2.open(q, ["INPUT_SHARED"])
    binary = m2.get(hin)
    assert binary["data_encoding"] == "base64" and binary["data_length"] == len(payload)
    assert base64.b64decode(binary["data"]) == payload
    other_format = m2.get(hin)
    assert other_format["data_encoding"] == "base64" and base64.b64decode(other_format["data"]) == b"plain text"
    text = m2.get(hin)
    assert (text["data_encoding"], text["data"]) == ("utf-8", "héllo")
    empty = m2.get(hin)
    assert (empty["data"], empty["data_length"]) == ("", 0)


# ---- queue limits and inhibits ---------------------------------------------------------------


def test_maxmsgl_and_maxdepth(group, connect):
    q = shared_q(group, "MAXMSGL(10) MAXDEPTH(2)")
    m = connect("QM1")
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    m.put(h, "x" * 10)
    with mq_reason(2030, 400):
        m.put(h, "x" * 11)
    with mq_reason(2030, 400):
        m.put1(q, "y" * 11)
    put_exact(m, h, "u", options=["SYNCPOINT"])  # an uncommitted put counts too
    with mq_reason(2053, 409):
        m.put(h, "full")
    with mq_reason(2053, 409):
        connect("QM2").put1(q, "full")
    m.backout()
    m.put(h, "fits")
    assert m.drain(h) == ["x" * 10, "fits"]


def test_put_inhibited_by_definition_mqset_and_alias(group, connect):
    m1, m2 = connect("QM1"), connect("QM2")
    disabled = shared_q(group, "PUT(DISABLED)")
    h = m1.open(disabled, ["OUTPUT"])  # MQOPEN still works
    with mq_reason(2051, 409):
        m1.put(h, "x")
    with mq_reason(2051, 409):
        m2.put1(disabled, "x")

    q = shared_q(group)
    hset = m1.open(q, ["SET", "INQUIRE"])
    h2 = m2.open(q, ["OUTPUT", "INPUT_SHARED"])
    m2.put(h2, "before")
    assert m1.set(hset, {"PUT": "DISABLED"})["PUT"] == "DISABLED"
    assert m1.inquire(hset)["PUT"] == "DISABLED"
    with mq_reason(2051, 409):
        m2.put(h2, "while disabled")  # an open handle on another QM sees it at once
    with mq_reason(2051, 409):
        connect("QM3").put1(q, "while disabled")
    assert m2.get(h2)["data"] == "before"  # gets still work
    m1.set(hset, {"put": "ENABLED"})
    m2.put(h2, "after")
    assert m2.drain(h2) == ["after"]

    base = shared_q(group)
    alias = uniq("AL")
    group.mqsc_ok("QM1", f"DEFINE QALIAS({alias}) TARGET({base}) PUT(DISABLED)")
    ha = m1.open(alias, ["OUTPUT"])
    with mq_reason(2051, 409):
        m1.put(ha, "x")
    with mq_reason(2051, 409):
        m1.put1(alias, "x")
    m1.put1(base, "the base queue itself is enabled")
    group.mqsc_ok("QM1", f"ALTER QALIAS({alias}) PUT(ENABLED)")
    m1.put(ha, "alias enabled again")
    group.mqsc_ok("QM1", f"ALTER QALIAS({alias}) PUT(DISABLED)")
    with mq_reason(2051, 409):
        m1.put(ha, "an open handle sees the alias change")
    # MQSET through an alias changes the alias, not its base queue
    hs = m1.open(alias, ["SET", "OUTPUT"])  # the alias is QM1's own (QSGDISP QMGR)
    assert m1.set(hs, {"PUT": "ENABLED"})["PUT"] == "ENABLED"
    m1.put(hs, "alias enabled by MQSET")
    m1.set(hs, {"PUT": "DISABLED"})
    with mq_reason(2051, 409):
        m1.put(hs, "x")
    m2.put1(base, "base still enabled")


def test_get_inhibited(group, connect):
    q = shared_q(group)
    m1, m2 = connect("QM1"), connect("QM2")
    hset = m1.open(q, ["SET"])
    h = m2.open(q, ["OUTPUT", "INPUT_SHARED", "BROWSE"])
    m2.put(h, "kept")
    m1.set(hset, {"GET": "DISABLED"})
    with mq_reason(2016, 409):
        m2.get(h)
    with mq_reason(2016, 409):
        m2.get(h, options=["BROWSE_FIRST"])
    m2.put(h, "puts still work")
    m1.set(hset, {"GET": "ENABLED"})
    assert m2.drain(h) == ["kept", "puts still work"]

    disabled = shared_q(group, "GET(DISABLED)")
    hd = m1.open(disabled, ["INPUT_SHARED", "OUTPUT"])
    m1.put(hd, "x")
    with mq_reason(2016, 409):
        m1.get(hd)
    alias = uniq("AL")
    group.mqsc_ok("QM1", f"DEFINE QALIAS({alias}) TARGET({q}) GET(DISABLED)")
    m2.put(h, "via base")
    ha = m1.open(alias, ["INPUT_SHARED"])
    with mq_reason(2016, 409):
        m1.get(ha)
    group.mqsc_ok("QM1", f"ALTER QALIAS({alias}) GET(ENABLED)")
    assert m1.get(ha)["data"] == "via base"


def test_handle_misuse(group, connect):
    q = shared_q(group)
    m = connect("QM1")
    h_out = m.open(q, ["OUTPUT"])
    h_in = m.open(q, ["INPUT_SHARED"])
    m.put(h_out, "x")
    with mq_reason(2037, 400):
        m.get(h_out)
    with mq_reason(2036, 400):
        m.get(h_out, options=["BROWSE_FIRST"])
    with mq_reason(2039, 400):
        m.put(h_in, "x")
    with mq_reason(2038, 400):
        m.inquire(h_in)
    with mq_reason(2040, 400):
        m.set(h_out, {"PUT": "DISABLED"})
    assert m.drain(h_in) == ["x"]


# ---- truncation and big messages -------------------------------------------------------------


def test_truncated_message_failed_and_accepted(group, connect):
    q = shared_q(group)
    m1, m2 = connect("QM1"), connect("QM2")
    put_id = m1.put(m1.open(q, ["OUTPUT"]), "0123456789")["md"]["msg_id"]
    h = m2.open(q, ["INPUT_SHARED"])
    # MQRC_TRUNCATED_MSG_FAILED is a warning (MQCC_WARNING): a 200 whose body carries
    # completion_code and reason (docs/api.md §2) and, as IBM's MQGET, the MQMD filled in,
    # DataLength the whole length and as much of the data as fits; the message stays.
    r = request(m2, "POST", f"/v1/connections/{{h}}/objects/{h}/get", {"options": ["NO_SYNCPOINT"], "buffer_length": 4})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["completion_code"], body["reason"], body["data"], body["data_length"]) == (1, 2080, "0123", 10)
    assert (body["md"]["msg_id"], body["md"]["put_qmgr"], body["md"]["format"]) == (put_id, "QM1", "MQSTR")
    r = request(m2, "POST", f"/v1/connections/{{h}}/objects/{h}/get", {"options": ["SYNCPOINT"], "buffer_length": 0})
    assert (r.status_code, r.json()["reason"], r.json()["data"], r.json()["data_length"]) == (200, 2080, "", 10)
    m2.backout()  # nothing was in the unit of work: still one message, got whole below
    r = request(m2, "POST", f"/v1/connections/{{h}}/objects/{h}/get",
                {"options": ["ACCEPT_TRUNCATED_MSG", "NO_SYNCPOINT"], "buffer_length": 4})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["completion_code"], body["reason"], body["data"], body["data_length"]) == (1, 2079, "0123", 10)
    with mq_reason(2033, 404):
        m2.get(h)  # the truncated message was removed
    m1.put1(q, "restored whole")
    r = request(m2, "POST", f"/v1/connections/{{h}}/objects/{h}/get",
                {"options": ["ACCEPT_TRUNCATED_MSG", "SYNCPOINT"], "buffer_length": 3})
    assert (r.status_code, r.json()["reason"], r.json()["data"]) == (200, 2079, "res")
    m2.backout()
    got = m2.get(h)
    assert (got["data"], got["md"]["backout_count"]) == ("restored whole", 1)
    m1.put1(q, "exact")
    assert m2.get(h, buffer_length=5)["data"] == "exact"  # a buffer of exactly the length is enough


def test_truncated_message_failed_leaves_the_browse_cursor_as_ibm_says(group, connect):
    """IBM (reason code 2080): a browse that fails for truncation leaves the cursor where it
    was, but after BROWSE_FIRST the cursor is logically before the first message; get-batch
    whose first message is too big answers the same warning, no message got."""
    q = shared_q(group)
    m = connect("QM1")
    h = m.open(q, ["OUTPUT", "BROWSE", "INPUT_SHARED"])
    for text in ("a", "long message", "b", "another long one"):
        m.put(h, text, options=["NO_SYNCPOINT"])

    def browse(mode: str, buffer_length: int = 8) -> dict[str, Any]:
        r = request(m, "POST", f"/v1/connections/{{h}}/objects/{h}/get",
                    {"options": [mode], "buffer_length": buffer_length})
        assert r.status_code == 200, r.text
        return r.json()

    assert browse("BROWSE_FIRST")["data"] == "a"
    failed = browse("BROWSE_NEXT")  # "long message": the cursor stays on "a"
    assert (failed["reason"], failed["data"], failed["data_length"]) == (2080, "long mes", 12)
    assert browse("BROWSE_NEXT", 100)["data"] == "long message"  # the next after "a" again
    assert browse("BROWSE_NEXT")["data"] == "b"
    failed = browse("BROWSE_NEXT")
    assert (failed["reason"], failed["data_length"]) == (2080, 16)
    # the first message too big for BROWSE_FIRST: the cursor goes before the first message
    assert browse("BROWSE_FIRST", 0)["reason"] == 2080
    assert browse("BROWSE_NEXT")["data"] == "a"
    r = request(m, "POST", f"/v1/connections/{{h}}/objects/{h}/get-batch",
                {"options": ["NO_SYNCPOINT"], "buffer_length": 0, "max_messages": 5})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["messages"], body["completion_code"], body["reason"]) == ([], 1, 2080)
    assert (body["data"], body["data_length"], body["md"]["format"]) == ("", 1, "MQSTR")
    assert m.drain(h) == ["a", "long message", "b", "another long one"]  # nothing was removed


@pytest.mark.parametrize("struct,fits", [("LEVEL3", False), ("LEVEL4", True), ("APPL1", True)])
def test_messages_over_63kb_on_shared_queues_need_cflevel_4(group, connect, struct, fits):
    q = shared_q(group, "MAXMSGL(1048576)", struct=struct)
    m1, m2 = connect("QM1"), connect("QM2")
    h = m1.open(q, ["OUTPUT"])
    big = "".join(chr(65 + (i * 7) % 26) for i in range(70 * 1024))
    m1.put(h, "y" * 64512)  # 63 KB exactly always fits
    if fits:
        m1.put(h, big)
    else:
        with mq_reason(2030, 400):
            m1.put(h, big)
        with mq_reason(2030, 400):
            m1.put(h, "y" * 64513)
    hin = m2.open(q, ["INPUT_SHARED"])
    assert m2.get(hin)["data_length"] == 64512
    if fits:
        got = m2.get(hin)
        assert got["data"] == big and got["data_length"] == len(big)
    with mq_reason(2033, 404):
        m2.get(hin)


def test_messages_over_63kb_on_private_queues(group, connect):
    q = private_q(group, "QM3", "MAXMSGL(1048576)")
    m = connect("QM3")
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    big = bytes((i * 31) % 256 for i in range(70 * 1024))
    m.put(h, base64.b64encode(big).decode(), encoding="base64", options=["SYNCPOINT"])
    m.commit()
    got = m.get(h, options=["SYNCPOINT"])
    assert base64.b64decode(got["data"]) == big
    m.backout()
    assert base64.b64decode(m.get(h)["data"]) == big


# ---- get with wait across queue managers -----------------------------------------------------


def test_waiting_get_woken_by_put_on_another_queue_manager(group, connect, pool):
    q = shared_q(group)
    getter, putter = connect("QM1"), connect("QM2")
    hin = getter.open(q, ["INPUT_SHARED"])
    wait_ms = 4000  # under the waiter's 5 s safety recheck: only a wake-up returns earlier
    started = time.monotonic()
    future = pool.submit(getter.get, hin, ["WAIT", "NO_SYNCPOINT"], wait_ms)
    group.wait_for_waiter(q)
    putter.put(putter.open(q, ["OUTPUT"]), "wake up")
    got = future.result(timeout=30)
    assert time.monotonic() - started < wait_ms / 1000, "the waiter was not woken by the put"
    assert got["data"] == "wake up" and got["md"]["put_qmgr"] == "QM2"


def test_waiting_get_on_a_private_queue_woken_by_another_connection(group, connect, pool):
    q = private_q(group, "QM2")
    getter, putter = connect("QM2"), connect("QM2")
    hin = getter.open(q, ["INPUT_SHARED"])
    wait_ms = 4000
    started = time.monotonic()
    future = pool.submit(getter.get, hin, ["WAIT", "SYNCPOINT"], wait_ms)
    group.wait_for_waiter(q, private_of="QM2")
    put_exact(putter, putter.open(q, ["OUTPUT"]), "private", options=[])
    putter.commit()
    got = future.result(timeout=30)
    assert time.monotonic() - started < wait_ms / 1000
    assert got["data"] == "private"
    getter.backout()
    assert getter.get(hin)["md"]["backout_count"] == 1


def test_waiting_get_with_match_waits_for_the_matching_message(group, connect, pool):
    q = shared_q(group)
    getter, putter = connect("QM2"), connect("QM3")
    hin = getter.open(q, ["INPUT_SHARED"])
    hout = putter.open(q, ["OUTPUT"])
    wanted = "5a" * 24
    wait_ms = 4000
    started = time.monotonic()
    future = pool.submit(getter.get, hin, ["WAIT", "NO_SYNCPOINT"], wait_ms, {"correl_id": wanted})
    group.wait_for_waiter(q)
    putter.put(hout, "other", md={"correl_id": "77" * 24})
    putter.put(hout, "wanted", md={"correl_id": wanted})
    got = future.result(timeout=30)
    assert time.monotonic() - started < wait_ms / 1000
    assert got["data"] == "wanted" and got["md"]["correl_id"] == wanted
    assert getter.drain(hin) == ["other"]


def test_waiting_get_woken_by_commit_on_another_queue_manager(group, connect, pool):
    q = shared_q(group)
    getter, putter = connect("QM3"), connect("QM2")
    hin = getter.open(q, ["INPUT_SHARED"])
    put_exact(putter, putter.open(q, ["OUTPUT"]), "committed later", options=["SYNCPOINT"])
    wait_ms = 4000
    started = time.monotonic()
    future = pool.submit(getter.get, hin, ["WAIT", "SYNCPOINT"], wait_ms)
    group.wait_for_waiter(q)
    putter.commit()
    got = future.result(timeout=30)
    assert time.monotonic() - started < wait_ms / 1000, "the waiter was not woken by the commit"
    assert got["data"] == "committed later"
    getter.commit()


def test_waiting_get_not_woken_by_uncommitted_put(group, connect, pool):
    q = shared_q(group)
    getter, putter = connect("QM1"), connect("QM2")
    hin = getter.open(q, ["INPUT_SHARED"])
    future = pool.submit(getter.get, hin, ["WAIT"], 1500)
    group.wait_for_waiter(q)
    put_exact(putter, putter.open(q, ["OUTPUT"]), "not yet", options=["SYNCPOINT"])
    with mq_reason(2033, 404):
        future.result(timeout=30)
    putter.commit()
    assert getter.get(hin, options=["WAIT"], wait_ms=1000)["data"] == "not yet"


def test_waiting_get_ended_by_mqdisc_keeps_later_messages(group, connect, pool):
    q = shared_q(group)
    getter, putter = connect("QM1"), connect("QM2")
    hin = getter.open(q, ["INPUT_SHARED"])
    started = time.monotonic()
    future = pool.submit(getter.get, hin, ["WAIT", "SYNCPOINT"], 4000)
    group.wait_for_waiter(q)
    closer = MQ(group.url("QM1"), connect=False)
    closer.hconn = getter.hconn
    try:
        closer.disconnect()  # MQDISC from another thread while the get waits
    finally:
        closer.http.close()
    putter.put(putter.open(q, ["OUTPUT"]), "after disconnect")
    with pytest.raises(MQFailed) as info:
        future.result(timeout=30)
    assert (info.value.reason, info.value.status) == (2009, 503), info.value.body  # MQRC_CONNECTION_BROKEN
    assert time.monotonic() - started < 4, "the waiting get did not end with its connection"
    reader = connect("QM2")
    got = reader.get(reader.open(q, ["INPUT_SHARED"]), options=["WAIT"], wait_ms=2000)
    assert got["data"] == "after disconnect"  # not swallowed by the ended connection


# ---- MQINQ / MQSET ---------------------------------------------------------------------------


def test_mqinq_attributes_and_counts_per_queue_manager(group, connect):
    q = shared_q(group, "MAXDEPTH(123) DESCR('inquired') DEFPRTY(3)")
    m1, m1b, m2, m3 = connect("QM1"), connect("QM1"), connect("QM2"), connect("QM3")
    m1.open(q, ["INPUT_SHARED"])
    m1b.open(q, ["INPUT_SHARED", "OUTPUT"])
    hout = m1.open(q, ["OUTPUT"])
    m2.open(q, ["INPUT_SHARED", "OUTPUT"])
    for i in range(3):
        m1.put(hout, f"m{i}")
    inq = {qm: c.inquire(c.open(q, ["INQUIRE"])) for qm, c in (("QM1", m1), ("QM2", m2), ("QM3", m3))}
    assert {qm: (a["IPPROCS"], a["OPPROCS"]) for qm, a in inq.items()} == {"QM1": (2, 2), "QM2": (1, 1), "QM3": (0, 0)}
    for a in inq.values():
        assert a["CURDEPTH"] == 3 and a["MAXDEPTH"] == 123 and a["QUEUE"] == q and a["QSGDISP"] == "SHARED"
        assert a["DESCR"] == "inquired" and a["DEFPRTY"] == 3 and a["CFSTRUCT"] == "APPL1" and a["TYPE"] == "QLOCAL"
    alias = uniq("AL")
    group.mqsc_ok("QM1", f"DEFINE QALIAS({alias}) TARGET({q}) DEFPRTY(8)")
    a = m1.inquire(m1.open(alias, ["INQUIRE"]))
    assert a["QUEUE"] == alias and a["TYPE"] == "QALIAS" and a["TARGET"] == q and a["DEFPRTY"] == 8


def test_mqset_of_put_get_trigger_and_rejection_of_others(group, connect):
    q = shared_q(group)
    m, m2 = connect("QM1"), connect("QM2")
    h = m.open(q, ["SET", "INQUIRE"])
    out = m.set(h, {"TRIGGER": True, "TRIGTYPE": "EVERY", "TRIGDPTH": 5, "TRIGMPRI": 2, "TRIGDATA": "hello"})
    assert out["TRIGGER"] == "TRIGGER" and out["TRIGTYPE"] == "EVERY" and out["TRIGDPTH"] == 5
    (shown,) = group.mqsc("QM3", f"DISPLAY QLOCAL({q})")[0]["objects"]
    assert shown["TRIGGER"] == "TRIGGER" and shown["TRIGMPRI"] == 2 and shown["TRIGDATA"] == "hello"
    assert m.set(h, {"TRIGGER": False})["TRIGGER"] == "NOTRIGGER"
    m.set(h, {"GET": "DISABLED", "PUT": "DISABLED"})
    h2 = m2.open(q, ["INPUT_SHARED", "OUTPUT"])
    with mq_reason(2016, 409):
        m2.get(h2)
    with mq_reason(2051, 409):
        m2.put(h2, "x")
    m.set(h, {"GET": "ENABLED", "PUT": "ENABLED"})
    for attrs in ({"MAXDEPTH": 5}, {"DESCR": "no"}, {"DEFPRTY": 1}, {}, {"CURDEPTH": 0}, {"NOSUCH": 1}):
        with mq_reason(2067, 400):
            m.set(h, attrs)
    with mq_reason(2020, 400):
        m.set(h, {"PUT": "MAYBE"})
    assert m.inquire(h)["MAXDEPTH"] == 999999999 and m.inquire(h)["PUT"] == "ENABLED"
    r = request(m, "PATCH", f"/v1/connections/{{h}}/objects/{h}/attributes", content=b"[1, 2]",
                headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["reason"] in (2067, 2046)


# ---- malformed requests ----------------------------------------------------------------------


def test_malformed_json_bodies_get_mq_error_bodies(group, connect):
    q = shared_q(group)
    m = connect("QM1")
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    put, get = f"/v1/connections/{{h}}/objects/{h}/put", f"/v1/connections/{{h}}/objects/{h}/get"
    cases = [
        (put, {"data": "x", "options": "NO_SYNCPOINT"}, 2046),
        (put, {"data": "x", "options": [["NO_SYNCPOINT"]]}, 2046),
        (put, {"data": "x", "nonsense": 1}, 2046),
        (put, {"data": "!!!not base64!!!", "data_encoding": "base64"}, 2004),
        (put, {"data": "x", "data_encoding": "latin-1"}, 2004),
        (put, {"data": 42}, 2004),
        (put, {"data": "x", "md": "priority 5"}, 2026),
        (get, {"options": "WAIT"}, 2046),
        (get, {"options": ["WAIT"], "wait_ms": "x"}, 2090),
        (get, {"options": ["WAIT"], "wait_ms": -5}, 2090),
        (get, {"options": ["WAIT"], "wait_ms": 1.5}, 2090),
        (get, {"buffer_length": -1}, 2005),
        (get, {"buffer_length": "big"}, 2005),
        (get, {"match": "abc"}, 2026),
        ("/v1/connections/{h}/put1", {"object_name": 5, "data": "x"}, 2152),
        ("/v1/connections/{h}/put1", {"data": "x"}, 2152),
        ("/v1/connections/{h}/objects", {"object_name": q, "options": ["OUTPUT"], "object_qmgr": 1}, 2058),
    ]
    for path, body, reason in cases:
        assert_error(request(m, "POST", path, body), reason, 400)
    for path in (put, get, "/v1/connections/{h}/objects"):
        r = request(m, "POST", path, content=b"{not json", headers={"content-type": "application/json"})
        assert r.status_code == 400 and r.json()["error"]["reason"] in (2046, 2026), r.text
    assert m.drain(h) == []


# ---- idle timeout ----------------------------------------------------------------------------


def test_idle_connection_is_ended_and_its_unit_of_work_backed_out(make_cluster):
    idle_group = make_cluster(["QM1", "QM2"], env={"QSG_IDLE_TIMEOUT_S": "2"})
    idle_group.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    q, empty = shared_q(idle_group), shared_q(idle_group)
    idle, watcher, busy = MQ(idle_group.url("QM1")), MQ(idle_group.url("QM2")), MQ(idle_group.url("QM1"))
    try:
        idle.put(idle.open(q, ["OUTPUT"]), "in doubt")
        hin = idle.open(q, ["INPUT_SHARED"])
        assert idle.get(hin, options=["SYNCPOINT"])["data"] == "in doubt"
        # The idle connection's uncommitted get is backed out when the timeout ends it.
        hw = watcher.open(q, ["INPUT_SHARED"])
        # meanwhile a connection busy in a get-with-wait longer than the timeout is not idle
        with ThreadPoolExecutor(max_workers=1) as executor:
            long_wait = executor.submit(busy.get, busy.open(empty, ["INPUT_SHARED"]), ["WAIT"], 3000)
            got = watcher.get(hw, options=["WAIT", "NO_SYNCPOINT"], wait_ms=30000)
            assert got["data"] == "in doubt" and got["md"]["backout_count"] == 1
            with mq_reason(2033, 404):
                long_wait.result(timeout=30)
        busy.commit()  # still connected
        with mq_reason(2018, 404):
            idle.get(hin)
        with mq_reason(2018, 404):
            idle.commit()
    finally:
        idle.http.close()
        for m in (watcher, busy):
            try:
                m.disconnect()
            except MQFailed:
                pass
            m.http.close()
