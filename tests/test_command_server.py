"""The command server (app/cmdserver) over real queue managers: MQSC command strings and PCF
messages put to SYSTEM.COMMAND.INPUT (or its alias SYSTEM.ADMIN.COMMAND.QUEUE), answered on a
reply queue; the pymqi drop-in's ``PCFExecute``."""

from __future__ import annotations

import struct

import pytest
import sqlalchemy

import qsg_pymqi as pymqi
from app.cmdserver import pcf
from qsg_pymqi import CMQC, CMQCFC
from tests.support.pymqi_group import connections, reason_of


@pytest.fixture(scope="module")
def group(make_cluster):
    return make_cluster(["QM1", "QM2"])


@pytest.fixture
def connect(group):
    yield from connections(group)


def _request(qmgr, data: bytes, fmt: bytes, encoding: int = CMQC.MQENC_NATIVE,
             queue: str = "SYSTEM.COMMAND.INPUT") -> list[tuple[pymqi.MD, bytes]]:
    """Put one request with a temporary dynamic reply queue; every reply (until none within 5 s)."""
    reply = pymqi.OD(ObjectName=b"SYSTEM.COMMAND.REPLY.MODEL", DynamicQName=b"TEST.REPLY.*")
    rq = pymqi.Queue(qmgr, reply, CMQC.MQOO_INPUT_EXCLUSIVE)
    md = pymqi.MD(Format=fmt, MsgType=CMQC.MQMT_REQUEST, ReplyToQ=reply.ObjectName, Encoding=encoding)
    pymqi.Queue(qmgr, queue, CMQC.MQOO_OUTPUT).put(data, md, pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
    out = []
    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT, WaitInterval=5000,
                    MatchOptions=CMQC.MQMO_MATCH_CORREL_ID)
    for _ in range(200):
        got = pymqi.MD(CorrelId=md.MsgId)
        try:
            out.append((got, rq.get(None, got, gmo)))
        except pymqi.MQMIError as exc:
            assert exc.reason == CMQC.MQRC_NO_MSG_AVAILABLE
            break
        gmo.WaitInterval = 1000  # the set is put in one unit of work: the rest is there already
    rq.close()
    return out


def test_mqsc_string_gets_csqn205i_framed_replies(group, connect):
    qmgr = connect()
    replies = _request(qmgr, b"DEFINE QLOCAL(CMD.MQSC.Q) MAXDEPTH(77) REPLACE", CMQC.MQFMT_STRING)
    lines = [data.decode() for _, data in replies]
    assert lines[0].startswith("CSQN205I   COUNT=")
    assert int(lines[0][17:25]) == len(lines) and lines[0][34:42] == "00000000"  # IBM's columns 18 and 35
    assert any("CSQ9022I" in line for line in lines)
    assert all(md.Format == CMQC.MQFMT_STRING and md.MsgType == CMQC.MQMT_REPLY for md, _ in replies)
    replies = _request(qmgr, b"DISPLAY QLOCAL(CMD.MQSC.Q) MAXDEPTH", CMQC.MQFMT_STRING)
    lines = [data.decode() for _, data in replies]
    assert any(line.startswith("CSQM401I QM1 QUEUE(CMD.MQSC.Q)") and "MAXDEPTH(77)" in line for line in lines)
    replies = _request(qmgr, b"DELETE QLOCAL(NO.SUCH.Q)", CMQC.MQFMT_STRING)
    assert replies[0][1].decode().endswith("RETURN=0000000C, REASON=00000008")
    # DISPLAY CMDSERV reflects the server that answered
    lines = [d.decode() for _, d in _request(qmgr, b"DISPLAY CMDSERV", CMQC.MQFMT_STRING)]
    assert any("CSQN206I QM1 COMMAND SERVER STATUS IS RUNNING" in line for line in lines)


