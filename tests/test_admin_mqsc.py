"""MQSC administration on a real group of three queue managers, on SQLite and on PostgreSQL:
every object type, QSGDISP rules, FORCE and MQRC_OBJECT_CHANGED, concurrent changes."""

from __future__ import annotations

import threading

import httpx
import pytest

from tests.support.mq import MQ, mq_reason
from tests.support.names import uniq, uniq_struct


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def group(request, make_cluster):
    return make_cluster(["QM1", "QM2", "QM3"], database=request.param)


def display(group, qm: str, cmd: str) -> list[dict]:
    result = group.mqsc(qm, cmd)[0]
    assert result["completion_code"] == 0, result
    return result["objects"]


def test_define_display_alter_delete_qlocal(group):
    q = uniq()
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) MAXDEPTH(50) DESCR('Payroll input') TRIGGER TRIGTYPE(EVERY)")
    (obj,) = display(group, "QM1", f"DISPLAY QLOCAL({q})")
    assert obj["QUEUE"] == q and obj["QSGDISP"] == "QMGR" and obj["MAXDEPTH"] == 50
    assert obj["DESCR"] == "Payroll input" and obj["TRIGGER"] == "TRIGGER" and obj["TRIGTYPE"] == "EVERY"
    # IBM z/OS defaults for what was not given
    assert obj["DEFPSIST"] == "NO" and obj["MSGDLVSQ"] == "PRIORITY" and obj["QDEPTHHI"] == 80
    assert obj["CURDEPTH"] == 0
    group.mqsc_ok("QM1", f"ALTER QLOCAL({q}) MAXDEPTH(70) NOTRIGGER")
    (obj,) = display(group, "QM1", f"DIS QL({q})")
    assert obj["MAXDEPTH"] == 70 and obj["TRIGGER"] == "NOTRIGGER" and obj["DESCR"] == "Payroll input"
    group.mqsc_ok("QM1", f"DELETE QLOCAL({q})")
    (res,) = group.mqsc("QM1", f"DISPLAY QLOCAL({q})")
    assert res["reason"] == 2085


def test_define_twice_needs_replace(group):
    q = uniq()
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    (res,) = group.mqsc("QM1", f"DEFINE QLOCAL({q}) MAXDEPTH(9)")
    assert res["completion_code"] == 2 and res["reason"] == 2100
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) MAXDEPTH(9) REPLACE")
    assert display(group, "QM1", f"DISPLAY QLOCAL({q})")[0]["MAXDEPTH"] == 9
    (res,) = group.mqsc("QM1", f"DEFINE QALIAS({q}) TARGET(X) REPLACE")
    assert res["reason"] == 4002  # a queue of another type holds the name


def test_qalias_process_cfstruct(group):
    q, a, p, s = uniq(), uniq("A"), uniq("P"), uniq_struct()
    group.mqsc_ok("QM1", f"""
        * an alias, a process and a structure
        DEFINE QLOCAL({q})
        DEFINE QALIAS({a}) TARGET({q}) DEFPRTY(7)
        DEFINE PROCESS({p}) APPLICID('/bin/echo') APPLTYPE(UNIX) USERDATA('hi there')
        DEFINE CFSTRUCT({s}) CFLEVEL(4)
    """)
    (alias,) = display(group, "QM1", f"DISPLAY QALIAS({a})")
    assert alias["TARGET"] == q and alias["DEFPRTY"] == 7 and alias["TYPE"] == "QALIAS"
    (proc,) = display(group, "QM1", f"DISPLAY PROCESS({p})")
    assert proc["APPLICID"] == "/bin/echo" and proc["USERDATA"] == "hi there" and proc["APPLTYPE"] == "UNIX"
    (cf,) = display(group, "QM2", f"DISPLAY CFSTRUCT({s})")  # structures belong to the group
    assert cf["CFLEVEL"] == 4
    group.mqsc_ok("QM1", f"ALTER QALIAS({a}) DEFPRTY(3)\nALTER PROCESS({p}) APPLTYPE(MVS)\n"
                         f"ALTER CFSTRUCT({s}) CFLEVEL(5)")
    assert display(group, "QM1", f"DISPLAY QALIAS({a})")[0]["DEFPRTY"] == 3
    assert display(group, "QM1", f"DISPLAY PROCESS({p})")[0]["APPLTYPE"] == "MVS"
    assert display(group, "QM3", f"DISPLAY CFSTRUCT({s})")[0]["CFLEVEL"] == 5
    both = display(group, "QM1", f"DISPLAY QUEUE({q[:4]}*) TYPE(ALL)") + display(group, "QM1", f"DISPLAY QUEUE({a})")
    assert {o["TYPE"] for o in both} >= {"QLOCAL", "QALIAS"}
    group.mqsc_ok("QM1", f"DELETE QALIAS({a})\nDELETE PROCESS({p})\nDELETE CFSTRUCT({s})\nDELETE QLOCAL({q})")
    for cmd in (f"DISPLAY QALIAS({a})", f"DISPLAY PROCESS({p})", f"DISPLAY CFSTRUCT({s})"):
        assert group.mqsc("QM1", cmd)[0]["reason"] == 2085


