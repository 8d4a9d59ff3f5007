"""Model queues and dynamic queues over real HTTP on a real group of two queue managers:
DEFINE/DISPLAY QMODEL with each DEFTYPE, MQOPEN of a model (generated and explicit names), the
life of temporary (close, MQDISC, QM restart) and permanent dynamic queues (MQCLOSE DELETE /
DELETE_PURGE and the 2055 rule), shared dynamic queues seen from another QM, the default
SYSTEM.DEFAULT.* objects and a request/reply round trip with SYSTEM.DEFAULT.MODEL.QUEUE."""

from __future__ import annotations

import pytest

from tests.support.mq import MQ, connections, mq_reason
from tests.support.names import uniq


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    return g


@pytest.fixture
def connect(group):
    """Factory of connections (MQCONN) to a queue manager; all disconnected after the test."""
    yield from connections(group, "DYNQ")


def open_model(m: MQ, model: str, dynamic_q_name: str = "", options: list[str] | None = None) -> dict:
    """MQOPEN of a model queue: the whole response (hobj, object_name = the queue created)."""
    body = {"object_name": model, "object_qmgr": "", "options": options or ["INPUT_SHARED", "OUTPUT"],
            "dynamic_q_name": dynamic_q_name}
    return m.call("POST", f"/v1/connections/{m.hconn}/objects", body)


def close(m: MQ, hobj: str, options: list[str]) -> None:
    m.call("DELETE", f"/v1/connections/{m.hconn}/objects/{hobj}", {"options": options})


def display(group, qm: str, name: str) -> dict | None:
    """DISPLAY QLOCAL(name): its attributes, or None when it is not defined (2085)."""
    [res] = group.mqsc(qm, f"DISPLAY QLOCAL({name})")
    if res["reason"] == 2085:
        return None
    assert res["completion_code"] == 0, res
    return res["objects"][0]


def model(group, deftype: str, extra: str = "") -> str:
    name = uniq("MODEL")
    group.mqsc_ok("QM1", f"DEFINE QMODEL({name}) DEFTYPE({deftype}) MAXDEPTH(50) DEFPRTY(4) DESCR('m {deftype}') "
                         f"{extra}")
    return name


# ---- MQSC ----------------------------------------------------------------------------------


def test_define_display_alter_delete_qmodel(group):
    temp, perm = model(group, "TEMPDYN"), model(group, "PERMDYN")
    shared = model(group, "SHAREDYN", "CFSTRUCT(APPL1)")
    [res] = group.mqsc_ok("QM1", f"DISPLAY QMODEL({shared})")
    row = res["objects"][0]
    assert (row["TYPE"], row["DEFTYPE"], row["CFSTRUCT"], row["MAXDEPTH"], row["QSGDISP"]) == \
           ("QMODEL", "SHAREDYN", "APPL1", 50, "QMGR")
    names = {o["QUEUE"] for o in group.mqsc_ok("QM1", "DISPLAY QUEUE(MODEL.*) TYPE(QMODEL)")[0]["objects"]}
    assert {temp, perm, shared} <= names
    assert all(o["TYPE"] == "QMODEL" for o in group.mqsc_ok("QM1", "DISPLAY QMODEL(*)")[0]["objects"])
    group.mqsc_ok("QM1", f"ALTER QMODEL({temp}) DEFTYPE(PERMDYN) MAXDEPTH(7)")
    [res] = group.mqsc_ok("QM1", f"DISPLAY QUEUE({temp})")
    assert (res["objects"][0]["DEFTYPE"], res["objects"][0]["MAXDEPTH"]) == ("PERMDYN", 7)
    group.mqsc_ok("QM1", f"DELETE QMODEL({temp})")
    assert group.mqsc("QM1", f"DISPLAY QMODEL({temp})")[0]["reason"] == 2085


def test_qmodel_rules(group):
    name = uniq("MODEL")
    # SHAREDYN needs a CF structure; a model is never QSGDISP(SHARED) itself
    assert group.mqsc("QM1", f"DEFINE QMODEL({name}) DEFTYPE(SHAREDYN)")[0]["reason"] == 4005
    assert group.mqsc("QM1", f"DEFINE QMODEL({name}) QSGDISP(SHARED)")[0]["reason"] == 4005
    assert group.mqsc("QM1", f"DEFINE QMODEL({name}) DEFTYPE(PREDEFINED)")[0]["reason"] == 4005
    # a local queue's DEFTYPE is read-only
    assert group.mqsc("QM1", f"DEFINE QLOCAL({name}) DEFTYPE(PERMDYN)")[0]["reason"] == 3097
    group.mqsc_ok("QM1", f"DEFINE QMODEL({name}) QSGDISP(GROUP) DEFTYPE(PERMDYN)")
    [res] = group.mqsc_ok("QM2", f"DISPLAY QMODEL({name})")
    assert res["objects"][0]["QSGDISP"] == "COPY"