@pytest.mark.parametrize("big", [False, True])
def test_pcf_command_xr_and_standard_in_both_encodings(group, connect, big):
    qmgr = connect()
    encoding = pcf.MQENC_ZOS if big else CMQC.MQENC_NATIVE
    name = f"CMD.PCF.{'BIG' if big else 'LITTLE'}"
    create = pcf.encode(pcf.Header(pcf.MQCFT_COMMAND_XR, CMQCFC.MQCMD_CREATE_Q, 3),
                        [pcf.Parameter(pcf.MQCFT_STRING, CMQC.MQCA_Q_NAME, name),
                         pcf.Parameter(pcf.MQCFT_INTEGER, CMQC.MQIA_Q_TYPE, CMQC.MQQT_LOCAL),
                         pcf.Parameter(pcf.MQCFT_INTEGER, CMQC.MQIA_MAX_Q_DEPTH, 4321),
                         pcf.Parameter(pcf.MQCFT_STRING, CMQC.MQCA_Q_DESC, "made by PCF")], big=big)
    replies = _request(qmgr, create, CMQC.MQFMT_ADMIN, encoding, queue="SYSTEM.ADMIN.COMMAND.QUEUE")
    decoded = [pcf.decode(d, big=big) for _, d in replies]
    assert [m.header.type for m in decoded] == [pcf.MQCFT_XR_SUMMARY]
    assert decoded[-1].header.control == pcf.MQCFC_LAST and decoded[-1].header.comp_code == 0
    assert all(md.Encoding == encoding and md.Format == CMQC.MQFMT_ADMIN for md, _ in replies)
    # the standard form (distributed tools): MQCFT_RESPONSE, one message per object
    inquire = pcf.encode(pcf.Header(pcf.MQCFT_COMMAND, CMQCFC.MQCMD_INQUIRE_Q),
                         [pcf.Parameter(pcf.MQCFT_STRING, CMQC.MQCA_Q_NAME, name),
                          pcf.Parameter(pcf.MQCFT_INTEGER_LIST, CMQCFC.MQIACF_Q_ATTRS,
                                        [CMQC.MQIA_MAX_Q_DEPTH, CMQC.MQCA_Q_DESC])], big=big)
    (reply,) = [pcf.decode(d, big=big) for _, d in _request(qmgr, inquire, CMQC.MQFMT_ADMIN, encoding)]
    assert reply.header.type == pcf.MQCFT_RESPONSE and reply.header.control == pcf.MQCFC_LAST
    values = {p.parameter: p.value for p in reply.parameters}
    assert values[CMQC.MQCA_Q_NAME] == name and values[CMQC.MQIA_MAX_Q_DEPTH] == 4321
    assert values[CMQC.MQCA_Q_DESC] == "made by PCF" and values[CMQC.MQIA_Q_TYPE] == CMQC.MQQT_LOCAL
    delete = pcf.encode(pcf.Header(pcf.MQCFT_COMMAND_XR, CMQCFC.MQCMD_DELETE_Q, 3),
                        [pcf.Parameter(pcf.MQCFT_STRING, CMQC.MQCA_Q_NAME, name)], big=big)
    assert pcf.decode(_request(qmgr, delete, CMQC.MQFMT_ADMIN, encoding)[-1][1], big=big).header.comp_code == 0
    again = _request(qmgr, delete, CMQC.MQFMT_ADMIN, encoding)
    summary = pcf.decode(again[-1][1], big=big).header
    assert (summary.type, summary.comp_code, summary.reason) == (pcf.MQCFT_XR_SUMMARY, 2, 2085)


