"""Message context and alternate user authority (docs/api.md §6.1) over real HTTP, as IBM MQ defines
them ("Message context", "Controlling context information", MQOO_/MQPMO_ context options,
MQOO_ALTERNATE_USER_AUTHORITY): what a getter sees after each put context option, passing the
context of a request to its reply or forward, the reasons 2046 and 2093-2098, context and
alternate user security (2035) with authentication on, and the pymqi-shaped client doing the
same (including the shapes of pymqi's and ibmmq's alternate_user_id / set_identity samples)."""

from __future__ import annotations

import getpass
import os
import subprocess
import sys
import textwrap

import httpx
import pytest

import app.client as pymqi
from app.client import CMQC
from app.core.userid import mqmd_user_id
from tests.support.mq import MQ, MQFailed, connections, mq_reason
from tests.support.mqsc import shared_q
from tests.support.pymqi_group import conn_name, reason_of
from tests.support.pymqi_group import connections as pymqi_connections
from tests.support.security import ADMIN, ALICE, admin_shared_q, assert_2035, mqsc_ok, qsg_cli

TOKEN = "ab" * 32  # an AccountingToken: 32 bytes
IDENTITY = {"user_identifier": "payroll", "accounting_token": TOKEN, "appl_identity_data": "run 42"}
ORIGIN = {"put_appl_type": 28, "put_appl_name": "PAYROLL.BATCH", "put_date_time": "2024-01-02T03:04:05.060Z",
          "appl_origin_data": "ORIG"}
CONTEXT = {**IDENTITY, **ORIGIN}


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])  # authentication off: everything is allowed, as MQ with security off
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    return g


@pytest.fixture
def connect(group):
    yield from connections(group, "CTXTEST")


def context_of(md: dict) -> dict:
    return {k: md[k] for k in CONTEXT}


def put_then_get(putter: MQ, getter: MQ, q: str, options: list[str], md: dict | None = None,
                 open_options: tuple[str, ...] = ()) -> dict:
    """Put one message with ``options`` on a handle opened with OUTPUT + ``open_options``; the
    MQMD another connection's MQGET sees."""
    out = putter.open(q, ["OUTPUT", *open_options])
    putter.put(out, "m", md, ["NO_SYNCPOINT", *options])
    inq = getter.open(q, ["INPUT_SHARED"])
    got = getter.get(inq)["md"]
    putter.close(out)
    getter.close(inq)
    return got


# ---- each put context option, as the getter sees it -------------------------------------------


def test_default_context_is_the_queue_managers_whatever_the_md_says(group, connect):
    q = shared_q(group)
    for options in ([], ["DEFAULT_CONTEXT"]):
        md = put_then_get(connect("QM1", "SENDER"), connect("QM2"), q, options, dict(CONTEXT))
        assert md["put_appl_name"] == "SENDER" and md["put_appl_type"] == 6  # MQAT_UNIX
        # no authentication here: the user the QM's process runs as (IBM never leaves it blank)
        assert md["user_identifier"] == mqmd_user_id(getpass.getuser()) and md["accounting_token"] == "0" * 64
        assert md["appl_identity_data"] == md["appl_origin_data"] == ""
        assert md["put_date_time"] != ORIGIN["put_date_time"] and md["put_qmgr"] == "QM1"


def test_set_identity_context_takes_the_identity_and_generates_the_origin(group, connect):
    q = shared_q(group)
    md = put_then_get(connect("QM1", "SENDER"), connect("QM2"), q, ["SET_IDENTITY_CONTEXT"], dict(CONTEXT),
                      ("SET_IDENTITY_CONTEXT",))
    assert {k: md[k] for k in IDENTITY} == IDENTITY
    assert (md["put_appl_name"], md["put_appl_type"], md["appl_origin_data"]) == ("SENDER", 6, "")
    assert md["put_date_time"] != ORIGIN["put_date_time"]


def test_set_all_context_takes_every_context_field(group, connect):
    q = shared_q(group)
    md = put_then_get(connect("QM1", "SENDER"), connect("QM2"), q, ["SET_ALL_CONTEXT"], dict(CONTEXT),
                      ("SET_ALL_CONTEXT",))
    assert context_of(md) == CONTEXT and md["put_qmgr"] == "QM1"  # PutQMgr is not context


