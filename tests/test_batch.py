"""The batch calls (docs/api.md §12: put-batch, get-batch) over real HTTP on a real group of two
queue managers sharing one real Redis: order, MQPUT/MQGET semantics per message, partial
failure with its count, units of work, truncation, matching, browsing, waiting, limits and
malformed input, private and remote (intra-group queuing) queues, one coupling-facility call
per batch."""

from __future__ import annotations

import base64
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from app.cf import keys
from app.core.igq import IGQ_XMITQ
from tests.support.cluster import FAST
from tests.support.mq import MQ, connections, mq_reason
from tests.support.mqsc import shared_q
from tests.support.names import uniq
from tests.support.redis_cluster import node_client_of
from tests.support.waits import wait_until

# On one redis-server and on a 3-master Redis Cluster (tests/conftest.py).
pytestmark = pytest.mark.group_suite

PUT_BATCH = "/v1/connections/{h}/objects/{o}/put-batch"
GET_BATCH = "/v1/connections/{h}/objects/{o}/get-batch"


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"], env=FAST)
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\nDEFINE CFSTRUCT(NOREC) RECOVER(NO)")
    return g


@pytest.fixture(scope="module")
def pool():
    with ThreadPoolExecutor(max_workers=4) as executor:
        yield executor


@pytest.fixture
def connect(group):
    """Factory of connections (MQCONN) to a queue manager; all disconnected after the test."""
    yield from connections(group, "BATCHER")


def raw(m: MQ, path: str, hobj: str, body: Any) -> httpx.Response:
    """A batch call as sent, answered as received (status and body)."""
    return m.http.post(path.format(h=m.hconn, o=hobj), json=body)


def put_batch(m: MQ, hobj: str, messages: list[dict[str, Any]], options: list[str] | None = None) -> dict[str, Any]:
    return m.call("POST", PUT_BATCH.format(h=m.hconn, o=hobj),
                  {"options": ["NO_SYNCPOINT"] if options is None else options, "messages": messages})


def get_batch(m: MQ, hobj: str, max_messages: int = 100, options: list[str] | None = None,
              **extra: Any) -> list[dict[str, Any]]:
    body = {"options": ["NO_SYNCPOINT"] if options is None else options, "max_messages": max_messages, **extra}
    return m.call("POST", GET_BATCH.format(h=m.hconn, o=hobj), body)["messages"]


def texts(*data: str) -> list[dict[str, Any]]:
    return [{"data": d} for d in data]


def assert_batch_error(r: httpx.Response, reason: int, status: int, count: int) -> dict[str, Any]:
    """The normal MQ error body of docs/api.md §2, with the batch's count beside it and in it."""
    assert r.status_code == status, (reason, r.status_code, r.text)
    body = r.json()
    err = body["error"]
    assert err["reason"] == reason and err["completion_code"] == 2, r.text
    assert err["reason_name"].startswith("MQRC") and err["message"]
    assert body["count"] == count and err["count"] == count, r.text
    return body


def depth(group, qm: str, q: str) -> int:
    (res,) = group.mqsc(qm, f"DISPLAY QLOCAL({q}) CURDEPTH")
    return res["objects"][0]["CURDEPTH"]


# ---- put-batch ------------------------------------------------------------------------------


