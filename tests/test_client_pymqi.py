"""pymqi programs as people write them, against real queue managers (QM1, QM2 sharing queues):
the queue opened lazily by its first put or get, MQPUT1, a second connect (2002), the start of
IBM's client tutorials (CD, SCO, connect_with_options with credentials), request/reply through
a reply-to queue, and the constants and modules such programs import before connecting.

The shapes follow common pymqi programs, written here in our own words."""

from __future__ import annotations

import asyncio

import pytest

import app.client as pymqi
import qsg_pymqi
from app.client import CMQC, CMQCFC, CMQSTRC, CMQXC, aio
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

# ---- the commonest program: Queue(qmgr, name).put(text) -----------------------------------------


def test_lazy_open_put_then_get_across_the_group(group, connect):
    q = shared_q(group)
    writer, reader = connect("QM1"), connect("QM2")
    out = pymqi.Queue(writer, q)  # not opened yet: pymqi opens on first use
    out.put("Hello from Python!")  # opened with MQOO_OUTPUT; no syncpoint named: committed at MQDISC
    writer.commit()
    # opened for output only: a get on it is refused as MQ refuses it
    assert reason_of(out.get).reason == CMQC.MQRC_NOT_OPEN_FOR_INPUT
    out.close()
    with pytest.raises(pymqi.PYIFError):
        out.close()  # pymqi: "not open"

    md = pymqi.MD()
    inq = pymqi.Queue(reader, q)
    assert inq.get(None, md) == b"Hello from Python!"  # opened with MQOO_INPUT_AS_Q_DEF
    assert md.Format == CMQC.MQFMT_STRING  # a str is put as text, as pymqi does
    reader.commit()
    err = reason_of(inq.get)
    assert (err.comp, err.reason) == (CMQC.MQCC_FAILED, CMQC.MQRC_NO_MSG_AVAILABLE)
    inq.close()


def test_deferred_open_for_inquire_and_set_and_lists(group, connect):
    q = shared_q(group, "MAXDEPTH(70)")
    qmgr = connect()
    attrs = pymqi.Queue(qmgr, pymqi.OD(ObjectName=q))
    assert attrs.inquire(CMQC.MQIA_MAX_Q_DEPTH) == 70  # opened with MQOO_INQUIRE
    many = attrs.inquire([CMQC.MQIA_MAX_Q_DEPTH, CMQC.MQIA_CURRENT_Q_DEPTH])
    assert many == {CMQC.MQIA_MAX_Q_DEPTH: 70, CMQC.MQIA_CURRENT_Q_DEPTH: 0}
    attrs.close()
    setter = pymqi.Queue(qmgr, q)
    setter.set({CMQC.MQIA_TRIGGER_DEPTH: 7, CMQC.MQCA_TRIGGER_DATA: "at night"})  # opened with MQOO_SET
    setter.close()
    check = pymqi.Queue(qmgr, q, CMQC.MQOO_INQUIRE)
    assert check.inquire(CMQC.MQIA_TRIGGER_DEPTH) == 7
    assert check.inquire(CMQC.MQCA_TRIGGER_DATA).strip() == b"at night"
    check.close()
    assert qmgr.inquire([CMQC.MQCA_Q_MGR_NAME, CMQC.MQIA_PLATFORM]) == {
        CMQC.MQCA_Q_MGR_NAME: b"QM1".ljust(48), CMQC.MQIA_PLATFORM: CMQC.MQPL_ZOS}
    assert qmgr.inquire(CMQC.MQIA_COMMAND_LEVEL) == CMQC.MQCMDL_LEVEL_930


def test_put1_and_units_of_work(group, connect):
    q = shared_q(group)
    qmgr = connect("QM1")
    qmgr.begin()  # nothing to begin on z/OS: the first syncpoint put starts the unit of work
    md = pymqi.MD()
    qmgr.put1(q, "one shot", md, pymqi.PMO(Options=CMQC.MQPMO_SYNCPOINT))
    assert md.MsgId != CMQC.MQMI_NONE and md.Format == CMQC.MQFMT_STRING
    reader = connect("QM2")
    probe = pymqi.Queue(reader, q)
    assert reason_of(probe.get).reason == CMQC.MQRC_NO_MSG_AVAILABLE  # not visible before MQCMIT
    probe.close()
    qmgr.backout()
    for body in (b"kept", b"also kept"):
        qmgr.put1(pymqi.OD(ObjectName=q), body, None, pymqi.PMO(Options=CMQC.MQPMO_SYNCPOINT))
    qmgr.commit()
    # a Queue object per get, as many programs do: each is closed when collected (as pymqi does),
    # so the next one can open the queue for input again (the queue's default is exclusive input)
    no_sync = pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT)
    assert pymqi.Queue(reader, q).get(None, pymqi.MD(), no_sync) == b"kept"
    assert pymqi.Queue(reader, q).get(None, pymqi.MD(), no_sync) == b"also kept"