def test_no_context_blanks_every_context_field(group, connect):
    q = shared_q(group)
    md = put_then_get(connect("QM1", "SENDER"), connect("QM2"), q, ["NO_CONTEXT"], dict(CONTEXT))
    assert context_of(md) == {"user_identifier": "", "accounting_token": "0" * 64, "appl_identity_data": "",
                              "put_appl_type": 0, "put_appl_name": "", "put_date_time": "", "appl_origin_data": ""}


def test_put1_and_put_batch_take_the_context_options_too(group, connect):
    q = shared_q(group)
    m = connect("QM1", "SENDER")
    m.put1(q, "one", dict(CONTEXT), ["NO_SYNCPOINT", "SET_ALL_CONTEXT"])  # MQPUT1 implies the open option
    out = m.open(q, ["OUTPUT", "SET_IDENTITY_CONTEXT"])
    r = m.call("POST", f"/v1/connections/{m.hconn}/objects/{out}/put-batch",
               {"options": ["NO_SYNCPOINT", "SET_IDENTITY_CONTEXT"],
                "messages": [{"data": "two", "md": dict(IDENTITY)}, {"data": "three"}]})
    assert r["count"] == 2
    inq = m.open(q, ["INPUT_SHARED"])
    assert context_of(m.get(inq)["md"]) == CONTEXT
    two, three = m.get(inq)["md"], m.get(inq)["md"]
    assert {k: two[k] for k in IDENTITY} == IDENTITY and two["put_appl_name"] == "SENDER"
    # the second message's MQMD named no identity: SET_IDENTITY_CONTEXT sets it blank
    assert (three["user_identifier"], three["appl_identity_data"]) == ("", "")


# ---- passing context: request, reply and forwarding ----------------------------------------------


def test_pass_all_context_forwards_the_original_context(group, connect):
    """A forwarding server: it gets with SAVE_ALL_CONTEXT and puts with PASS_ALL_CONTEXT, so the
    final receiver sees the original sender's context, not the server's."""
    inbound, outbound = shared_q(group), shared_q(group)
    sender, server, receiver = connect("QM1", "SENDER"), connect("QM2", "FORWARDER"), connect("QM1")
    sender.put1(inbound, "request", dict(CONTEXT), ["NO_SYNCPOINT", "SET_ALL_CONTEXT"])
    src = server.open(inbound, ["INPUT_SHARED", "SAVE_ALL_CONTEXT"])
    dst = server.open(outbound, ["OUTPUT", "PASS_ALL_CONTEXT"])
    server.get(src)
    server.call("POST", f"/v1/connections/{server.hconn}/objects/{dst}/put",
                {"data": "forwarded", "options": ["NO_SYNCPOINT", "PASS_ALL_CONTEXT"], "context": src})
    got = receiver.get(receiver.open(outbound, ["INPUT_SHARED"]))
    assert got["data"] == "forwarded" and context_of(got["md"]) == CONTEXT
    assert got["md"]["put_qmgr"] == "QM2"


def test_pass_identity_context_keeps_the_identity_and_makes_a_new_origin(group, connect):
    requests, replies = shared_q(group), shared_q(group)
    client, server = connect("QM1", "CLIENT"), connect("QM2", "SERVER")
    client.put1(requests, "request", {**IDENTITY, "msg_type": "REQUEST", "reply_to_q": replies},
                ["NO_SYNCPOINT", "SET_IDENTITY_CONTEXT"])
    src = server.open(requests, ["INPUT_AS_Q_DEF", "SAVE_ALL_CONTEXT"])
    request = server.get(src)["md"]
    # a reply by MQPUT1 passing the request's identity (MQPUT1 implies PASS_IDENTITY_CONTEXT)
    server.call("POST", f"/v1/connections/{server.hconn}/put1",
                {"object_name": request["reply_to_q"], "data": "reply", "context": src,
                 "md": {"msg_type": "REPLY", "correl_id": request["msg_id"]},
                 "options": ["NO_SYNCPOINT", "PASS_IDENTITY_CONTEXT"]})
    reply = client.get(client.open(replies, ["INPUT_SHARED"]))["md"]
    assert {k: reply[k] for k in IDENTITY} == IDENTITY
    assert (reply["put_appl_name"], reply["appl_origin_data"], reply["correl_id"]) == ("SERVER", "", request["msg_id"])


