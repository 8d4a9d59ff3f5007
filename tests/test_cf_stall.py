"""A stalled coupling facility (docs/explanation/reliability.md): every answer stays true.

Redis is stalled with SIGSTOP while a call is in flight (the kernel still takes the command into
Redis's socket buffer; Redis runs it when SIGCONT resumes it), or a proxy holds the bytes without
closing anything. The queue manager gives up on the reply after its socket timeout
(``QSG_CF_TIMEOUT_S``, short here) and must answer the truth:

* MQRC_CF_NOT_AVAILABLE (2345) and every other FAILED answer: the call changed nothing;
* MQRC_CONNECTION_BROKEN (2009): the outcome is unknown; the unit of work is backed out (the
  next MQCMIT answers MQRC_BACKED_OUT, 2003), never committed;
* no message leaves a queue without being returned to a caller; nothing is put twice.

The script Redis runs late carries a deadline and does nothing (app/cf/deadline.py), so once
Redis is back each queue holds exactly what the answers promise. The stall lasts exactly as long
as the call takes to be answered (the test resumes Redis when the answer is in): no sleeps.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis as redis_sync

from tests.support.mq import MQ, MQFailed, connections

#: A short socket timeout keeps each stall short; a long lease keeps the stall from fencing the
#: queue managers (the fenced case is tests/test_fault_fencing.py's).
ENV = {"QSG_CF_TIMEOUT_S": "1.5", "QSG_HEARTBEAT_TTL_S": "30", "QSG_HEARTBEAT_INTERVAL_S": "0.5"}
UNKNOWN, NOT_AVAILABLE, BACKED_OUT, NO_MSG = 2009, 2345, 2003, 2033


@pytest.fixture(scope="module")
def group(make_cluster):
    """QM1 reaches Redis directly, QM2 through a proxy (the stall without SIGSTOP)."""
    g = make_cluster(["QM1", "QM2"], env=ENV, proxied=("QM2",))
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5)\n"
                     + "\n".join(f"DEFINE QLOCAL(STALL.Q{i}) QSGDISP(SHARED) CFSTRUCT(APPL1)" for i in range(1, 7)))
    return g


@pytest.fixture
def connect(group) -> Iterator[Callable[..., MQ]]:
    yield from connections(group, "STALLTEST")


def answer(call: Callable[[], Any]) -> int:
    """The MQ reason a call answered (0: it succeeded); an HTTP answer is required."""
    try:
        call()
    except MQFailed as exc:
        return int(exc.reason)
    return 0


def settled(group) -> None:
    """Return once Redis has run whatever waited in its socket buffers when it resumed: a new
    connection's command is read after the commands already buffered on older connections."""
    client = redis_sync.Redis.from_url(group.redis_url, socket_timeout=10)
    try:
        client.ping()
        client.ping()
    finally:
        client.close()


def during_stall(group, call: Callable[[], Any]) -> int:
    """``call`` made while Redis is stopped (SIGSTOP); Redis resumes once it has answered."""
    group.redis_server.pause()
    try:
        return answer(call)
    finally:
        group.redis_server.resume()
        settled(group)


def contents(m: MQ, queue: str) -> list[str]:
    """Every message now on ``queue`` (got, no syncpoint)."""
    return m.drain(m.open(queue, ["INPUT_SHARED"]))


# ---- 1: a NO_SYNCPOINT MQGET during the stall ------------------------------------------------


def test_get_during_a_stall_answers_unknown_and_the_message_stays(group, connect):
    app = connect()
    app.put1("STALL.Q1", "only")
    hobj = app.open("STALL.Q1", ["INPUT_SHARED"])
    reason = during_stall(group, lambda: app.get(hobj))
    # The get Redis ran late did nothing: the message is still there for a caller.
    assert (reason, contents(connect(), "STALL.Q1")) == (UNKNOWN, ["only"])


# ---- 2: a NO_SYNCPOINT put-batch during the stall --------------------------------------------


def test_put_batch_during_a_stall_answers_unknown_and_puts_nothing(group, connect):
    app = connect()
    hobj = app.open("STALL.Q2", ["OUTPUT"])
    path = f"/v1/connections/{app.hconn}/objects/{hobj}/put-batch"
    body = {"options": ["NO_SYNCPOINT"], "messages": [{"data": "a"}, {"data": "b"}]}
    reason = during_stall(group, lambda: app.call("POST", path, body))
    assert (reason, contents(connect(), "STALL.Q2")) == (UNKNOWN, [])  # the late batch did nothing
    app.call("POST", path, body)  # the application's retry: each message once
    assert contents(connect(), "STALL.Q2") == ["a", "b"]


