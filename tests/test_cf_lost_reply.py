"""A destructive MQGET outside syncpoint whose reply is lost after Redis ran it (docs/explanation/reliability.md).

A TCP proxy between QM2 and Redis forwards every request but throws the replies away: the get
runs in Redis and takes the message off the queue, and QM2 never learns what it got. QM2 answers
MQRC_CONNECTION_BROKEN (2009: outcome unknown) - and the message must go back on the queue where
it was (same place in delivery order, MQMD and backout count as they were), not be lost. So also
when QM2 dies before it could put it back: peer recovery does. What a reply brought to a caller
never comes back. The checker in each test: every message put arrives exactly once.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import redis as redis_sync

from app.cf import keys
from app.cf.scripts import load_source
from tests.support.cluster import FAST
from tests.support.mq import MQ, MQFailed, connections
from tests.support.waits import wait_until

#: A short socket timeout keeps each lost reply short; a long lease keeps QM2 in the group
#: while its replies are lost (its heartbeats' replies are lost too).
ENV = {"QSG_CF_TIMEOUT_S": "1.5", "QSG_HEARTBEAT_TTL_S": "30", "QSG_HEARTBEAT_INTERVAL_S": "0.5"}
UNKNOWN = 2009


@pytest.fixture(scope="module")
def group(make_cluster):
    """QM1 reaches Redis directly, QM2 through a proxy that can lose replies."""
    g = make_cluster(["QM1", "QM2"], env=ENV, proxied=("QM2",))
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5)\n"
                     + "\n".join(f"DEFINE QLOCAL(LOST.Q{i}) QSGDISP(SHARED) CFSTRUCT(APPL1)" for i in range(1, 6)))
    return g


@pytest.fixture
def connect(group) -> Iterator[Callable[..., MQ]]:
    yield from connections(group, "LOSTREPLY")


def sha(script: str) -> bytes:
    """What an EVALSHA of ``script`` carries: the SHA1 of its source."""
    return hashlib.sha1(load_source(f"{script}.lua").encode()).hexdigest().encode()


def reply_lost(group, call: Callable[[], Any], script: str = "get") -> int:
    """The reason ``call`` (on QM2) answered while Redis's replies to QM2's calls of ``script``
    (and whatever follows on their connections) were thrown away. QM2 has called ``script``
    before, so the call runs it (a first call's NOSCRIPT answer would be the reply lost)."""
    proxy = group.proxies["QM2"]
    proxy.drop_replies(after=sha(script))
    try:
        call()
    except MQFailed as exc:
        return int(exc.reason)
    finally:
        heal(group)
    return 0


def heal(group) -> None:
    """Heal QM2's proxy, which resets every connection QM2 had to Redis, and wait until QM2 has
    made a call through the CF again: by then its event loop has seen those resets, so the test's
    next call does not race them (a call written on a connection whose reset is still on its way
    is answered 2009, rightly, but it is not what the test is about)."""
    group.proxies["QM2"].heal()

    def through_the_cf() -> bool:
        try:
            return group.mqsc("QM2", "DISPLAY QSTATUS(LOST.Q1)")[0]["completion_code"] == 0
        except (httpx.HTTPError, AssertionError):  # answered with an error: not yet
            return False
    wait_until(through_the_cf, 30, "QM2 calling the CF again after the heal")


def depth(group, queue: str) -> int:
    return int(group.mqsc_ok("QM1", f"DISPLAY QLOCAL({queue}) CURDEPTH")[0]["objects"][0]["CURDEPTH"])


def put_all(m: MQ, queue: str, names: list[str]) -> None:
    for name in names:
        m.put1(queue, name, md={"priority": 5 if name.startswith("hi") else 3})


def everything(m: MQ, queue: str) -> list[dict[str, Any]]:
    """Every message now on ``queue``, in delivery order (got without syncpoint)."""
    hobj = m.open(queue, ["INPUT_SHARED"])
    out = []
    while True:
        try:
            out.append(m.get(hobj))
        except MQFailed as exc:
            assert exc.reason == 2033
            return out


def test_get_whose_reply_is_lost_puts_the_message_back_where_it_was(group, connect):
    app, checker = connect("QM2"), connect("QM1")
    put_all(checker, "LOST.Q1", ["hi1", "lo1", "lo2", "lo3"])
    hobj = app.open("LOST.Q1", ["INPUT_SHARED"])
    delivered = [app.get(hobj)["data"]]  # a reply that arrived: never comes back
    assert reply_lost(group, lambda: app.get(hobj)) == UNKNOWN  # it took lo1 off the queue
    wait_until(lambda: depth(group, "LOST.Q1") == 3, 20, "lo1 back on LOST.Q1")
    rest = everything(checker, "LOST.Q1")
    assert delivered + [m["data"] for m in rest] == ["hi1", "lo1", "lo2", "lo3"]  # its own place again
    assert (rest[0]["md"]["backout_count"], rest[0]["md"]["priority"]) == (0, 3)  # as it was


def test_get_batch_whose_reply_is_lost_puts_every_message_back(group, connect):
    app, checker = connect("QM2"), connect("QM1")
    put_all(checker, "LOST.Q2", ["a", "b", "c", "d"])
    hobj = app.open("LOST.Q2", ["INPUT_SHARED"])
    path = f"/v1/connections/{app.hconn}/objects/{hobj}/get-batch"
    body = {"options": ["NO_SYNCPOINT"], "max_messages": 1}
    delivered = [m["data"] for m in app.call("POST", path, body)["messages"]]  # (the script is loaded)
    assert reply_lost(group, lambda: app.call("POST", path, {**body, "max_messages": 2}), "get_batch") == UNKNOWN
    wait_until(lambda: depth(group, "LOST.Q2") == 3, 20, "the batch back on LOST.Q2")
    assert delivered + [m["data"] for m in everything(checker, "LOST.Q2")] == ["a", "b", "c", "d"]


def test_get_under_the_browse_cursor_whose_reply_is_lost_puts_it_back(group, connect):
    app, checker = connect("QM2"), connect("QM1")
    put_all(checker, "LOST.Q3", ["first", "second"])
    hobj = app.open("LOST.Q3", ["INPUT_SHARED", "BROWSE"])
    assert app.get(hobj, ["BROWSE_FIRST"])["data"] == "first"
    assert reply_lost(group, lambda: app.get(hobj, ["MSG_UNDER_CURSOR", "NO_SYNCPOINT"])) == UNKNOWN
    wait_until(lambda: depth(group, "LOST.Q3") == 2, 20, "the message under the cursor back on LOST.Q3")
    assert [m["data"] for m in everything(checker, "LOST.Q3")] == ["first", "second"]


# ---- MQOPEN and MQCLOSE: the open counts are right once the CF answers again -------------------


def opens(group, queue: str) -> tuple[int, int]:
    (row,) = group.mqsc_ok("QM1", f"DISPLAY QSTATUS({queue}) IPPROCS OPPROCS")[0]["objects"]
    return int(row["IPPROCS"]), int(row["OPPROCS"])


def test_an_open_whose_reply_is_lost_is_not_left_counted(group, connect):
    app = connect("QM2")
    app.close(app.open("LOST.Q4", ["OUTPUT"]))  # (open.lua and close.lua loaded)
    assert reply_lost(group, lambda: app.open("LOST.Q4", ["INPUT_SHARED", "OUTPUT"]), "open") == UNKNOWN
    wait_until(lambda: opens(group, "LOST.Q4") == (0, 0), 20, "the lost open taken back")
    hobj = app.open("LOST.Q4", ["INPUT_SHARED"])  # the same connection goes on
    assert opens(group, "LOST.Q4") == (1, 0)
    app.close(hobj)


def test_a_close_whose_outcome_is_unknown_is_completed(group, connect):
    app = connect("QM2")
    hobj = app.open("LOST.Q5", ["INPUT_SHARED", "OUTPUT"])
    app.close(app.open("LOST.Q5", ["BROWSE"]))  # (close.lua loaded)
    assert opens(group, "LOST.Q5") == (1, 1)
    proxy = group.proxies["QM2"]
    for _ in range(3):
        proxy.partition()  # the close is sent and held: it never reaches Redis (the heal resets it)
        try:
            with pytest.raises(MQFailed) as answered:
                app.close(hobj)
        finally:
            heal(group)
        if answered.value.reason != 2345:
            break
        # QM2 needed a new connection for it, which the partition held: nothing was sent, and
        # nothing changed (a true answer; the case under test is a close that was sent)
        assert opens(group, "LOST.Q5") == (1, 1)
    assert answered.value.reason == UNKNOWN
    wait_until(lambda: opens(group, "LOST.Q5") == (0, 0), 20, "the close completed")


# ---- the queue manager dies before it could put the message back ------------------------------


def test_a_queue_manager_killed_with_a_get_in_flight_loses_nothing_and_duplicates_nothing(make_fresh_cluster):
    """QM2 gets three messages (their replies arrive: delivered), then one whose reply is lost;
    it is killed while it still waits for that reply. Peer recovery by QM1 puts that one back,
    and only that one."""
    group = make_fresh_cluster(["QM1", "QM2"], env={**FAST, "QSG_CF_TIMEOUT_S": "30"}, proxied=("QM2",))
    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5)\n"
                         "DEFINE QLOCAL(LOST.KILLED) QSGDISP(SHARED) CFSTRUCT(APPL1)")
    checker, app = MQ(group.url("QM1"), "CHECKER"), MQ(group.url("QM2"), "VICTIM")
    names = [f"m{i}" for i in range(6)]
    put_all(checker, "LOST.KILLED", names)
    hobj = app.open("LOST.KILLED", ["INPUT_SHARED"])
    delivered = [app.get(hobj)["data"] for _ in range(3)]

    held = keys.held_key(keys.shared_tag(group.qsg, "APPL1"), "QM2")
    cf = redis_sync.Redis.from_url(group.redis_url, socket_timeout=10)
    outcome: list[object] = []
    group.proxies["QM2"].drop_replies(after=sha("get"))
    in_flight = threading.Thread(target=lambda: outcome.append(_answer(app, hobj)), daemon=True)
    in_flight.start()
    try:
        wait_until(lambda: cf.hlen(held) == 1, 20, "the get run in Redis, its reply lost")
        group.qms["QM2"].kill()
    finally:
        group.proxies["QM2"].heal()
        in_flight.join(30)
    assert outcome and not isinstance(outcome[0], dict)  # no message reached the caller

    wait_until(lambda: depth(group, "LOST.KILLED") == 3, 30, "QM1's peer recovery putting m3 back")
    assert delivered + [m["data"] for m in everything(checker, "LOST.KILLED")] == names
    assert cf.hlen(held) == 0
    cf.close()