def test_context_handle_and_availability_errors(group, connect):
    q = shared_q(group)
    m = connect()
    out = m.open(q, ["OUTPUT", "PASS_ALL_CONTEXT"])
    plain_in = m.open(q, ["INPUT_SHARED"])
    saving = m.open(q, ["INPUT_SHARED", "BROWSE", "SAVE_ALL_CONTEXT"])

    def pass_from(context):
        return m.call("POST", f"/v1/connections/{m.hconn}/objects/{out}/put",
                      {"data": "x", "options": ["NO_SYNCPOINT", "PASS_ALL_CONTEXT"], "context": context})

    for handle in (None, "999", plain_in):  # none, no such handle, not opened with SAVE_ALL_CONTEXT
        with mq_reason(2097, 400):
            pass_from(handle)
    with mq_reason(2098, 400):  # nothing got on it yet
        pass_from(saving)
    m.put1(q, "first", dict(CONTEXT), ["NO_SYNCPOINT", "SET_ALL_CONTEXT"])
    m.get(saving)
    pass_from(saving)  # its context is available now
    m.get(saving, ["BROWSE_FIRST"])
    with mq_reason(2098):  # the last get was a browse: no context (IBM MQRC_CONTEXT_NOT_AVAILABLE)
        pass_from(saving)
    other = connect()  # a handle of another connection is no handle of this one
    with mq_reason(2097):
        other.call("POST", f"/v1/connections/{other.hconn}/put1",
                   {"object_name": q, "data": "x", "options": ["PASS_ALL_CONTEXT"], "context": saving})
    with mq_reason(2097):  # malformed: a number where a handle is expected
        pass_from(7)


def test_puts_need_the_matching_open_option(group, connect):
    q = shared_q(group)
    m = connect()
    plain = m.open(q, ["OUTPUT"])
    for option, reason in (("PASS_ALL_CONTEXT", 2093), ("PASS_IDENTITY_CONTEXT", 2094),
                           ("SET_ALL_CONTEXT", 2095), ("SET_IDENTITY_CONTEXT", 2096)):
        with mq_reason(reason, 400):
            m.put(plain, "x", None, ["NO_SYNCPOINT", option])
    # IBM's implications: SET_IDENTITY implies PASS_IDENTITY only, SET_ALL everything
    set_id = m.open(q, ["OUTPUT", "SET_IDENTITY_CONTEXT"])
    with mq_reason(2093):
        m.put(set_id, "x", None, ["NO_SYNCPOINT", "PASS_ALL_CONTEXT"])
    with mq_reason(2095):
        m.put(set_id, "x", None, ["NO_SYNCPOINT", "SET_ALL_CONTEXT"])
    set_all = m.open(q, ["OUTPUT", "SET_ALL_CONTEXT"])
    m.put(set_all, "x", dict(IDENTITY), ["NO_SYNCPOINT", "SET_IDENTITY_CONTEXT"])
    with mq_reason(2097):  # allowed by the open: what fails now is the missing context handle
        m.put(set_all, "x", None, ["NO_SYNCPOINT", "PASS_IDENTITY_CONTEXT"])
    # NO_CONTEXT and DEFAULT_CONTEXT need no open option
    m.put(plain, "x", None, ["NO_SYNCPOINT", "NO_CONTEXT"])
    m.put(plain, "x", None, ["NO_SYNCPOINT", "DEFAULT_CONTEXT"])
    assert len(m.drain(m.open(q, ["INPUT_SHARED"]))) == 3


def test_option_combinations_are_2046(group, connect):
    q = shared_q(group)
    m = connect()
    for options in (["INPUT_SHARED", "SET_ALL_CONTEXT"], ["BROWSE", "PASS_IDENTITY_CONTEXT"],
                    ["OUTPUT", "SAVE_ALL_CONTEXT"], ["SAVE_ALL_CONTEXT"], ["ALTERNATE_USER_AUTHORITY"],
                    ["OUTPUT", "BIND_ON_OPEN", "BIND_NOT_FIXED"], ["INPUT_SHARED", "READ_AHEAD", "NO_READ_AHEAD"]):
        with mq_reason(2046, 400):
            m.open(q, options)
    out = m.open(q, ["OUTPUT", "SET_ALL_CONTEXT", "FAIL_IF_QUIESCING", "BIND_AS_Q_DEF", "NO_READ_AHEAD"])
    for options in (["NO_CONTEXT", "DEFAULT_CONTEXT"], ["SET_ALL_CONTEXT", "PASS_ALL_CONTEXT"],
                    ["ALTERNATE_USER_AUTHORITY"]):  # the last is MQPUT1's only
        with mq_reason(2046, 400):
            m.put(out, "x", None, options)
    with mq_reason(2046, 400):
        m.call("POST", f"/v1/connections/{m.hconn}/objects/{out}/put-batch",
               {"options": ["ALTERNATE_USER_AUTHORITY"], "messages": [{"data": "x"}]})
    with mq_reason(2026, 400):  # a context field checked only when it is taken: SET_ALL takes it
        m.put(out, "x", {"accounting_token": "zz"}, ["SET_ALL_CONTEXT"])
    m.put(out, "x", {"accounting_token": "zz"}, ["NO_SYNCPOINT"])  # ignored without a SET option, as MQ does
    with mq_reason(2044, 400):  # MQOD AlternateUserId is 12 characters at most
        m.call("POST", f"/v1/connections/{m.hconn}/objects",
               {"object_name": q, "options": ["OUTPUT"], "alternate_user_id": "x" * 13})