def test_default_objects_exist(group):
    for qm in ("QM1", "QM2"):
        [res] = group.mqsc_ok(qm, "DISPLAY QUEUE(SYSTEM.DEFAULT.*) TYPE(ALL)")
        types = {o["QUEUE"]: o["TYPE"] for o in res["objects"]}
        assert types == {"SYSTEM.DEFAULT.LOCAL.QUEUE": "QLOCAL", "SYSTEM.DEFAULT.MODEL.QUEUE": "QMODEL",
                         "SYSTEM.DEFAULT.ALIAS.QUEUE": "QALIAS", "SYSTEM.DEFAULT.REMOTE.QUEUE": "QREMOTE"}
        [res] = group.mqsc_ok(qm, "DISPLAY QMODEL(SYSTEM.DEFAULT.MODEL.QUEUE)")
        assert res["objects"][0]["DEFTYPE"] == "TEMPDYN"
        group.mqsc_ok(qm, "DISPLAY PROCESS(SYSTEM.DEFAULT.PROCESS)")


# ---- MQOPEN of a model ---------------------------------------------------------------------


def test_temporary_dynamic_queue_lives_as_long_as_its_handle(group, connect):
    m, other = connect(), connect()
    opened = open_model(m, model(group, "TEMPDYN"), "APP.REPLY.*")
    name = opened["object_name"]
    assert name.startswith("APP.REPLY.") and len(name) > len("APP.REPLY.") and len(name) <= 48
    row = display(group, "QM1", name)
    assert row is not None
    assert (row["DEFTYPE"], row["QSGDISP"], row["MAXDEPTH"], row["DEFPRTY"]) == ("TEMPDYN", "QMGR", 50, 4)
    m.put(opened["hobj"], "one", md={"persistence": "NOT_PERSISTENT"})
    assert m.get(opened["hobj"])["data"] == "one"
    # by name from another connection; persistent messages are refused (IBM: non-persistent only)
    hobj = other.open(name, ["OUTPUT"])
    other.put(hobj, "two", md={"persistence": "NOT_PERSISTENT"})
    with mq_reason(2048):
        other.put(hobj, "three", md={"persistence": "PERSISTENT"})
    other.close(hobj)
    # another handle may not delete it; the creating handle's close does, with its messages
    with mq_reason(2045):
        hobj = other.open(name, ["INPUT_SHARED"])
        close(other, hobj, ["DELETE"])
    other.close(hobj)
    m.close(opened["hobj"])
    assert display(group, "QM1", name) is None
    with mq_reason(2085):
        other.open(name, ["OUTPUT"])


def test_temporary_dynamic_queue_goes_at_disconnect(group, connect):
    m = connect()
    name = open_model(m, model(group, "TEMPDYN"), "APP.DISC.*")["object_name"]
    assert display(group, "QM1", name) is not None
    m.disconnect()
    assert display(group, "QM1", name) is None


def test_default_dynamic_name_and_explicit_name(group, connect):
    m = connect()
    perm = model(group, "PERMDYN")
    generated = open_model(m, perm)["object_name"]
    assert generated.startswith("CSQ.")  # z/OS's default DynamicQName is CSQ.*
    explicit = uniq("APP.FIXED")
    opened = open_model(m, perm, explicit)
    assert opened["object_name"] == explicit
    with mq_reason(2100):
        open_model(m, perm, explicit)
    with mq_reason(2011):
        open_model(m, perm, "APP.*.BAD")
    for hobj in (opened["hobj"],):
        close(m, hobj, ["DELETE_PURGE"])
    assert display(group, "QM1", explicit) is None


def test_permanent_dynamic_queue_close_options(group, connect):
    m = connect()
    perm = model(group, "PERMDYN")
    opened = open_model(m, perm, "APP.PERM.*")
    name = opened["object_name"]
    m.close(opened["hobj"])  # MQCO_NONE: a permanent dynamic queue stays
    row = display(group, "QM1", name)
    assert row is not None and row["DEFTYPE"] == "PERMDYN"
    hobj = m.open(name, ["INPUT_SHARED", "OUTPUT"])
    m.put(hobj, "kept", md={"persistence": "PERSISTENT"})
    with mq_reason(2055, 409):
        close(m, hobj, ["DELETE"])  # messages on it: the handle stays open
    assert m.get(hobj)["data"] == "kept"
    m.put(hobj, "purged")
    with mq_reason(2046):
        close(m, hobj, ["DELETE", "DELETE_PURGE"])
    close(m, hobj, ["DELETE_PURGE"])
    assert display(group, "QM1", name) is None
    # a predefined queue cannot be deleted by MQCLOSE
    hobj = m.open("SYSTEM.DEFAULT.LOCAL.QUEUE", ["INQUIRE"])
    with mq_reason(2045):
        close(m, hobj, ["DELETE"])
    m.close(hobj)


