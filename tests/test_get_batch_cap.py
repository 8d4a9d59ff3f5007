"""A get-batch answer is bounded (docs/api.md §12; "no request takes a queue manager down"):
over real HTTP and a real session (WebSocket) on a real queue manager whose
QSG_GET_BATCH_MAX_BYTES is set low, many messages of control bytes - the shape of 1000 messages
of 1 MB of ``\\x01`` that once held a queue manager's event loop for seconds and built an answer
six times their size - come back in batches whose data stays within the cap, as base64 (at most
about 4/3 of the data), with every message got exactly once: the batch ends before the message
that would cross the cap, and that message stays on the queue for the next call. Ordinary text
stays UTF-8 text."""

from __future__ import annotations

import base64
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson
import pytest
from websockets.sync.client import connect as ws_connect

from tests.support.mq import MQ, MQFailed, connections, mq_reason
from tests.support.mqsc import shared_q
from tests.support.names import uniq

CAP = 65_536  # QSG_GET_BATCH_MAX_BYTES of this group
SIZE = 8_192  # each message: CAP holds exactly CAP // SIZE of them
PER_BATCH = CAP // SIZE
COUNT = 100
GET_BATCH = "/v1/connections/{h}/objects/{o}/get-batch"
PUT_BATCH = "/v1/connections/{h}/objects/{o}/put-batch"
ANSWER_S = 20.0  # bound on waiting for a session's answer frame


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1"], env={"QSG_GET_BATCH_MAX_BYTES": str(CAP)})
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    return g


@pytest.fixture
def connect(group):
    yield from connections(group, "CAPPED")


def control_bytes(i: int, size: int = SIZE) -> bytes:
    """A message of control bytes (valid UTF-8, MQFMT_STRING) that names its place in the put order."""
    head = i.to_bytes(4, "big").replace(b"\n", b"\x01")  # (each byte below 0x20 but 9, 10, 13 escapes)
    return head + b"\x01" * (size - len(head))


def put_control_messages(m: MQ, hobj: str, count: int, size: int = SIZE, first: int = 0) -> list[str]:
    """Put ``count`` messages of control bytes in one put-batch; their MsgIds in order."""
    messages = [{"data": base64.b64encode(control_bytes(first + i, size)).decode(), "data_encoding": "base64",
                 "md": {"format": "MQSTR"}} for i in range(count)]
    out = m.call("POST", PUT_BATCH.format(h=m.hconn, o=hobj), {"options": ["NO_SYNCPOINT"], "messages": messages})
    return [md["msg_id"] for md in out["md"]]


def get_batch_raw(m: MQ, hobj: str, max_messages: int = 1000, **body: Any) -> tuple[int, dict[str, Any]]:
    """One get-batch: the answer's size in bytes as sent and its body."""
    r = m.http.post(GET_BATCH.format(h=m.hconn, o=hobj),
                    json={"options": ["NO_SYNCPOINT"], "max_messages": max_messages, **body})
    if r.status_code != 200:
        raise MQFailed(r.status_code, r.json())
    return len(r.content), r.json()


def data_of(message: dict[str, Any]) -> bytes:
    if message["data_encoding"] == "base64":
        return base64.b64decode(message["data"])
    assert message["data_encoding"] == "utf-8", message["data_encoding"]
    return message["data"].encode()


def assert_bounded(size: int, messages: list[dict[str, Any]]) -> None:
    """An answer's data within the cap, and its bytes within base64's 4/3 of that plus the
    MQMD and fields of each message (well under 1 KB each)."""
    data = sum(len(data_of(m)) for m in messages)
    assert data <= CAP, (data, len(messages))
    assert size <= CAP * 4 // 3 + 1024 * len(messages) + 1024, (size, len(messages))


def drain_in_batches(m: MQ, hobj: str, **body: Any) -> list[dict[str, Any]]:
    """Get-batch until 2033; every answer checked against the cap. Bounded: COUNT batches at most."""
    got: list[dict[str, Any]] = []
    for _ in range(COUNT + 1):
        try:
            size, answer = get_batch_raw(m, hobj, **body)
        except MQFailed as exc:
            assert exc.reason == 2033, exc.body
            return got
        assert answer["messages"], answer
        assert_bounded(size, answer["messages"])
        got += answer["messages"]
    raise AssertionError("the queue never emptied")