def test_alternate_user_with_security_off_names_the_user_identifier(group, connect):
    """With security off nothing is checked; on z/OS the UserIdentifier of a default-context put
    on a handle opened with an alternate user id is that id (IBM "UserIdentifier (MQCHAR12)")."""
    q = shared_q(group)
    m = connect()
    out = m.call("POST", f"/v1/connections/{m.hconn}/objects",
                 {"object_name": q, "options": ["OUTPUT", "ALTERNATE_USER_AUTHORITY"],
                  "alternate_user_id": "payapp"})["hobj"]
    m.put(out, "x")
    ignored = m.call("POST", f"/v1/connections/{m.hconn}/objects",  # the id is ignored without the option
                     {"object_name": q, "options": ["OUTPUT"], "alternate_user_id": "nobody"})["hobj"]
    m.put(ignored, "y")
    m.call("POST", f"/v1/connections/{m.hconn}/put1",
           {"object_name": q, "data": "z", "options": ["NO_SYNCPOINT", "ALTERNATE_USER_AUTHORITY"],
            "alternate_user_id": "put1app"})
    inq = m.open(q, ["INPUT_SHARED"])
    own = mqmd_user_id(getpass.getuser())  # the connection's own user: the QM process's
    assert [m.get(inq)["md"]["user_identifier"] for _ in range(3)] == ["payapp", own, "put1app"]


# ---- security on: context and alternate user authority (2035) -------------------------------------


