"""MQSTAT over real HTTP: POST /v1/connections/{hconn}/stat answers IBM's MQSTS in snake_case.
Puts made with MQPMO_ASYNC_RESPONSE (or RESPONSE_AS_Q_DEF on a DEFPRESP(ASYNC) queue) are done
synchronously and counted per connection; MQSTAT_TYPE_ASYNC_ERROR reports and resets the counts
and the first warning or failure; RECONNECTION and RECONNECTION_ERROR answer a connection that
is not reconnecting; any other type is MQRC_STAT_TYPE_ERROR (2430)."""

from __future__ import annotations

import pytest

from tests.support.mq import MQ, connections, mq_reason
from tests.support.names import uniq


@pytest.fixture(scope="module")
def group(make_cluster):
    return make_cluster(["QM1"])


@pytest.fixture
def connect(group):
    yield from connections(group, "STAT")


def stat(m: MQ, kind: object = "ASYNC_ERROR") -> dict:
    return m.call("POST", f"/v1/connections/{m.hconn}/stat", {"type": kind})


def test_no_async_puts_reports_nothing(connect):
    m = connect()
    out = stat(m)
    assert out["completion_code"] == 0 and out["reason"] == 0
    assert out["put_success_count"] == out["put_warning_count"] == out["put_failure_count"] == 0
    assert out["object_name"] == "" and out["resolved_object_name"] == "" and out["object_type"] == 1


def test_async_puts_are_counted_and_reset(group, connect):
    q = uniq("ASY")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) MAXDEPTH(3)")
    m = connect()
    hobj = m.open(q, ["OUTPUT"])
    m.put(hobj, "sync")  # not asynchronous: not counted
    m.put(hobj, "one", options=["NO_SYNCPOINT", "ASYNC_RESPONSE"])
    # asynchronous: the put completes (MQCC_OK) and its warning or failure is for MQSTAT to tell
    assert "reason" not in m.put(hobj, "warn", md={"priority": 12}, options=["NO_SYNCPOINT", "ASYNC_RESPONSE"])
    m.put(hobj, "full", options=["NO_SYNCPOINT", "ASYNC_RESPONSE"])  # the queue is full: 2053 later
    with mq_reason(2053):  # a synchronous put is told at once
        m.put(hobj, "full", options=["NO_SYNCPOINT"])
    out = stat(m, "MQSTAT_TYPE_ASYNC_ERROR")
    assert (out["put_success_count"], out["put_warning_count"], out["put_failure_count"]) == (1, 1, 1)
    # the first failure replaces a first warning (IBM's MQSTAT usage notes)
    assert out["completion_code"] == 2 and out["reason"] == 2053
    assert out["object_name"] == q and out["resolved_object_name"] == q and out["resolved_qmgr_name"] == "QM1"
    again = stat(m, 0)  # MQSTAT_TYPE_ASYNC_ERROR by number: reset by the call before
    assert again["put_success_count"] == again["put_failure_count"] == 0 and again["reason"] == 0


def test_warning_is_reported_when_nothing_failed(group, connect):
    q = uniq("ASW")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    m = connect()
    hobj = m.open(q, ["OUTPUT"])
    m.put(hobj, "ok", options=["NO_SYNCPOINT", "ASYNC_RESPONSE"])
    r = m.put(hobj, "high", md={"priority": 15}, options=["NO_SYNCPOINT", "ASYNC_RESPONSE"])
    assert "reason" not in r and r["md"]["priority"] == 15
    m.put1(q, "put1", options=["NO_SYNCPOINT", "ASYNC_RESPONSE"])
    out = stat(m)
    assert (out["put_success_count"], out["put_warning_count"], out["put_failure_count"]) == (2, 1, 0)
    assert out["completion_code"] == 1 and out["reason"] == 2049 and out["object_name"] == q


def test_response_as_q_def_follows_defpresp(group, connect):
    q = uniq("ASD")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) DEFPRESP(ASYNC)")
    m = connect()
    hobj = m.open(q, ["OUTPUT"])
    m.put(hobj, "as q def")  # no response option: RESPONSE_AS_Q_DEF, the queue says ASYNC
    m.put(hobj, "explicit", options=["NO_SYNCPOINT", "RESPONSE_AS_Q_DEF"])
    m.put(hobj, "sync", options=["NO_SYNCPOINT", "SYNC_RESPONSE"])  # not counted
    m.call("POST", f"/v1/connections/{m.hconn}/objects/{hobj}/put-batch",
           {"options": ["NO_SYNCPOINT"], "messages": [{"data": "b1"}, {"data": "b2"}]})
    assert stat(m)["put_success_count"] == 4
    m.commit()