# ---- connecting as pymqi programs do ----------------------------------------------------------


def test_second_connect_warns_2002_and_keeps_the_connection(group):
    qmgr = pymqi.QueueManager(None)
    qmgr.connect_tcp_client("QM1", pymqi.CD(), "DEV.APP.SVRCONN", conn_name(group))
    handle = qmgr.get_handle()
    err = reason_of(lambda: qmgr.connect_tcp_client("QM1", pymqi.CD(), "DEV.APP.SVRCONN", conn_name(group)))
    assert (err.comp, err.reason) == (CMQC.MQCC_WARNING, CMQC.MQRC_ALREADY_CONNECTED)
    assert qmgr.is_connected and qmgr.get_handle() == handle
    # with a handle-sharing option MQCONNX does not complain
    cd = pymqi.CD(ChannelName=b"DEV.APP.SVRCONN", ConnectionName=conn_name(group).encode())
    for _ in range(3):
        qmgr.connect_with_options("QM1", cd=cd, opts=CMQC.MQCNO_HANDLE_SHARE_BLOCK)
    assert qmgr.get_handle() == handle
    qmgr.disconnect()
    with pytest.raises(pymqi.PYIFError):
        qmgr.disconnect()


def test_tutorial_start_sequence_connects(group):
    cd = pymqi.CD()
    cd.ChannelName = b"DEV.APP.SVRCONN"
    cd.ConnectionName = conn_name(group, "QM2").encode()
    cd.ChannelType = CMQXC.MQCHT_CLNTCONN
    cd.TransportType = CMQXC.MQXPT_TCP
    cd.SSLCipherSpec = b"TLS_AES_256_GCM_SHA384"
    cd.CertificateLabel = b"appcert"
    sco = pymqi.SCO()
    sco.KeyRepository = b"/var/mqm/ssl/client"
    sco.CertificateLabel = b"appcert"
    qmgr = pymqi.QueueManager(None)
    qmgr.connect_with_options("QM2", user="app", password="passw0rd", cd=cd, sco=sco,
                              opts=CMQC.MQCNO_CLIENT_BINDING)
    assert qmgr.is_connected and qmgr.qmgr_name == "QM2"
    qmgr.disconnect()
    old_style = pymqi.QueueManager(None)
    old_style.connect_with_options("QM2", cd, sco)  # pymqi's positional form
    assert old_style.qmgr_name == "QM2"
    old_style.disconnect()
    csp = pymqi.CSP(CSPUserId=b"app", CSPPassword=b"passw0rd")
    ibmmq_style = pymqi.connect("QM2", cd=cd, csp=csp, cno=pymqi.CNO(Options=CMQC.MQCNO_CLIENT_BINDING))
    assert ibmmq_style.qmgr_name == "QM2"  # IBM's ibmmq: the CD carries the address
    ibmmq_style.disconnect()


def test_request_reply_through_a_reply_to_queue(group, connect):
    requests, replies = shared_q(group), shared_q(group)
    client, server = connect("QM1"), connect("QM2")
    request_md = pymqi.MD(MsgType=CMQC.MQMT_REQUEST, ReplyToQ=replies.encode())
    pymqi.Queue(client, requests).put(b"what time is it?", request_md,
                                     pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))

    got_md = pymqi.MD()
    wait = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT, WaitInterval=5000)
    body = pymqi.Queue(server, requests).get(None, got_md, wait)
    assert got_md.MsgType == CMQC.MQMT_REQUEST
    reply_md = pymqi.MD(MsgType=CMQC.MQMT_REPLY, CorrelId=got_md.MsgId)
    server.put1(got_md.ReplyToQ.strip(), b"reply to " + body, reply_md, pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))

    match = pymqi.MD(CorrelId=request_md.MsgId)
    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT, WaitInterval=5000,
                    MatchOptions=CMQC.MQMO_MATCH_CORREL_ID)
    assert pymqi.Queue(client, replies, CMQC.MQOO_INPUT_SHARED).get(None, match, gmo) == b"reply to what time is it?"


def test_asyncio_queue_opens_lazily_too(group):
    q = shared_q(group)

    async def scenario() -> bytes:
        async with await aio.connect("QM1", "DEV.APP.SVRCONN", conn_name(group)) as qmgr:
            out = aio.Queue(qmgr, q)
            await out.put("async lazily")
            err = None
            try:
                await qmgr.connect("QM1")
            except pymqi.MQMIError as exc:
                err = exc
            assert err is not None and err.reason == CMQC.MQRC_ALREADY_CONNECTED
            await qmgr.commit()
            return await aio.Queue(qmgr, q).get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT))

    assert asyncio.run(scenario()) == b"async lazily"