def test_pcf_execute_drop_in(group, connect):
    qmgr = connect()
    pcf_ = pymqi.PCFExecute(qmgr)
    pcf_.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: b"CMD.DROPIN.Q", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL,
                         CMQC.MQIA_MAX_Q_DEPTH: 123456, CMQCFC.MQIACF_REPLACE: CMQCFC.MQRP_YES})
    (names,) = pcf_.MQCMD_INQUIRE_Q_NAMES({CMQC.MQCA_Q_NAME: b"CMD.DROPIN.*"})
    assert names[CMQCFC.MQCACF_Q_NAMES] == [b"CMD.DROPIN.Q"]
    (attrs,) = pcf_.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"CMD.DROPIN.Q"})
    assert attrs[CMQC.MQIA_MAX_Q_DEPTH] == 123456 and attrs[CMQC.MQIA_DEF_PERSISTENCE] == CMQC.MQPER_NOT_PERSISTENT
    # a filter (MQCFIF), as pymqi builds it
    found = pcf_.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"CMD.*"}, [pymqi.Filter(CMQC.MQIA_MAX_Q_DEPTH).greater(100000)])
    assert [f[CMQC.MQCA_Q_NAME] for f in found] == [b"CMD.DROPIN.Q"]
    (qm,) = pcf_.MQCMD_INQUIRE_Q_MGR()
    assert qm[CMQC.MQCA_Q_MGR_NAME] == b"QM1" and qm[CMQC.MQIA_PLATFORM] == CMQC.MQPL_ZOS
    (status,) = pcf_.MQCMD_INQUIRE_Q_STATUS({CMQC.MQCA_Q_NAME: b"CMD.DROPIN.Q"})
    assert status[CMQC.MQIA_CURRENT_Q_DEPTH] == 0
    # channel definitions: CSQ4INSX's default channels (items carry z/OS's response id)
    channels = pcf_.MQCMD_INQUIRE_CHANNEL_NAMES({CMQCFC.MQCACH_CHANNEL_NAME: b"SYSTEM.DEF.S*"})
    assert [c[CMQCFC.MQCACH_CHANNEL_NAMES] for c in channels] == [[b"SYSTEM.DEF.SENDER", b"SYSTEM.DEF.SERVER",
                                                                   b"SYSTEM.DEF.SVRCONN"]]
    assert channels[0][CMQCFC.MQCACF_RESPONSE_Q_MGR_NAME] == b"QM1"
    pcf_.MQCMD_PING_Q_MGR()
    pcf_.MQCMD_CHANGE_Q({CMQC.MQCA_Q_NAME: b"CMD.DROPIN.Q", CMQC.MQIA_INHIBIT_PUT: CMQC.MQQA_PUT_INHIBITED})
    (attrs,) = pcf_.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"CMD.DROPIN.Q", CMQCFC.MQIACF_Q_ATTRS: CMQC.MQIA_INHIBIT_PUT})
    assert attrs[CMQC.MQIA_INHIBIT_PUT] == CMQC.MQQA_PUT_INHIBITED
    pcf_.MQCMD_DELETE_Q({CMQC.MQCA_Q_NAME: b"CMD.DROPIN.Q"})
    err = reason_of(lambda: pcf_.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"CMD.DROPIN.Q"}))
    assert (err.comp, err.reason) == (CMQC.MQCC_FAILED, CMQC.MQRC_UNKNOWN_OBJECT_NAME)
    pcf_.disconnect()


def test_inquire_asking_for_the_keywords_it_selects_by(group, connect):
    """An Inquire Queue that selects by QType and QSGDisposition and also asks for those two
    attributes (as PCF clients do): one MQSC keyword each - TYPE(QLOCAL) and QSGDISP(QMGR), not
    TYPE(QLOCAL) ... TYPE (MQSC refuses a keyword given twice, CSQ9000E) - and the selection holds."""
    qmgr = connect()
    pcf_ = pymqi.PCFExecute(qmgr)
    pcf_.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: b"CMD.ASKED.L", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL})
    pcf_.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: b"CMD.ASKED.A", CMQC.MQIA_Q_TYPE: CMQC.MQQT_ALIAS,
                         CMQC.MQCA_BASE_Q_NAME: b"CMD.ASKED.L"})
    found = pcf_.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"CMD.ASKED.*", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL,
                                  CMQC.MQIA_QSG_DISP: CMQC.MQQSGD_Q_MGR,
                                  CMQCFC.MQIACF_Q_ATTRS: [CMQC.MQIA_Q_TYPE, CMQC.MQIA_QSG_DISP]})
    assert [(f[CMQC.MQCA_Q_NAME].strip(), f[CMQC.MQIA_Q_TYPE]) for f in found] == [(b"CMD.ASKED.L", CMQC.MQQT_LOCAL)]
    pcf_.MQCMD_DELETE_Q({CMQC.MQCA_Q_NAME: b"CMD.ASKED.A", CMQC.MQIA_Q_TYPE: CMQC.MQQT_ALIAS})
    pcf_.MQCMD_DELETE_Q({CMQC.MQCA_Q_NAME: b"CMD.ASKED.L"})
    pcf_.disconnect()