def _answer(app: MQ, hobj: str) -> object:
    """What the in-flight get saw: its body, or the error (the QM died under it)."""
    try:
        return app.get(hobj)
    except (MQFailed, httpx.HTTPError) as exc:
        return exc


def test_a_private_get_whose_reply_never_came_is_restored_at_the_queue_managers_restart(make_fresh_cluster):
    """A private queue lives in the QM's own page set, which no peer recovers (as on z/OS): a get
    outside syncpoint that ran there as the QM died (the script's reply never read: here the
    test sends the QM's own get.lua call, as its current incarnation) is put back when the QM
    restarts, in its place, with the persistent messages its restart keeps."""
    group = make_fresh_cluster(["QM1"], env=FAST)
    group.mqsc_ok("QM1", "DEFINE QLOCAL(LOST.PRIV) QSGDISP(QMGR) DEFPSIST(YES)")
    checker = MQ(group.url("QM1"), "CHECKER")
    put_all(checker, "LOST.PRIV", ["p0", "p1", "p2"])
    tag = keys.private_tag(group.qsg, "QM1")
    qk = keys.QueueKeys(keys.QueueLocation(tag, "LOST.PRIV"))
    held = keys.held_key(tag, "QM1")
    cf = redis_sync.Redis.from_url(group.redis_url)
    incarnation = json.loads(cf.hget(keys.members_key(group.qsg), "QM1"))["incarnation"]
    pageset = redis_sync.Redis.from_url(group.pageset_url("QM1"))
    seconds, micros = pageset.time()
    now = seconds * 1000 + micros // 1000
    got = pageset.eval(load_source("get.lua"), 5, qk.ctl, keys.uow_key(tag, "QM1", "H"), keys.uow_registry(tag),
                       held, keys.structure_fence(tag),
                       qk.queue_prefix, "LOST.PRIV", "QM1", "H", "", "GET", "NO", "", "", "", "-1", "0", str(now),
                       "0", keys.structure_prefix(tag), "D", "", f"{incarnation}:999999", "QM1", str(incarnation),
                       str(now + 5000))
    assert got[0] == 0 and got[2] == b"p0" and pageset.hlen(held) == 1  # off the queue, held
    pageset.close()

    group.qms["QM1"].kill()
    group.qms["QM1"].start()
    assert [m["data"] for m in everything(MQ(group.url("QM1"), "CHECKER"), "LOST.PRIV")] == ["p0", "p1", "p2"]
    pageset = redis_sync.Redis.from_url(group.pageset_url("QM1"))
    assert pageset.hlen(held) == 0
    pageset.close()
    cf.close()