# ---- 3: under syncpoint, the unit of work is backed out, never committed -----------------------


def test_syncpoint_get_during_a_stall_backs_the_unit_of_work_out(group, connect):
    app = connect()
    app.put1("STALL.Q3", "kept")
    hobj = app.open("STALL.Q3", ["INPUT_SHARED"])
    reason = during_stall(group, lambda: app.get(hobj, ["SYNCPOINT"]))
    committed = answer(app.commit)  # never a commit of what nobody saw
    assert (reason, committed, contents(connect(), "STALL.Q3")) == (UNKNOWN, BACKED_OUT, ["kept"])
    assert answer(app.commit) == 0  # a new unit of work


def test_syncpoint_put_during_a_stall_then_retried_is_committed_once(group, connect):
    app = connect()
    hobj = app.open("STALL.Q4", ["OUTPUT"])
    app.put(hobj, "earlier", options=["SYNCPOINT"])  # in the same unit of work: backed out with it
    reason = during_stall(group, lambda: app.put(hobj, "once", options=["SYNCPOINT"]))
    committed = answer(app.commit)
    assert (reason, committed, contents(connect(), "STALL.Q4")) == (UNKNOWN, BACKED_OUT, [])
    app.put(hobj, "earlier", options=["SYNCPOINT"])  # the application does its unit of work again
    app.put(hobj, "once", options=["SYNCPOINT"])
    app.commit()
    assert contents(connect(), "STALL.Q4") == ["earlier", "once"]


def test_commit_during_a_stall_is_unknown_and_completed_never_undone(group, connect):
    app = connect()
    hobj = app.open("STALL.Q5", ["OUTPUT"])
    app.put(hobj, "committed", options=["SYNCPOINT"])
    assert during_stall(group, app.commit) == UNKNOWN
    # The late commit did nothing; the next MQCMIT completes it (it may have happened: it is
    # never backed out), and MQBACK cannot undo it either.
    assert answer(app.backout) == UNKNOWN
    assert contents(connect(), "STALL.Q5") == ["committed"]
    assert answer(app.commit) == 0


# ---- the same through a proxy that holds the bytes -------------------------------------------


def test_get_through_a_stalled_network_answers_unknown_and_the_message_stays(group, connect):
    app = connect("QM2")
    app.put1("STALL.Q6", "held")
    hobj = app.open("STALL.Q6", ["INPUT_SHARED"])
    proxy = group.proxies["QM2"]
    proxy.partition()  # nothing forwarded, nothing closed
    try:
        reason = answer(lambda: app.get(hobj, ["SYNCPOINT"]))
    finally:
        proxy.heal(resume=True)  # the held command reaches Redis late
    assert reason == UNKNOWN
    assert answer(app.commit) == BACKED_OUT
    assert contents(connect("QM1"), "STALL.Q6") == ["held"]


# ---- 4: calls sent to a paused queue manager --------------------------------------------------

#: uvicorn's keep-alive timeout (its default): a pause must outlast it for the race to exist.
KEEP_ALIVE_S = 5.0


def test_calls_sent_to_a_paused_queue_manager_all_get_an_answer(group):
    """Clients whose kept-alive connection was idle when the QM was paused send their calls into
    it; when the process continues, its keep-alive timers are already due. Each call must still
    be answered (not a connection closed under a request that was sent)."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    qm = group.qms["QM2"]
    clients = [MQ(qm.url, f"PAUSED{i}") for i in range(6)]  # each keeps one idle connection
    try:
        qm.pause()
        try:
            with ThreadPoolExecutor(len(clients)) as pool:
                sent = [pool.submit(lambda c=c: c.call("GET", "/v1/qmgr")) for c in clients]
                time.sleep(KEEP_ALIVE_S + 1)  # the fault itself: paused past the keep-alive timeout
                qm.resume()
                outcomes = []
                for future in sent:
                    try:
                        future.result(timeout=30)
                        outcomes.append("answered")
                    except MQFailed:
                        outcomes.append("answered")  # an MQ answer is an answer
                    except Exception as exc:  # noqa: BLE001 - what the client saw instead of an answer
                        outcomes.append(f"{type(exc).__name__}: {exc}")
        finally:
            qm.resume()
        assert outcomes == ["answered"] * len(clients), outcomes
    finally:
        for c in clients:
            with contextlib.suppress(MQFailed):
                c.disconnect()
            c.http.close()