def test_cmdscope_star_answers_a_set_per_queue_manager(group, connect):
    qmgr = connect("QM2")
    pcf_ = pymqi.PCFExecute(qmgr)
    pcf_.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: b"CMD.SCOPED.Q", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL,
                         CMQCFC.MQIACF_REPLACE: CMQCFC.MQRP_YES, CMQCFC.MQCACF_COMMAND_SCOPE: b"*"})
    found = pcf_.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"CMD.SCOPED.Q", CMQCFC.MQCACF_COMMAND_SCOPE: b"*"})
    assert len(found) == 2  # one private queue on each active queue manager
    pcf_.disconnect()


def test_cmdscope_star_failing_everywhere_ends_with_an_abnormal_summary(group, connect):
    """CMDSCOPE(*) where every queue manager answers 2085: the reply set says so - CSQN205I
    RETURN=0000000C, each queue manager's failure and CSQ9023E, and the summary CSQN123E
    "abnormal completion", never CSQN122I "normal completion"."""
    lines = [d.decode() for _, d in _request(connect(), b"DISPLAY QLOCAL(CMD.NO.SUCH.Q) CMDSCOPE(*)",
                                              CMQC.MQFMT_STRING)]
    assert lines[0].endswith("RETURN=0000000C, REASON=00000008") and int(lines[0][17:25]) == len(lines), lines
    assert lines[1] == "CSQN137I QM1 'DISPLAY QLOCAL' command accepted for CMDSCOPE(*), sent to 2", lines
    assert [line for line in lines if line.startswith("CSQN121I")] == [
        "CSQN121I QM1 'DISPLAY QLOCAL' command responses from QM1",
        "CSQN121I QM1 'DISPLAY QLOCAL' command responses from QM2"]
    assert sum(line.startswith("CSQ9023E") for line in lines) == 2, lines  # each queue manager's
    assert lines[-1] == "CSQN123E QM1 'DISPLAY QLOCAL' command for CMDSCOPE(*) abnormal completion", lines
    assert not any("normal completion" in line and "abnormal" not in line for line in lines), lines


def _ask(g, qm: str, user: tuple[str, str], command: bytes) -> list[str]:
    """An MQSC command put to ``qm``'s SYSTEM.COMMAND.INPUT as ``user``; its CSQN205I reply lines."""
    qmgr = pymqi.connect(qm, "DEV.APP.SVRCONN", f"127.0.0.1({g.qms[qm].port})", *user)
    md = pymqi.MD(Format=CMQC.MQFMT_STRING, MsgType=CMQC.MQMT_REQUEST, ReplyToQ=b"ALICE.REPLY")
    pymqi.Queue(qmgr, "SYSTEM.COMMAND.INPUT", CMQC.MQOO_OUTPUT).put(
        command, md, pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
    rq = pymqi.Queue(qmgr, "ALICE.REPLY", CMQC.MQOO_INPUT_SHARED)
    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT, WaitInterval=15000,
                    MatchOptions=CMQC.MQMO_MATCH_CORREL_ID)
    first = rq.get(None, pymqi.MD(CorrelId=md.MsgId), gmo).decode()
    lines = [first] + [rq.get(None, pymqi.MD(CorrelId=md.MsgId), gmo).decode()
                       for _ in range(int(first[17:25]) - 1)]
    qmgr.disconnect()
    return lines