def test_counts_are_per_connection(group, connect):
    q = uniq("ASC")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    one, two = connect(), connect()
    one.put(one.open(q, ["OUTPUT"]), "x", options=["NO_SYNCPOINT", "ASYNC_RESPONSE"])
    assert stat(two)["put_success_count"] == 0
    assert stat(one)["put_success_count"] == 1


def test_response_options_are_exclusive(group, connect):
    q = uniq("ASX")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    m = connect()
    hobj = m.open(q, ["OUTPUT"])
    with mq_reason(2046):
        m.put(hobj, "x", options=["ASYNC_RESPONSE", "SYNC_RESPONSE"])


def test_reconnection_types(connect):
    m = connect()
    for kind in ("RECONNECTION", "RECONNECTION_ERROR", "MQSTAT_TYPE_RECONNECTION", 2):
        out = stat(m, kind)
        assert out["completion_code"] == 0 and out["reason"] == 0 and out["put_success_count"] == 0


def test_bad_type_is_2430(connect):
    m = connect()
    for kind in ("SOMETHING", 7, "ASYNC"):
        with mq_reason(2430):
            stat(m, kind)


def test_bad_connection_is_2018(connect):
    m = connect()
    with mq_reason(2018):
        m.call("POST", "/v1/connections/QM1-nosuch/stat", {"type": "ASYNC_ERROR"})


def test_async_put_and_mqstat_through_the_ibmmq_shaped_client(group):
    """IBM's ibmmq example of asynchronous puts (put_async_message.py), run through this
    emulator's client imported under ibmmq's name: puts with MQPMO_ASYNC_RESPONSE while PUT is
    allowed and then inhibited (MQSET by selector dict), each batch's outcome from MQSTAT, never
    from the put itself."""
    import qsg_pymqi as ibmmq

    q = uniq("ASYX")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    host, port = group.url("QM1").removeprefix("http://").rsplit(":", 1)
    cd = ibmmq.CD()
    cd.ConnectionName = f"{host}({port})"
    cd.ChannelName = "DEV.APP.SVRCONN"
    cno = ibmmq.CNO()
    cno.Options = ibmmq.CMQC.MQCNO_CLIENT_BINDING
    qmgr = ibmmq.connect("QM1", cd=cd, cno=cno)
    od = ibmmq.OD()
    od.ObjectName = q
    queue = ibmmq.Queue(qmgr, od, ibmmq.CMQC.MQOO_SET | ibmmq.CMQC.MQOO_OUTPUT)
    pmo = ibmmq.PMO()
    pmo.Options = ibmmq.CMQC.MQPMO_NO_SYNCPOINT | ibmmq.CMQC.MQPMO_ASYNC_RESPONSE
    seen = {}
    for allowed in (ibmmq.CMQC.MQQA_PUT_ALLOWED, ibmmq.CMQC.MQQA_PUT_INHIBITED):
        queue.set({ibmmq.CMQC.MQIA_INHIBIT_PUT: allowed})
        for i in range(10):
            queue.put(f"async message {i}", ibmmq.MD(), pmo)  # never raises: reported by MQSTAT
        sts = qmgr.stat(ibmmq.CMQC.MQSTAT_TYPE_ASYNC_ERROR)
        seen[ibmmq.CMQSTRC.MQQA_PUT_DICT[allowed]] = (sts.PutSuccessCount, sts.PutFailureCount, sts.Reason)
    assert seen == {"MQQA_PUT_ALLOWED": (10, 0, 0), "MQQA_PUT_INHIBITED": (0, 10, 2051)}
    assert sts.CompCode == 2 and sts.ObjectName.rstrip() == q.encode() and isinstance(sts, ibmmq.STS)
    with pytest.raises(ibmmq.MQMIError) as caught:
        qmgr.stat(7)
    assert caught.value.reason == 2430
    queue.set({ibmmq.CMQC.MQIA_INHIBIT_PUT: ibmmq.CMQC.MQQA_PUT_ALLOWED})
    queue.close()
    qmgr.disconnect()