def test_control_bytes_come_back_capped_as_base64_and_every_message_exactly_once(group, connect):
    q = shared_q(group)
    m = connect()
    hobj = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    ids = put_control_messages(m, hobj, COUNT)
    sizes: list[int] = []
    got: list[dict[str, Any]] = []
    for _ in range(COUNT + 1):
        try:
            size, answer = get_batch_raw(m, hobj)
        except MQFailed as exc:
            assert exc.reason == 2033
            break
        assert_bounded(size, answer["messages"])
        sizes.append(len(answer["messages"]))
        got += answer["messages"]
    # Each batch stops at the cap, not before: as many whole messages as fit.
    assert sizes == [PER_BATCH] * (COUNT // PER_BATCH) + ([COUNT % PER_BATCH] if COUNT % PER_BATCH else [])
    # Every message put is got exactly once, in order, with its data as put, as base64.
    assert [g["md"]["msg_id"] for g in got] == ids
    assert all(g["data_encoding"] == "base64" for g in got)
    assert [data_of(g) for g in got] == [control_bytes(i) for i in range(COUNT)]
    (res,) = group.mqsc("QM1", f"DISPLAY QLOCAL({q}) CURDEPTH")
    assert res["objects"][0]["CURDEPTH"] == 0


def test_the_first_message_comes_back_alone_when_it_alone_passes_the_cap(group, connect):
    q = uniq("CAPP")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) MAXMSGL(1048576)")  # a private queue
    m = connect()
    hobj = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    big = put_control_messages(m, hobj, 2, size=CAP + SIZE)
    small = put_control_messages(m, hobj, 3, first=2)
    got = drain_in_batches_counting(m, hobj)
    # each big one alone (never an empty batch), then the small ones together
    assert [[g["md"]["msg_id"] for g in batch] for batch in got] == [[big[0]], [big[1]], small]
    assert data_of(got[0][0]) == control_bytes(0, CAP + SIZE)


def drain_in_batches_counting(m: MQ, hobj: str, **body: Any) -> list[list[dict[str, Any]]]:
    """Get-batch until 2033; the batches (bounded: COUNT calls at most)."""
    batches = []
    for _ in range(COUNT):
        try:
            _, answer = get_batch_raw(m, hobj, **body)
        except MQFailed as exc:
            assert exc.reason == 2033, exc.body
            return batches
        batches.append(answer["messages"])
    raise AssertionError("the queue never emptied")