def _secured_group(make_cluster, qms: list[str]):
    from tests.support.security import ADMIN, ALICE, mqsc_ok, qsg_cli
    g = make_cluster(qms, env={"QSG_AUTH": "on"})
    qsg_cli(g, "user", "add", "admin", "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    qsg_cli(g, "user", "add", "alice", "--password-stdin", stdin=ALICE[1] + "\n")
    for qm in qms:
        mqsc_ok(g, qm, "DEFINE QLOCAL(ALICE.REPLY) REPLACE\n"
                       "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(CONNECT)\n"
                       "SET AUTHREC PROFILE('SYSTEM.COMMAND.INPUT') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(PUT)\n"
                       "SET AUTHREC PROFILE('ALICE.REPLY') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(GET)")
    return g


def test_authority_refused_for_a_non_admin_with_authentication_on(make_cluster):
    from tests.support.security import ADMIN, ALICE
    g = _secured_group(make_cluster, ["QM1"])
    refused = _ask(g, "QM1", ALICE, b"DEFINE QLOCAL(ALICE.MADE) REPLACE")
    assert refused[0].endswith("RETURN=0000000C, REASON=00000008")
    assert any("not authorized" in line.lower() or "2035" in line for line in refused), refused
    allowed = _ask(g, "QM1", ADMIN, b"DEFINE QLOCAL(ALICE.MADE) REPLACE")  # the administrator's request runs
    assert allowed[0].endswith("RETURN=00000000, REASON=00000000")


def test_cmdscope_with_authentication_on_runs_as_the_requester_on_every_queue_manager(make_cluster):
    """A command message carries no credentials, only its UserIdentifier: CMDSCOPE(*) still runs
    on the other queue managers, as the requester (whose authority each of them checks)."""
    from tests.support.security import ADMIN, ALICE, mqsc, mqsc_ok
    g = _secured_group(make_cluster, ["QM1", "QM2"])
    allowed = _ask(g, "QM1", ADMIN, b"DEFINE QLOCAL(SCOPED.MADE) REPLACE CMDSCOPE(*)")
    assert allowed[0].endswith("RETURN=00000000, REASON=00000000"), allowed
    assert any("CSQN121I" in line and line.endswith("from QM2") for line in allowed), allowed
    [shown] = mqsc_ok(g, "QM2", "DISPLAY QLOCAL(SCOPED.MADE)")
    assert [o["QUEUE"] for o in shown["objects"]] == ["SCOPED.MADE"]
    refused = _ask(g, "QM1", ALICE, b"DEFINE QLOCAL(ALICE.SCOPED) REPLACE CMDSCOPE(*)")
    assert refused[0].endswith("RETURN=0000000C, REASON=00000008"), refused
    [none] = mqsc(g, "QM2", "DISPLAY QLOCAL(ALICE.SCOPED)")
    assert none["reason"] == 2085, none  # refused on every queue manager
    # the requester's credentials for the other queue managers lived as long as the command
    engine = sqlalchemy.create_engine(g.database_url)
    with engine.connect() as db:
        live = db.execute(sqlalchemy.text("SELECT COUNT(*) FROM api_key WHERE revoked = :no"), {"no": False}).scalar()
    engine.dispose()
    assert live == 0


def test_other_object_families_and_commands_by_pcf(group, connect):
    pcf_ = pymqi.PCFExecute(connect())
    # a process: create, copy, inquire (names and attributes), delete
    pcf_.MQCMD_CREATE_PROCESS({CMQC.MQCA_PROCESS_NAME: b"CMD.PROC", CMQC.MQCA_APPL_ID: b"PAYROLL",
                               CMQC.MQIA_APPL_TYPE: CMQC.MQAT_CICS, CMQCFC.MQIACF_REPLACE: CMQCFC.MQRP_YES})
    pcf_.MQCMD_COPY_PROCESS({CMQCFC.MQCACF_FROM_PROCESS_NAME: b"CMD.PROC", CMQCFC.MQCACF_TO_PROCESS_NAME: b"CMD.PROC2"})
    (names,) = pcf_.MQCMD_INQUIRE_PROCESS_NAMES({CMQC.MQCA_PROCESS_NAME: b"CMD.PROC*"})
    assert sorted(names[CMQCFC.MQCACF_PROCESS_NAMES]) == [b"CMD.PROC", b"CMD.PROC2"]
    (proc,) = pcf_.MQCMD_INQUIRE_PROCESS({CMQC.MQCA_PROCESS_NAME: b"CMD.PROC2"})
    assert proc[CMQC.MQCA_APPL_ID] == b"PAYROLL" and proc[CMQC.MQIA_APPL_TYPE] == CMQC.MQAT_CICS
    for name in (b"CMD.PROC", b"CMD.PROC2"):
        pcf_.MQCMD_DELETE_PROCESS({CMQC.MQCA_PROCESS_NAME: name})
    # a topic
    pcf_.MQCMD_CREATE_TOPIC({CMQC.MQCA_TOPIC_NAME: b"CMD.TOPIC", CMQC.MQCA_TOPIC_STRING: b"cmd/prices"})
    (topic,) = pcf_.MQCMD_INQUIRE_TOPIC({CMQC.MQCA_TOPIC_NAME: b"CMD.TOPIC"})
    assert topic[CMQC.MQCA_TOPIC_STRING] == b"cmd/prices"
    pcf_.MQCMD_DELETE_TOPIC({CMQC.MQCA_TOPIC_NAME: b"CMD.TOPIC"})
    # a CF structure and its status, the group
    pcf_.MQCMD_CREATE_CF_STRUC({CMQC.MQCA_CF_STRUC_NAME: b"CMDSTR", CMQC.MQIA_CF_LEVEL: 5})
    (struc,) = pcf_.MQCMD_INQUIRE_CF_STRUC({CMQC.MQCA_CF_STRUC_NAME: b"CMDSTR"})
    assert struc[CMQC.MQIA_CF_LEVEL] == 5
    assert pcf_.MQCMD_INQUIRE_CF_STRUC_STATUS({CMQC.MQCA_CF_STRUC_NAME: b"CMDSTR"})
    pcf_.MQCMD_DELETE_CF_STRUC({CMQC.MQCA_CF_STRUC_NAME: b"CMDSTR"})
    assert pcf_.MQCMD_INQUIRE_QSG()
    # a string filter (MQCFSF) on queue descriptions
    pcf_.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: b"CMD.DESC.Q", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL,
                         CMQC.MQCA_Q_DESC: b"payroll input", CMQCFC.MQIACF_REPLACE: CMQCFC.MQRP_YES})
    found = pcf_.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"*"}, [pymqi.Filter(CMQC.MQCA_Q_DESC).like(b"payroll*")])
    assert [f[CMQC.MQCA_Q_NAME] for f in found] == [b"CMD.DESC.Q"]
    # Escape: MQSC text in, the response text out
    lines = pcf_.MQCMD_ESCAPE({CMQCFC.MQIACF_ESCAPE_TYPE: CMQCFC.MQET_MQSC,
                               CMQCFC.MQCACF_ESCAPE_TEXT: b"DISPLAY CMDSERV"})
    assert any(b"CSQN206I" in line[CMQCFC.MQCACF_ESCAPE_TEXT] for line in lines)
    # a command this server does not know, and a parameter its command does not take
    assert reason_of(lambda: pcf_.MQCMD_START_CHANNEL_INIT()).reason == CMQCFC.MQRCCF_CFH_COMMAND_ERROR
    err = reason_of(lambda: pcf_.MQCMD_CREATE_PROCESS({CMQC.MQCA_PROCESS_NAME: b"X", CMQC.MQIA_MAX_Q_DEPTH: 1}))
    assert err.reason == CMQCFC.MQRCCF_CFIN_PARM_ID_ERROR
    pcf_.MQCMD_DELETE_Q({CMQC.MQCA_Q_NAME: b"CMD.DESC.Q"})
    pcf_.disconnect()


