"""NAMELIST and CHANNEL definitions on real queue managers (SQLite and PostgreSQL repositories):
MQSC over REST and PCF through the command server (the pymqi drop-in's PCFExecute), the
commands that need the channel initiator (there is none: CSQM134I / MQRCCF_NO_CHANNEL_INITIATOR),
and DISPLAY QMSTATUS holding IBM's attributes only."""

from __future__ import annotations

import re

import httpx
import pytest

import qsg_pymqi as pymqi
from qsg_pymqi import CMQC, CMQCFC, CMQXC
from tests.support.names import uniq
from tests.support.pymqi_group import connections, reason_of


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def group(request, make_cluster):
    return make_cluster(["QM1", "QM2"], database=request.param)


@pytest.fixture
def connect(group):
    yield from connections(group)


def one(group, qm: str, command: str) -> dict:
    (result,) = group.mqsc(qm, command)
    return result


def objects(group, qm: str, command: str) -> list[dict]:
    result = one(group, qm, command)
    assert result["completion_code"] == 0, result
    return result["objects"]


def test_namelist_define_display_alter_delete_with_group_copies(group):
    nl = uniq("NL")
    group.mqsc_ok("QM1", f"DEFINE NAMELIST({nl}) NAMES(PAYROLL.IN, 'payroll.out') NLTYPE(QUEUE) "
                         f"DESCR('payroll queues') QSGDISP(GROUP)")
    (copy,) = objects(group, "QM2", f"DISPLAY NAMELIST({nl})")  # the COPY the GROUP object made on QM2
    assert copy["NAMELIST"] == nl and copy["QSGDISP"] == "COPY" and copy["NLTYPE"] == "QUEUE"
    assert copy["NAMES"] == ["PAYROLL.IN", "payroll.out"] and copy["NAMCOUNT"] == 2
    assert copy["DESCR"] == "payroll queues" and copy["ALTDATE"]
    assert {o["QSGDISP"] for o in objects(group, "QM1", f"DISPLAY NAMELIST({nl}) QSGDISP(ALL)")} == {"GROUP", "COPY"}
    # a second definition needs REPLACE; a private one of the same name may sit next to the group's
    assert one(group, "QM1", f"DEFINE NAMELIST({nl}) QSGDISP(GROUP)")["reason"] == 2100
    group.mqsc_ok("QM1", f"ALTER NAMELIST({nl}) NAMES() QSGDISP(GROUP)")
    (copy,) = objects(group, "QM2", f"DISPLAY NAMELIST({nl}) NAMCOUNT")
    assert copy == {"NAMELIST": nl, "QSGDISP": "COPY", "NAMCOUNT": 0}
    # LIKE, the NLTYPE filter, WHERE, and the text reply of the command server's MQSC form
    like = uniq("NL")
    group.mqsc_ok("QM1", f"DEFINE NAMELIST({like}) LIKE({nl}) NAMES(A, B, C) NLTYPE(CLUSTER)")
    assert [o["NAMELIST"] for o in objects(group, "QM1", f"DISPLAY NAMELIST({like[:6]}*) NLTYPE(CLUSTER)")] \
        == [like]
    assert [o["NAMELIST"] for o in objects(group, "QM1", "DISPLAY NAMELIST(*) WHERE(NAMCOUNT EQ 3)")] == [like]
    too_many = ", ".join(f"N{i}" for i in range(257))
    assert one(group, "QM1", f"ALTER NAMELIST({like}) NAMES({too_many})")["reason"] == 4005
    assert one(group, "QM1", f"ALTER NAMELIST({like}) NLTYPE(TOPIC)")["reason"] == 4005
    group.mqsc_ok("QM1", f"DELETE NAMELIST({like})\nDELETE NAMELIST({nl}) QSGDISP(GROUP)")
    assert one(group, "QM2", f"DISPLAY NAMELIST({nl})")["reason"] == 2085  # the copies went with it