def test_qsgdisp_visibility_across_queue_managers(group):
    s = uniq_struct()
    private, shared, grp = uniq("PRIV"), uniq("SHR"), uniq("GRP")
    group.mqsc_ok("QM1", f"""
        DEFINE CFSTRUCT({s})
        DEFINE QLOCAL({private})
        DEFINE QLOCAL({shared}) QSGDISP(SHARED) CFSTRUCT({s})
        DEFINE QLOCAL({grp}) QSGDISP(GROUP) MAXDEPTH(42)
    """)
    # QM2 sees the shared queue and a COPY of the group object at once, never QM1's private queue.
    assert display(group, "QM2", f"DISPLAY QLOCAL({shared})")[0]["QSGDISP"] == "SHARED"
    (copy,) = display(group, "QM2", f"DISPLAY QLOCAL({grp})")
    assert copy["QSGDISP"] == "COPY" and copy["MAXDEPTH"] == 42
    assert group.mqsc("QM2", f"DISPLAY QLOCAL({private})")[0]["reason"] == 2085
    groups = display(group, "QM3", f"DISPLAY QLOCAL({grp}) QSGDISP(ALL)")
    assert sorted(o["QSGDISP"] for o in groups) == ["COPY", "GROUP"]
    # ALTER of the GROUP object regenerates every COPY
    group.mqsc_ok("QM2", f"ALTER QLOCAL({grp}) QSGDISP(GROUP) MAXDEPTH(43)")
    for qm in ("QM1", "QM2", "QM3"):
        assert display(group, qm, f"DISPLAY QLOCAL({grp})")[0]["MAXDEPTH"] == 43
    # A COPY queue is private to each QM: a message put on QM1's copy is not on QM2's.
    m1, m2 = MQ(group.url("QM1")), MQ(group.url("QM2"))
    m1.put(m1.open(grp, ["OUTPUT"]), "only on QM1")
    h2 = m2.open(grp, ["INPUT_SHARED"])
    with mq_reason(2033):
        m2.get(h2)
    m2.close(h2)
    # ALTER without QSGDISP means QSGDISP(QMGR), as on z/OS
    (res,) = group.mqsc("QM2", f"ALTER QLOCAL({shared}) MAXDEPTH(5)")
    assert res["reason"] == 2085 and "SHARED" in res["messages"][0]
    group.mqsc_ok("QM2", f"ALTER QLOCAL({shared}) QSGDISP(SHARED) MAXDEPTH(5)")
    assert display(group, "QM3", f"DISPLAY QLOCAL({shared})")[0]["MAXDEPTH"] == 5
    # DELETE of the group object removes the copies; the non-empty copy on QM1 stays
    (res,) = group.mqsc("QM3", f"DELETE QLOCAL({grp}) QSGDISP(GROUP)")
    assert res["completion_code"] == 0 and any("QM1" in m for m in res["messages"])
    assert group.mqsc("QM2", f"DISPLAY QLOCAL({grp})")[0]["reason"] == 2085
    assert display(group, "QM1", f"DISPLAY QLOCAL({grp})")[0]["CURDEPTH"] == 1


def test_shared_queue_needs_a_defined_cfstruct(group):
    (res,) = group.mqsc("QM1", f"DEFINE QLOCAL({uniq()}) QSGDISP(SHARED)")
    assert res["reason"] == 4005 and "CFSTRUCT" in res["messages"][0]
    (res,) = group.mqsc("QM1", f"DEFINE QLOCAL({uniq()}) QSGDISP(SHARED) CFSTRUCT(NOSUCH)")
    assert res["reason"] == 4005 and "NOSUCH" in res["messages"][0]
    (res,) = group.mqsc("QM1", f"DEFINE QALIAS({uniq()}) QSGDISP(SHARED) TARGET(X)")
    assert res["reason"] == 4005  # only local queues can be shared


