"""Message groups and segments as IBM MQ for z/OS handles them, over real HTTP on real queue
managers, shared and private queues: LOGICAL_ORDER puts and gets of interleaved groups,
ALL_MSGS_AVAILABLE, match by group id and sequence number, groups in a unit of work, segments
(z/OS: no reassembly; 2365 on an INDXTYPE(GROUPID) queue) and the reason codes 2241, 2245,
2247, 2259, 2394."""

from __future__ import annotations

import pytest

from tests.support.mq import connections, mq_reason
from tests.support.mqsc import shared_q
from tests.support.names import uniq

NO_ID = "0" * 48


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5)")
    return g


@pytest.fixture
def connect(group):
    yield from connections(group, "GROUPS")


@pytest.fixture(params=["shared", "private"])
def queue(request, group):
    """A queue INDXTYPE(GROUPID), shared or private (QM1)."""
    if request.param == "shared":
        return shared_q(group, "INDXTYPE(GROUPID)")
    q = uniq("PQ")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) INDXTYPE(GROUPID)")
    return q


def put_group(m, hobj, tag, n, options=("NO_SYNCPOINT",)):
    """n messages of one group with LOGICAL_ORDER; returns their MQMDs."""
    out = []
    for i in range(1, n + 1):
        flags = ["LAST_MSG_IN_GROUP"] if i == n else ["MSG_IN_GROUP"]
        out.append(m.put(hobj, f"{tag}{i}", md={"msg_flags": flags}, options=["LOGICAL_ORDER", *options])["md"])
    return out


def test_logical_order_put_assigns_group_and_sequence(connect, queue):
    m = connect("QM1")
    h = m.open(queue, ["OUTPUT", "INPUT_SHARED"])
    mds = put_group(m, h, "A", 3)
    gid = mds[0]["group_id"]
    assert gid != NO_ID and all(md["group_id"] == gid for md in mds)
    assert [md["msg_seq_number"] for md in mds] == [1, 2, 3]
    second = put_group(m, h, "B", 2)
    assert second[0]["group_id"] != gid  # a new group id for the next group
    # a message in no group with LOGICAL_ORDER: not in a group
    plain = m.put(h, "P", options=["LOGICAL_ORDER", "NO_SYNCPOINT"])["md"]
    assert plain["group_id"] == NO_ID and plain["msg_seq_number"] == 1


def test_interleaved_groups_got_in_logical_order(connect, queue):
    p1, p2, c = connect("QM1"), connect("QM1"), connect("QM2" if "SQ" in queue else "QM1")
    h1, h2 = p1.open(queue, ["OUTPUT"]), p2.open(queue, ["OUTPUT"])
    for i in range(1, 4):  # A1 B1 A2 B2 A3 B3, interleaved on the queue
        for m, h, tag in ((p1, h1, "A"), (p2, h2, "B")):
            flags = ["LAST_MSG_IN_GROUP"] if i == 3 else ["MSG_IN_GROUP"]
            m.put(h, f"{tag}{i}", md={"msg_flags": flags}, options=["LOGICAL_ORDER", "NO_SYNCPOINT"])
    hc = c.open(queue, ["INPUT_SHARED", "BROWSE"])
    browsed = [c.get(hc, ["BROWSE_FIRST", "LOGICAL_ORDER"])]
    for _ in range(5):
        browsed.append(c.get(hc, ["BROWSE_NEXT", "LOGICAL_ORDER"]))
    assert [b["data"] for b in browsed] == ["A1", "A2", "A3", "B1", "B2", "B3"]
    got = [c.get(hc, ["LOGICAL_ORDER", "NO_SYNCPOINT"]) for _ in range(6)]
    assert [g["data"] for g in got] == ["A1", "A2", "A3", "B1", "B2", "B3"]
    assert [g["group_status"] for g in got[:3]] == ["MSG_IN_GROUP", "MSG_IN_GROUP", "LAST_MSG_IN_GROUP"]
    with mq_reason(2033):
        c.get(hc, ["LOGICAL_ORDER", "NO_SYNCPOINT"])


def test_all_msgs_available_waits_for_the_whole_group(connect, queue):
    m, c = connect("QM1"), connect("QM1")
    h = m.open(queue, ["OUTPUT"])
    hc = c.open(queue, ["INPUT_SHARED"])
    m.put(h, "G1", md={"msg_flags": ["MSG_IN_GROUP"]}, options=["LOGICAL_ORDER", "NO_SYNCPOINT"])
    m.put(h, "G2", md={"msg_flags": ["MSG_IN_GROUP"]}, options=["LOGICAL_ORDER", "NO_SYNCPOINT"])
    for opts in (["ALL_MSGS_AVAILABLE", "NO_SYNCPOINT"], ["ALL_MSGS_AVAILABLE", "LOGICAL_ORDER", "NO_SYNCPOINT"]):
        with mq_reason(2033):
            c.get(hc, opts)
    m.put(h, "G3", md={"msg_flags": ["LAST_MSG_IN_GROUP"]}, options=["LOGICAL_ORDER", "NO_SYNCPOINT"])
    got = [c.get(hc, ["ALL_MSGS_AVAILABLE", "LOGICAL_ORDER", "NO_SYNCPOINT"])["data"] for _ in range(3)]
    assert got == ["G1", "G2", "G3"]