@pytest.fixture(scope="module")
def secured(make_cluster):
    g = make_cluster(["QM1"], env={"QSG_AUTH": "on"})
    qsg_cli(g, "user", "add", "admin", "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    qsg_cli(g, "user", "add", "alice", "--group", "clerks", "--password-stdin", stdin=ALICE[1] + "\n")
    qsg_cli(g, "user", "add", "payapp", "--no-password")
    mqsc_ok(g, "QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\n"
                      "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(CONNECT)")
    return g


def opened(g, m: MQ, q: str, options: list[str], **extra) -> httpx.Response:
    return m.http.post(f"/v1/connections/{m.hconn}/objects", json={"object_name": q, "options": options, **extra})


def test_setting_and_passing_context_needs_the_context_authority(secured):
    q = admin_shared_q(secured, prefix="CTX")
    mqsc_ok(secured, "QM1", f"SET AUTHREC PROFILE('{q}') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(PUT,GET)")
    alice = MQ(secured.url("QM1"), "ALICEAPP", auth=ALICE)
    for options in (["OUTPUT", "PASS_IDENTITY_CONTEXT"], ["OUTPUT", "SET_ALL_CONTEXT"]):
        assert_2035(opened(secured, alice, q, options))
    with mq_reason(2035, 403):  # MQPUT1 checks as the MQOPEN its options imply
        alice.put1(q, "x", dict(IDENTITY), ["NO_SYNCPOINT", "SET_IDENTITY_CONTEXT"])
    # saving context and NO_CONTEXT / DEFAULT_CONTEXT need no context authority
    assert opened(secured, alice, q, ["INPUT_SHARED", "SAVE_ALL_CONTEXT"]).status_code == 201
    alice.put1(q, "x", None, ["NO_SYNCPOINT", "NO_CONTEXT"])

    # PASSALL grants the passes (the RACF READ of hlq.CONTEXT.queuename), not the sets
    mqsc_ok(secured, "QM1", f"SET AUTHREC PROFILE('{q}') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(PASSALL)")
    assert opened(secured, alice, q, ["OUTPUT", "PASS_ALL_CONTEXT"]).status_code == 201
    assert_2035(opened(secured, alice, q, ["OUTPUT", "SET_IDENTITY_CONTEXT"]))
    # SETID (UPDATE) grants set identity and the passes, not set all (CONTROL)
    mqsc_ok(secured, "QM1", f"SET AUTHREC PROFILE('{q}') OBJTYPE(QUEUE) GROUP('clerks') AUTHADD(SETID)")
    alice.put1(q, "x", dict(IDENTITY), ["NO_SYNCPOINT", "SET_IDENTITY_CONTEXT"])
    assert_2035(opened(secured, alice, q, ["OUTPUT", "SET_ALL_CONTEXT"]))
    # the queue manager's SETALL (CTX: hlq.CONTEXT.**) grants all on every queue
    mqsc_ok(secured, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(SETALL)")
    alice.put1(q, "x", dict(CONTEXT), ["NO_SYNCPOINT", "SET_ALL_CONTEXT"])
    inq = alice.open(q, ["INPUT_SHARED"])
    got = [alice.get(inq)["md"] for _ in range(3)]
    assert got[0]["user_identifier"] == "" and got[0]["put_appl_name"] == ""  # NO_CONTEXT
    assert got[1]["user_identifier"] == "payroll" and got[1]["put_appl_name"] == "alice"  # SET_IDENTITY
    assert context_of(got[2]) == CONTEXT
    alice.disconnect()


def test_alternate_user_authority(secured):
    q = admin_shared_q(secured, prefix="ALT")
    qsg_cli(secured, "user", "add", "carol", "--password-stdin", stdin="carol-secret\n")
    mqsc_ok(secured, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('carol') AUTHADD(CONNECT)\n"
                            f"SET AUTHREC PROFILE('{q}') OBJTYPE(QUEUE) PRINCIPAL('carol') AUTHADD(GET)\n"
                            f"SET AUTHREC PROFILE('{q}') OBJTYPE(QUEUE) PRINCIPAL('payapp') AUTHADD(PUT)")
    carol = MQ(secured.url("QM1"), "CAROLAPP", auth=("carol", "carol-secret"))
    alt = {"alternate_user_id": "payapp"}
    assert_2035(opened(secured, carol, q, ["OUTPUT"]))  # carol may not put herself
    # she may not name another user without ALTUSR
    assert_2035(opened(secured, carol, q, ["OUTPUT", "ALTERNATE_USER_AUTHORITY"], **alt))
    mqsc_ok(secured, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('carol') AUTHADD(ALTUSR)")
    r = opened(secured, carol, q, ["OUTPUT", "ALTERNATE_USER_AUTHORITY"], **alt)
    assert r.status_code == 201, r.text  # checked for payapp, who may put
    carol.put(r.json()["hobj"], "as payapp")
    # the alternate user's rights count, not hers: payapp may not get
    assert_2035(opened(secured, carol, q, ["INPUT_SHARED", "ALTERNATE_USER_AUTHORITY"], **alt))
    assert_2035(opened(secured, carol, q, ["OUTPUT", "ALTERNATE_USER_AUTHORITY"], alternate_user_id="nosuchuser"))
    assert_2035(opened(secured, carol, q, ["OUTPUT", "ALTERNATE_USER_AUTHORITY"]))  # blank: not with security on
    # context checks stay the caller's: payapp's SETALL does not let carol set context
    mqsc_ok(secured, "QM1", f"SET AUTHREC PROFILE('{q}') OBJTYPE(QUEUE) PRINCIPAL('payapp') AUTHADD(SETALL)")
    assert_2035(opened(secured, carol, q, ["OUTPUT", "SET_ALL_CONTEXT", "ALTERNATE_USER_AUTHORITY"], **alt))
    # MQPUT1 with MQPMO_ALTERNATE_USER_AUTHORITY
    put1 = {"object_name": q, "data": "put1 as payapp", "options": ["NO_SYNCPOINT", "ALTERNATE_USER_AUTHORITY"]}
    assert carol.http.post(f"/v1/connections/{carol.hconn}/put1", json={**put1, **alt}).status_code == 201
    assert_2035(carol.http.post(f"/v1/connections/{carol.hconn}/put1", json={**put1, "alternate_user_id": "carol"}))
    inq = carol.open(q, ["INPUT_SHARED"])
    got = [carol.get(inq) for _ in range(2)]
    assert [(g["data"], g["md"]["user_identifier"]) for g in got] == [("as payapp", "payapp"),
                                                                       ("put1 as payapp", "payapp")]
    carol.disconnect()


# ---- the pymqi-shaped client ---------------------------------------------------------------------


@pytest.fixture
def pyconnect(group):
    yield from pymqi_connections(group)


def test_pymqi_set_pass_and_no_context(group, pyconnect):
    inbound, outbound = shared_q(group), shared_q(group)
    qmgr = pyconnect("QM1")
    # ibmmq's set_identity sample: MQOO_SET_IDENTITY_CONTEXT and MQPMO_SET_IDENTITY_CONTEXT
    sender = pymqi.Queue(qmgr, pymqi.OD(ObjectName=inbound), CMQC.MQOO_OUTPUT | CMQC.MQOO_SET_ALL_CONTEXT)
    md = pymqi.MD(UserIdentifier=b"payroll", ApplIdentityData=b"MyApplId", AccountingToken=bytes.fromhex(TOKEN),
                  PutApplName=b"PAYROLL.BATCH", PutApplType=28, PutDate=b"20240102", PutTime=b"03040506",
                  ApplOriginData=b"ORIG")
    sender.put("request", md, pymqi.PMO(Options=CMQC.MQPMO_SET_ALL_CONTEXT | CMQC.MQPMO_NO_SYNCPOINT))
    sender.put("plain", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_NO_CONTEXT | CMQC.MQPMO_NO_SYNCPOINT))
    sender.close()

    server = pyconnect("QM2")
    src = pymqi.Queue(server, inbound, CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_SAVE_ALL_CONTEXT)
    dst = pymqi.Queue(server, outbound, CMQC.MQOO_OUTPUT | CMQC.MQOO_PASS_ALL_CONTEXT)
    assert src.get() == b"request"
    dst.put("forwarded", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_PASS_ALL_CONTEXT | CMQC.MQPMO_NO_SYNCPOINT,
                                                Context=src))
    assert src.get() == b"plain"
    dst.put("forwarded plain", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_PASS_ALL_CONTEXT | CMQC.MQPMO_NO_SYNCPOINT,
                                                      Context=src.get_handle()))
    assert reason_of(lambda: dst.put("x", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_PASS_ALL_CONTEXT))).reason \
        == CMQC.MQRC_CONTEXT_HANDLE_ERROR  # PMO.Context left at MQHO_NONE
    plain_out = pymqi.Queue(server, outbound, CMQC.MQOO_OUTPUT)
    assert reason_of(lambda: plain_out.put("x", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_SET_ALL_CONTEXT))).reason \
        == CMQC.MQRC_NOT_OPEN_FOR_SET_ALL

    reader = pymqi.Queue(qmgr, outbound)
    got = pymqi.MD()
    assert reader.get(None, got) == b"forwarded"
    assert (got.UserIdentifier.strip(), got.ApplIdentityData.strip(), got.PutApplName.strip()) == \
        (b"payroll", b"MyApplId", b"PAYROLL.BATCH")
    assert (got.PutApplType, got.PutDate, got.PutTime[:6], got.AccountingToken) == \
        (28, b"20240102", b"030405", bytes.fromhex(TOKEN))
    got = pymqi.MD()
    assert reader.get(None, got) == b"forwarded plain"
    assert (got.UserIdentifier.strip(), got.PutApplName.strip(), got.PutDate.strip()) == (b"", b"", b"")