def test_shared_and_private_queue_of_one_name_is_not_unique(group):
    s, q = uniq_struct(), uniq()
    group.mqsc_ok("QM1", f"DEFINE CFSTRUCT({s})\nDEFINE QLOCAL({q})\nDEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT({s})")
    with mq_reason(2343, 409):
        MQ(group.url("QM1")).open(q, ["OUTPUT"])
    MQ(group.url("QM2")).open(q, ["OUTPUT"])  # QM2 has only the shared one


def test_like_copies_attributes(group):
    base, new = uniq(), uniq()
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({base}) MAXDEPTH(77) DESCR('model')")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({new}) LIKE({base}) DESCR('copy')")
    (obj,) = display(group, "QM1", f"DISPLAY QLOCAL({new})")
    assert obj["MAXDEPTH"] == 77 and obj["DESCR"] == "copy"
    assert group.mqsc("QM1", f"DEFINE QLOCAL({uniq()}) LIKE(NO.SUCH.Q)")[0]["reason"] == 2085


def test_qmgr_attributes(group):
    group.mqsc_ok("QM2", "ALTER QMGR PERFMEV(ENABLED) EXPRYINT(60) TRIGINT(5000) DEADQ(QM2.DLQ)")
    (qmgr,) = display(group, "QM2", "DISPLAY QMGR")
    assert qmgr["QMNAME"] == "QM2" and qmgr["QSGNAME"] == "QSG1"
    assert qmgr["PERFMEV"] == "ENABLED" and qmgr["EXPRYINT"] == 60 and qmgr["TRIGINT"] == 5000
    info = httpx.get(f"{group.url('QM2')}/v1/qmgr").json()
    assert info["name"] == "QM2" and info["qsg"] == "QSG1" and info["status"] == "RUNNING"
    assert info["PERFMEV"] == "ENABLED" and info["DEADQ"] == "QM2.DLQ"
    assert httpx.get(f"{group.url('QM1')}/v1/qmgr").json()["PERFMEV"] == "DISABLED"  # per QM
    group.mqsc_ok("QM2", "ALTER QMGR EXPRYINT(OFF)")
    assert display(group, "QM2", "DISPLAY QMGR")[0]["EXPRYINT"] == "OFF"
    (res,) = group.mqsc("QM2", "ALTER QMGR EXPRYINT(0)")
    assert res["reason"] == 4005


def test_bad_commands_get_reasons_and_change_nothing(group):
    q = uniq()
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) MAXDEPTH(10)")
    results = group.mqsc("QM1", f"""
        ALTER QLOCAL({q}) MAXDEPTH(ten)
        ALTER QLOCAL({q}) NOSUCHKEYWORD(1)
        ALTER QLOCAL({q}) MAXDEPTH(20
        DEFINE QLOCAL('{q}.bad name')
        FROB QLOCAL({q})
        DISPLAY QLOCAL({q})
    """)
    assert [r["reason"] for r in results[:5]] == [4005, 3097, 3097, 2152, 3097]
    assert all(r["completion_code"] == 2 and r["messages"] for r in results[:5])
    assert results[5]["objects"][0]["MAXDEPTH"] == 10


def test_delete_rules(group):
    q = uniq()
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    mq = MQ(group.url("QM1"))
    h = mq.open(q, ["OUTPUT"])
    mq.put(h, "one")
    assert group.mqsc("QM1", f"DELETE QLOCAL({q})")[0]["reason"] == 2042  # open
    mq.close(h)
    assert group.mqsc("QM1", f"DELETE QLOCAL({q})")[0]["reason"] == 2055  # not empty
    group.mqsc_ok("QM1", f"DELETE QLOCAL({q}) PURGE")


def test_clear_qlocal(group):
    q = uniq()
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    mq = MQ(group.url("QM1"))
    h = mq.open(q, ["OUTPUT"])
    for i in range(3):
        mq.put(h, f"m{i}")
    assert group.mqsc("QM1", f"CLEAR QLOCAL({q})")[0]["reason"] == 2042  # open
    mq.close(h)
    (res,) = group.mqsc_ok("QM1", f"CLEAR QLOCAL({q})")
    assert "3 message" in res["messages"][0]
    assert display(group, "QM1", f"DISPLAY QLOCAL({q})")[0]["CURDEPTH"] == 0


