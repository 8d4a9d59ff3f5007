"""MQSC as real IBM MQ scripts use it (issue 16, point 4), over HTTP on real queue managers with
authentication on: IBM's SET AUTHREC syntax and authority names (the MQ developer
configuration grants what it grants on IBM MQ), and DISPLAY output shaped as IBM's."""

from __future__ import annotations

import httpx
import pytest

from tests.support.security import ADMIN, assert_2035, mqsc, mqsc_ok, qsg_cli

APP = ("app", "app-secret")
OPS = ("ops", "ops-secret")

# IBM MQ's developer configuration (the mq-dev-config.mqsc of IBM's container image), as far as
# it concerns objects this emulator has: the queues and the authority records of group mqclient.
DEV_CONFIG = """\
* Developer queues
DEFINE QLOCAL('DEV.QUEUE.1') REPLACE
DEFINE QLOCAL('DEV.QUEUE.2') REPLACE
DEFINE QLOCAL('DEV.DEAD.LETTER.QUEUE') REPLACE
* Developer authority records
SET AUTHREC OBJTYPE(QMGR) GROUP('mqclient') AUTHADD(CONNECT,INQ)
SET AUTHREC PROFILE('DEV.**') OBJTYPE(QUEUE) GROUP('mqclient') AUTHADD(BROWSE,GET,INQ,PUT,DSP)
SET AUTHREC PROFILE('DEV.**') OBJTYPE(TOPIC) GROUP('mqclient') AUTHADD(PUB,SUB)
SET AUTHREC PROFILE('SYSTEM.ADMIN.COMMAND.QUEUE') OBJTYPE(QUEUE) GROUP('mqclient') AUTHADD(DSP,INQ,PUT)
SET AUTHREC PROFILE('SYSTEM.DEFAULT.MODEL.QUEUE') OBJTYPE(QUEUE) GROUP('mqclient') AUTHADD(DSP,GET)
"""


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"], env={"QSG_AUTH": "on"})
    qsg_cli(g, "user", "add", "admin", "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    qsg_cli(g, "user", "add", "app", "--group", "mqclient", "--password-stdin", stdin=APP[1] + "\n")
    qsg_cli(g, "user", "add", "ops", "--group", "mqadmin", "--password-stdin", stdin=OPS[1] + "\n")
    return g


def _connect(group, qm: str, auth) -> httpx.Response:
    return httpx.post(f"{group.url(qm)}/v1/connections", auth=auth)


def _open(group, qm: str, hconn: str, queue: str, options: list[str], auth) -> httpx.Response:
    return httpx.post(f"{group.url(qm)}/v1/connections/{hconn}/objects", auth=auth,
                      json={"object_name": queue, "options": options})


def test_ibm_developer_configuration_grants_what_it_grants(group):
    assert_2035(_connect(group, "QM1", APP))  # nothing granted yet
    mqsc_ok(group, "QM1", DEV_CONFIG)
    mqsc_ok(group, "QM1", "DEFINE QLOCAL(APP.OTHER) REPLACE")
    r = _connect(group, "QM1", APP)
    assert r.status_code == 201, r.text
    hconn = r.json()["hconn"]
    out = _open(group, "QM1", hconn, "DEV.QUEUE.1", ["OUTPUT", "INQUIRE"], APP)
    assert out.status_code == 201, out.text
    put = httpx.post(f"{group.url('QM1')}/v1/connections/{hconn}/objects/{out.json()['hobj']}/put", auth=APP,
                     json={"data": "hello", "options": ["NO_SYNCPOINT"]})
    assert put.status_code == 201, put.text
    inp = _open(group, "QM1", hconn, "DEV.QUEUE.1", ["INPUT_SHARED", "BROWSE"], APP)
    assert inp.status_code == 201, inp.text
    got = httpx.post(f"{group.url('QM1')}/v1/connections/{hconn}/objects/{inp.json()['hobj']}/get", auth=APP,
                     json={"options": ["NO_SYNCPOINT"]})
    assert got.status_code == 200 and got.json()["data"] == "hello"
    # refused elsewhere: another queue, an option not granted, and every MQSC command
    for queue, options in (("APP.OTHER", ["OUTPUT"]), ("APP.OTHER", ["INPUT_SHARED"]), ("DEV.QUEUE.2", ["SET"])):
        assert_2035(_open(group, "QM1", hconn, queue, options, APP))
    assert [r["reason"] for r in mqsc(group, "QM1", "DISPLAY QLOCAL(DEV.QUEUE.1)", auth=APP)] == [2035]
    # the records as IBM's DISPLAY AUTHREC shows them
    (res,) = mqsc_ok(group, "QM2", "DISPLAY AUTHREC PROFILE('DEV.**') OBJTYPE(QUEUE)")
    assert res["objects"] == [{"PROFILE": "DEV.**", "ENTITY": "mqclient", "ENTTYPE": "GROUP", "OBJTYPE": "QUEUE",
                               "AUTHLIST": "BROWSE,DSP,GET,INQ,PUT"}]


def test_generic_authorities_and_display_authrec_filters(group):
    # ALLADM on the queue manager makes an MQSC administrator; ALL on a queue is every authority
    assert [r["reason"] for r in mqsc(group, "QM1", "DISPLAY QMGR", auth=OPS)] == [2035]
    (res,) = mqsc_ok(group, "QM1", "SET AUTHREC OBJTYPE(QMGR) GROUP('mqadmin') AUTHADD(CONNECT,ALLADM)")
    assert res["objects"][0]["AUTHLIST"] == "CHG,CONNECT,DLT,DSP"
    assert [r["completion_code"] for r in mqsc(group, "QM2", "DISPLAY QMGR", auth=OPS)] == [0]
    (res,) = mqsc_ok(group, "QM1", "SET AUTHREC PROFILE('OPS.*') OBJTYPE(QUEUE) GROUP('mqadmin') AUTHADD(ALL)\n"
                                   "SET AUTHREC PROFILE('OPS.*') OBJTYPE(QUEUE) GROUP('mqadmin') AUTHRMV(ALLADM)")[1:]
    assert res["objects"][0]["AUTHLIST"] == "BROWSE,CRT,GET,INQ,PUT,PASSALL,PASSID,SET,SETALL,SETID"
    mqsc_ok(group, "QM1", "SET AUTHREC PROFILE('OPS.?') OBJTYPE(PROCESS) PRINCIPAL('ops') AUTHADD(DSP,INQ)")
    (res,) = mqsc(group, "QM1", "SET AUTHREC PROFILE('OPS.*') OBJTYPE(QUEUE) GROUP('mqadmin') AUTHADD(CONNECT)")
    assert res["reason"] == 4005  # MQRCCF_ATTR_VALUE_ERROR: not an authority of a queue
    (res,) = mqsc(group, "QM1", "SET AUTHREC PROFILE('X') OBJTYPE(BOGUS) GROUP('mqadmin') AUTHADD(DSP)")
    assert res["completion_code"] == 2
    # MATCH(PROFILE) shows the generic profiles that apply to a name, MATCH(EXACT) only that name,
    # MATCH(MEMBERSHIP) a principal's records and those of its groups
    (res,) = mqsc_ok(group, "QM1", "DISPLAY AUTHREC PROFILE('OPS.A') OBJTYPE(PROCESS)")
    assert [(o["PROFILE"], o["ENTITY"], o["ENTTYPE"]) for o in res["objects"]] == [("OPS.?", "ops", "PRINCIPAL")]
    (res,) = mqsc_ok(group, "QM1", "DISPLAY AUTHREC PROFILE('OPS.A') OBJTYPE(PROCESS) MATCH(EXACT)")
    assert res["objects"] == []
    (res,) = mqsc_ok(group, "QM1", "DISPLAY AUTHREC PRINCIPAL('ops') MATCH(MEMBERSHIP)")
    assert {(o["OBJTYPE"], o["ENTITY"]) for o in res["objects"]} == {("QMGR", "mqadmin"), ("QUEUE", "mqadmin"),
                                                                      ("PROCESS", "ops")}
    (res,) = mqsc_ok(group, "QM1", "DISPLAY AUTHREC PRINCIPAL('ops')")
    assert {(o["OBJTYPE"], o["ENTITY"]) for o in res["objects"]} == {("PROCESS", "ops")}
    mqsc_ok(group, "QM2", "DELETE AUTHREC PROFILE('OPS.?') OBJTYPE(PROCESS) PRINCIPAL('ops')")
    (res,) = mqsc_ok(group, "QM1", "DISPLAY AUTHREC PRINCIPAL('ops')")
    assert res["objects"] == []
