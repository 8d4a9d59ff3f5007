"""Confirm-on-arrival (COA) and confirm-on-delivery (COD) reports and the report options
(app/core/reports.py), over real HTTP on a real group of two queue managers: at MQPUT and at
its commit, through intra-group queuing, at a destructive MQGET (never a browse) and at its
commit (never after a backout), in get-batch, with data, MsgId/CorrelId rules, to a ReplyToQ on
another queue manager, the 2061/2027 checks and the pymqi-shaped client.

Reports are sent by the queue manager's report task after the call: tests wait for them with a
get that waits (never a sleep). "No report was made" is shown by order: every report of one
queue manager to one reply queue is sent in the order it was made, so when a sentinel's report
made later arrives first, the one that should not exist was never made."""

from __future__ import annotations

import httpx
import pytest

import app.client as pymqi
from app.client import CMQC
from app.core.igq import IGQ_XMITQ
from tests.support.cluster import FAST
from tests.support.mq import MQ, mq_reason
from tests.support.mqsc import shared_q
from tests.support.pymqi_group import connections
from tests.support.waits import wait_until

ENV = {**FAST, "QSG_IGQ_SHORT_RETRY_S": "0.2", "QSG_IGQ_LONG_RETRY_S": "0.5"}
WAIT = ["WAIT", "NO_SYNCPOINT"]
BODY = "".join(chr(ord("a") + i % 26) for i in range(300))


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"], env=ENV)
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) RECOVER(YES)")
    g.mqsc_ok("QM1", f"DEFINE QLOCAL({IGQ_XMITQ}) QSGDISP(SHARED) CFSTRUCT(APPL1) USAGE(XMITQ)")
    g.mqsc_ok("QM1", "DEFINE QLOCAL(SENTINEL.Q) QSGDISP(SHARED) CFSTRUCT(APPL1) MAXDEPTH(999999)")
    for qm in ("QM1", "QM2"):
        g.mqsc_ok(qm, f"DEFINE QLOCAL(REPLY.{qm})\nDEFINE QLOCAL(LOCAL.{qm})\nALTER QMGR IGQ(ENABLED)")
    for qm in ("QM1", "QM2"):
        wait_until(lambda qm=qm: httpx.get(f"{g.url(qm)}/v1/qmgr").json()["IGQAGENT"] == "RUNNING",
                   what=f"{qm}'s IGQ agent running")
    return g


@pytest.fixture
def connect(group):
    yield from connections(group)


def next_report(m: MQ, hreply: str) -> dict:
    """The next report on the reply queue, waiting for the report task to send it."""
    got = m.get(hreply, WAIT, wait_ms=15_000)
    assert got["md"]["msg_type"] == "REPORT", got["md"]
    return got


def sentinel(m: MQ, reply_q: str) -> str:
    """Put a message asking for COA on SENTINEL.Q, a shared queue of the structure the tests'
    shared queues are in: its report is queued after every report made before it for the same
    queue manager in that structure, and sent after them. Returns its MsgId."""
    return m.put1("SENTINEL.Q", "sentinel", md={"report": ["COA"], "reply_to_q": reply_q})["md"]["msg_id"]


def test_coa_at_put_on_a_shared_and_a_private_queue(group):
    m = MQ(group.url("QM1"), "COAAPP")
    hreply = m.open("REPLY.QM1", ["INPUT_SHARED"])
    for queue in (shared_q(group), "LOCAL.QM1"):
        h = m.open(queue, ["OUTPUT"])
        sent = m.put(h, "hello", md={"report": ["COA"], "reply_to_q": "REPLY.QM1", "priority": 6,
                                     "persistence": "PERSISTENT" if queue != "LOCAL.QM1" else "NOT_PERSISTENT",
                                     "correl_id": "ab" * 24}, options=["NO_SYNCPOINT"])["md"]
        got = next_report(m, hreply)
        md = got["md"]
        assert (md["feedback"], md["correl_id"]) == (259, sent["msg_id"])  # COPY_MSG_ID_TO_CORREL_ID
        assert md["msg_id"] not in (sent["msg_id"], "0" * 48)  # NEW_MSG_ID
        assert (md["priority"], md["persistence"]) == (6, sent["persistence"])
        assert (md["format"].strip(), got["data_length"], md["expiry"], md["report"]) == ("", 0, -1, [])
        assert (md["put_appl_name"], md["put_qmgr"]) == ("QM1", "QM1")  # made by the queue manager
        # the message itself is where it was put
        assert m.get(m.open(queue, ["INPUT_SHARED"]))["data"] == "hello"


