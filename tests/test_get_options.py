"""MQGMO options beyond the basics, over real HTTP, shared and private queues: MARK_SKIP_BACKOUT
(z/OS, 2062), BROWSE_MSG_UNDER_CURSOR and MSG_UNDER_CURSOR, match by msg_token, the options z/OS
or the REST API refuse (LOCK, UNLOCK, SET_SIGNAL) and those accepted (PROPERTIES_*, CONVERT)."""

from __future__ import annotations

import pytest

from tests.support.mq import connections, mq_reason
from tests.support.mqsc import shared_q
from tests.support.names import uniq


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5)")
    return g


@pytest.fixture
def connect(group):
    yield from connections(group, "GMO")


@pytest.fixture(params=["shared", "private"])
def queue(request, group):
    if request.param == "shared":
        return shared_q(group)
    q = uniq("PQ")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    return q


def test_mark_skip_backout(connect, queue):
    m = connect("QM1")
    h = m.open(queue, ["OUTPUT", "INPUT_SHARED"])
    for d in ("one", "two", "three"):
        m.put(h, d, options=["NO_SYNCPOINT"])
    assert m.get(h, ["SYNCPOINT", "MARK_SKIP_BACKOUT"])["data"] == "one"
    with mq_reason(2062):
        m.get(h, ["SYNCPOINT", "MARK_SKIP_BACKOUT"])
    assert m.get(h, ["SYNCPOINT"])["data"] == "two"
    m.put(h, "put in uow", options=["SYNCPOINT"])
    m.backout()  # "two" and the put back out; "one" stays got, in a new unit of work
    assert [m.get(h, ["NO_SYNCPOINT"])["data"] for _ in range(2)] == ["two", "three"]
    with mq_reason(2033):
        m.get(h, ["NO_SYNCPOINT"])
    m.backout()  # now the new unit of work backs out: "one" is back
    got = m.get(h, ["NO_SYNCPOINT"])
    assert got["data"] == "one" and got["md"]["backout_count"] == 1
    with mq_reason(2046):  # only for a get under syncpoint
        m.get(h, ["NO_SYNCPOINT", "MARK_SKIP_BACKOUT"])


def test_mark_skip_backout_then_commit(connect, queue):
    m = connect("QM1")
    h = m.open(queue, ["OUTPUT", "INPUT_SHARED"])
    m.put(h, "poison", options=["NO_SYNCPOINT"])
    m.get(h, ["SYNCPOINT", "MARK_SKIP_BACKOUT"])
    m.backout()
    m.commit()
    with mq_reason(2033):
        m.get(h, ["NO_SYNCPOINT"])
    m.put(h, "again", options=["NO_SYNCPOINT"])
    m.get(h, ["SYNCPOINT", "MARK_SKIP_BACKOUT"])  # a new unit of work may mark again
    m.commit()


def test_browse_and_get_under_cursor(connect, queue):
    m = connect("QM1")
    h = m.open(queue, ["OUTPUT", "INPUT_SHARED", "BROWSE"])
    with mq_reason(2034):
        m.get(h, ["BROWSE_MSG_UNDER_CURSOR"])
    for d in ("a", "b", "c"):
        m.put(h, d, options=["NO_SYNCPOINT"])
    m.get(h, ["BROWSE_FIRST"])
    assert m.get(h, ["BROWSE_NEXT"])["data"] == "b"
    assert m.get(h, ["BROWSE_MSG_UNDER_CURSOR"])["data"] == "b"
    assert m.get(h, ["MSG_UNDER_CURSOR", "NO_SYNCPOINT"])["data"] == "b"
    with mq_reason(2034):  # gone from under the cursor
        m.get(h, ["BROWSE_MSG_UNDER_CURSOR"])
    assert m.get(h, ["BROWSE_NEXT"])["data"] == "c"


def test_match_msg_token(connect, queue):
    m = connect("QM1")
    h = m.open(queue, ["OUTPUT", "INPUT_SHARED", "BROWSE"])
    for d in ("a", "b", "c"):
        m.put(h, d, options=["NO_SYNCPOINT"])
    browsed = [m.get(h, ["BROWSE_FIRST"])] + [m.get(h, ["BROWSE_NEXT"]) for _ in range(2)]
    tokens = [b["msg_token"] for b in browsed]
    assert len(set(tokens)) == 3 and all(len(t) == 32 for t in tokens)
    assert m.get(h, ["NO_SYNCPOINT"], match={"msg_token": tokens[1]})["data"] == "b"
    with mq_reason(2033):  # gone: its token names no message any more
        m.get(h, ["NO_SYNCPOINT"], match={"msg_token": tokens[1]})
    with mq_reason(2331):
        m.get(h, ["NO_SYNCPOINT"], match={"msg_token": "xyz"})
    with mq_reason(2046):  # not with WAIT
        m.get(h, ["WAIT"], wait_ms=10, match={"msg_token": tokens[0]})


def test_refused_and_accepted_options(connect, queue):
    m = connect("QM1")
    h = m.open(queue, ["OUTPUT", "INPUT_SHARED"])
    for opt in ("LOCK", "UNLOCK", "SET_SIGNAL"):
        with mq_reason(2046):
            m.get(h, [opt])
    m.put(h, "p", options=["NO_SYNCPOINT"])
    got = m.get(h, ["NO_SYNCPOINT", "PROPERTIES_AS_Q_DEF", "CONVERT"])
    assert got["data"] == "p" and got["group_status"] == "NOT_IN_GROUP"