def test_a_malformed_pcf_message_is_answered_with_its_reason(group, connect):
    bad_length = struct.pack("<9i", pcf.MQCFT_COMMAND, 40, 1, CMQCFC.MQCMD_INQUIRE_Q, 1, 1, 0, 0, 0)
    (reply,) = [pcf.decode(d, big=False) for _, d in _request(connect(), bad_length, CMQC.MQFMT_ADMIN)]
    assert (reply.header.type, reply.header.comp_code, reply.header.reason) == (pcf.MQCFT_RESPONSE, 2,
                                                                                CMQCFC.MQRCCF_CFH_LENGTH_ERROR)
    # the header counts a parameter the message does not hold: MQRCCF_MSG_LENGTH_ERROR, in XR form
    short = struct.pack("<9i", pcf.MQCFT_COMMAND_XR, 36, 3, CMQCFC.MQCMD_INQUIRE_Q, 1, 1, 0, 0, 1)
    replies = [pcf.decode(d, big=False) for _, d in _request(connect(), short, CMQC.MQFMT_ADMIN)]
    reason = CMQCFC.MQRCCF_MSG_LENGTH_ERROR
    assert [(m.header.type, m.header.reason) for m in replies] == [(pcf.MQCFT_XR_MSG, reason),
                                                                    (pcf.MQCFT_XR_SUMMARY, reason)]