def test_coa_under_syncpoint_at_commit_and_never_after_backout(group):
    m = MQ(group.url("QM1"))
    hreply = m.open("REPLY.QM1", ["INPUT_SHARED"])
    h = m.open(shared_q(group), ["OUTPUT"])
    backed_out = m.put(h, "x", md={"report": ["COA"], "reply_to_q": "REPLY.QM1"}, options=["SYNCPOINT"])["md"]
    m.backout()
    committed = m.put(h, "y", md={"report": ["COA"], "reply_to_q": "REPLY.QM1"}, options=["SYNCPOINT"])["md"]
    with mq_reason(2033):
        m.get(hreply)  # nothing before the commit: no report is queued until then
    m.commit()
    assert next_report(m, hreply)["md"]["correl_id"] == committed["msg_id"]
    mark = sentinel(m, "REPLY.QM1")
    assert next_report(m, hreply)["md"]["correl_id"] == mark  # none for the backed-out put
    assert backed_out["msg_id"] != committed["msg_id"]


def test_cod_at_a_destructive_get_never_a_browse(group):
    m = MQ(group.url("QM1"))
    hreply = m.open("REPLY.QM1", ["INPUT_SHARED"])
    q = shared_q(group)
    sent = m.put(m.open(q, ["OUTPUT"]), "deliver me", md={"report": ["COD"], "reply_to_q": "REPLY.QM1"})["md"]
    browsed = m.get(m.open(q, ["BROWSE"]), ["BROWSE_FIRST"])
    assert browsed["data"] == "deliver me"
    # got on the other queue manager: the report goes to REPLY.QM1 at QM1 (its ReplyToQMgr)
    other = MQ(group.url("QM2"))
    assert other.get(other.open(q, ["INPUT_SHARED"]))["data"] == "deliver me"
    got = next_report(m, hreply)  # the first report is the get's: the browse made none
    assert (got["md"]["feedback"], got["md"]["correl_id"], got["data_length"]) == (260, sent["msg_id"], 0)
    assert got["md"]["put_qmgr"] == "QM1"  # sent by QM1, which took it from the shared structure


def test_reports_carry_the_original_identity_context(group):
    """IBM: a report the queue manager makes carries the user context of the message it reports
    on (UserIdentifier, AccountingToken, ApplIdentityData); its origin context is the QM's."""
    m = MQ(group.url("QM1"), "IDAPP")
    hreply = m.open("REPLY.QM1", ["INPUT_SHARED"])
    q = shared_q(group)
    identity = {"user_identifier": "ALICE", "appl_identity_data": "ORDER-42", "accounting_token": "ab" * 32}
    m.put1(q, "x", md={"report": ["COA", "COD"], "reply_to_q": "REPLY.QM1", **identity},
           options=["NO_SYNCPOINT", "SET_IDENTITY_CONTEXT"])
    other = MQ(group.url("QM2"))
    other.get(other.open(q, ["INPUT_SHARED"]))
    for feedback in (259, 260):
        r = next_report(m, hreply)["md"]
        assert r["feedback"] == feedback
        assert {k: r[k] for k in identity} == identity
        assert (r["put_appl_type"], r["put_appl_name"], r["put_qmgr"]) == (7, "QM1", "QM1")


def test_cod_under_syncpoint_only_when_the_unit_of_work_commits(group):
    m = MQ(group.url("QM1"))
    hreply = m.open("REPLY.QM1", ["INPUT_SHARED"])
    q = shared_q(group)
    sent = m.put(m.open(q, ["OUTPUT"]), "once", md={"report": ["COD"], "reply_to_q": "REPLY.QM1"})["md"]
    hin = m.open(q, ["INPUT_SHARED"])
    assert m.get(hin, ["SYNCPOINT"])["data"] == "once"
    m.backout()  # the message is back; no report
    mark = sentinel(m, "REPLY.QM1")
    assert next_report(m, hreply)["md"]["correl_id"] == mark
    again = m.get(hin, ["SYNCPOINT"])
    assert again["md"]["backout_count"] == 1
    with mq_reason(2033):
        m.get(hreply)  # not before the commit
    m.commit()
    got = next_report(m, hreply)
    assert (got["md"]["feedback"], got["md"]["correl_id"]) == (260, sent["msg_id"])
    mark = sentinel(m, "REPLY.QM1")
    assert next_report(m, hreply)["md"]["correl_id"] == mark  # exactly one


