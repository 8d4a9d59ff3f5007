"""The IGQ agent's authority check (IGQAUT, IGQUSER of the receiving queue manager) with
authentication on: a message whose checked users may not PUT on the destination queue goes to
the destination's dead-letter queue with MQRC_NOT_AUTHORIZED; with the right granted it
arrives. And IBM's table of who is checked, as a pure function."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from app.core.igq import IGQ_XMITQ
from app.core.rights import igq_checked_users
from tests.support.cluster import FAST
from tests.support.mq import MQ, MQFailed
from tests.support.security import ADMIN, ALICE, mqsc_ok, qsg_cli
from tests.support.waits import wait_until

ENV = {**FAST, "QSG_AUTH": "on"}


def test_who_the_igq_agent_checks():
    # IBM's two-check rows for hlq.resourcename; SND and a blank IGQUSER (the QMs' own ids): none
    assert igq_checked_users("DEF", "", "alice") == ()
    assert igq_checked_users("DEF", "igqa", "alice") == ("igqa",)
    assert igq_checked_users("CTX", "igqa", "alice") == ("alice",)
    assert igq_checked_users("CTX", "igqa", "") == ()  # put while authentication was off
    assert igq_checked_users("ONLYIGQ", "igqa", "alice") == ("igqa",)
    assert igq_checked_users("ONLYIGQ", "", "alice") == ()
    assert igq_checked_users("ALTIGQ", "igqa", "alice") == ("igqa", "alice")
    assert igq_checked_users("ALTIGQ", "", "alice") == ("alice",)
    assert igq_checked_users("ALTIGQ", "alice", "alice") == ("alice",)
    assert igq_checked_users("DEFAULT", "igqa", "alice") == ("igqa",)  # an unknown value counts as DEF


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"], env=ENV)
    qsg_cli(g, "user", "add", "admin", "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    qsg_cli(g, "user", "add", "alice", "--password-stdin", stdin=ALICE[1] + "\n")
    qsg_cli(g, "user", "add", "igqagent", "--no-password")
    mqsc_ok(g, "QM1", f"DEFINE CFSTRUCT(APPL1)\n"
                      f"DEFINE QLOCAL({IGQ_XMITQ}) QSGDISP(SHARED) CFSTRUCT(APPL1) USAGE(XMITQ)\n"
                      "DEFINE QLOCAL(DEST.Q)\nDEFINE QLOCAL(DLQ)\nALTER QMGR DEADQ(DLQ) IGQ(ENABLED)\n"
                      # alice may put to QM2's remote queue definition, not to QM1's DEST.Q
                      "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(CONNECT)\n"
                      "SET AUTHREC PROFILE('TO.QM1') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(PUT)")
    mqsc_ok(g, "QM2", "ALTER QMGR IGQ(ENABLED)\nDEFINE QREMOTE(TO.QM1) RNAME(DEST.Q) RQMNAME(QM1)")
    wait_until(lambda: httpx.get(f"{g.url('QM1')}/v1/qmgr", auth=ADMIN).json()["IGQAGENT"] == "RUNNING",
               what="QM1's IGQ agent running")
    return g


def send_from_qm2(group, data: str) -> None:
    MQ(group.url("QM2"), "SENDER", auth=ALICE).put1("TO.QM1", data)


def next_on_qm1(group, queue: str) -> dict:
    admin = MQ(group.url("QM1"), auth=ADMIN)
    return admin.get(admin.open(queue, ["INPUT_SHARED"]), ["WAIT", "NO_SYNCPOINT"], wait_ms=15_000)


def assert_dead_lettered(group, data: str) -> None:
    dead = next_on_qm1(group, "DLQ")
    header = json.loads(dead["data"])
    assert dead["md"]["format"] == "MQDEAD"
    assert (header["Reason"], header["DestQName"], header["DestQMgrName"]) == (2035, "DEST.Q", "QM1")
    assert header["MsgDesc"]["user_identifier"] == "alice"
    assert base64.b64decode(header["MsgData"]).decode() == data


def assert_delivered(group, data: str) -> None:
    got = next_on_qm1(group, "DEST.Q")
    assert got["data"] == data and got["md"]["user_identifier"] == "alice" and got["md"]["put_qmgr"] == "QM2"


def set_qm1(group, script: str) -> dict:
    (res,) = mqsc_ok(group, "QM1", script + "\nDISPLAY QMGR IGQAUT IGQUSER")[-1:]
    return res["objects"][0]


def test_default_checks_nobody_but_the_queue_managers(group):
    shown = set_qm1(group, "ALTER QMGR IGQAUT(DEF) IGQUSER(' ')")
    assert (shown["IGQAUT"], shown["IGQUSER"]) == ("DEF", "")
    send_from_qm2(group, "default")
    assert_delivered(group, "default")


def test_ctx_checks_the_user_who_put_the_message(group):
    shown = set_qm1(group, "ALTER QMGR IGQAUT(CTX)")
    assert shown["IGQAUT"] == "CTX"
    send_from_qm2(group, "no right on DEST.Q")
    assert_dead_lettered(group, "no right on DEST.Q")
    mqsc_ok(group, "QM2", "SET AUTHREC PROFILE('DEST.*') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(PUT)")
    send_from_qm2(group, "granted")
    assert_delivered(group, "granted")
    mqsc_ok(group, "QM1", "DELETE AUTHREC PROFILE('DEST.*') OBJTYPE(QUEUE) PRINCIPAL('alice')")


def test_igquser_is_checked_for_def_onlyigq_and_altigq(group):
    set_qm1(group, "ALTER QMGR IGQAUT(DEF) IGQUSER('igqagent')")
    send_from_qm2(group, "igqagent may not put")
    assert_dead_lettered(group, "igqagent may not put")
    mqsc_ok(group, "QM1", "SET AUTHREC PROFILE('DEST.Q') OBJTYPE(QUEUE) PRINCIPAL('igqagent') AUTHADD(PUT)")
    send_from_qm2(group, "igqagent may put")
    assert_delivered(group, "igqagent may put")
    set_qm1(group, "ALTER QMGR IGQAUT(ONLYIGQ)")
    send_from_qm2(group, "only igqagent")
    assert_delivered(group, "only igqagent")
    shown = set_qm1(group, "ALTER QMGR IGQAUT(ALTIGQ)")  # igqagent and alice, who has no right
    assert (shown["IGQAUT"], shown["IGQUSER"]) == ("ALTIGQ", "igqagent")
    send_from_qm2(group, "both needed")
    assert_dead_lettered(group, "both needed")
    info = httpx.get(f"{group.url('QM1')}/v1/qmgr", auth=ADMIN).json()
    assert (info["IGQAUT"], info["IGQUSER"]) == ("ALTIGQ", "igqagent")
    with pytest.raises(MQFailed):
        MQ(group.url("QM1"), auth=ALICE).put1("DEST.Q", "alice cannot put on QM1 herself either")
    set_qm1(group, "ALTER QMGR IGQAUT(DEF) IGQUSER(' ')")


def test_igqaut_keywords_follow_ibm(group):
    results = httpx.post(f"{group.url('QM1')}/v1/admin/mqsc", auth=ADMIN,
                         json={"script": "ALTER QMGR IGQAUT(DEFAULT)"}).json()["results"]
    assert results[0]["reason"] == 4005  # MQRCCF_ATTR_VALUE_ERROR: IBM's word is DEF