def test_the_cap_counts_data_after_truncation(group, connect):
    q = shared_q(group)
    m = connect()
    hobj = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    ids = put_control_messages(m, hobj, 40)
    got = drain_in_batches_counting(m, hobj, buffer_length=SIZE // 4,
                                    options=["NO_SYNCPOINT", "ACCEPT_TRUNCATED_MSG"])
    # 2 KB of each message is returned: four times as many fit
    assert [len(b) for b in got] == [4 * PER_BATCH, 40 - 4 * PER_BATCH]
    assert [g["md"]["msg_id"] for b in got for g in b] == ids
    assert all(len(data_of(g)) == SIZE // 4 and g["data_length"] == SIZE for b in got for g in b)


def test_browse_matching_and_syncpoint_batches_take_nothing_past_the_cap(group, connect):
    """The general path of the script (browse, a match, a unit of work): the message that would
    cross the cap is neither browsed past nor taken."""
    q = shared_q(group)
    m = connect()
    hobj = m.open(q, ["OUTPUT", "INPUT_SHARED", "BROWSE"])
    correl = "cd" * 24
    messages = [{"data": base64.b64encode(control_bytes(i)).decode(), "data_encoding": "base64",
                 "md": {"correl_id": correl}} for i in range(3 * PER_BATCH)]
    ids = [md["msg_id"] for md in m.call("POST", PUT_BATCH.format(h=m.hconn, o=hobj),
                                         {"options": ["NO_SYNCPOINT"], "messages": messages})["md"]]
    # browse: the cursor ends on the last message returned, the next browse goes on from there
    browsed = drain_in_batches(m, hobj, options=["BROWSE_NEXT"])
    assert [g["md"]["msg_id"] for g in browsed] == ids
    # a destructive get matching the CorrelId, under syncpoint, backed out and got again
    _, first = get_batch_raw(m, hobj, options=["SYNCPOINT"], match={"correl_id": correl})
    assert [g["md"]["msg_id"] for g in first["messages"]] == ids[:PER_BATCH]
    m.backout()
    got = drain_in_batches(m, hobj, options=["SYNCPOINT"], match={"correl_id": correl})
    m.commit()
    assert [g["md"]["msg_id"] for g in got] == ids


def test_a_waiting_batch_counts_its_first_message_in_the_cap(group, connect):
    """With WAIT the first message is waited for alone, the rest taken in one more call: that
    call's budget is what the first left, and what it does not return stays."""
    q = shared_q(group)
    getter, putter = connect(), connect()
    hin = getter.open(q, ["INPUT_SHARED"])
    hout = putter.open(q, ["OUTPUT"])
    with ThreadPoolExecutor(max_workers=1) as pool:
        waiting = pool.submit(get_batch_raw, getter, hin, options=["WAIT", "NO_SYNCPOINT"], wait_ms=30_000)
        group.wait_for_waiter(q)  # the getter waits in the coupling facility: the event to await
        ids = put_control_messages(putter, hout, 2 * PER_BATCH)
        size, answer = waiting.result(timeout=60)
    assert_bounded(size, answer["messages"])
    assert len(answer["messages"]) == PER_BATCH  # the first, then what the budget it left holds
    rest = drain_in_batches(getter, hin)
    assert [g["md"]["msg_id"] for g in answer["messages"] + rest] == ids


def test_ordinary_text_stays_utf8_text(group, connect):
    q = shared_q(group)
    m = connect()
    hobj = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    texts = ["plain text", "tabs\tand\nlines\r\n", "a form feed \x0c in a long enough line of text",
             "caf\u00e9 \u2603", "", "\x01\x02 mostly control"]
    for t in texts:
        m.put(hobj, t)
    _, answer = get_batch_raw(m, hobj)
    got = answer["messages"]
    assert [g["data_encoding"] for g in got] == ["utf-8"] * 5 + ["base64"]
    assert [data_of(g).decode() for g in got] == texts


def test_a_session_answers_the_same_capped_batches(group, connect):
    q = shared_q(group)
    m = connect()
    ids = put_control_messages(m, m.open(q, ["OUTPUT"]), 2 * PER_BATCH + 1)
    url = group.url("QM1").replace("http://", "ws://") + "/v1/session"
    with ws_connect(url, compression=None, max_size=None) as ws:
        def call(frame_id: int, method: str, path: str, body: Any) -> tuple[int, dict[str, Any]]:
            ws.send(orjson.dumps({"id": frame_id, "method": method, "path": path, "body": body}).decode())
            raw = ws.recv(timeout=ANSWER_S)
            answer = orjson.loads(raw)
            assert answer["id"] == frame_id, answer
            return len(raw), answer

        _, conn = call(1, "POST", "/v1/connections", {"appl_name": "CAPPED.SESSION"})
        hconn = conn["body"]["hconn"]
        _, opened = call(2, "POST", f"/v1/connections/{hconn}/objects",
                         {"object_name": q, "options": ["INPUT_SHARED"]})
        hobj = opened["body"]["hobj"]
        got: list[dict[str, Any]] = []
        for frame_id in range(3, 3 + 4):  # three batches, then 2033
            size, answer = call(frame_id, "POST", GET_BATCH.format(h=hconn, o=hobj),
                                {"options": ["NO_SYNCPOINT"], "max_messages": 1000})
            if answer["status"] != 200:
                assert answer["body"]["error"]["reason"] == 2033, answer
                break
            assert_bounded(size, answer["body"]["messages"])
            got += answer["body"]["messages"]
        assert [g["md"]["msg_id"] for g in got] == ids
        assert all(g["data_encoding"] == "base64" for g in got)


def test_the_message_a_batch_ends_before_stays_for_the_next_get(group, connect):
    """The message the batch ended before is still there for a single MQGET."""
    q = shared_q(group)
    m = connect()
    hobj = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    ids = put_control_messages(m, hobj, PER_BATCH + 1)
    _, answer = get_batch_raw(m, hobj)
    assert len(answer["messages"]) == PER_BATCH
    last = m.get(hobj, ["NO_SYNCPOINT"])
    assert last["md"]["msg_id"] == ids[-1] and last["data_encoding"] == "base64"
    with mq_reason(2033):
        m.get(hobj, ["NO_SYNCPOINT"])