# ---- what programs import before connecting --------------------------------------------------


def test_constants_and_modules_programs_name():
    assert qsg_pymqi.Queue is pymqi.Queue and qsg_pymqi.CMQC is CMQC
    import qsg_pymqi.CMQXC as imported  # noqa: PLC0415 - the import form is what is tested

    assert imported is CMQXC
    assert (CMQC.MQOO_ALTERNATE_USER_AUTHORITY, CMQC.MQOO_SET_IDENTITY_CONTEXT) == (0x1000, 0x400)
    assert CMQC.MQCNO_CLIENT_BINDING == 0x800 and CMQC.MQCNO_HANDLE_SHARE_BLOCK == 0x40
    assert CMQC.MQFMT_XMIT_Q_HEADER == b"MQXMIT  " and CMQC.MQGMO_NO_PROPERTIES == 0x04000000
    assert CMQC.MQRC_ALREADY_CONNECTED == 2002 and CMQC.MQRC_HOST_NOT_AVAILABLE == 2538
    assert CMQXC.MQCHT_CLNTCONN == CMQC.MQCHT_CLNTCONN == 6 and CMQXC.MQXPT_TCP == 2
    assert CMQXC.MQCD_VERSION_7 == 7 and CMQCFC.MQCMD_PING_Q_MGR == 40
    assert CMQSTRC.MQRC_DICT[2033] == "MQRC_NO_MSG_AVAILABLE" and CMQSTRC.MQIA_DICT[3] == "MQIA_CURRENT_Q_DEPTH"
    assert pymqi.get_versions()["pymqi"] == pymqi.__version__
    assert pymqi.md is pymqi.MD and pymqi.CD().SharingConversations == 10
    err = pymqi.MQMIError(CMQC.MQCC_WARNING, CMQC.MQRC_ALREADY_CONNECTED)
    assert "MQRC_ALREADY_CONNECTED" in err.errorAsString()
    with pytest.raises(AttributeError):
        pymqi.SCO(NoSuchField=1)  # unknown fields still raise instead of being ignored


def test_model_queue_open_fills_the_od_and_close_deletes(group, connect):
    qmgr = connect("QM1")
    od = pymqi.OD()
    od.ObjectName = b"SYSTEM.DEFAULT.MODEL.QUEUE"  # DEFTYPE(TEMPDYN), defined in every new group
    od.DynamicQName = b"APP.REPLY.*"
    replies = pymqi.Queue(qmgr, od, CMQC.MQOO_INPUT_EXCLUSIVE | CMQC.MQOO_OUTPUT)
    name = od.ObjectName.decode()
    assert name.startswith("APP.REPLY.") and len(name) > len("APP.REPLY.")  # MQOPEN filled it in
    replies.put(b"to myself", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
    assert replies.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT)) == b"to myself"
    replies.close()  # a temporary dynamic queue goes with the handle that made it
    assert reason_of(lambda: pymqi.Queue(qmgr, name, CMQC.MQOO_OUTPUT)).reason == CMQC.MQRC_UNKNOWN_OBJECT_NAME

    group.mqsc_ok("QM1", "DEFINE QMODEL(APP.PERM.MODEL) DEFTYPE(PERMDYN) REPLACE")
    od = pymqi.OD()
    od.ObjectName, od.DynamicQName = b"APP.PERM.MODEL", b"APP.KEEP.*"
    kept = pymqi.Queue(qmgr, od, CMQC.MQOO_OUTPUT)
    name = od.ObjectName.decode()
    kept.put(b"stays", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
    kept.close()  # a permanent dynamic queue outlives its handle ...
    again = pymqi.Queue(qmgr, name, CMQC.MQOO_OUTPUT)
    err = reason_of(lambda: again.close(CMQC.MQCO_DELETE))  # ... and MQCO_DELETE refuses while it holds messages
    assert err.reason == CMQC.MQRC_Q_NOT_EMPTY
    again.close(CMQC.MQCO_DELETE_PURGE)
    assert reason_of(lambda: pymqi.Queue(qmgr, name, CMQC.MQOO_OUTPUT)).reason == CMQC.MQRC_UNKNOWN_OBJECT_NAME


def test_structures_keep_unknown_attributes_as_pymqi_does():
    md = pymqi.MD()
    md.ReportOptions = CMQC.MQRO_COPY_MSG_ID_TO_CORREL_ID  # IBM's mq-dev-patterns basicrequest.py does this
    assert md.ReportOptions == CMQC.MQRO_COPY_MSG_ID_TO_CORREL_ID and md.Report == CMQC.MQRO_NONE
    assert "ReportOptions" not in md.get()  # not a field: the structure ignores it
    with pytest.raises(AttributeError):
        md.set(ReportOptions=1)