def test_a_zos_program_in_ebcdic_and_big_endian(group, connect):
    """What a z/OS program sends: integers big-endian (Encoding 785), strings in EBCDIC (CCSID 500);
    the replies come back the same way."""
    qmgr = connect()
    request = pcf.encode(pcf.Header(pcf.MQCFT_COMMAND_XR, CMQCFC.MQCMD_INQUIRE_Q_NAMES, 3),
                         [pcf.Parameter(pcf.MQCFT_STRING, CMQC.MQCA_Q_NAME, "SYSTEM.COMMAND.*", ccsid=500)], big=True)
    assert b"SYSTEM" not in request
    reply = pymqi.OD(ObjectName=b"SYSTEM.COMMAND.REPLY.MODEL", DynamicQName=b"ZOS.REPLY.*")
    rq = pymqi.Queue(qmgr, reply, CMQC.MQOO_INPUT_EXCLUSIVE)
    md = pymqi.MD(Format=CMQC.MQFMT_ADMIN, MsgType=CMQC.MQMT_REQUEST, ReplyToQ=reply.ObjectName,
                  Encoding=pcf.MQENC_ZOS, CodedCharSetId=500)
    pymqi.Queue(qmgr, "SYSTEM.COMMAND.INPUT", CMQC.MQOO_OUTPUT).put(request, md,
                                                                   pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT, WaitInterval=5000,
                    MatchOptions=CMQC.MQMO_MATCH_CORREL_ID)
    got = pymqi.MD(CorrelId=md.MsgId)
    data = rq.get(None, got, gmo)
    assert got.Encoding == pcf.MQENC_ZOS and got.CodedCharSetId == 500 and b"SYSTEM" not in data
    item = pcf.decode(data, big=True, ccsid=500)
    assert item.header.type == pcf.MQCFT_XR_ITEM
    names = {p.parameter: p.value for p in item.parameters}[CMQCFC.MQCACF_Q_NAMES]
    assert names == ["SYSTEM.COMMAND.INPUT", "SYSTEM.COMMAND.REPLY.MODEL"]
    rq.close()


def test_standard_form_failure_names_the_parameter(group, connect):
    missing = pcf.encode(pcf.Header(pcf.MQCFT_COMMAND, CMQCFC.MQCMD_CREATE_Q),
                         [pcf.Parameter(pcf.MQCFT_STRING, CMQC.MQCA_Q_NAME, "CMD.NO.TYPE")])
    (reply,) = [pcf.decode(d, big=False) for _, d in _request(connect(), missing, CMQC.MQFMT_ADMIN)]
    assert (reply.header.type, reply.header.comp_code, reply.header.reason) == (
        pcf.MQCFT_RESPONSE, 2, CMQCFC.MQRCCF_PARM_COUNT_TOO_SMALL)
    assert {p.parameter: p.value for p in reply.parameters} == {CMQCFC.MQIACF_PARAMETER_ID: CMQC.MQIA_Q_TYPE}


def test_mqsc_display_where_shows_only_the_filter_attribute(group, connect):
    """The command server runs MQSC as POST /v1/admin/mqsc does: a generic DISPLAY with WHERE
    shows the name, TYPE, QSGDISP and the filter attribute, as z/OS answers it."""
    qmgr = connect()
    _request(qmgr, b"DEFINE QLOCAL(CMD.WHERE.Q) MAXDEPTH(4242) REPLACE", CMQC.MQFMT_STRING)
    lines = [d.decode() for _, d in _request(qmgr, b"DISPLAY QLOCAL(CMD.WHERE.*) WHERE(MAXDEPTH EQ 4242)",
                                            CMQC.MQFMT_STRING)]
    (line,) = [line for line in lines if line.startswith("CSQM401I")]
    assert "QUEUE(CMD.WHERE.Q)" in line and "MAXDEPTH(4242)" in line and "QSGDISP(QMGR)" in line
    assert "DEFPSIST" not in line and "DESCR" not in line  # not every attribute