def test_alias_target_change_needs_force_and_invalidates_handles(group):
    s = uniq_struct()
    q1, q2, a = uniq(), uniq(), uniq("A")
    group.mqsc_ok("QM1", f"""DEFINE CFSTRUCT({s})
        DEFINE QLOCAL({q1}) QSGDISP(SHARED) CFSTRUCT({s})
        DEFINE QLOCAL({q2}) QSGDISP(SHARED) CFSTRUCT({s})
        DEFINE QALIAS({a}) QSGDISP(GROUP) TARGET({q1})""")
    on_qm2 = MQ(group.url("QM2"))
    h = on_qm2.open(a, ["OUTPUT"])
    on_qm2.put(h, "before")
    # any QM of the group having the alias open blocks the change without FORCE
    (res,) = group.mqsc("QM1", f"ALTER QALIAS({a}) QSGDISP(GROUP) TARGET({q2})")
    assert res["reason"] == 4004 and "FORCE" in res["messages"][0]
    group.mqsc_ok("QM1", f"ALTER QALIAS({a}) QSGDISP(GROUP) TARGET({q2}) FORCE")
    with mq_reason(2041, 409):
        on_qm2.put(h, "after")
    on_qm2.close(h)
    h = on_qm2.open(a, ["OUTPUT"])  # a new open resolves to the new target
    on_qm2.put(h, "new target")
    reader = MQ(group.url("QM3"))
    assert reader.drain(reader.open(q2, ["INPUT_SHARED"])) == ["new target"]
    assert reader.drain(reader.open(q1, ["INPUT_SHARED"])) == ["before"]


def test_usage_change_needs_force_and_gives_object_changed(group):
    s, q = uniq_struct(), uniq()
    group.mqsc_ok("QM1", f"DEFINE CFSTRUCT({s})\nDEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT({s})")
    getter = MQ(group.url("QM3"))
    h = getter.open(q, ["INPUT_SHARED"])
    (res,) = group.mqsc("QM2", f"ALTER QLOCAL({q}) QSGDISP(SHARED) USAGE(XMITQ)")
    assert res["reason"] == 4004
    group.mqsc_ok("QM2", f"ALTER QLOCAL({q}) QSGDISP(SHARED) USAGE(XMITQ) FORCE")
    with mq_reason(2041):
        getter.get(h)
    # a change that needs no FORCE leaves handles alone
    h2 = getter.open(q, ["INPUT_SHARED"])
    group.mqsc_ok("QM2", f"ALTER QLOCAL({q}) QSGDISP(SHARED) DESCR('still fine')")
    with mq_reason(2033):
        getter.get(h2)


