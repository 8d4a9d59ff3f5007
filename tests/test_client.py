"""The pymqi-shaped Python client (app.client) against real queue managers (QM1, QM2 sharing
queues): connect, MQMD round trip, wait, syncpoint, match options, browse, truncation, MQINQ /
MQSET, MQPUT1, error reasons, the asyncio API; and, on a mock transport, which calls are
retried (MQCONN) and which never are (MQPUT, MQGET)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

import app.client as pymqi
from app.client import CMQC, aio
from app.client.core import url_of
from tests.support.mqsc import shared_q
from tests.support.pymqi_group import conn_name, connections, reason_of


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    return g


@pytest.fixture
def connect(group):
    yield from connections(group)


NO_SYNC_GET = CMQC.MQGMO_NO_SYNCPOINT


# ---- connection -------------------------------------------------------------------------------


def test_connect_names_and_disconnect(group, connect):
    qmgr = connect("QM1")
    assert qmgr.is_connected and qmgr.qmgr_name == "QM1" and qmgr.get_handle().startswith("QM1-")
    assert qmgr.inquire(CMQC.MQCA_Q_MGR_NAME).strip() == b"QM1"
    assert qmgr.inquire(CMQC.MQCA_QSG_NAME) == b"QSG1"
    group_attach = pymqi.connect("QSG1", None, conn_name(group, "QM2"))  # the QSG name: any member
    assert group_attach.qmgr_name == "QM2"
    group_attach.disconnect()
    err = reason_of(lambda: pymqi.connect("QM2", None, conn_name(group, "QM1")))
    assert (err.comp, err.reason) == (CMQC.MQCC_FAILED, CMQC.MQRC_Q_MGR_NAME_ERROR)
    qmgr.disconnect()
    assert not qmgr.is_connected
    assert reason_of(qmgr.commit).reason == CMQC.MQRC_HCONN_ERROR


def test_connection_names_and_mqserver(monkeypatch):
    assert url_of("127.0.0.1(9442)") == "http://127.0.0.1:9442"
    assert url_of(b"mq.example.com(1414),backup(1414)") == "http://mq.example.com:1414"
    assert url_of("https://qm1.example.com:9443/") == "https://qm1.example.com:9443"
    monkeypatch.setenv("MQSERVER", "DEV.APP.SVRCONN/TCP/10.0.0.5(9441)")
    assert url_of(None) == "http://10.0.0.5:9441"


# ---- messages ---------------------------------------------------------------------------------


def test_put_and_get_round_trip_the_message_descriptor(group, connect):
    q = shared_q(group)
    qmgr = connect("QM1")
    out = pymqi.Queue(qmgr, q, CMQC.MQOO_OUTPUT)
    md = pymqi.MD(Format=CMQC.MQFMT_STRING, Priority=7, Persistence=CMQC.MQPER_PERSISTENT, Expiry=6000,
                  CorrelId=b"ORDER-0042".ljust(24, b"\0"), ReplyToQ=b"REPLY.Q", MsgType=CMQC.MQMT_REQUEST,
                  Report=CMQC.MQRO_EXPIRATION_WITH_DATA | CMQC.MQRO_PASS_CORREL_ID)
    out.put("héllo wörld", md, pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
    assert len(md.MsgId) == 24 and md.MsgId != CMQC.MQMI_NONE  # MQPUT filled in the MsgId
    sent_id = md.MsgId

    reader = connect("QM2")
    inq = pymqi.Queue(reader, pymqi.OD(ObjectName=q), CMQC.MQOO_INPUT_SHARED)
    got_md = pymqi.MD()
    body = inq.get(None, got_md, pymqi.GMO(Options=NO_SYNC_GET))
    assert body == "héllo wörld".encode()
    assert got_md.MsgId == sent_id and got_md.CorrelId == b"ORDER-0042".ljust(24, b"\0")
    assert got_md.Format == CMQC.MQFMT_STRING and got_md.Priority == 7
    assert got_md.Persistence == CMQC.MQPER_PERSISTENT and got_md.MsgType == CMQC.MQMT_REQUEST
    assert 0 < got_md.Expiry <= 6000  # what remains, in tenths
    assert got_md.ReplyToQ == b"REPLY.Q".ljust(48) and got_md.ReplyToQMgr == b"QM1".ljust(48)
    assert got_md.Report == CMQC.MQRO_EXPIRATION_WITH_DATA | CMQC.MQRO_PASS_CORREL_ID
    assert got_md.BackoutCount == 0 and len(got_md.PutDate) == 8 and len(got_md.PutTime) == 8
    assert got_md.PutApplName.strip()  # the program's name


def test_binary_bodies_and_no_message_available(group, connect):
    q = shared_q(group)
    qmgr = connect()
    queue = pymqi.Queue(qmgr, q, CMQC.MQOO_INPUT_AS_Q_DEF | CMQC.MQOO_OUTPUT)
    queue.put(b"\x00\x01\xfe\xff", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
    md = pymqi.MD()
    assert queue.get(None, md, pymqi.GMO(Options=NO_SYNC_GET)) == b"\x00\x01\xfe\xff"
    assert md.Format == CMQC.MQFMT_NONE
    err = reason_of(lambda: queue.get(None, pymqi.MD(), pymqi.GMO(Options=NO_SYNC_GET)))
    assert (err.comp, err.reason) == (2, 2033)
    assert err.errorAsString() == "MQI Error. Comp: 2, Reason 2033: FAILED: MQRC_NO_MSG_AVAILABLE"


def test_get_with_wait_returns_a_message_put_through_another_queue_manager(group, connect):
    q = shared_q(group)
    reader = connect("QM2")
    queue = pymqi.Queue(reader, q, CMQC.MQOO_INPUT_SHARED)
    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | NO_SYNC_GET, WaitInterval=30_000)
    with ThreadPoolExecutor(max_workers=1) as pool:
        waiting = pool.submit(queue.get, None, pymqi.MD(), gmo)
        group.wait_for_waiter(q)
        writer = connect("QM1")
        writer.put1(q, b"arrived", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
        assert waiting.result(timeout=60) == b"arrived"
    short = pymqi.GMO(Options=CMQC.MQGMO_WAIT | NO_SYNC_GET, WaitInterval=100)
    assert reason_of(lambda: queue.get(None, pymqi.MD(), short)).reason == CMQC.MQRC_NO_MSG_AVAILABLE


def test_syncpoint_commit_and_backout(group, connect):
    q = shared_q(group)
    writer, reader = connect("QM1"), connect("QM2")
    out = pymqi.Queue(writer, q, CMQC.MQOO_OUTPUT)
    inq = pymqi.Queue(reader, q, CMQC.MQOO_INPUT_SHARED)
    no_wait = pymqi.GMO(Options=NO_SYNC_GET)
    out.put(b"as z/OS does: in the unit of work", pymqi.MD())  # no syncpoint option given
    out.put(b"explicit", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_SYNCPOINT))
    assert reason_of(lambda: inq.get(None, pymqi.MD(), no_wait)).reason == 2033  # not committed yet
    writer.commit()
    assert inq.get(None, pymqi.MD(), no_wait) == b"as z/OS does: in the unit of work"

    md = pymqi.MD()
    assert inq.get(None, md, pymqi.GMO(Options=CMQC.MQGMO_SYNCPOINT)) == b"explicit"
    reader.backout()  # the message returns to the queue, its backout count raised
    md = pymqi.MD()
    assert inq.get(None, md, pymqi.GMO(Options=CMQC.MQGMO_SYNCPOINT)) == b"explicit"
    assert md.BackoutCount == 1
    reader.commit()
    assert reason_of(lambda: inq.get(None, pymqi.MD(), no_wait)).reason == 2033


def test_match_options_and_the_reused_md(group, connect):
    q = shared_q(group)
    qmgr = connect()
    queue = pymqi.Queue(qmgr, q, CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_OUTPUT)
    put_opts = pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT)
    for i, correl in enumerate((b"A", b"B", b"A")):
        queue.put(f"m{i}", pymqi.MD(CorrelId=correl.ljust(24, b"\0")), put_opts)
    by_correl = pymqi.GMO(Options=NO_SYNC_GET, MatchOptions=CMQC.MQMO_MATCH_CORREL_ID)
    assert queue.get(None, pymqi.MD(CorrelId=b"B".ljust(24, b"\0")), by_correl) == b"m1"
    md = pymqi.MD(CorrelId=b"A".ljust(24, b"\0"))
    assert queue.get(None, md, by_correl) == b"m0"
    # MQ's classic trap: the MD now holds m0's MsgId, and the default MatchOptions match on it
    assert reason_of(lambda: queue.get(None, md, pymqi.GMO(Options=NO_SYNC_GET))).reason == 2033
    md.MsgId, md.CorrelId = CMQC.MQMI_NONE, CMQC.MQCI_NONE
    assert queue.get(None, md, pymqi.GMO(Options=NO_SYNC_GET)) == b"m2"


def test_browse_and_truncation(group, connect):
    q = shared_q(group)
    qmgr = connect()
    queue = pymqi.Queue(qmgr, q, CMQC.MQOO_BROWSE | CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_OUTPUT)
    for text in ("first message", "second message"):
        queue.put(text, pymqi.MD(Format=CMQC.MQFMT_STRING), pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
    gmo = pymqi.GMO(Options=CMQC.MQGMO_BROWSE_FIRST)
    assert queue.get(None, pymqi.MD(), gmo) == b"first message"
    gmo.Options = CMQC.MQGMO_BROWSE_NEXT
    assert queue.get(None, pymqi.MD(), gmo) == b"second message"
    err = reason_of(lambda: queue.get(5, pymqi.MD(), pymqi.GMO(Options=NO_SYNC_GET)))
    assert (err.comp, err.reason) == (1, CMQC.MQRC_TRUNCATED_MSG_FAILED)  # IBM: a warning; left on the queue
    # pymqi's and ibmmq's shape: as IBM's MQGET, the buffer holds as much of the message as fits
    assert (err.message, err.original_length) == (b"first", len("first message"))
    gmo = pymqi.GMO(Options=NO_SYNC_GET | CMQC.MQGMO_ACCEPT_TRUNCATED_MSG)
    err = reason_of(lambda: queue.get(5, pymqi.MD(), gmo))
    assert (err.comp, err.reason) == (1, CMQC.MQRC_TRUNCATED_MSG_ACCEPTED)  # a warning, raised as pymqi does
    assert err.original_data == b"first"
    # as pymqi and ibmmq raise it: the truncated data and the whole length, also through get()
    assert (err.message, err.original_length) == (b"first", len("first message"))
    assert (err.get("message"), err.get("original_length")) == (b"first", len("first message"))
    assert "TRUNCATED_MSG_ACCEPTED" in str(err) and err.error_as_string() == err.errorAsString()
    assert queue.get(None, pymqi.MD(), pymqi.GMO(Options=NO_SYNC_GET)) == b"second message"


def test_inquire_set_and_error_reasons(group, connect):
    q = shared_q(group, "MAXDEPTH(50)")
    qmgr = connect()
    queue = pymqi.Queue(qmgr, q, CMQC.MQOO_OUTPUT | CMQC.MQOO_INQUIRE | CMQC.MQOO_SET)
    queue.put(b"x", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
    assert queue.inquire(CMQC.MQIA_CURRENT_Q_DEPTH) == 1
    assert queue.inquire(CMQC.MQIA_MAX_Q_DEPTH) == 50
    assert queue.inquire(CMQC.MQCA_Q_NAME).strip() == q.encode()
    queue.set(CMQC.MQIA_INHIBIT_PUT, CMQC.MQQA_PUT_INHIBITED)
    assert queue.inquire(CMQC.MQIA_INHIBIT_PUT) == CMQC.MQQA_PUT_INHIBITED
    assert reason_of(lambda: queue.put(b"y")).reason == CMQC.MQRC_PUT_INHIBITED
    assert reason_of(lambda: queue.get()).reason == CMQC.MQRC_NOT_OPEN_FOR_INPUT
    assert reason_of(lambda: pymqi.Queue(qmgr, "NO.SUCH.QUEUE", CMQC.MQOO_OUTPUT)).reason == 2085
    # options the emulator cannot honour fail before anything is sent
    lock = pymqi.GMO(Options=CMQC.MQGMO_LOCK)
    assert reason_of(lambda: queue.get(None, pymqi.MD(), lock)).reason == CMQC.MQRC_OPTIONS_ERROR
    queue.close()
    with pytest.raises(pymqi.PYIFError):  # as pymqi: a closed Queue forgets its queue
        queue.put(b"z")


# ---- asyncio ----------------------------------------------------------------------------------


def test_asyncio_client_waits_commits_and_backs_out(group):
    q = shared_q(group)

    async def scenario() -> None:
        async with await aio.connect("QM2", conn_info=conn_name(group, "QM2")) as reader, \
                await aio.connect("QM1", conn_info=conn_name(group, "QM1")) as writer:
            inq = await aio.Queue.opened(reader, q, CMQC.MQOO_INPUT_SHARED)
            out = await aio.Queue.opened(writer, pymqi.OD(ObjectName=q), CMQC.MQOO_OUTPUT)
            gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_SYNCPOINT, WaitInterval=30_000)
            waiting = asyncio.create_task(inq.get(None, pymqi.MD(), gmo))
            await asyncio.to_thread(group.wait_for_waiter, q)
            md = pymqi.MD(Format=CMQC.MQFMT_STRING)
            await out.put("async hello", md, pymqi.PMO(Options=CMQC.MQPMO_SYNCPOINT))
            assert not waiting.done()  # not visible before MQCMIT
            await writer.commit()
            assert await waiting == b"async hello"
            await reader.backout()
            got = pymqi.MD()
            assert await inq.get(None, got, pymqi.GMO(Options=NO_SYNC_GET)) == b"async hello"
            assert got.BackoutCount == 1 and got.MsgId == md.MsgId
            err = None
            try:
                await inq.get(None, pymqi.MD(), pymqi.GMO(Options=NO_SYNC_GET))
            except pymqi.MQMIError as exc:
                err = exc
            assert err is not None and err.reason == CMQC.MQRC_NO_MSG_AVAILABLE
        assert not reader.is_connected and not writer.is_connected

    asyncio.run(scenario())


# ---- retries: only what is safe to send twice ----------------------------------------------------


class FlakyServer:
    """A mock transport: the first ``refuse`` requests fail to connect; records every request."""

    def __init__(self, refuse: int) -> None:
        self.refuse = refuse
        self.seen: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(f"{request.method} {request.url.path}")
        if self.refuse:
            self.refuse -= 1
            raise httpx.ConnectError("connection refused", request=request)
        if request.url.path == "/v1/connections":
            return httpx.Response(201, json={"hconn": "QM1-abc", "qmgr": "QM1"})
        return httpx.Response(201, json={"hobj": "1"})


FAST_RETRY = pymqi.RetryPolicy(attempts=3, initial_wait_s=0.001, max_wait_s=0.001)


def test_mqconn_is_retried_when_the_queue_manager_cannot_be_reached():
    server = FlakyServer(refuse=2)
    client = httpx.Client(transport=httpx.MockTransport(server), base_url="http://qm1")
    qmgr = pymqi.QueueManager(None, retry=FAST_RETRY, http_client=client)
    qmgr.connect("QM1")
    assert qmgr.is_connected and server.seen == ["POST /v1/connections"] * 3

    server = FlakyServer(refuse=10)
    client = httpx.Client(transport=httpx.MockTransport(server), base_url="http://qm1")
    err = reason_of(lambda: pymqi.QueueManager(None, retry=FAST_RETRY, http_client=client).connect("QM1"))
    assert err.reason == CMQC.MQRC_HOST_NOT_AVAILABLE and len(server.seen) == 3


def test_puts_and_gets_are_never_retried():
    server = FlakyServer(refuse=0)
    client = httpx.Client(transport=httpx.MockTransport(server), base_url="http://qm1")
    qmgr = pymqi.QueueManager(None, retry=FAST_RETRY, http_client=client)
    qmgr.connect("QM1")
    queue = pymqi.Queue(qmgr, "APP.Q", CMQC.MQOO_OUTPUT | CMQC.MQOO_INPUT_SHARED)
    server.refuse = 5
    assert reason_of(lambda: queue.put(b"once")).reason == CMQC.MQRC_CONNECTION_BROKEN
    assert reason_of(lambda: queue.get()).reason == CMQC.MQRC_CONNECTION_BROKEN
    assert server.seen[-2:] == ["POST /v1/connections/QM1-abc/objects/1/put",
                                "POST /v1/connections/QM1-abc/objects/1/get"]
    assert len(server.seen) == 4  # MQCONN, MQOPEN, one MQPUT, one MQGET


def test_async_mqconn_retry_and_no_retry_of_a_get():
    async def scenario() -> None:
        server = FlakyServer(refuse=1)
        client = httpx.AsyncClient(transport=httpx.MockTransport(server), base_url="http://qm1")
        qmgr = aio.QueueManager(None, retry=FAST_RETRY, http_client=client)
        await qmgr.connect("QM1")
        queue = await aio.Queue.opened(qmgr, "APP.Q", CMQC.MQOO_INPUT_SHARED)
        server.refuse = 3
        with pytest.raises(pymqi.MQMIError) as caught:
            await queue.get()
        assert caught.value.reason == CMQC.MQRC_CONNECTION_BROKEN
        assert server.seen.count("POST /v1/connections") == 2 and len(server.seen) == 4
        await client.aclose()

    asyncio.run(scenario())