def test_empty_permanent_dynamic_queue_deleted_by_close_delete(group, connect):
    m = connect()
    opened = open_model(m, model(group, "PERMDYN"), "APP.EMPTY.*")
    close(m, opened["hobj"], ["DELETE"])
    assert display(group, "QM1", opened["object_name"]) is None


def test_shared_dynamic_queue_is_seen_by_the_group(group, connect):
    m1, m2 = connect("QM1"), connect("QM2")
    opened = open_model(m1, model(group, "SHAREDYN", "CFSTRUCT(APPL1)"), "APP.SHARED.*")
    name = opened["object_name"]
    assert opened["qsgdisp"] == "SHARED"
    row = display(group, "QM2", name)
    assert row is not None and (row["DEFTYPE"], row["QSGDISP"], row["CFSTRUCT"]) == ("SHAREDYN", "SHARED", "APPL1")
    hobj2 = m2.open(name, ["OUTPUT"])
    m2.put(hobj2, "from QM2", md={"persistence": "PERSISTENT"})
    m2.close(hobj2)
    assert m1.get(opened["hobj"])["data"] == "from QM2"
    m1.close(opened["hobj"])
    assert display(group, "QM2", name) is not None  # permanent: survives the close
    hobj2 = m2.open(name, ["INPUT_SHARED"])
    close(m2, hobj2, ["DELETE"])
    assert display(group, "QM1", name) is None and display(group, "QM2", name) is None


def test_request_reply_with_the_default_model_queue(group, connect):
    requester, server = connect("QM1"), connect("QM1")
    service = uniq("APP.SERVICE")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({service})")
    reply = open_model(requester, "SYSTEM.DEFAULT.MODEL.QUEUE", "APP.REPLY.*", ["INPUT_EXCLUSIVE"])
    reply_q = reply["object_name"]
    requester.put1(service, "ping", md={"msg_type": "REQUEST", "reply_to_q": reply_q,
                                        "persistence": "NOT_PERSISTENT"})
    hserve = server.open(service, ["INPUT_SHARED"])
    request = server.get(hserve)
    assert request["md"]["reply_to_q"] == reply_q
    server.put1(request["md"]["reply_to_q"], "pong",
                md={"msg_type": "REPLY", "correl_id": request["md"]["msg_id"], "persistence": "NOT_PERSISTENT"})
    got = requester.get(reply["hobj"], ["WAIT", "NO_SYNCPOINT"], wait_ms=5000,
                        match={"correl_id": request["md"]["msg_id"]})
    assert got["data"] == "pong"
    requester.close(reply["hobj"])
    assert display(group, "QM1", reply_q) is None


def test_temporary_dynamic_queues_do_not_survive_a_restart(make_fresh_cluster):
    g = make_fresh_cluster(["QM1"])
    m = MQ(g.url("QM1"), "DYNQ")
    temp = open_model(m, "SYSTEM.DEFAULT.MODEL.QUEUE", "APP.TEMP.*")["object_name"]
    g.mqsc_ok("QM1", "DEFINE QMODEL(APP.PERM.MODEL) DEFTYPE(PERMDYN)")
    perm = open_model(m, "APP.PERM.MODEL", "APP.PERM.*")["object_name"]
    # killed: no MQDISC, no clean shutdown - the start deletes the temporary dynamic queue
    g.qms["QM1"].kill()
    g.qms["QM1"].start()
    assert display(g, "QM1", temp) is None
    assert display(g, "QM1", perm) is not None
    m.http.close()


def test_deleted_while_open_elsewhere_is_logically_deleted(group, connect):
    m, other = connect(), connect()
    opened = open_model(m, model(group, "PERMDYN"), "APP.LOGICAL.*")
    name = opened["object_name"]
    hobj = other.open(name, ["OUTPUT"])
    other.put(hobj, "left behind")
    close(m, opened["hobj"], ["DELETE_PURGE"])
    # no longer defined, but the other handle keeps it until its close (IBM: MQRC_Q_DELETED)
    assert display(group, "QM1", name) is None
    with mq_reason(2052):
        other.put(hobj, "too late")
    other.close(hobj)
    with mq_reason(2085):
        other.open(name, ["OUTPUT"])
    # the last close removed it with its messages: a queue defined again under the name is empty
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({name})")
    assert display(group, "QM1", name)["CURDEPTH"] == 0