def test_put_batch_keeps_order_fills_every_mqmd_and_a_second_qm_sees_it(group, connect):
    q = shared_q(group)
    putter, getter = connect("QM1"), connect("QM2")
    h = putter.open(q, ["OUTPUT"])
    messages = [{"data": f"m{i}"} for i in range(10)]
    messages[3]["md"] = {"correl_id": "ab" * 24, "persistence": "PERSISTENT"}
    messages[4] = {"data": base64.b64encode(b"\x00\xffbin").decode(), "data_encoding": "base64",
                   "md": {"format": "NONE"}}
    out = put_batch(putter, h, messages)
    assert out["count"] == 10 and len(out["md"]) == 10 and "completion_code" not in out
    ids = [md["msg_id"] for md in out["md"]]
    assert len(set(ids)) == 10 and all(i != "0" * 48 for i in ids)
    assert {md["put_qmgr"] for md in out["md"]} == {"QM1"}
    assert {md["put_appl_name"] for md in out["md"]} == {"BATCHER"}
    assert out["md"][3]["correl_id"] == "ab" * 24 and out["md"][3]["persistence"] == "PERSISTENT"
    assert out["md"][0]["persistence"] == "NOT_PERSISTENT" and out["md"][0]["priority"] == 0  # queue defaults

    got = get_batch(getter, getter.open(q, ["INPUT_SHARED"]))  # on the other queue manager
    assert [g["md"]["msg_id"] for g in got] == ids
    assert [g["data"] for g in got if g["data_encoding"] == "utf-8"] == [f"m{i}" for i in range(10) if i != 4]
    assert base64.b64decode(got[4]["data"]) == b"\x00\xffbin" and got[4]["data_encoding"] == "base64"
    assert got[0]["data_length"] == 2 and got[3]["md"]["correl_id"] == "ab" * 24


def test_put_batch_priority_warning_per_message(group, connect):
    q = shared_q(group)
    m = connect()
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    r = raw(m, PUT_BATCH, h, {"options": ["NO_SYNCPOINT"], "messages": [
        {"data": "low", "md": {"priority": 1}}, {"data": "high", "md": {"priority": 12}}]})
    assert r.status_code == 200, r.text  # a warning, as a single put's 2049
    body = r.json()
    assert body["count"] == 2 and body["completion_code"] == 1 and body["reason"] == 2049
    assert [(w["index"], w["reason"]) for w in body["warnings"]] == [(1, 2049)]
    assert body["md"][1]["priority"] == 12  # the MQMD keeps the application's value ...
    assert [g["data"] for g in get_batch(m, h)] == ["high", "low"]  # ... the message is queued at 9


def test_partial_failure_queue_full_keeps_the_messages_before_it(group, connect):
    q = shared_q(group, "MAXDEPTH(5)")
    m = connect()
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    r = raw(m, PUT_BATCH, h, {"options": ["NO_SYNCPOINT"], "messages": texts(*(f"m{i}" for i in range(8)))})
    assert_batch_error(r, 2053, 409, 5)
    assert depth(group, "QM1", q) == 5
    assert [g["data"] for g in get_batch(m, h)] == [f"m{i}" for i in range(5)]


def test_partial_failure_in_a_unit_of_work_stays_in_it(group, connect):
    q = shared_q(group, "MAXDEPTH(3)")
    m = connect()
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    assert_batch_error(raw(m, PUT_BATCH, h, {"options": ["SYNCPOINT"], "messages": texts("a", "b", "c", "d")}),
                       2053, 409, 3)
    with mq_reason(2033):
        get_batch(m, h)  # the three are in the unit of work, not visible yet
    m.commit()
    assert [g["data"] for g in get_batch(m, h)] == ["a", "b", "c"]


def test_persistent_message_refused_mid_batch_by_a_recover_no_structure(group, connect):
    q = shared_q(group, struct="NOREC")
    m = connect()
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    r = raw(m, PUT_BATCH, h, {"messages": [{"data": "a"}, {"data": "b"},
                                           {"data": "c", "md": {"persistence": "PERSISTENT"}}, {"data": "d"}],
                              "options": ["NO_SYNCPOINT"]})
    body = assert_batch_error(r, 2048, 400, 2)
    assert "RECOVER(NO)" in body["error"]["message"]
    assert [g["data"] for g in get_batch(m, h)] == ["a", "b"]


@pytest.mark.parametrize("options", [["SYNCPOINT"], []])  # none named: in the unit of work (z/OS)
def test_put_batch_under_syncpoint_backout_and_commit(group, connect, options):
    q = shared_q(group)
    putter, other = connect("QM1"), connect("QM2")
    h = putter.open(q, ["OUTPUT"])
    hin = other.open(q, ["INPUT_SHARED"])
    put_batch(putter, h, texts("x", "y", "z"), options)
    assert depth(group, "QM1", q) == 3  # CURDEPTH counts uncommitted puts (IBM)
    with mq_reason(2033, 404):
        get_batch(other, hin)
    putter.backout()
    assert depth(group, "QM1", q) == 0
    with mq_reason(2033):
        get_batch(other, hin)
    put_batch(putter, h, texts("1", "2", "3"), options)
    putter.commit()
    assert [g["data"] for g in get_batch(other, hin)] == ["1", "2", "3"]