def test_match_group_id_and_sequence_number(connect, queue):
    m = connect("QM1")
    h = m.open(queue, ["OUTPUT", "INPUT_SHARED"])
    a = put_group(m, h, "A", 3)
    put_group(m, h, "B", 2)
    gid = a[0]["group_id"]
    got = m.get(h, ["NO_SYNCPOINT"], match={"group_id": gid, "msg_seq_number": 2})
    assert got["data"] == "A2" and got["md"]["msg_seq_number"] == 2
    assert m.get(h, ["NO_SYNCPOINT"], match={"group_id": gid})["data"] == "A1"
    assert m.get(h, ["NO_SYNCPOINT"], match={"msg_seq_number": 2})["data"] == "B2"
    with mq_reason(2033):
        m.get(h, ["NO_SYNCPOINT"], match={"group_id": gid, "msg_seq_number": 2})


def test_group_in_a_unit_of_work_and_backout(connect, queue):
    m, c = connect("QM1"), connect("QM1")
    h = m.open(queue, ["OUTPUT"])
    hc = c.open(queue, ["INPUT_SHARED"])
    put_group(m, h, "U", 3, options=("SYNCPOINT",))
    with mq_reason(2033):  # nothing visible before the commit
        c.get(hc, ["NO_SYNCPOINT"])
    m.commit()
    got = [c.get(hc, ["LOGICAL_ORDER", "SYNCPOINT"])["data"] for _ in range(2)]
    assert got == ["U1", "U2"]
    with mq_reason(2245):  # the group's gets are all in the unit of work
        c.get(hc, ["LOGICAL_ORDER", "NO_SYNCPOINT"])
    c.backout()
    again = [c.get(hc, ["LOGICAL_ORDER", "SYNCPOINT"]) for _ in range(3)]
    assert [g["data"] for g in again] == ["U1", "U2", "U3"]
    assert again[0]["md"]["backout_count"] == 1
    c.commit()


def test_incomplete_group_reasons(connect, queue):
    m = connect("QM1")
    h = m.open(queue, ["OUTPUT", "INPUT_SHARED", "BROWSE"])
    m.put(h, "X1", md={"msg_flags": ["MSG_IN_GROUP"]}, options=["LOGICAL_ORDER", "NO_SYNCPOINT"])
    with mq_reason(2241):  # a message in no group while the group is in progress
        m.put(h, "no group", options=["LOGICAL_ORDER", "NO_SYNCPOINT"])
    with mq_reason(2241):  # a put without LOGICAL_ORDER while the group is in progress
        m.put(h, "X?", md={"msg_flags": ["MSG_IN_GROUP"]}, options=["NO_SYNCPOINT"])
    with mq_reason(2245):
        m.put(h, "X2", md={"msg_flags": ["LAST_MSG_IN_GROUP"]}, options=["LOGICAL_ORDER", "SYNCPOINT"])
    m.put(h, "X2", md={"msg_flags": ["LAST_MSG_IN_GROUP"]}, options=["LOGICAL_ORDER", "NO_SYNCPOINT"])
    assert m.get(h, ["LOGICAL_ORDER", "NO_SYNCPOINT"])["data"] == "X1"
    with mq_reason(2241):  # a get without LOGICAL_ORDER while the group is in progress
        m.get(h, ["NO_SYNCPOINT"])
    with mq_reason(2247):  # the next message of the group does not match
        m.get(h, ["LOGICAL_ORDER", "NO_SYNCPOINT"], match={"correl_id": "ab" * 24})
    assert m.get(h, ["LOGICAL_ORDER", "NO_SYNCPOINT"])["group_status"] == "LAST_MSG_IN_GROUP"
    m.put(h, "Y", options=["NO_SYNCPOINT"])
    m.get(h, ["BROWSE_FIRST", "LOGICAL_ORDER"])
    with mq_reason(2259):
        m.get(h, ["BROWSE_NEXT"])


def test_group_options_need_groupid_index(connect, group):
    q = shared_q(group)  # INDXTYPE(NONE)
    m = connect("QM1")
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    m.put(h, "x", options=["NO_SYNCPOINT"])
    for opt in ("LOGICAL_ORDER", "ALL_MSGS_AVAILABLE", "COMPLETE_MSG", "ALL_SEGMENTS_AVAILABLE"):
        with mq_reason(2394):
            m.get(h, [opt, "NO_SYNCPOINT"])
    assert m.get(h, ["NO_SYNCPOINT"])["group_status"] == "NOT_IN_GROUP"


def test_segments_as_zos(connect, group, queue):
    m = connect("QM1")
    h = m.open(queue, ["OUTPUT"])
    with mq_reason(2365):  # no segments on an INDXTYPE(GROUPID) queue
        m.put(h, "s1", md={"msg_flags": ["SEGMENT"]}, options=["NO_SYNCPOINT"])
    plain = shared_q(group)
    hp = m.open(plain, ["OUTPUT", "INPUT_SHARED"])
    m.put(hp, "seg1", md={"msg_flags": ["SEGMENT"]}, options=["LOGICAL_ORDER", "NO_SYNCPOINT"])
    last = m.put(hp, "seg2", md={"msg_flags": ["LAST_SEGMENT"]}, options=["LOGICAL_ORDER", "NO_SYNCPOINT"])["md"]
    assert last["offset"] == 4 and last["msg_seq_number"] == 1
    with mq_reason(2394):  # z/OS does not reassemble: COMPLETE_MSG needs a GROUPID queue
        m.get(hp, ["COMPLETE_MSG", "NO_SYNCPOINT"])
    first = m.get(hp, ["NO_SYNCPOINT"])
    assert first["data"] == "seg1" and first["segment_status"] == "NOT_A_SEGMENT"
    assert m.get(hp, ["NO_SYNCPOINT"], match={"offset": 4})["data"] == "seg2"
    # SEGMENTATION_ALLOWED is accepted and ignored on z/OS
    assert m.put(hp, "whole", md={"msg_flags": ["SEGMENTATION_ALLOWED"]}, options=["NO_SYNCPOINT"])
