"""A waiting get-batch takes its first message with a waiting MQGET, then the rest of the batch
with one more script call (app/cf/messaging.py ``get_batch``). When that second call's reply is
lost after Redis ran it, the messages it took were never returned to the application: they must
stay on the queue (or the call fail 2009, outcome unknown), never be consumed by the answer or
by the application's MQCMIT. A TCP proxy between QM2 and Redis forwards the call and throws its
reply away; the checker: every message put is got exactly once."""

from __future__ import annotations

import contextlib
import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from app.cf.scripts import load_source
from tests.support.mq import MQ, MQFailed, connections
from tests.support.mqsc import shared_q
from tests.support.waits import wait_until

#: A short socket timeout keeps the lost reply short; a long lease keeps QM2 in the group.
ENV = {"QSG_CF_TIMEOUT_S": "1.5", "QSG_HEARTBEAT_TTL_S": "30", "QSG_HEARTBEAT_INTERVAL_S": "0.5"}
GET_BATCH = "/v1/connections/{h}/objects/{o}/get-batch"
PUT_BATCH = "/v1/connections/{h}/objects/{o}/put-batch"


@pytest.fixture(scope="module")
def group(make_cluster):
    """QM1 reaches Redis directly, QM2 through a proxy that can lose replies."""
    g = make_cluster(["QM1", "QM2"], env=ENV, proxied=("QM2",))
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    return g


@pytest.fixture
def connect(group):
    yield from connections(group, "WAITLOST")


def get_batch_sha() -> bytes:
    return hashlib.sha1(load_source("get_batch.lua").encode()).hexdigest().encode()


def heal(group, queue: str) -> None:
    """Heal QM2's proxy (its connections reset) and wait until QM2 calls the CF again."""
    group.proxies["QM2"].heal()

    def through_the_cf() -> bool:
        try:
            return group.mqsc("QM2", f"DISPLAY QSTATUS({queue})")[0]["completion_code"] == 0
        except Exception:  # noqa: BLE001 - not yet
            return False
    wait_until(through_the_cf, 30, "QM2 calling the CF again after the heal")


def commit(m: MQ) -> None:
    """MQCMIT, sent again after 2345 as an application retries it (nothing was done: a
    connection the heal reset, found closed before anything was written on it; on a busy
    machine QM2 may take some seconds to be back on every connection), for at most 20 s."""
    outcome: list[MQFailed] = []

    def committed() -> bool:
        try:
            m.commit()
        except MQFailed as exc:
            if exc.reason != 2345:
                outcome.append(exc)
                return True
            return False
        return True

    wait_until(committed, 20, "an MQCMIT that does not answer 2345")
    if outcome:
        raise outcome[0]


def put_four(putter: MQ, hout: str, names: list[str]) -> None:
    """The messages in one put-batch (the waiting get wakes to all of them): the first
    non-persistent, the others persistent (under SYNCPOINT_IF_PERSISTENT only those are in the
    unit of work)."""
    putter.call("POST", PUT_BATCH.format(h=putter.hconn, o=hout), {"options": ["NO_SYNCPOINT"], "messages": [
        {"data": n, "md": {"persistence": "NOT_PERSISTENT" if n == "m1" else "PERSISTENT"}} for n in names]})


def depth(group, queue: str) -> int:
    return int(group.mqsc_ok("QM1", f"DISPLAY QLOCAL({queue}) CURDEPTH")[0]["objects"][0]["CURDEPTH"])


def everything(m: MQ, queue: str) -> list[str]:
    hobj = m.open(queue, ["INPUT_SHARED"])
    out: list[str] = []
    for _ in range(100):
        try:
            out.append(m.get(hobj)["data"])
        except MQFailed as exc:
            assert exc.reason == 2033
            return out
    raise AssertionError("the queue never emptied")


@pytest.mark.parametrize("syncpoint", ["NO_SYNCPOINT", "SYNCPOINT", "SYNCPOINT_IF_PERSISTENT"])
def test_the_rest_of_a_waiting_batch_whose_reply_is_lost_is_not_consumed(group, connect, syncpoint):
    q = shared_q(group)
    app, putter, checker = connect("QM2"), connect("QM1"), connect("QM1")
    hin = app.open(q, ["INPUT_SHARED"])
    hout = putter.open(q, ["OUTPUT"])
    names = ["m1", "m2", "m3", "m4"]

    def waiting_batch() -> tuple[int, dict[str, Any]]:
        r = app.http.post(GET_BATCH.format(h=app.hconn, o=hin),
                          json={"options": ["WAIT", syncpoint], "max_messages": 10, "wait_ms": 30_000})
        return r.status_code, r.json()

    with ThreadPoolExecutor(max_workers=1) as pool:
        waiting = pool.submit(waiting_batch)
        group.wait_for_waiter(q)  # QM2's get waits in the CF; its get-batch call came before
        group.proxies["QM2"].drop_replies(after=get_batch_sha())  # the next get-batch's reply is lost
        try:
            put_four(putter, hout, names)
            status, answer = waiting.result(timeout=60)
        finally:
            heal(group, q)
    got: list[str] = []
    committed: int | None = None  # what the application's MQCMIT answered after a 2009
    if status == 200:
        got = [m["data"] for m in answer["messages"]]
        if syncpoint != "NO_SYNCPOINT":
            commit(app)
    else:
        assert answer["error"]["reason"] == 2009, answer  # outcome unknown: the unit of work is
        if syncpoint != "NO_SYNCPOINT":                   # backed out, whatever the application does
            try:
                commit(app)  # 2003: backed out
            except MQFailed as exc:
                committed = exc.reason
            else:
                committed = 0
    # what was not returned is back on the queue (a restore may come after the answer): awaited
    # as the queue's depth, then every message is got to check there is nothing twice. Under
    # IF_PERSISTENT the non-persistent m1 was taken outside the unit of work by the waiting get:
    # a 2009 never returned it, so it comes back too (held under its token until the batch's
    # answer is known), not only the persistent messages the backout restores.
    back = len(names) - len(got)
    with contextlib.suppress(AssertionError):
        wait_until(lambda: depth(group, q) == back, 20, f"{back} messages back on {q}")
    rest = everything(checker, q)
    # nothing lost, nothing twice
    delivered = sorted(got + rest)
    assert delivered == sorted(names), (status, got, rest, committed)