def test_put_batch_to_a_private_queue_and_through_intra_group_queuing(group, connect):
    # The transmission queue first: an agent that starts without it retries only after IBM's
    # fixed 60 s (tests/test_igq.py restart_agent).
    group.mqsc(  # may exist from an earlier module run on the same group: ignore that
        "QM1", f"DEFINE QLOCAL({IGQ_XMITQ}) QSGDISP(SHARED) CFSTRUCT(APPL1) USAGE(XMITQ)")
    for qm in ("QM1", "QM2"):
        group.mqsc_ok(qm, "ALTER QMGR IGQ(ENABLED)")
    private = uniq("PQ")
    group.mqsc_ok("QM2", f"DEFINE QLOCAL({private})")
    wait_until(lambda: httpx.get(f"{group.url('QM2')}/v1/qmgr").json()["IGQAGENT"] == "RUNNING",
               what="QM2's IGQ agent running")

    local = connect("QM2")
    hl = local.open(private, ["OUTPUT", "INPUT_SHARED"])
    put_batch(local, hl, texts("p1", "p2"))
    assert [g["data"] for g in get_batch(local, hl)] == ["p1", "p2"]

    sender = connect("QM1")
    hr = sender.open(private, ["OUTPUT"], qmgr="QM2")
    out = put_batch(sender, hr, texts(*(f"r{i}" for i in range(5))))
    assert out["count"] == 5
    received = [local.get(hl, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000) for _ in range(5)]
    assert [g["data"] for g in received] == [f"r{i}" for i in range(5)]  # in order
    assert [g["md"]["msg_id"] for g in received] == [md["msg_id"] for md in out["md"]]
    assert {g["md"]["put_qmgr"] for g in received} == {"QM1"}


# ---- limits and malformed input -------------------------------------------------------------


def test_put_batch_limits_and_malformed_messages_put_nothing(group, connect):
    q = shared_q(group)
    m = connect()
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    good = texts("a", "b", "c", "d", "e", "f")
    bad_base64 = [*good[:3], {"data": "***", "data_encoding": "base64"}, *good[4:]]
    bad_md = [*good[:5], {"data": "x", "md": {"priority": -7}}]
    cases = [
        ({"messages": []}, 2173),
        ({"messages": texts(*["x"] * 1001)}, 2173),
        ({"options": ["NO_SYNCPOINT"]}, 2173),  # no messages at all
        ({"messages": "abc"}, 2173),
        ({"messages": bad_base64}, 2004),
        ({"messages": bad_md}, 2050),
        ({"messages": [*good[:2], {"md": {"msg_id": "zz"}}]}, 2026),
        ({"messages": [*good[:2], {"data": 5}]}, 2004),
        ({"messages": [*good[:2], "not an object"]}, 2026),
        ({"messages": [*good[:2], {"data": "x", "colour": "red"}]}, 2046),
        # an MQMD checked once for the messages that repeat it: one that only looks equal (true
        # == 1, 1.0 == 1) is checked on its own, and refused
        ({"messages": [{"data": "a", "md": {"priority": 1}}] * 3 + [{"data": "b", "md": {"priority": True}}]}, 2050),
        ({"messages": [{"data": "a", "md": {"expiry": 5}}] * 2 + [{"data": "b", "md": {"expiry": 5.0}}]}, 2013),
        ({"messages": [{"data": "a", "md": {"priority": 2}}] * 2 + [{"data": "b", "md": {"priority": 2, "x": 1}}]},
         2026),
        ({"options": ["NO_SUCH_OPTION"], "messages": good}, 2046),
        ({"options": ["SYNCPOINT", "NO_SYNCPOINT"], "messages": good}, 2046),
    ]
    for body, reason in cases:
        r = raw(m, PUT_BATCH, h, body)
        assert_batch_error(r, reason, 400, 0)
    r = m.http.post(PUT_BATCH.format(h=m.hconn, o=h), content=b"{not json")
    assert_batch_error(r, 2046, 400, 0)
    assert "messages[3]" in raw(m, PUT_BATCH, h, {"messages": bad_base64}).json()["error"]["message"]
    assert depth(group, "QM1", q) == 0  # nothing stored by any of them
    assert raw(m, PUT_BATCH, h, {"messages": good, "options": ["NO_SYNCPOINT"]}).status_code == 201
    assert [g["data"] for g in get_batch(m, h)] == ["a", "b", "c", "d", "e", "f"]  # nothing corrupted