def test_channel_definitions_by_type(group):
    sdr, svr = uniq("SDR")[:20], uniq("SVC")[:20]
    group.mqsc_ok("QM1", f"DEFINE CHANNEL({sdr}) CHLTYPE(SDR) TRPTYPE(TCP) CONNAME('mvs1.example.com(1414)') "
                         f"XMITQ(QM9) BATCHSZ(20) DESCR('to QM9')")
    (chl,) = objects(group, "QM1", f"DISPLAY CHANNEL({sdr})")
    assert list(chl)[:3] == ["CHANNEL", "CHLTYPE", "QSGDISP"]  # IBM's order: name, type, disposition
    assert (chl["CHLTYPE"], chl["CONNAME"], chl["XMITQ"], chl["BATCHSZ"]) == ("SDR", "mvs1.example.com(1414)",
                                                                            "QM9", 20)
    assert chl["DISCINT"] == 6000 and chl["HBINT"] == 300 and chl["KAINT"] == "AUTO"  # z/OS defaults
    assert "MAXINST" not in chl and "PUTAUT" not in chl  # only a sender's attributes
    group.mqsc_ok("QM1", f"DEFINE CHANNEL({svr}) CHLTYPE(SVRCONN) MCAUSER('app') MAXINST(20) QSGDISP(GROUP)")
    (conn,) = objects(group, "QM2", f"DISPLAY CHANNEL({svr})")
    assert (conn["QSGDISP"], conn["MCAUSER"], conn["MAXINST"], conn["DISCINT"]) == ("COPY", "app", 20, 0)
    assert "XMITQ" not in conn and "BATCHSZ" not in conn
    # the CHLTYPE rules
    assert one(group, "QM1", "DEFINE CHANNEL(NO.CONNAME) CHLTYPE(SDR) XMITQ(X)")["reason"] == 3228
    assert one(group, "QM1", "DEFINE CHANNEL(NO.TYPE) CONNAME(X)")["reason"] == 3228
    assert one(group, "QM1", "DEFINE CHANNEL(BAD.TYPE) CHLTYPE(MQTT)")["reason"] == 3034
    assert one(group, "QM1", "DEFINE CHANNEL(SVRCONN.XMITQ) CHLTYPE(SVRCONN) XMITQ(X)")["reason"] == 4041
    assert one(group, "QM1", f"ALTER CHANNEL({sdr}) CHLTYPE(RCVR) BATCHSZ(5)")["reason"] == 3034
    assert one(group, "QM1", f"ALTER CHANNEL({sdr}) BATCHSZ(5)")["reason"] == 3228
    assert one(group, "QM1", f"DEFINE CHANNEL({sdr}) CHLTYPE(RCVR) REPLACE")["reason"] == 3034
    assert one(group, "QM1", "DEFINE CHANNEL(A.NAME.OF.21.CHARS.XY) CHLTYPE(RCVR)")["reason"] == 4044
    group.mqsc_ok("QM1", f"ALTER CHANNEL({sdr}) CHLTYPE(SDR) BATCHSZ(5)")
    (chl,) = objects(group, "QM1", f"DISPLAY CHANNEL({sdr}) BATCHSZ")
    assert chl == {"CHANNEL": sdr, "CHLTYPE": "SDR", "QSGDISP": "QMGR", "BATCHSZ": 5}
    # TYPE selects by channel type; CSQ4INSX's default channels are there
    found = {o["CHANNEL"] for o in objects(group, "QM1", "DISPLAY CHANNEL(*) TYPE(SVRCONN) QSGDISP(LIVE)")}
    assert "SYSTEM.DEF.SVRCONN" in found and sdr not in found
    assert objects(group, "QM1", "DISPLAY CHANNEL(SYSTEM.DEF.SENDER)")[0]["CHLTYPE"] == "SDR"
    group.mqsc_ok("QM1", f"DELETE CHANNEL({sdr})\nDELETE CHANNEL({svr}) QSGDISP(GROUP)")
    assert one(group, "QM2", f"DISPLAY CHANNEL({svr})")["reason"] == 2085


@pytest.mark.parametrize("command", ["START CHANNEL(SYSTEM.DEF.SENDER)", "STOP CHANNEL(SYSTEM.DEF.SENDER)",
                                     "PING CHANNEL(SYSTEM.DEF.SENDER)", "DISPLAY CHSTATUS(*)", "DISPLAY CHINIT"])
def test_what_needs_the_channel_initiator_answers_as_zos_without_one(group, command):
    result = one(group, "QM1", command)
    assert (result["completion_code"], result["reason"]) == (2, 3217)  # MQRCCF_NO_CHANNEL_INITIATOR
    assert result["messages"][0].startswith("CSQM134I QM1 ")
    assert result["messages"][0].endswith("command requires an active channel initiator")


#: IBM's DISPLAY QMSTATUS attributes (IBM MQ on Multiplatforms; z/OS has no such command)
IBM_QMSTATUS = {"QMNAME", "STATUS", "STARTDA", "STARTTI", "CONNS", "CMDSERV", "CHINIT", "STANDBY", "INSTDESC",
                "INSTNAME", "INSTPATH", "LOG", "CURRLOG", "ARCHLOG", "ARCHSZ", "RECLOG", "REUSESZ", "LOGINUSE",
                "LOGPATH", "LOGUTIL", "MEDIALOG", "LDAPCONN", "HASTATUS", "AUTOCLUS", "QMFSSIZE",
                "QMFSINUSE", "QMFSUSED", "STARTSTAT", "STARTTMS"}