@pytest.mark.parametrize("verb", ["get", "get-batch"])
def test_a_waiting_get_whose_http_client_left_takes_nothing(group, verb):
    """An HTTP client that gave up on a get with a wait interval (it closed its connection) is
    not there to be given a message: the messages put after it left stay on the queue, until a
    caller that is there gets them."""
    queue = "LOST.Q6" if verb == "get" else "LOST.Q7"
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({queue}) QSGDISP(SHARED) CFSTRUCT(APPL1) REPLACE")
    leaver, putter = MQ(group.url("QM1"), "LEAVER"), MQ(group.url("QM1"), "PUTTER")
    hobj = leaver.open(queue, ["INPUT_SHARED"])
    body = {"options": ["WAIT", "NO_SYNCPOINT"], "wait_ms": 30_000,
            **({"max_messages": 5} if verb == "get-batch" else {})}
    with pytest.raises(httpx.ReadTimeout):  # the client gives up and closes its connection
        httpx.post(f"{group.url('QM1')}/v1/connections/{leaver.hconn}/objects/{hobj}/{verb}", json=body, timeout=1.0)
    group.wait_for_waiter(queue)  # (the QM still waits for it)
    put_all(putter, queue, ["p1", "p2", "p3"])
    assert [m["data"] for m in everything(putter, queue)] == ["p1", "p2", "p3"]