def test_put_batch_handle_errors_carry_count_zero(group, connect):
    q = shared_q(group)
    m = connect()
    hin = m.open(q, ["INPUT_SHARED"])
    assert_batch_error(raw(m, PUT_BATCH, hin, {"messages": texts("a")}), 2039, 400, 0)
    assert_batch_error(raw(m, PUT_BATCH, "999", {"messages": texts("a")}), 2019, 404, 0)
    group.mqsc_ok("QM1", f"ALTER QLOCAL({q}) QSGDISP(SHARED) PUT(DISABLED)")
    hout = m.open(q, ["OUTPUT"])
    assert_batch_error(raw(m, PUT_BATCH, hout, {"messages": texts("a")}), 2051, 409, 0)


def test_get_batch_limits_and_bad_input(group, connect):
    q = shared_q(group)
    m = connect()
    h = m.open(q, ["OUTPUT", "INPUT_SHARED", "BROWSE"])
    put_batch(m, h, texts("a"))
    for body, reason in [({"max_messages": 0}, 2186), ({"max_messages": 1001}, 2186),
                         ({"max_messages": True}, 2186), ({"options": ["NO_SUCH"]}, 2046),
                         ({"options": ["MSG_UNDER_CURSOR"]}, 2046), ({"match": {"correl_id": "x"}}, 2026),
                         ({"buffer_length": -5}, 2005)]:
        r = raw(m, GET_BATCH, h, body)
        assert r.status_code == 400, r.text
        assert r.json()["error"]["reason"] == reason, (body, r.text)
    assert [g["data"] for g in get_batch(m, h)] == ["a"]  # still there
    with mq_reason(2033, 404):
        get_batch(m, h)


# ---- get-batch ------------------------------------------------------------------------------


def test_get_batch_takes_at_most_max_messages_in_order(group, connect):
    q = shared_q(group)
    m = connect()
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    put_batch(m, h, [{"data": f"p{i}", "md": {"priority": i % 3}} for i in range(9)])
    first = get_batch(m, h, max_messages=4)
    assert [g["data"] for g in first] == ["p2", "p5", "p8", "p1"]  # priority order, FIFO within
    rest = get_batch(m, h, max_messages=100)
    assert [g["data"] for g in rest] == ["p4", "p7", "p0", "p3", "p6"]