def test_display_qmstatus_has_only_ibm_attributes_and_the_agent_state_is_elsewhere(group):
    for result in group.mqsc_ok("QM1", "DISPLAY QMSTATUS ALL\nDISPLAY QMSTATUS CMDSCOPE(*)"):
        for row in result["objects"]:
            assert set(row) - {"QMNAME"} <= IBM_QMSTATUS, set(row) - IBM_QMSTATUS
            assert row["CHINIT"] == "STOPPED" and row["CMDSERV"] == "RUNNING"
    # the text reply a strict admin library parses (IBM REST runCommand): every KEY(VALUE) is IBM's
    r = httpx.post(f"{group.url('QM1')}/ibmmq/rest/v2/admin/action/qmgr/QM1/mqsc", timeout=10,
                   json={"type": "runCommand", "parameters": {"command": "DISPLAY QMSTATUS ALL"}},
                   headers={"ibm-mq-rest-csrf-token": "token"})
    (item,) = r.json()["commandResponse"]
    keys = {m.group(1) for line in item["text"] for m in re.finditer(r"\b([A-Z]+)\(", line)}
    assert "STATUS" in keys and keys - {"QMSTATUS"} <= IBM_QMSTATUS, keys - IBM_QMSTATUS
    # the emulator's own state: GET /v1/qmgr and /metrics (IGQ is DISABLED here: the agent is STOPPED)
    status = httpx.get(f"{group.url('QM1')}/v1/qmgr", timeout=10).json()
    assert status["IGQAGENT"] == "STOPPED" and status["CFCONN"] == "CONNECTED"
    assert "IGQRETRIES" in status and "IGQRESTARTS" in status
    metrics = httpx.get(f"{group.url('QM1')}/metrics", timeout=10).text
    assert 'qsg_igq_agent_state{state="STOPPED"} 1.0' in metrics and "qsg_igq_agent_restarts_total" in metrics


def test_namelists_and_channels_by_pcf(group, connect):
    pcf = pymqi.PCFExecute(connect())
    nl = uniq("PCFNL")
    pcf.MQCMD_CREATE_NAMELIST({CMQC.MQCA_NAMELIST_NAME: nl, CMQC.MQCA_NAMES: [b"Q.ONE", b"Q.TWO"],
                               CMQC.MQIA_NAMELIST_TYPE: CMQC.MQNT_Q, CMQC.MQCA_NAMELIST_DESC: b"by PCF"})
    (got,) = pcf.MQCMD_INQUIRE_NAMELIST({CMQC.MQCA_NAMELIST_NAME: nl})
    assert got[CMQC.MQCA_NAMES] == [b"Q.ONE", b"Q.TWO"] and got[CMQC.MQIA_NAME_COUNT] == 2
    assert got[CMQC.MQIA_NAMELIST_TYPE] == CMQC.MQNT_Q and got[CMQC.MQCA_NAMELIST_DESC] == b"by PCF"
    pcf.MQCMD_CHANGE_NAMELIST({CMQC.MQCA_NAMELIST_NAME: nl, CMQC.MQCA_NAMES: [b"Q.THREE"]})
    pcf.MQCMD_COPY_NAMELIST({CMQCFC.MQCACF_FROM_NAMELIST_NAME: nl, CMQCFC.MQCACF_TO_NAMELIST_NAME: nl + "C"})
    (names,) = pcf.MQCMD_INQUIRE_NAMELIST_NAMES({CMQC.MQCA_NAMELIST_NAME: nl + "*"})
    assert sorted(names[CMQCFC.MQCACF_NAMELIST_NAMES]) == [nl.encode(), (nl + "C").encode()]
    (copied,) = pcf.MQCMD_INQUIRE_NAMELIST({CMQC.MQCA_NAMELIST_NAME: nl + "C",
                                            CMQCFC.MQIACF_NAMELIST_ATTRS: [CMQC.MQCA_NAMES]})
    assert copied[CMQC.MQCA_NAMES] == [b"Q.THREE"]
    for name in (nl, nl + "C"):
        pcf.MQCMD_DELETE_NAMELIST({CMQC.MQCA_NAMELIST_NAME: name})
    # channels: what pymqi's and ibmmq's define_channel / dis_channels samples send
    chl = uniq("PCF")[:20]
    pcf.MQCMD_CREATE_CHANNEL({CMQCFC.MQCACH_CHANNEL_NAME: chl, CMQCFC.MQIACH_CHANNEL_TYPE: CMQXC.MQCHT_SVRCONN,
                              CMQCFC.MQIACF_REPLACE: CMQCFC.MQRP_YES})
    found = pcf.MQCMD_INQUIRE_CHANNEL({CMQCFC.MQCACH_CHANNEL_NAME: b"SYSTEM.*"})
    assert {f[CMQCFC.MQCACH_CHANNEL_NAME].strip() for f in found} >= {b"SYSTEM.DEF.SENDER", b"SYSTEM.DEF.SVRCONN"}
    pcf.MQCMD_CHANGE_CHANNEL({CMQCFC.MQCACH_CHANNEL_NAME: chl, CMQCFC.MQIACH_CHANNEL_TYPE: CMQXC.MQCHT_SVRCONN,
                              CMQCFC.MQCACH_DESC: b"changed", CMQCFC.MQIACH_MAX_INSTANCES: 7})
    (got,) = pcf.MQCMD_INQUIRE_CHANNEL({CMQCFC.MQCACH_CHANNEL_NAME: chl})
    assert got[CMQCFC.MQIACH_CHANNEL_TYPE] == CMQXC.MQCHT_SVRCONN and got[CMQCFC.MQCACH_DESC] == b"changed"
    assert got[CMQCFC.MQIACH_MAX_INSTANCES] == 7 and got[CMQCFC.MQIACH_KEEP_ALIVE_INTERVAL] == -1  # AUTO
    (names,) = pcf.MQCMD_INQUIRE_CHANNEL_NAMES({CMQCFC.MQCACH_CHANNEL_NAME: b"*",
                                                CMQCFC.MQIACH_CHANNEL_TYPE: CMQXC.MQCHT_CLUSRCVR})
    assert names[CMQCFC.MQCACH_CHANNEL_NAMES] == [b"SYSTEM.DEF.CLUSRCVR"]
    err = reason_of(lambda: pcf.MQCMD_START_CHANNEL({CMQCFC.MQCACH_CHANNEL_NAME: chl}))
    assert err.reason == CMQCFC.MQRCCF_NO_CHANNEL_INITIATOR
    err = reason_of(lambda: pcf.MQCMD_INQUIRE_CHANNEL_STATUS({CMQCFC.MQCACH_CHANNEL_NAME: b"*"}))
    assert err.reason == CMQCFC.MQRCCF_NO_CHANNEL_INITIATOR
    pcf.MQCMD_DELETE_CHANNEL({CMQCFC.MQCACH_CHANNEL_NAME: chl})
    err = reason_of(lambda: pcf.MQCMD_INQUIRE_CHANNEL({CMQCFC.MQCACH_CHANNEL_NAME: chl}))
    assert err.reason == CMQCFC.MQRCCF_CHANNEL_NOT_FOUND
    pcf.disconnect()