def test_concurrent_defines_from_two_qmgrs(group):
    s = uniq_struct()
    group.mqsc_ok("QM1", f"DEFINE CFSTRUCT({s})")
    names = [uniq("RACE") for _ in range(8)]
    results: dict[tuple[str, str], dict] = {}

    def define(qm: str, name: str) -> None:
        results[(qm, name)] = group.mqsc(qm, f"DEFINE QLOCAL({name}) QSGDISP(SHARED) CFSTRUCT({s}) DESCR('{qm}')")[0]

    threads = [threading.Thread(target=define, args=(qm, n)) for n in names for qm in ("QM1", "QM2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n in names:
        outcomes = sorted(results[(qm, n)]["reason"] for qm in ("QM1", "QM2"))
        assert outcomes == [0, 2100], (n, outcomes)  # exactly one define wins
        (obj,) = display(group, "QM3", f"DISPLAY QLOCAL({n})")
        winner = "QM1" if results[("QM1", n)]["reason"] == 0 else "QM2"
        assert obj["DESCR"] == winner


def test_concurrent_alters_of_one_object_lose_nothing(group):
    s, q = uniq_struct(), uniq()
    group.mqsc_ok("QM1", f"DEFINE CFSTRUCT({s})\nDEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT({s})")
    changes = [("QM1", "MAXDEPTH(1234)"), ("QM2", "DESCR('two')"), ("QM3", "TRIGDPTH(9)"),
               ("QM1", "BOTHRESH(3)"), ("QM2", "QDEPTHHI(70)"), ("QM3", "DEFPRTY(4)")]
    threads = [threading.Thread(target=group.mqsc_ok, args=(qm, f"ALTER QLOCAL({q}) QSGDISP(SHARED) {c}"))
               for qm, c in changes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (obj,) = display(group, "QM1", f"DISPLAY QLOCAL({q})")
    assert (obj["MAXDEPTH"], obj["DESCR"], obj["TRIGDPTH"], obj["BOTHRESH"], obj["QDEPTHHI"], obj["DEFPRTY"]) == \
        (1234, "two", 9, 3, 70, 4)


def test_display_generic_where_and_qstatus(group):
    s, stem = uniq_struct(), uniq("GEN")
    group.mqsc_ok("QM1", f"""DEFINE CFSTRUCT({s})
        DEFINE QLOCAL({stem}.A) MAXDEPTH(10)
        DEFINE QLOCAL({stem}.B) MAXDEPTH(20)
        DEFINE QLOCAL({stem}.S) QSGDISP(SHARED) CFSTRUCT({s})""")
    names = [o["QUEUE"] for o in display(group, "QM1", f"DISPLAY QLOCAL({stem}.*)")]
    assert names == [f"{stem}.A", f"{stem}.B", f"{stem}.S"]
    assert [o["QUEUE"] for o in display(group, "QM1",
                                        f"DISPLAY QLOCAL({stem}.*) WHERE(MAXDEPTH GT 15) QSGDISP(QMGR)")] \
        == [f"{stem}.B"]
    qm2, qm3 = MQ(group.url("QM2")), MQ(group.url("QM3"))
    qm2.open(f"{stem}.S", ["INPUT_SHARED"])
    qm3.put(qm3.open(f"{stem}.S", ["OUTPUT"]), "x")
    status = display(group, "QM1", f"DISPLAY QSTATUS({stem}.S)")
    assert {(o["QMNAME"], o["IPPROCS"], o["OPPROCS"]) for o in status} == {("QM2", 1, 0), ("QM3", 0, 1)}
    assert all(o["CURDEPTH"] == 1 for o in status)


def test_qstatus_of_a_shared_queue_with_cmdscope_is_one_row_per_queue_manager(group):
    """CMDSCOPE(*): each queue manager answers with its own row (its own open counts, the one
    queue's depth), never another QM's, and never a row twice (each QM's local answer lists every
    QM that has the queue open, API.md: gathered over the group, those rows were repeated)."""
    s, stem = uniq_struct(), uniq("QSS")
    group.mqsc_ok("QM1", f"""DEFINE CFSTRUCT({s})
        DEFINE QLOCAL({stem}.A) QSGDISP(SHARED) CFSTRUCT({s})
        DEFINE QLOCAL({stem}.B) QSGDISP(SHARED) CFSTRUCT({s})""")
    qm1, qm2 = MQ(group.url("QM1")), MQ(group.url("QM2"))
    try:
        qm1.open(f"{stem}.A", ["INPUT_SHARED"])
        qm1.open(f"{stem}.A", ["INPUT_SHARED", "OUTPUT"])
        qm2.put(qm2.open(f"{stem}.A", ["OUTPUT"]), "x")
        for qm in ("QM1", "QM3"):  # whichever QM is asked
            rows = display(group, qm, f"DISPLAY QSTATUS({stem}.*) CMDSCOPE(*) IPPROCS OPPROCS CURDEPTH")
            assert sorted((o["QUEUE"], o["QMNAME"], o["IPPROCS"], o["OPPROCS"], o["CURDEPTH"]) for o in rows) == [
                (f"{stem}.A", "QM1", 2, 1, 1), (f"{stem}.A", "QM2", 0, 1, 1), (f"{stem}.A", "QM3", 0, 0, 1),
                (f"{stem}.B", "QM1", 0, 0, 0), (f"{stem}.B", "QM2", 0, 0, 0), (f"{stem}.B", "QM3", 0, 0, 0)]
        (row,) = display(group, "QM1", f"DISPLAY QSTATUS({stem}.A) CMDSCOPE(QM2)")
        assert (row["QMNAME"], row["IPPROCS"], row["OPPROCS"]) == ("QM2", 0, 1)
    finally:
        qm1.disconnect()
        qm2.disconnect()


def test_qsg_mqsc_cli_like_runmqsc(group, tmp_path):
    import subprocess
    import sys

    q = uniq()
    script = tmp_path / "defs.mqsc"
    script.write_text(f"DEFINE QLOCAL({q}) +\n    DESCR('from the CLI')\nDISPLAY QLOCAL({q}) DESCR\n")
    out = subprocess.run([sys.executable, "-m", "app.cli", "mqsc", "--url", group.url("QM1"), str(script)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert f"QUEUE({q})" in out.stdout and "DESCR(from the CLI)" in out.stdout and "NORMAL COMPLETION" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "app.cli", "mqsc", "--url", group.url("QM1")],
                         input=f"DELETE QLOCAL({q}.NONE)\n", capture_output=True, text=True, timeout=60)
    assert bad.returncode == 10 and "2085" in bad.stdout