def test_cod_in_get_batch_one_report_per_message(group):
    m = MQ(group.url("QM1"))
    hreply = m.open("REPLY.QM1", ["INPUT_SHARED"])
    q = shared_q(group)
    h = m.open(q, ["OUTPUT"])
    ids = [m.put(h, f"m{i}", md={"report": ["COD"], "reply_to_q": "REPLY.QM1"})["md"]["msg_id"] for i in range(3)]
    got = m.call("POST", f"/v1/connections/{m.hconn}/objects/{m.open(q, ['INPUT_SHARED'])}/get-batch",
                 {"options": ["NO_SYNCPOINT"], "max_messages": 10})["messages"]
    assert [g["data"] for g in got] == ["m0", "m1", "m2"]
    reports = [next_report(m, hreply)["md"] for _ in ids]
    assert [r["correl_id"] for r in reports] == ids and {r["feedback"] for r in reports} == {260}


def test_with_data_and_full_data(group):
    m = MQ(group.url("QM1"))
    hreply = m.open("REPLY.QM1", ["INPUT_SHARED"])
    q = shared_q(group)
    h = m.open(q, ["OUTPUT"])
    m.put(h, BODY, md={"report": ["COA_WITH_DATA", "COD_WITH_FULL_DATA"], "reply_to_q": "REPLY.QM1"})
    coa = next_report(m, hreply)
    assert (coa["md"]["feedback"], coa["md"]["format"], coa["data"]) == (259, "MQSTR", BODY[:100])
    m.get(m.open(q, ["INPUT_SHARED"]))
    cod = next_report(m, hreply)
    assert (cod["md"]["feedback"], cod["data_length"], cod["data"]) == (260, 300, BODY)
    # two members of one family: the widest, as OR-ing IBM's constants gives
    sent = m.put(h, BODY, md={"report": ["COA", "COA_WITH_FULL_DATA", "COA_WITH_DATA"], "reply_to_q": "REPLY.QM1"})
    assert sent["md"]["report"] == ["COA_WITH_FULL_DATA"]
    assert next_report(m, hreply)["data"] == BODY


def test_msg_id_and_correl_id_rules_and_pass_discard_and_expiry(group):
    m = MQ(group.url("QM1"))
    hreply = m.open("REPLY.QM1", ["INPUT_SHARED"])
    h = m.open(shared_q(group), ["OUTPUT"])
    md = {"msg_id": "11" * 24, "correl_id": "22" * 24, "reply_to_q": "REPLY.QM1"}
    m.put(h, "p", md={**md, "report": ["COA", "PASS_MSG_ID", "PASS_CORREL_ID", "NEW_MSG_ID"]})
    r = next_report(m, hreply)["md"]
    assert (r["msg_id"], r["correl_id"]) == ("11" * 24, "22" * 24)
    m.put(h, "d", md={**md, "msg_id": "33" * 24, "report": ["COA", "COPY_MSG_ID_TO_CORREL_ID"]})
    r = next_report(m, hreply)["md"]
    assert r["correl_id"] == "33" * 24 and r["msg_id"] != "33" * 24
    m.put(h, "e", md={**md, "expiry": 36_000, "report": ["COA", "PASS_DISCARD_AND_EXPIRY", "DISCARD_MSG"]})
    r = next_report(m, hreply)["md"]
    assert 0 < r["expiry"] <= 36_000 and r["report"] == ["DISCARD_MSG"]
    m.put(h, "f", md={**md, "expiry": 36_000, "report": ["COA", "DISCARD_MSG"]})
    r = next_report(m, hreply)["md"]
    assert r["expiry"] == -1 and r["report"] == []  # not passed on without PASS_DISCARD_AND_EXPIRY