def run_sample(group, body: str) -> subprocess.CompletedProcess:
    """A program written as pymqi/ibmmq samples are (``import qsg_pymqi as pymqi``), run as its own
    process against QM1."""
    program = textwrap.dedent(f"""
        import qsg_pymqi as pymqi
        qmgr = pymqi.connect("QM1", "DEV.APP.SVRCONN", "{conn_name(group)}")
    """) + textwrap.dedent(body)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60)


def test_alternate_user_id_and_set_identity_samples_run(group, pyconnect):
    q = shared_q(group)
    out = run_sample(group, f"""
        od = pymqi.OD()
        od.ObjectName = "{q}"
        od.AlternateUserId = "myuser"
        queue = pymqi.Queue(qmgr)
        queue.open(od, pymqi.CMQC.MQOO_OUTPUT | pymqi.CMQC.MQOO_ALTERNATE_USER_AUTHORITY)
        queue.put("Hello from Python!")
        queue.close()
        queue = pymqi.Queue(qmgr)
        queue.open(pymqi.OD(ObjectName="{q}"), pymqi.CMQC.MQOO_OUTPUT | pymqi.CMQC.MQOO_SET_IDENTITY_CONTEXT)
        md = pymqi.MD()
        md.ApplIdentityData = "MyApplId"
        pmo = pymqi.PMO()
        pmo.Options = pymqi.CMQC.MQPMO_SET_IDENTITY_CONTEXT
        queue.put("with identity", md, pmo)
        queue.close()
        qmgr.disconnect()
        print("Done.")
    """)
    assert out.returncode == 0 and out.stdout.strip() == "Done.", out.stderr
    reader = pymqi.Queue(pyconnect("QM2"), q)
    md = pymqi.MD()
    assert reader.get(None, md) == b"Hello from Python!" and md.UserIdentifier.strip() == b"myuser"
    md = pymqi.MD()
    assert reader.get(None, md) == b"with identity" and md.ApplIdentityData.strip() == b"MyApplId"