def test_get_batch_match_by_correl_id_and_truncation(group, connect):
    q = shared_q(group)
    m = connect()
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    mine, other = "cd" * 24, "ef" * 24
    put_batch(m, h, [{"data": "0123456789", "md": {"correl_id": mine}}, {"data": "other", "md": {"correl_id": other}},
                     {"data": "abcdefghij", "md": {"correl_id": mine}}, {"data": "xy", "md": {"correl_id": mine}}])
    r = raw(m, GET_BATCH, h, {"options": ["NO_SYNCPOINT", "ACCEPT_TRUNCATED_MSG"], "buffer_length": 4,
                              "match": {"correl_id": mine}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["completion_code"] == 1 and body["reason"] == 2079
    got = body["messages"]
    assert [(g["data"], g["data_length"]) for g in got] == [("0123", 10), ("abcd", 10), ("xy", 2)]
    assert [g.get("reason") for g in got] == [2079, 2079, None]
    assert {g["md"]["correl_id"] for g in got} == {mine}
    assert [g["data"] for g in get_batch(m, h)] == ["other"]


def test_get_batch_stops_before_a_message_too_big_and_fails_on_a_first_one(group, connect):
    q = shared_q(group)
    m = connect()
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    put_batch(m, h, texts("ab", "cd", "too long", "ef"))
    assert [g["data"] for g in get_batch(m, h, buffer_length=4)] == ["ab", "cd"]  # stops before it
    r = raw(m, GET_BATCH, h, {"options": ["NO_SYNCPOINT"], "buffer_length": 4})
    # as a single MQGET: a warning (200), no message got, the first one's MQMD, length and part
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["messages"], body["completion_code"], body["reason"]) == ([], 1, 2080)
    assert (body["data"], body["data_length"]) == ("too ", 8)
    assert [g["data"] for g in get_batch(m, h)] == ["too long", "ef"]  # nothing was removed


def test_get_batch_under_syncpoint_backout_restores_every_message(group, connect):
    q = shared_q(group)
    m = connect()
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    put_batch(m, h, texts("a", "b", "c"))
    assert [g["data"] for g in get_batch(m, h, options=[])] == ["a", "b", "c"]  # z/OS: in the unit of work
    m.backout()
    got = get_batch(m, h, options=["SYNCPOINT"])
    assert [(g["data"], g["md"]["backout_count"]) for g in got] == [("a", 1), ("b", 1), ("c", 1)]
    m.commit()
    with mq_reason(2033):
        get_batch(m, h)


def test_get_batch_browse_first_then_next_keeps_the_cursor(group, connect):
    q = shared_q(group)
    m = connect()
    h = m.open(q, ["OUTPUT", "INPUT_SHARED", "BROWSE"])
    put_batch(m, h, texts(*(f"b{i}" for i in range(5))))
    assert [g["data"] for g in get_batch(m, h, 2, ["BROWSE_FIRST"])] == ["b0", "b1"]
    assert [g["data"] for g in get_batch(m, h, 2, ["BROWSE_NEXT"])] == ["b2", "b3"]
    assert m.get(h, ["BROWSE_NEXT"])["data"] == "b4"  # a single browse goes on from the batch's cursor
    with mq_reason(2033):
        get_batch(m, h, 2, ["BROWSE_NEXT"])
    assert [g["data"] for g in get_batch(m, h, 10, ["BROWSE_FIRST"])] == [f"b{i}" for i in range(5)]
    assert depth(group, "QM1", q) == 5  # browsing removed nothing


def test_get_batch_with_wait_returns_when_the_first_message_arrives(group, connect, pool):
    q = shared_q(group)
    getter, putter = connect("QM1"), connect("QM2")
    hin = getter.open(q, ["INPUT_SHARED"])
    wait_ms = 4000  # under the waiter's 5 s safety recheck: only a wake-up returns earlier
    started = time.monotonic()
    future = pool.submit(get_batch, getter, hin, 10, ["WAIT", "NO_SYNCPOINT"], wait_ms=wait_ms)
    group.wait_for_waiter(q)  # the getter waits in the coupling facility: the event to await
    put_batch(putter, putter.open(q, ["OUTPUT"]), texts("w1", "w2", "w3"))
    got = future.result(timeout=30)
    assert time.monotonic() - started < wait_ms / 1000, "the waiter was not woken by the batch"
    assert [g["data"] for g in got] == ["w1", "w2", "w3"]  # the batch is visible at once: all of it


def test_get_batch_with_wait_and_nothing_coming_is_2033(group, connect):
    q = shared_q(group)
    m = connect()
    h = m.open(q, ["INPUT_SHARED"])
    with mq_reason(2033, 404):
        get_batch(m, h, 5, ["WAIT", "NO_SYNCPOINT"], wait_ms=50)


# ---- one coupling-facility call per batch ---------------------------------------------------


def test_a_put_batch_of_100_and_a_get_batch_are_one_evalsha_each(group, connect):
    q = shared_q(group)
    structure_key = keys.structure_state(keys.shared_tag("QSG1", "APPL1"))  # its node runs the scripts
    m = connect()
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    put_batch(m, h, texts("warm-up"))  # scripts loaded, caches warm
    get_batch(m, h)
    marker = f"batch-done-{uniq('M')}"
    seen: list[list[str]] = []
    ready = threading.Event()

    def monitor() -> None:
        # MONITOR sees every command of every client: the queue's own calls are told apart from
        # the queue managers' background work (heartbeats, leases, scans) by the queue's name.
        client = node_client_of(group, structure_key)
        with client.monitor() as mon:
            ready.set()
            for cmd in mon.listen():
                text = cmd["command"]
                if marker in text:
                    return
                if text.upper().startswith("EVALSHA") and q in text:
                    seen.append(text.split()[:2])

    watcher = threading.Thread(target=monitor, daemon=True)
    watcher.start()
    assert ready.wait(10)
    marker_client = node_client_of(group, structure_key)
    marker_client.echo("monitor-started")  # MONITOR is live once it has answered: nothing is missed
    out = put_batch(m, h, texts(*(f"n{i}" for i in range(100))))
    got = get_batch(m, h, 1000)
    marker_client.echo(marker)
    watcher.join(timeout=30)
    marker_client.close()
    assert out["count"] == 100 and len(got) == 100
    assert len(seen) == 2, seen  # one for the put-batch, one for the get-batch
    assert seen[0][1] != seen[1][1]  # two different scripts


# ---- activity records: one per message, as the single calls ---------------------------------


async def test_batches_are_recorded_one_activity_record_per_message(redis_url, tmp_path):
    import json

    from app.core.clock import ManualClock
    from tests.support.inproc import inprocess_group

    t0 = 1_748_772_000_000
    async with inprocess_group(["QM1"], redis_url, tmp_path, ManualClock(t0)) as qms:
        qm1 = qms["QM1"]
        await qm1.mqsc("DEFINE QLOCAL(BATCH.Q) MAXDEPTH(2)")
        app = await qm1.connect("RECORDED")
        h = await app.open("BATCH.Q", ["OUTPUT", "INPUT_SHARED", "BROWSE"])
        path = f"/v1/connections/{app.hconn}/objects/{h}"
        r = await app.http.post(f"{path}/put-batch", json={"options": ["NO_SYNCPOINT"],
                                                           "messages": texts("one", "two", "three")})
        assert r.status_code == 409 and r.json()["count"] == 2
        r = await app.http.post(f"{path}/get-batch", json={"options": ["BROWSE_FIRST"]})
        assert len(r.json()["messages"]) == 2
        r = await app.http.post(f"{path}/get-batch", json={"options": ["NO_SYNCPOINT"]})
        assert [g["data"] for g in r.json()["messages"]] == ["one", "two"]
        await app.disconnect()
    records = [json.loads(line) for f in sorted((tmp_path / "activity").glob("date=*/qmgr=*/*.jsonl"))
               for line in f.read_text().splitlines()]
    calls = [r for r in records if r["verb"] in ("PUT", "GET", "BROWSE")]
    assert [(r["verb"], r["cc"], r["rc"]) for r in calls] == [
        ("PUT", 0, 0), ("PUT", 0, 0), ("PUT", 2, 2053), ("BROWSE", 0, 0), ("BROWSE", 0, 0), ("GET", 0, 0),
        ("GET", 0, 0)]
    assert [r.get("depth") for r in calls] == [1, 2, None, 2, 2, 1, 0]
    assert [r.get("size") for r in calls] == [3, 3, None, 3, 3, 3, 3]
    assert {r["object"] for r in calls} == {"BATCH.Q"} and {r["appl"] for r in calls} == {"RECORDED"}
    assert calls[0]["msg_id"] == calls[5]["msg_id"] and calls[1]["msg_id"] == calls[6]["msg_id"]
    assert all(r["syncpoint"] is False for r in calls)