def test_mqinq_of_an_opened_namelist(group):
    """MQOPEN with ObjectType MQOT_NAMELIST (inquire only, as IBM allows) and MQINQ of its
    names, by MQSC name or IBM's selectors; an ALTER since the open is seen."""
    nl = uniq("INQNL")
    group.mqsc_ok("QM1", f"DEFINE NAMELIST({nl}) NAMES(A.Q, B.Q) NLTYPE(QUEUE) DESCR('queues')")
    base = group.url("QM1")
    with httpx.Client(base_url=base, timeout=10) as http:
        hconn = http.post("/v1/connections", json={"appl_name": "NLINQ"}).json()["hconn"]
        opened = http.post(f"/v1/connections/{hconn}/objects",
                           json={"object_name": nl, "object_type": "NAMELIST", "options": ["INQUIRE"]})
        assert opened.status_code == 201 and opened.json()["object_type"] == "NAMELIST", opened.text
        hobj = opened.json()["hobj"]
        got = http.get(f"/v1/connections/{hconn}/objects/{hobj}/attributes",
                       params={"selectors": "MQCA_NAMES,MQIA_NAME_COUNT,NLTYPE"}).json()
        assert got == {"NAMES": ["A.Q", "B.Q"], "NAMCOUNT": 2, "NLTYPE": "QUEUE"}
        group.mqsc_ok("QM1", f"ALTER NAMELIST({nl}) NAMES(C.Q)")
        got = http.get(f"/v1/connections/{hconn}/objects/{hobj}/attributes", params={"selectors": "2020"}).json()
        assert got == {"NAMES": ["C.Q"]}
        # a queue selector is not a namelist's; a namelist opens for inquire only; one not defined
        bad = http.get(f"/v1/connections/{hconn}/objects/{hobj}/attributes", params={"selectors": "CURDEPTH"})
        assert bad.json()["error"]["reason"] == 2067
        for options, name, reason in ((["OUTPUT"], nl, 2045), (["INQUIRE"], "NO.SUCH.NL", 2085)):
            r = http.post(f"/v1/connections/{hconn}/objects",
                          json={"object_name": name, "object_type": 2, "options": options})
            assert r.json()["error"]["reason"] == reason
        http.delete(f"/v1/connections/{hconn}/objects/{hobj}")
        http.delete(f"/v1/connections/{hconn}")