def test_pymqi_alternate_user_refused_and_allowed_with_security_on(secured):
    q = admin_shared_q(secured, prefix="PYALT")
    qsg_cli(secured, "user", "add", "bob", "--password-stdin", stdin="bob-secret\n")
    mqsc_ok(secured, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('bob') AUTHADD(CONNECT)\n"
                            f"SET AUTHREC PROFILE('{q}') OBJTYPE(QUEUE) PRINCIPAL('payapp') AUTHADD(PUT)")
    qmgr = pymqi.connect("QM1", "DEV.APP.SVRCONN", conn_name(secured), "bob", "bob-secret")
    try:
        od = pymqi.OD(ObjectName=q, AlternateUserId=b"payapp")
        options = CMQC.MQOO_OUTPUT | CMQC.MQOO_ALTERNATE_USER_AUTHORITY
        assert reason_of(lambda: pymqi.Queue(qmgr, od, options)).reason == CMQC.MQRC_NOT_AUTHORIZED
        assert reason_of(lambda: qmgr.put1(od, "x", pymqi.MD(), pymqi.PMO(
            Options=CMQC.MQPMO_ALTERNATE_USER_AUTHORITY))).reason == CMQC.MQRC_NOT_AUTHORIZED
        assert reason_of(lambda: pymqi.Queue(qmgr, q, CMQC.MQOO_OUTPUT | CMQC.MQOO_SET_IDENTITY_CONTEXT)).reason \
            == CMQC.MQRC_NOT_AUTHORIZED
        mqsc_ok(secured, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('bob') AUTHADD(ALTUSR)")
        queue = pymqi.Queue(qmgr, od, options)
        md = pymqi.MD()
        queue.put("as payapp", md)
        assert md.UserIdentifier.strip() == b"payapp"
        queue.close()
        qmgr.put1(od, "put1 as payapp", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_ALTERNATE_USER_AUTHORITY))
    finally:
        qmgr.disconnect()
    admin = MQ(secured.url("QM1"), auth=ADMIN)
    inq = admin.open(q, ["INPUT_SHARED"])
    assert [(g["data"], g["md"]["user_identifier"]) for g in (admin.get(inq), admin.get(inq))] == \
        [("as payapp", "payapp"), ("put1 as payapp", "payapp")]
    admin.disconnect()


def test_security_off_allows_every_context_and_alternate_option(group, connect):
    """Authentication off (the test group): nothing is checked, as IBM MQ with security off."""
    q = shared_q(group)
    m = connect()
    for options in (["OUTPUT", "SET_ALL_CONTEXT", "ALTERNATE_USER_AUTHORITY"], ["OUTPUT", "PASS_ALL_CONTEXT"],
                    ["INPUT_EXCLUSIVE", "SAVE_ALL_CONTEXT", "ALTERNATE_USER_AUTHORITY"]):
        r = opened(group, m, q, options, alternate_user_id="anyone")
        assert r.status_code == 201, r.text
        m.close(r.json()["hobj"])
    with pytest.raises(MQFailed):  # but the rules of the options still hold
        m.open(q, ["OUTPUT", "SAVE_ALL_CONTEXT"])
