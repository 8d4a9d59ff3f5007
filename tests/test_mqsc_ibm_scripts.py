"""MQSC as real IBM MQ scripts use it (docs/howto/ibm-tools.md), over HTTP on real queue managers with
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


# ---- DISPLAY as IBM shows it ------------------------------------------------------------------


def test_display_returns_ibm_attributes_only_and_only_those_asked(group):
    mqsc_ok(group, "QM1", "DEFINE QLOCAL(SHOW.Q) MAXDEPTH(7) REPLACE\n"
                          "DEFINE PROCESS(SHOW.P) APPLICID('/bin/true') REPLACE")
    (res,) = mqsc_ok(group, "QM1", "DISPLAY QLOCAL(SHOW.Q) CURDEPTH MAXDEPTH")
    assert res["objects"] == [{"QUEUE": "SHOW.Q", "TYPE": "QLOCAL", "QSGDISP": "QMGR", "CURDEPTH": 0,
                               "MAXDEPTH": 7}]
    (res,) = mqsc_ok(group, "QM1", "DISPLAY QLOCAL(SHOW.Q) ALL")
    assert {"DESCR", "CURDEPTH", "IPPROCS", "TRIGGER"} <= set(res["objects"][0])
    (proc,) = mqsc_ok(group, "QM1", "DISPLAY PROCESS(SHOW.P)")[0]["objects"]
    assert "TYPE" not in proc and proc["PROCESS"] == "SHOW.P" and proc["QSGDISP"] == "QMGR"
    (qmgr,) = mqsc_ok(group, "QM1", "DISPLAY QMGR")[0]["objects"]
    assert qmgr["QMNAME"] == "QM1" and qmgr["QSGNAME"] and "IGQAUT" in qmgr and "IGQUSER" in qmgr
    assert not {"STATUS", "IGQAGENT", "IGQRETRIES", "IGQRESTARTS", "IGQRETRYREASON"} & set(qmgr)
    (res,) = mqsc_ok(group, "QM1", "DISPLAY QMGR DEADQ TRIGINT")
    assert set(res["objects"][0]) == {"QMNAME", "DEADQ", "TRIGINT"}
    (status,) = mqsc_ok(group, "QM1", "DISPLAY QMSTATUS")[0]["objects"]
    assert status["STATUS"] == "RUNNING" and status["CMDSERV"] == "RUNNING" and status["CHINIT"] == "STOPPED"
    assert not {"IGQAGENT", "IGQRETRIES", "IGQRESTARTS", "IGQRETRYREASON", "CFCONN"} & set(status)
    (res,) = mqsc(group, "QM1", "DISPLAY QLOCAL(SHOW.Q) CURDPTH")
    assert res["reason"] == 3016 or res["completion_code"] == 2  # no such attribute: a syntax error
    (res,) = mqsc_ok(group, "QM1", "DISPLAY CMDSERV")
    assert any("COMMAND SERVER STATUS IS RUNNING" in m for m in res["messages"])


def _mq(group, qm: str, auth=ADMIN) -> tuple[str, httpx.Client]:
    client = httpx.Client(base_url=group.url(qm), auth=auth, timeout=30)
    r = client.post("/v1/connections", json={"appl_name": "PAYROLL"})
    assert r.status_code == 201, r.text
    return r.json()["hconn"], client


def test_qstatus_handles_connections_and_clear_while_browsed(group):
    mqsc_ok(group, "QM1", "DEFINE QLOCAL(STAT.Q) REPLACE")
    hconn, c = _mq(group, "QM1")
    browse = c.post(f"/v1/connections/{hconn}/objects", json={"object_name": "STAT.Q", "options": ["BROWSE",
                                                                                                    "INQUIRE"]})
    out = c.post(f"/v1/connections/{hconn}/objects", json={"object_name": "STAT.Q", "options": ["OUTPUT"]})
    assert browse.status_code == out.status_code == 201
    put = c.post(f"/v1/connections/{hconn}/objects/{out.json()['hobj']}/put", json={"data": "x",
                                                                                      "options": ["SYNCPOINT"]})
    assert put.status_code == 201
    (res,) = mqsc_ok(group, "QM1", "DISPLAY QSTATUS(STAT.Q)")
    (row,) = res["objects"]
    assert "QMNAME" not in row and row["IPPROCS"] == 0 and row["OPPROCS"] == 1 and row["UNCOM"] == "YES"
    assert row["LPUTDATE"] and row["LPUTTIME"] and row["LGETDATE"] == "" and row["MSGAGE"] == ""
    (res,) = mqsc_ok(group, "QM1", "DISPLAY QSTATUS(STAT.Q) TYPE(HANDLE)")
    rows = sorted(res["objects"], key=lambda r: r["OPENOPTS"])
    assert [(r["BROWSE"], r["INQUIRE"], r["OUTPUT"], r["INPUT"], r["OPENOPTS"]) for r in rows] == [
        ("NO", "NO", "YES", "NO", 16), ("YES", "YES", "NO", "NO", 40)]
    assert all(r["CONN"] == hconn and r["USERID"] == "admin" and r["APPLTAG"] == "PAYROLL" for r in rows)
    assert all(r["URTYPE"] == "QMGR" and r["URID"] == hconn for r in rows)  # a unit of work is in progress
    # IBM: CLEAR fails while any handle has the queue open, even with IPPROCS(0); the error says which
    (res,) = mqsc(group, "QM1", "CLEAR QLOCAL(STAT.Q)")
    assert res["reason"] == 2042 and "browse 1" in res["messages"][0]
    (res,) = mqsc_ok(group, "QM1", f"DISPLAY CONN({hconn}) TYPE(ALL)")
    conn, *handles = res["objects"]
    assert conn["TYPE"] == "CONN" and conn["UOWSTATE"] == "ACTIVE" and conn["APPLTAG"] == "PAYROLL"
    assert sorted(h["OBJNAME"] for h in handles) == ["STAT.Q", "STAT.Q"]
    assert c.post(f"/v1/connections/{hconn}/commit").status_code in (200, 204)
    assert c.delete(f"/v1/connections/{hconn}").status_code in (200, 204)
    assert mqsc_ok(group, "QM1", "DISPLAY QSTATUS(STAT.Q) TYPE(HANDLE)")[0]["objects"] == []
    assert mqsc(group, "QM1", f"DISPLAY CONN({hconn})")[0]["reason"] == 2085
    mqsc_ok(group, "QM1", "CLEAR QLOCAL(STAT.Q)")


def test_cmdscope_runs_on_every_active_queue_manager(group):
    hconn, c = _mq(group, "QM2")
    (res,) = mqsc_ok(group, "QM1", "DISPLAY CONN(*) CMDSCOPE(*)")
    assert any(o["CONN"] == hconn and o["QMNAME"] == "QM2" for o in res["objects"])
    assert any("responses from QM2" in m for m in res["messages"])
    (res,) = mqsc_ok(group, "QM1", "DISPLAY QMSTATUS CMDSCOPE(*)")
    assert [o["QMNAME"] for o in res["objects"]] == ["QM1", "QM2"]
    (res,) = mqsc_ok(group, "QM1", "DISPLAY QMSTATUS CMDSCOPE(QM2)")
    assert [o["QMNAME"] for o in res["objects"]] == ["QM2"]
    (res,) = mqsc(group, "QM1", "DISPLAY QMSTATUS CMDSCOPE(QM9)")
    assert res["reason"] == 2058
    mqsc_ok(group, "QM1", "DEFINE QLOCAL(SCOPED.Q) REPLACE CMDSCOPE(*)")  # a private queue on each QM
    (res,) = mqsc_ok(group, "QM2", "DISPLAY QLOCAL(SCOPED.Q) CMDSCOPE(*) MAXDEPTH")
    assert sorted(o["QMNAME"] for o in res["objects"]) == ["QM1", "QM2"]
    c.delete(f"/v1/connections/{hconn}")


def test_cmdscope_summary_is_normal_only_when_every_queue_manager_completed(group):
    """z/OS's summary of a CMDSCOPE command: CSQN122I "normal completion" when every queue
    manager completed it, CSQN123E "abnormal completion" when any did not - everywhere 2085, or
    one of two."""
    summary = "'DISPLAY QLOCAL' command for CMDSCOPE(*)"
    (res,) = mqsc(group, "QM1", "DISPLAY QLOCAL(NO.SUCH.SCOPED.Q) CMDSCOPE(*)")
    assert (res["completion_code"], res["reason"], res["objects"]) == (2, 2085, []), res
    assert res["messages"][-1] == f"CSQN123E QM1 {summary} abnormal completion", res
    assert not any(m.startswith("CSQN122I") for m in res["messages"]), res
    mqsc_ok(group, "QM2", "DEFINE QLOCAL(ONLY.ON.QM2) REPLACE")
    (res,) = mqsc(group, "QM1", "DISPLAY QLOCAL(ONLY.ON.QM2) CMDSCOPE(*)")
    assert res["completion_code"] == 2 and [o["QMNAME"] for o in res["objects"]] == ["QM2"], res
    assert res["messages"][-1] == f"CSQN123E QM1 {summary} abnormal completion", res
    mqsc_ok(group, "QM1", "DEFINE QLOCAL(ONLY.ON.QM2) REPLACE")
    (res,) = mqsc_ok(group, "QM1", "DISPLAY QLOCAL(ONLY.ON.QM2) CMDSCOPE(*)")
    assert res["messages"][0] == "CSQN137I QM1 'DISPLAY QLOCAL' command accepted for CMDSCOPE(*), sent to 2"
    assert res["messages"][-1] == f"CSQN122I QM1 {summary} normal completion", res
    mqsc_ok(group, "QM1", "DELETE QLOCAL(ONLY.ON.QM2) CMDSCOPE(*)")


def test_cmdscope_sends_the_command_on_with_its_quoted_values_as_written(group):
    """Each queue manager receives the command with CMDSCOPE naming itself - the keyword only:
    a quoted value that mentions CMDSCOPE(...) (a description, a WHERE value) stays as the
    operator wrote it on every queue manager."""
    descr = "moved with CMDSCOPE(*) on 2026-11-28"
    mqsc_ok(group, "QM1", f"DEFINE QLOCAL(SCOPED.DESCR) DESCR('{descr}') REPLACE CMDSCOPE(*)")
    for qm in ("QM1", "QM2"):
        (res,) = mqsc_ok(group, qm, "DISPLAY QLOCAL(SCOPED.DESCR) DESCR")
        assert res["objects"][0]["DESCR"] == descr, (qm, res)
    (res,) = mqsc_ok(group, "QM2", f"DISPLAY QLOCAL(SCOPED.*) CMDSCOPE(*) WHERE(DESCR EQ '{descr}')")
    assert sorted(o["QMNAME"] for o in res["objects"]) == ["QM1", "QM2"], res
    mqsc_ok(group, "QM1", "DELETE QLOCAL(SCOPED.DESCR) CMDSCOPE(*)")


def test_cmdscope_sends_an_unquoted_value_with_parentheses_as_written(group):
    """An unquoted value may hold balanced parentheses (``DESCR(A(B))``): one that reads
    CMDSCOPE(...) is a value, not the CMDSCOPE keyword, and reaches every queue manager as the
    operator wrote it; only the keyword names each queue manager."""
    mqsc_ok(group, "QM1", "DEFINE QLOCAL(SCOPED.NESTED) DESCR(CMDSCOPE(QM9)) REPLACE CMDSCOPE(*)")
    for qm in ("QM1", "QM2"):
        (res,) = mqsc_ok(group, qm, "DISPLAY QLOCAL(SCOPED.NESTED) DESCR")
        assert res["objects"][0]["DESCR"] == "CMDSCOPE(QM9)", (qm, res)
    mqsc_ok(group, "QM1", "DELETE QLOCAL(SCOPED.NESTED) CMDSCOPE(*)")


def test_a_keyword_given_twice_is_refused_and_nothing_runs(group):
    """z/OS's command preprocessor: CSQ9000E 'keyword' appears more than once, and the command
    is not processed - a CMDSCOPE given twice (QM1 and then *) does not run on some queue
    managers by its first value, a DESCR given twice defines nothing."""
    for text in ("DEFINE QLOCAL(TWICE.SCOPED) CMDSCOPE(QM1) CMDSCOPE(*)",
                 "DEFINE QLOCAL(TWICE.SCOPED) DESCR('one') descr('two')"):
        (res,) = mqsc(group, "QM1", text)
        assert res["completion_code"] == 2 and res["reason"] == 3097, res
        assert any("CSQ9000E" in line for line in res["messages"]), res
    for qm in ("QM1", "QM2"):
        (res,) = mqsc(group, qm, "DISPLAY QLOCAL(TWICE.SCOPED)")
        assert res["reason"] == 2085, (qm, res)  # defined nowhere


# ---- comments and the documentation's samples ----------------------------------------------------------


def _readme_scripts() -> list[str]:
    """The MQSC of the documentation: the heredoc of docs/reference/mqsc.md and the block of
    docs/howto/security.md."""
    from pathlib import Path

    docs = Path(__file__).resolve().parents[1] / "docs"
    mqsc_part = (docs / "reference" / "mqsc.md").read_text()
    heredoc = mqsc_part.split("<<'EOF'\n", 1)[1].split("\nEOF", 1)[0]
    security = (docs / "howto" / "security.md").read_text().split("```\nSET AUTHREC", 1)[1].split("```", 1)[0]
    return [heredoc, "SET AUTHREC" + security]


def test_inline_comments_are_refused_as_ibm_does_and_readme_samples_run(group):
    from app.mqsc.parser import ParseFailure, parse_script

    # IBM MQSC: only a line starting with * is a comment; text after a command is part of it
    (failure,) = parse_script("DEFINE QLOCAL(X) * comment")
    assert isinstance(failure, ParseFailure)
    for script in _readme_scripts():
        assert not [i for i in parse_script(script) if isinstance(i, ParseFailure)], script
        results = mqsc(group, "QM1", script)
        assert all(r["completion_code"] == 0 for r in results), results
