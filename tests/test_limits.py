"""Queue-manager limits over real HTTP (docs/api.md §7.1): MAXUMSGS, the messages one unit of
work may put and get under syncpoint (MQRC_SYNCPOINT_LIMIT_REACHED 2024, each message of a
put-batch and get-batch counted), and MAXHANDS, the handles one connection may have open
(MQRC_HANDLE_NOT_AVAILABLE 2017 at MQOPEN and MQPUT1). Both altered by ALTER QMGR and shown by
DISPLAY QMGR under IBM's names."""

from __future__ import annotations

import pytest

from tests.support.mq import MQ, connections, mq_reason
from tests.support.names import uniq


@pytest.fixture(scope="module")
def group(make_cluster):
    return make_cluster(["QM1"])


@pytest.fixture
def connect(group):
    yield from connections(group, "LIMITS")


@pytest.fixture
def qmgr_attrs(group):
    """ALTER QMGR for one test; IBM's z/OS defaults again afterwards."""
    def alter(script: str) -> None:
        group.mqsc_ok("QM1", f"ALTER QMGR {script}")
    yield alter
    group.mqsc_ok("QM1", "ALTER QMGR MAXUMSGS(10000) MAXHANDS(256)")


def display_qmgr(group) -> dict:
    return group.mqsc_ok("QM1", "DISPLAY QMGR")[0]["objects"][0]


def test_defaults_shown_by_display_qmgr(group):
    shown = display_qmgr(group)
    assert shown["MAXUMSGS"] == 10000 and shown["MAXHANDS"] == 256


def put_batch(m: MQ, hobj: str, n: int, options: list[str]) -> dict:
    return m.call("POST", f"/v1/connections/{m.hconn}/objects/{hobj}/put-batch",
                  {"options": options, "messages": [{"data": f"m{i}"} for i in range(n)]})


def get_batch(m: MQ, hobj: str, n: int, options: list[str]) -> dict:
    return m.call("POST", f"/v1/connections/{m.hconn}/objects/{hobj}/get-batch",
                  {"options": options, "max_messages": n})


def test_maxumsgs_counts_puts_and_gets_under_syncpoint(group, connect, qmgr_attrs):
    qmgr_attrs("MAXUMSGS(3)")
    assert display_qmgr(group)["MAXUMSGS"] == 3
    q = uniq("UMSG")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    m = connect()
    hobj = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    m.put(hobj, "a", options=["SYNCPOINT"])
    m.put(hobj, "b", options=["SYNCPOINT"])
    m.put(hobj, "outside", options=["NO_SYNCPOINT"])  # not counted (outside the unit of work)
    m.put(hobj, "c", options=["SYNCPOINT"])
    with mq_reason(2024):
        m.put(hobj, "d", options=["SYNCPOINT"])
    with mq_reason(2024):
        m.put1(q, "e", options=["SYNCPOINT"])
    with mq_reason(2024):  # a get under syncpoint counts too
        m.get(hobj, ["SYNCPOINT"])
    assert m.get(hobj, ["NO_SYNCPOINT"])["data"] == "outside"  # outside: allowed
    m.commit()  # a new unit of work: room again
    for _ in range(3):
        m.get(hobj, ["SYNCPOINT"])
    with mq_reason(2024):
        m.put(hobj, "f", options=["SYNCPOINT"])
    m.backout()  # so does a backout
    m.put(hobj, "g", options=["SYNCPOINT"])
    m.commit()


def test_maxumsgs_counts_each_message_of_a_batch(group, connect, qmgr_attrs):
    qmgr_attrs("MAXUMSGS(5)")
    q = uniq("UMSB")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    m = connect()
    hobj = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    m.put(hobj, "first", options=["SYNCPOINT"])
    with mq_reason(2024) as caught:
        put_batch(m, hobj, 6, ["SYNCPOINT"])
    assert caught[0].body["count"] == 4  # the messages before the limit are put
    m.commit()
    assert m.call("GET", f"/v1/connections/{m.hconn}/objects/{m.open(q, ['INQUIRE'])}/attributes"
                         "?selectors=CURDEPTH")["CURDEPTH"] == 5
    # a get-batch under syncpoint gets no more than the room left, then 2024
    m.get(hobj, ["SYNCPOINT"])
    m.get(hobj, ["SYNCPOINT"])
    got = get_batch(m, hobj, 10, ["SYNCPOINT"])
    assert len(got["messages"]) == 3
    with mq_reason(2024):
        get_batch(m, hobj, 10, ["SYNCPOINT"])
    m.backout()
    assert len(get_batch(m, hobj, 10, ["NO_SYNCPOINT"])["messages"]) == 5  # outside: not limited


def test_maxumsgs_is_per_connection(group, connect, qmgr_attrs):
    qmgr_attrs("MAXUMSGS(1)")
    q = uniq("UMSC")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    one, two = connect(), connect()
    h1, h2 = one.open(q, ["OUTPUT"]), two.open(q, ["OUTPUT"])
    one.put(h1, "x", options=["SYNCPOINT"])
    two.put(h2, "y", options=["SYNCPOINT"])  # another connection: its own unit of work
    with mq_reason(2024):
        one.put(h1, "z", options=["SYNCPOINT"])
    one.commit()
    two.commit()


def test_maxhands_limits_open_handles_of_one_connection(group, connect, qmgr_attrs):
    qmgr_attrs("MAXHANDS(3)")
    assert display_qmgr(group)["MAXHANDS"] == 3
    q = uniq("HAND")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    m, other = connect(), connect()
    handles = [m.open(q, ["OUTPUT"]), m.open(q, ["INQUIRE"])]
    qmgr = m.call("POST", f"/v1/connections/{m.hconn}/objects",
                  {"object_name": "", "object_type": "Q_MGR", "options": ["INQUIRE"]})["hobj"]
    with mq_reason(2017):  # the queue manager object's handle counts too
        m.open(q, ["OUTPUT"])
    with mq_reason(2017):  # MQPUT1 needs a handle while it runs
        m.put1(q, "x")
    other.open(q, ["OUTPUT"])  # another connection: its own handles
    m.close(qmgr)
    handles.append(m.open(q, ["BROWSE"]))
    m.close(handles[0])
    m.put1(q, "fits again")
    assert len(handles) == 3