def test_pan_nan_activity_are_stored_and_make_no_report(group):
    m = MQ(group.url("QM1"))
    hreply = m.open("REPLY.QM1", ["INPUT_SHARED"])
    q = shared_q(group)
    m.put(m.open(q, ["OUTPUT"]), "x", md={"report": ["PAN", "NAN", "ACTIVITY"], "reply_to_q": "REPLY.QM1"})
    got = m.get(m.open(q, ["INPUT_SHARED"]))
    assert got["md"]["report"] == ["ACTIVITY", "NAN", "PAN"]
    mark = sentinel(m, "REPLY.QM1")
    assert next_report(m, hreply)["md"]["correl_id"] == mark


def test_report_options_errors(group):
    m = MQ(group.url("QM1"))
    h = m.open(shared_q(group), ["OUTPUT"])
    for report in (["COA", "BOGUS"], "COA", [256]):
        with mq_reason(2061):
            m.put(h, "x", md={"report": report, "reply_to_q": "REPLY.QM1"})
    with mq_reason(2027):  # a report is asked for but there is nowhere to send it
        m.put(h, "x", md={"report": ["COD"]})


def test_report_to_a_reply_queue_on_another_queue_manager(group):
    """Shared queue: the ReplyToQMgr takes the report from the shared structure. Private queue:
    its own queue manager sends it through the group."""
    m = MQ(group.url("QM1"))
    receiver = MQ(group.url("QM2"))
    hreply = receiver.open("REPLY.QM2", ["INPUT_SHARED"])
    md = {"report": ["COA"], "reply_to_q": "REPLY.QM2", "reply_to_qmgr": "QM2"}
    for queue in (shared_q(group), "LOCAL.QM1"):
        sent = m.put(m.open(queue, ["OUTPUT"]), "x", md=md)["md"]
        got = next_report(receiver, hreply)["md"]
        assert (got["feedback"], got["correl_id"]) == (259, sent["msg_id"])


def test_coa_through_intra_group_queuing(group):
    """COA is made where the message arrives - the destination QM, when its IGQ agent puts it -
    not for the transmission queue; it travels back through the group to the ReplyToQMgr."""
    m = MQ(group.url("QM1"))
    hreply = m.open("REPLY.QM1", ["INPUT_SHARED"])
    sent = m.put1("LOCAL.QM2", "far", qmgr="QM2",
                  md={"report": ["COA", "COD"], "reply_to_q": "REPLY.QM1"})["md"]
    got = next_report(m, hreply)["md"]
    # the first report is QM2's: none was made for the transmission queue on QM1
    assert (got["feedback"], got["correl_id"], got["put_qmgr"]) == (259, sent["msg_id"], "QM2")
    receiver = MQ(group.url("QM2"))
    assert receiver.get(receiver.open("LOCAL.QM2", ["INPUT_SHARED"]), WAIT, wait_ms=10_000)["data"] == "far"
    cod = next_report(m, hreply)["md"]  # the agent's get from the transmission queue made none
    assert (cod["feedback"], cod["correl_id"], cod["put_qmgr"]) == (260, sent["msg_id"], "QM2")


def test_pymqi_client_sets_coa_and_cod(group, connect):
    q = shared_q(group)
    qmgr = connect("QM1")
    md = pymqi.MD(Report=CMQC.MQRO_COA | CMQC.MQRO_COD_WITH_DATA, ReplyToQ=b"REPLY.QM1")
    pymqi.Queue(qmgr, q).put(b"pymqi " * 40, md, pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
    wait = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT, WaitInterval=15_000)
    replies = pymqi.Queue(qmgr, "REPLY.QM1", CMQC.MQOO_INPUT_SHARED)
    coa_md = pymqi.MD()
    assert replies.get(None, coa_md, wait) == b""
    assert (coa_md.MsgType, coa_md.Feedback, coa_md.CorrelId) == (CMQC.MQMT_REPORT, CMQC.MQFB_COA, md.MsgId)
    got_md = pymqi.MD()
    pymqi.Queue(qmgr, q, CMQC.MQOO_INPUT_SHARED).get(None, got_md, pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT))
    assert got_md.Report == CMQC.MQRO_COA | CMQC.MQRO_COD_WITH_DATA
    cod_md = pymqi.MD()
    assert replies.get(None, cod_md, wait) == (b"pymqi " * 40)[:100]
    assert cod_md.Feedback == CMQC.MQFB_COD
