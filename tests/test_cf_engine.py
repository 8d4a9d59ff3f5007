"""The coupling-facility engine against a real redis-server.

Two ``CouplingFacility`` instances on two Redis clients play two queue managers of one QSG.
Waits are bounded with ``asyncio.wait_for``; nothing sleeps to synchronise.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from app.cf import keys
from app.cf.engine import (
    BatchMessage,
    CouplingFacility,
    GetMode,
    GetResult,
    OutcomeUnknownError,
    Syncpoint,
    TruncatedMessageError,
)
from app.cf.keys import QueueKeys, QueueLocation
from app.cf.redisconn import make_redis
from app.core.clock import ManualClock
from app.core.errors import MQError
from app.core.reasons import MQRC
from tests.support.redis_server import RedisServer, free_port

QSG = "QSG1"
SHARED = keys.shared_tag(QSG, "APPL1")
PRIVATE = keys.private_tag(QSG, "QM1")
Q = QueueLocation(SHARED, "APP.Q")

RUNTIME: dict[str, str | int] = {
    "put": "ENABLED", "get": "ENABLED", "maxdepth": 999999999, "maxmsgl": 4194304,
    "msgdlvsq": "PRIORITY", "defprty": 0, "usage": "NORMAL", "offload": "0",
}

#: Bound for anything awaited: a broken wake-up fails the test instead of hanging it.
BOUND_S = 10.0


def mid(n: int) -> str:
    """A 48-hex-digit msg_id / correl_id."""
    return f"{n:048X}"


async def make_cf(url: str, *, recheck_s: float = 5.0, clock: ManualClock | None = None) -> CouplingFacility:
    cf = CouplingFacility(make_redis(url), QSG, clock or ManualClock(), recheck_s=recheck_s)
    await cf.start()
    return cf


async def close_cf(cf: CouplingFacility) -> None:
    await cf.stop()
    await cf.redis.aclose()


@pytest.fixture
def clock() -> ManualClock:
    """The group's one clock, shared by both engines."""
    return ManualClock()


@pytest_asyncio.fixture
async def cf(redis_url: str, clock: ManualClock) -> AsyncIterator[CouplingFacility]:
    """QM1's engine. recheck_s is long so that a test passes only through real wake-ups."""
    engine = await make_cf(redis_url, recheck_s=60.0, clock=clock)
    yield engine
    await close_cf(engine)


@pytest_asyncio.fixture
async def cf2(redis_url: str, clock: ManualClock) -> AsyncIterator[CouplingFacility]:
    """QM2's engine: another Redis client, as another queue manager process would have."""
    engine = await make_cf(redis_url, recheck_s=60.0, clock=clock)
    yield engine
    await close_cf(engine)


async def define(cf: CouplingFacility, loc: QueueLocation = Q, **attrs: str | int) -> int:
    return await cf.define_queue(loc, {**RUNTIME, **attrs})


async def put(cf: CouplingFacility, body: bytes | str, *, loc: QueueLocation = Q,
              priority: int = 0, syncpoint: bool = False, persistent: bool = False,
              msg_id: str | None = None, correl_id: str | None = None, qmgr: str = "QM1",
              hconn: str = "C1", gen: int | None = None, offload: bool | None = None):
    data = body.encode() if isinstance(body, str) else body
    md = json.dumps({"priority": priority, "msg_id": msg_id, "correl_id": correl_id})
    return await cf.put(loc, qmgr=qmgr, hconn=hconn, gen=gen, syncpoint=syncpoint,
                        priority=priority, persistent=persistent, msg_id=msg_id or mid(0),
                        correl_id=correl_id, md_json=md, body=data, offload=offload)


async def get(cf: CouplingFacility, *, loc: QueueLocation = Q, qmgr: str = "QM1",
              hconn: str = "C1", **kw) -> GetResult:
    kw.setdefault("gen", None)
    return await cf.get(loc, qmgr=qmgr, hconn=hconn, **kw)


async def bodies(cf: CouplingFacility, loc: QueueLocation = Q, **kw) -> list[bytes]:
    """Destructively get everything (non-syncpoint) and return the bodies in order."""
    out = []
    while True:
        try:
            out.append((await get(cf, loc=loc, **kw)).body)
        except MQError as exc:
            assert exc.reason == MQRC.NO_MSG_AVAILABLE
            return out


async def reason_of(coro) -> int:
    with pytest.raises(MQError) as info:
        await coro
    return info.value.reason


# ---- ordering -----------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_priority_order_and_fifo_within_priority(cf: CouplingFacility) -> None:
    await define(cf)
    for body, p in [("a0", 0), ("a5", 5), ("a9", 9), ("b5", 5), ("b0", 0), ("b9", 9)]:
        await put(cf, body, priority=p)
    assert await bodies(cf) == [b"a9", b"b9", b"a5", b"b5", b"a0", b"b0"]


@pytest.mark.asyncio
async def test_fifo_queue_ignores_priority(cf: CouplingFacility) -> None:
    await define(cf, msgdlvsq="FIFO", defprty=4)
    for body, p in [("1", 0), ("2", 9), ("3", 5), ("4", 9)]:
        await put(cf, body, priority=p)
    assert await bodies(cf) == [b"1", b"2", b"3", b"4"]


@pytest.mark.asyncio
async def test_msgdlvsq_switch_with_messages_present(cf: CouplingFacility) -> None:
    # FIFO -> PRIORITY: messages put under FIFO take the default priority (5 here).
    await define(cf, msgdlvsq="FIFO", defprty=5)
    await put(cf, "A9", priority=9)
    await put(cf, "B0", priority=0)
    await cf.alter_queue(Q, {"msgdlvsq": "PRIORITY"})
    await put(cf, "C9", priority=9)
    await put(cf, "D0", priority=0)
    await put(cf, "E5", priority=5)
    assert await bodies(cf) == [b"C9", b"A9", b"B0", b"E5", b"D0"]

    # PRIORITY -> FIFO: existing order kept, new messages at the default priority.
    await cf.alter_queue(Q, {"msgdlvsq": "PRIORITY"})
    await put(cf, "F0", priority=0)
    await put(cf, "G9", priority=9)
    await cf.alter_queue(Q, {"msgdlvsq": "FIFO"})
    await put(cf, "H9", priority=9)
    await put(cf, "I0", priority=0)
    assert await bodies(cf) == [b"G9", b"H9", b"I0", b"F0"]


@pytest.mark.asyncio
async def test_priority_zero_cursor_is_exact(cf: CouplingFacility) -> None:
    # Priority 0 scores are above 2^52: the cursor must round-trip exactly.
    await define(cf)
    await put(cf, "x", priority=0)
    browsed = await get(cf, mode=GetMode.BROWSE_FIRST)
    assert len(browsed.cursor) == 16 and int(browsed.cursor) == 9 * 2**49 + 1
    got = await get(cf, mode=GetMode.MSG_UNDER_CURSOR, cursor=browsed.cursor)
    assert got.body == b"x"


# ---- matching -----------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_match_by_msg_id_correl_id_and_both(cf: CouplingFacility) -> None:
    await define(cf)
    await put(cf, "m1-c1", msg_id=mid(1), correl_id=mid(101), priority=1)
    await put(cf, "m2-c1", msg_id=mid(2), correl_id=mid(101), priority=5)
    await put(cf, "m3-c2", msg_id=mid(3), correl_id=mid(102))
    await put(cf, "m3-c3", msg_id=mid(3), correl_id=mid(103))
    await put(cf, "m4-none", msg_id=mid(4))

    # correl_id match follows delivery order (priority 5 first).
    assert (await get(cf, match_correl_id=mid(101))).body == b"m2-c1"
    assert (await get(cf, match_msg_id=mid(3), match_correl_id=mid(103))).body == b"m3-c3"
    assert await reason_of(get(cf, match_msg_id=mid(3), match_correl_id=mid(103))) == 2033
    assert (await get(cf, match_msg_id=mid(3))).body == b"m3-c2"
    assert (await get(cf, match_msg_id=mid(1).lower())).body == b"m1-c1"
    assert await reason_of(get(cf, match_correl_id=mid(101))) == 2033
    # all-zero ids mean "do not match"
    assert (await get(cf, match_msg_id=mid(0), match_correl_id=mid(0))).body == b"m4-none"
    assert await cf.queue_depth(Q) == 0
    qk = QueueKeys(Q)
    assert await cf.redis.zcard(qk.msgid_index) == 0
    assert await cf.redis.zcard(qk.correlid_index) == 0


@pytest.mark.asyncio
async def test_match_on_a_queue_of_100000_messages(cf: CouplingFacility) -> None:
    await define(cf)
    n = 100_000
    messages = [BatchMessage(priority=i % 10, persistent=False, msg_id=mid(i + 1),
                             correl_id=mid(1_000_000 + i % 1000), md_json=f'{{"i":{i}}}', body=b"%d" % i)
                for i in range(n)]
    for start in range(0, n, 1000):
        done = await cf.put_batch(Q, qmgr="QM1", hconn="C1", gen=None, syncpoint=False,
                                  messages=messages[start:start + 1000])
        assert done.error is None and len(done.puts) == 1000
    assert await cf.queue_depth(Q) == n

    got = await get(cf, match_msg_id=mid(73_422))
    assert got.body == b"73421"
    # correl_id 1000421 is on i = 421, 1421, ...; delivery order: priority (i % 10 == 1) first,
    # and FIFO within it, so i = 421 comes first.
    got = await get(cf, match_correl_id=mid(1_000_421))
    assert got.body == b"421"
    got = await get(cf, match_msg_id=mid(99_000), match_correl_id=mid(1_000_000 + 98_999 % 1000))
    assert got.body == b"98999"
    assert await reason_of(get(cf, match_msg_id=mid(99_000))) == 2033
    assert await cf.queue_depth(Q) == n - 3


# ---- browse -------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_browse_first_next_and_under_cursor(cf: CouplingFacility, cf2: CouplingFacility) -> None:
    await define(cf)
    for b in ("one", "two", "three", "four"):
        await put(cf, b, msg_id=mid(len(b)))  # msg_ids 3, 3, 5, 4
    first = await get(cf, mode=GetMode.BROWSE_FIRST)
    assert first.body == b"one" and first.browse
    nxt = await get(cf, mode=GetMode.BROWSE_NEXT, cursor=first.cursor)
    assert nxt.body == b"two"
    assert await cf.queue_depth(Q) == 4  # browsing removes nothing

    # get the message under the cursor, then it is gone from under the cursor
    taken = await get(cf, mode=GetMode.MSG_UNDER_CURSOR, cursor=nxt.cursor)
    assert taken.body == b"two" and taken.depth == 3
    assert await reason_of(get(cf, mode=GetMode.MSG_UNDER_CURSOR, cursor=nxt.cursor)) == 2034
    assert await reason_of(get(cf, mode=GetMode.BROWSE_UNDER_CURSOR, cursor=nxt.cursor)) == 2034
    assert await reason_of(get(cf, mode=GetMode.MSG_UNDER_CURSOR, cursor="")) == 2034

    # browse next continues after the cursor even though that message is gone
    third = await get(cf, mode=GetMode.BROWSE_NEXT, cursor=nxt.cursor)
    assert third.body == b"three"
    again = await get(cf, mode=GetMode.BROWSE_UNDER_CURSOR, cursor=third.cursor)
    assert again.body == b"three" and again.cursor == third.cursor
    fourth = await get(cf, mode=GetMode.BROWSE_NEXT, cursor=third.cursor)
    assert fourth.body == b"four"
    assert await reason_of(get(cf, mode=GetMode.BROWSE_NEXT, cursor=fourth.cursor)) == 2033

    # browse with a match: next message with msg_id 3 after "one" is gone -> 2033
    assert await reason_of(get(cf, mode=GetMode.BROWSE_NEXT, cursor=first.cursor,
                               match_msg_id=mid(3))) == 2033
    assert (await get(cf, mode=GetMode.BROWSE_FIRST, match_msg_id=mid(4))).body == b"four"

    # another QM takes the browsed message under syncpoint: no longer under the cursor
    await get(cf2, qmgr="QM2", hconn="C9", syncpoint=Syncpoint.YES, match_msg_id=mid(5))
    assert await reason_of(get(cf, mode=GetMode.MSG_UNDER_CURSOR, cursor=third.cursor)) == 2034
    await cf2.backout(SHARED, "QM2", "C9")
    restored = await get(cf, mode=GetMode.MSG_UNDER_CURSOR, cursor=third.cursor)
    assert restored.body == b"three" and restored.backout_count == 1


# ---- units of work ------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_syncpoint_put_invisible_until_commit(cf: CouplingFacility, cf2: CouplingFacility) -> None:
    await define(cf)
    r = await put(cf, "uow", syncpoint=True, hconn="C1")
    assert r.depth == 1 and not r.visible and r.available == 0
    assert await reason_of(get(cf, hconn="C1")) == 2033  # not even the putter sees it
    assert await reason_of(get(cf2, qmgr="QM2", hconn="C2")) == 2033
    assert await reason_of(get(cf, mode=GetMode.BROWSE_FIRST)) == 2033
    status = await cf.queue_status(Q)
    assert (status.depth, status.uncommitted, status.available) == (1, 1, 0)
    assert await cf.units_of_work(SHARED) == [("QM1", "C1")]

    outcome = await cf.commit(SHARED, "QM1", "C1")
    assert [(o.queue, o.puts, o.gets, o.depth, o.available) for o in outcome] == [("APP.Q", 1, 0, 1, 1)]
    assert await cf.commit(SHARED, "QM1", "C1") == []  # idempotent
    assert await cf.units_of_work(SHARED) == []
    assert (await get(cf2, qmgr="QM2", hconn="C2")).body == b"uow"
    assert (await cf.queue_status(Q)).uncommitted == 0


@pytest.mark.asyncio
async def test_syncpoint_put_backout_deletes(cf: CouplingFacility) -> None:
    await define(cf)
    await put(cf, "keep")
    await put(cf, "gone", syncpoint=True)
    assert await cf.queue_depth(Q) == 2
    outcome = await cf.backout(SHARED, "QM1", "C1")
    assert [(o.puts, o.depth) for o in outcome] == [(1, 1)]
    assert await cf.backout(SHARED, "QM1", "C1") == []  # idempotent
    assert await cf.queue_depth(Q) == 1
    assert await bodies(cf) == [b"keep"]
    await cf.releases_done()  # a get's data is deleted by the release written behind its reply
    qk = QueueKeys(Q)
    assert await cf.redis.hlen(qk.meta) == 0 and await cf.redis.hlen(qk.body) == 0


@pytest.mark.asyncio
async def test_commit_keeps_put_order(cf: CouplingFacility) -> None:
    await define(cf)
    for b in ("A", "B", "C"):
        await put(cf, b, syncpoint=True, priority=3)
    await put(cf, "D", priority=3)
    await cf.commit(SHARED, "QM1", "C1")
    assert await bodies(cf) == [b"A", b"B", b"C", b"D"]


@pytest.mark.asyncio
async def test_syncpoint_get_hidden_backout_restores_place_commit_deletes(
        cf: CouplingFacility, cf2: CouplingFacility) -> None:
    await define(cf)
    for b in ("m1", "m2", "m3"):
        await put(cf, b, priority=4)
    g = await get(cf, hconn="C1", syncpoint=Syncpoint.YES)
    assert g.body == b"m1" and g.depth == 2 and g.syncpoint
    assert (await cf.queue_status(Q)).uncommitted == 1
    # hidden from everybody else, and from browse
    assert (await get(cf2, qmgr="QM2", hconn="C2", mode=GetMode.BROWSE_FIRST)).body == b"m2"
    await put(cf2, "m4", priority=9, qmgr="QM2", hconn="C2")  # a later, higher-priority message

    await cf.backout(SHARED, "QM1", "C1")
    assert await cf.queue_depth(Q) == 4
    first = await get(cf2, qmgr="QM2", hconn="C2")
    assert first.body == b"m4"
    again = await get(cf2, qmgr="QM2", hconn="C2", syncpoint=Syncpoint.YES)
    assert again.body == b"m1" and again.backout_count == 1  # its original place
    await cf2.backout(SHARED, "QM2", "C2")
    again = await get(cf, hconn="C1", syncpoint=Syncpoint.YES)
    assert again.body == b"m1" and again.backout_count == 2
    assert json.loads(again.md_json)["priority"] == 4  # md untouched: caller patches backout_count

    await cf.commit(SHARED, "QM1", "C1")
    assert await cf.queue_depth(Q) == 2
    await cf.releases_done()
    qk = QueueKeys(Q)
    assert await cf.redis.hlen(qk.meta) == 2 and await cf.redis.hlen(qk.md) == 2
    assert await bodies(cf) == [b"m2", b"m3"]


@pytest.mark.asyncio
async def test_peer_backs_out_a_dead_queue_managers_work(cf: CouplingFacility, cf2: CouplingFacility) -> None:
    await define(cf)
    await put(cf, "committed")
    await get(cf, hconn="C1", syncpoint=Syncpoint.YES)
    await put(cf, "in-flight", hconn="C1", syncpoint=True)
    await put(cf, "other", hconn="C7", syncpoint=True)
    assert await cf2.units_of_work(SHARED) == [("QM1", "C1"), ("QM1", "C7")]
    for qmgr, hconn in await cf2.units_of_work(SHARED):
        await cf2.backout(SHARED, qmgr, hconn)
    assert await cf2.units_of_work(SHARED) == []
    status = await cf2.queue_status(Q)
    assert (status.depth, status.uncommitted) == (1, 0)
    assert await bodies(cf2, qmgr="QM2") == [b"committed"]


@pytest.mark.asyncio
async def test_depth_follows_ibm_curdepth_rule(cf: CouplingFacility) -> None:
    await define(cf)

    async def depth_uncom() -> tuple[int, int]:
        s = await cf.queue_status(Q)
        return s.depth, s.uncommitted

    assert (await put(cf, "a")).depth == 1                            # MQPUT: +1
    assert (await put(cf, "b", syncpoint=True, hconn="U1")).depth == 2  # uncommitted MQPUT: +1
    assert await depth_uncom() == (2, 1)
    await cf.backout(SHARED, "QM1", "U1")                              # backout of MQPUT: -1
    assert await depth_uncom() == (1, 0)
    assert (await get(cf, syncpoint=Syncpoint.YES, hconn="U2")).depth == 0  # MQGET in UOW: -1
    assert await depth_uncom() == (0, 1)
    await cf.backout(SHARED, "QM1", "U2")                              # backout of MQGET: +1
    assert await depth_uncom() == (1, 0)
    await get(cf, syncpoint=Syncpoint.YES, hconn="U3")
    await cf.commit(SHARED, "QM1", "U3")                               # commit of MQGET: 0
    assert await depth_uncom() == (0, 0)
    await put(cf, "c", syncpoint=True, hconn="U4")
    await cf.commit(SHARED, "QM1", "U4")                               # commit of MQPUT: 0
    assert await depth_uncom() == (1, 0)
    assert (await get(cf)).depth == 0                                  # MQGET: -1
    for b in "xyz":
        await put(cf, b)
    await get(cf, mode=GetMode.BROWSE_FIRST)                           # browse: 0
    assert await cf.clear_queue(Q) == 3                                # CLEAR: to 0
    assert await depth_uncom() == (0, 0)


@pytest.mark.asyncio
async def test_syncpoint_if_persistent(cf: CouplingFacility) -> None:
    await define(cf)
    await put(cf, "persistent", persistent=True)
    await put(cf, "not-persistent", persistent=False)
    a = await get(cf, syncpoint=Syncpoint.IF_PERSISTENT)
    b = await get(cf, syncpoint=Syncpoint.IF_PERSISTENT)
    assert (a.body, a.persistent, a.syncpoint) == (b"persistent", True, True)
    assert (b.body, b.persistent, b.syncpoint) == (b"not-persistent", False, False)
    await cf.backout(SHARED, "QM1", "C1")
    assert await bodies(cf) == [b"persistent"]


# ---- truncation and inhibits --------------------------------------------------------------


@pytest.mark.asyncio
async def test_truncation_failed_leaves_message_accepted_removes_it(cf: CouplingFacility) -> None:
    await define(cf)
    await put(cf, "0123456789")
    with pytest.raises(TruncatedMessageError) as info:
        await get(cf, buffer_length=4)
    err = info.value
    assert err.reason == 2080 and err.result.data_length == 10 and b"priority" in err.result.md_json
    assert await cf.queue_depth(Q) == 1  # the message stays

    browsed = await get(cf, mode=GetMode.BROWSE_FIRST, buffer_length=4, accept_truncated=True)
    assert browsed.truncated and browsed.body == b"0123" and browsed.reason == 2079
    got = await get(cf, buffer_length=4, accept_truncated=True)
    assert (got.body, got.data_length, got.truncated, got.depth) == (b"0123", 10, True, 0)

    await put(cf, "abc")
    empty = await get(cf, buffer_length=0, accept_truncated=True)
    assert empty.body == b"" and empty.data_length == 3 and empty.truncated
    await put(cf, "fits")
    assert not (await get(cf, buffer_length=4)).truncated


@pytest.mark.asyncio
async def test_inhibits_size_and_depth_limits(cf: CouplingFacility) -> None:
    await define(cf, maxdepth=2, maxmsgl=10)
    await cf.alter_queue(Q, {"put": "DISABLED"})
    assert await reason_of(put(cf, "x")) == MQRC.PUT_INHIBITED
    await cf.alter_queue(Q, {"put": "ENABLED"})
    assert await reason_of(put(cf, "x" * 11)) == MQRC.MSG_TOO_BIG_FOR_Q
    await put(cf, "x" * 10)
    await put(cf, "y", syncpoint=True)  # uncommitted messages count towards MAXDEPTH
    assert await reason_of(put(cf, "z")) == MQRC.Q_FULL
    await cf.alter_queue(Q, {"get": "DISABLED"})
    assert await reason_of(get(cf)) == MQRC.GET_INHIBITED
    assert await reason_of(get(cf, mode=GetMode.BROWSE_FIRST)) == MQRC.GET_INHIBITED
    assert await reason_of(put(cf, "z", priority=10)) == MQRC.PRIORITY_ERROR


@pytest.mark.asyncio
async def test_63kb_limit_with_and_without_offload(cf: CouplingFacility) -> None:
    await define(cf)
    limit = 64512
    assert (await put(cf, b"a" * limit)).depth == 1  # exactly 63 KB fits in the structure
    assert await reason_of(put(cf, b"b" * (limit + 1))) == MQRC.MSG_TOO_BIG_FOR_Q
    big = bytes(range(256)) * 400  # 102400 bytes
    await put(cf, big, offload=True)  # caller override (e.g. a private queue)
    await cf.alter_queue(Q, {"offload": "1"})
    await put(cf, big[::-1])
    qk = QueueKeys(Q)
    assert await cf.redis.scard(qk.bigs) == 2
    assert (await get(cf)).body == b"a" * limit
    head = await get(cf, buffer_length=5, accept_truncated=True)
    assert head.body == big[:5] and head.data_length == len(big)
    await cf.releases_done()
    assert await cf.redis.scard(qk.bigs) == 1
    # purge on delete removes the offloaded data too
    assert await cf.delete_queue(Q, purge=True) == 1
    assert await cf.redis.keys(f"{qk.queue_prefix}*") == []


@pytest.mark.asyncio
async def test_big_message_under_syncpoint_commit_and_backout(cf: CouplingFacility) -> None:
    await define(cf, offload="1")
    big = b"z" * 70000
    await put(cf, big, syncpoint=True)
    await cf.backout(SHARED, "QM1", "C1")
    assert await cf.redis.keys(f"{QueueKeys(Q).queue_prefix}big:*") == []
    await put(cf, big)
    assert (await get(cf, syncpoint=Syncpoint.YES)).body == big
    await cf.commit(SHARED, "QM1", "C1")
    assert await cf.redis.keys(f"{QueueKeys(Q).queue_prefix}big:*") == []


# ---- generations --------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_generation_changes_and_deleted_queue(cf: CouplingFacility) -> None:
    gen = await define(cf)
    opened = await cf.open_queue(Q, "QM1", "H1", output=True, input="SHARED", gen_expected=gen)
    assert opened.gen == gen
    await put(cf, "ok", gen=gen)
    assert await define(cf, maxdepth=10) == gen  # REPLACE keeps gen, counters and messages
    assert await cf.queue_depth(Q) == 1
    new_gen = await cf.alter_queue(Q, {"defprty": 3}, bump_gen=True)
    assert new_gen == gen + 1
    assert await reason_of(put(cf, "stale", gen=gen)) == MQRC.OBJECT_CHANGED
    assert await reason_of(get(cf, gen=gen)) == MQRC.OBJECT_CHANGED
    assert await reason_of(cf.open_queue(Q, "QM1", "H2", inquire=True, gen_expected=gen)) == 2041
    await put(cf, "put1-style", gen=None)
    await cf.close_queue(Q, "QM1", "H1")

    assert await cf.delete_queue(Q, purge=True) == 2
    assert await reason_of(put(cf, "x", gen=new_gen)) == MQRC.Q_DELETED
    assert await reason_of(get(cf, gen=new_gen)) == MQRC.Q_DELETED
    assert await reason_of(put(cf, "x", gen=None)) == MQRC.UNKNOWN_OBJECT_NAME
    assert await reason_of(cf.alter_queue(Q, {"put": "ENABLED"})) == MQRC.UNKNOWN_OBJECT_NAME
    assert await reason_of(cf.queue_depth(Q)) == MQRC.UNKNOWN_OBJECT_NAME
    assert await reason_of(cf.delete_queue(Q)) == MQRC.UNKNOWN_OBJECT_NAME
    # a re-created queue never reuses a generation of the old one
    assert await define(cf) == new_gen + 1
    assert await cf.queue_names(SHARED) == {"APP.Q"}


@pytest.mark.asyncio
async def test_define_rejects_counter_names(cf: CouplingFacility) -> None:
    with pytest.raises(ValueError):
        await cf.define_queue(Q, {**RUNTIME, "depth": 5})


# ---- opens --------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_exclusive_and_shared_input_across_queue_managers(
        cf: CouplingFacility, cf2: CouplingFacility) -> None:
    await define(cf)
    await cf.open_queue(Q, "QM1", "H1", input="EXCLUSIVE")
    assert await reason_of(cf2.open_queue(Q, "QM2", "H1", input="SHARED")) == MQRC.OBJECT_IN_USE
    assert await reason_of(cf2.open_queue(Q, "QM2", "H2", input="EXCLUSIVE")) == MQRC.OBJECT_IN_USE
    assert await reason_of(cf.open_queue(Q, "QM1", "H3", input="SHARED")) == MQRC.OBJECT_IN_USE
    out = await cf2.open_queue(Q, "QM2", "H4", output=True, browse=True)
    assert (out.ipprocs, out.opprocs) == (1, 1)
    await cf.close_queue(Q, "QM1", "H1")

    await cf2.open_queue(Q, "QM2", "H5", input="SHARED")
    await cf.open_queue(Q, "QM1", "H6", input="SHARED", inquire=True, set=True)
    assert await reason_of(cf.open_queue(Q, "QM1", "H7", input="EXCLUSIVE")) == MQRC.OBJECT_IN_USE
    status = await cf.queue_status(Q)
    assert status.ipprocs == 2 and status.opprocs == 1
    assert status.opens["QM1"] == {"ipprocs": 1, "opprocs": 0, "excl": 0, "browse": 0,
                                   "inq": 1, "set": 1, "handles": 1}
    assert status.opens["QM2"] == {"ipprocs": 1, "opprocs": 1, "excl": 0, "browse": 1,
                                   "inq": 0, "set": 0, "handles": 2}
    assert await reason_of(cf.open_queue(QueueLocation(SHARED, "NO.Q"), "QM1", "H9",
                                         output=True)) == MQRC.UNKNOWN_OBJECT_NAME


@pytest.mark.asyncio
async def test_close_is_idempotent_and_reopen_is_not_double_counted(cf: CouplingFacility) -> None:
    await define(cf)
    first = await cf.open_queue(Q, "QM1", "H1", input="SHARED", output=True)
    again = await cf.open_queue(Q, "QM1", "H1", input="SHARED", output=True)
    assert not first.reopened and again.reopened and again.ipprocs == 1
    assert await reason_of(cf.open_queue(Q, "QM1", "H1", output=True)) == MQRC.HOBJ_ERROR
    closed = await cf.close_queue(Q, "QM1", "H1")
    assert closed.closed and closed.queue == "APP.Q" and (closed.ipprocs, closed.opprocs) == (0, 0)
    assert not (await cf.close_queue(Q, "QM1", "H1")).closed
    status = await cf.queue_status(Q)
    assert status.opens == {} and status.ipprocs == 0


@pytest.mark.asyncio
async def test_clear_opens_of_a_failed_queue_manager(cf: CouplingFacility, cf2: CouplingFacility) -> None:
    other = QueueLocation(SHARED, "OTHER.Q")
    await define(cf)
    await define(cf, other)
    await cf.open_queue(Q, "QM1", "H1", input="EXCLUSIVE")
    await cf.open_queue(other, "QM1", "H2", output=True)
    await cf2.open_queue(other, "QM2", "H1", output=True)
    assert await cf2.clear_opens(SHARED, "QM1") == 2
    assert await cf2.clear_opens(SHARED, "QM1") == 0
    assert (await cf2.queue_status(Q)).opens == {}
    status = await cf2.queue_status(other)
    assert list(status.opens) == ["QM2"] and status.opprocs == 1
    await cf2.open_queue(Q, "QM2", "H3", input="EXCLUSIVE")  # no longer in use


# ---- delete and clear ---------------------------------------------------------------------


@pytest.mark.asyncio
async def test_delete_and_clear_refusals(cf: CouplingFacility, cf2: CouplingFacility) -> None:
    await define(cf)
    await put(cf, "a")
    await cf2.open_queue(Q, "QM2", "H1", browse=True)
    assert await reason_of(cf.delete_queue(Q, purge=True)) == MQRC.OBJECT_IN_USE
    assert await reason_of(cf.clear_queue(Q)) == MQRC.OBJECT_IN_USE
    await cf2.close_queue(Q, "QM2", "H1")
    assert await reason_of(cf.delete_queue(Q)) == MQRC.Q_NOT_EMPTY

    await put(cf, "b", syncpoint=True)
    assert await reason_of(cf.delete_queue(Q, purge=True)) == MQRC.Q_NOT_EMPTY
    assert await reason_of(cf.clear_queue(Q)) == MQRC.Q_NOT_EMPTY
    await cf.commit(SHARED, "QM1", "C1")
    assert await cf.clear_queue(Q) == 2
    assert await cf.queue_depth(Q) == 0
    assert await cf.delete_queue(Q) == 0
    assert await cf.redis.keys(f"{QueueKeys(Q).queue_prefix}*") == []
    assert await cf.queue_names(SHARED) == set()


# ---- statistics ---------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_statistics_per_queue_manager_and_reset(
        cf: CouplingFacility, cf2: CouplingFacility, clock: ManualClock) -> None:
    await define(cf)
    for b in "abc":
        await put(cf, b)
    await put(cf2, "d", qmgr="QM2")
    clock.advance(500)
    await get(cf2, qmgr="QM2")
    status = await cf.queue_status(Q)
    assert (status.stats["QM1"].enq, status.stats["QM1"].deq, status.stats["QM1"].hiq) == (3, 0, 3)
    assert (status.stats["QM2"].enq, status.stats["QM2"].deq, status.stats["QM2"].hiq) == (1, 1, 4)
    assert status.stats["QM2"].last_get_ms == clock.now_ms()

    interval = await cf.reset_stats(Q, "QM1")
    assert (interval.enq, interval.deq, interval.hiq, interval.reset_ms) == (3, 0, 3, 0)
    after = (await cf.queue_status(Q)).stats["QM1"]
    assert (after.enq, after.deq, after.hiq, after.reset_ms) == (0, 0, 3, clock.now_ms())
    assert (await cf.queue_status(Q)).stats["QM2"].enq == 1


# ---- waiting getters ----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_wait_is_woken_by_a_put_from_another_queue_manager(
        cf: CouplingFacility, cf2: CouplingFacility) -> None:
    await define(cf)
    waiter = asyncio.create_task(get(cf, wait_ms=60_000))
    await asyncio.wait_for(cf.listener.wait_parked(Q), BOUND_S)
    await put(cf2, "hello", qmgr="QM2", hconn="C2")
    got = await asyncio.wait_for(waiter, BOUND_S)  # recheck_s is 60 s: only a wake-up is fast
    assert got.body == b"hello"


@pytest.mark.asyncio
async def test_wait_ignores_uncommitted_put_and_is_woken_by_commit(
        cf: CouplingFacility, cf2: CouplingFacility) -> None:
    await define(cf)
    waiter = asyncio.create_task(get(cf, wait_ms=60_000))
    await asyncio.wait_for(cf.listener.wait_parked(Q), BOUND_S)
    await asyncio.wait_for(cf.listener.wait_subscribed(), BOUND_S)
    await put(cf2, "later", qmgr="QM2", hconn="C2", syncpoint=True)

    # A marker published after the put reaches the listener after anything the put published
    # (one shard channel per structure: the queue's name is the message).
    marker = QueueLocation(SHARED, "MARKER")
    seen = cf.listener.watch(marker)
    await cf2.redis.execute_command("SPUBLISH", cf.channel(marker), marker.name)
    await asyncio.wait_for(seen.wait(), BOUND_S)
    assert cf.listener.received[marker] == 1
    assert cf.listener.received[Q] == 0
    assert not waiter.done() and cf.listener.parked(Q) == 1

    await cf2.commit(SHARED, "QM2", "C2")
    got = await asyncio.wait_for(waiter, BOUND_S)
    assert got.body == b"later" and cf.listener.received[Q] == 1


@pytest.mark.asyncio
async def test_wait_is_woken_by_backout_of_a_get_and_ended_by_get_inhibit(
        cf: CouplingFacility, cf2: CouplingFacility) -> None:
    await define(cf)
    await put(cf, "m")
    await get(cf2, qmgr="QM2", hconn="C2", syncpoint=Syncpoint.YES)
    waiter = asyncio.create_task(get(cf, wait_ms=60_000))
    await asyncio.wait_for(cf.listener.wait_parked(Q), BOUND_S)
    await cf2.backout(SHARED, "QM2", "C2")
    assert (await asyncio.wait_for(waiter, BOUND_S)).backout_count == 1

    waiter = asyncio.create_task(get(cf, wait_ms=60_000))
    await asyncio.wait_for(cf.listener.wait_parked(Q), BOUND_S)
    await cf2.alter_queue(Q, {"get": "DISABLED"})
    with pytest.raises(MQError) as info:
        await asyncio.wait_for(waiter, BOUND_S)
    assert info.value.reason == MQRC.GET_INHIBITED


@pytest.mark.asyncio
async def test_wait_expires_and_unlimited_wait_stops_on_request(cf: CouplingFacility) -> None:
    await define(cf)
    assert await reason_of(asyncio.wait_for(get(cf, wait_ms=50), BOUND_S)) == 2033

    stop = False
    waiter = asyncio.create_task(get(cf, wait_ms=-1, should_stop=lambda: stop))
    await asyncio.wait_for(cf.listener.wait_parked(Q), BOUND_S)
    assert await cf.redis.pttl(QueueKeys(Q).waiters) > 0  # registered in the CF while waiting
    stop = True
    cf.listener.wake_all()
    assert await reason_of(asyncio.wait_for(waiter, BOUND_S)) == 2033


@pytest.mark.asyncio
async def test_browse_next_with_wait(cf: CouplingFacility, cf2: CouplingFacility) -> None:
    await define(cf)
    await put(cf, "first")
    first = await get(cf, mode=GetMode.BROWSE_FIRST)
    waiter = asyncio.create_task(get(cf, mode=GetMode.BROWSE_NEXT, cursor=first.cursor,
                                     wait_ms=60_000))
    await asyncio.wait_for(cf.listener.wait_parked(Q), BOUND_S)
    await put(cf2, "second", qmgr="QM2")
    assert (await asyncio.wait_for(waiter, BOUND_S)).body == b"second"


# ---- Redis failures -----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_waiting_across_a_redis_restart() -> None:
    with RedisServer(aof=True) as server:
        cf = await make_cf(server.url, recheck_s=30.0)
        cf2 = await make_cf(server.url, recheck_s=30.0)
        try:
            await define(cf)
            waiter = asyncio.create_task(get(cf, wait_ms=60_000))
            await asyncio.wait_for(cf.listener.wait_parked(Q), BOUND_S)
            await asyncio.wait_for(cf.listener.wait_subscribed(), BOUND_S)
            subscribed = cf.listener.subscriptions
            await asyncio.to_thread(server.restart)
            # the listener comes back by itself (and wakes its waiters to retry)
            await asyncio.wait_for(cf.listener.wait_subscribed(after=subscribed), BOUND_S)
            await put(cf2, "after restart", qmgr="QM2")
            got = await asyncio.wait_for(waiter, BOUND_S)
            assert got.body == b"after restart"
        finally:
            await close_cf(cf)
            await close_cf(cf2)


@pytest.mark.asyncio
async def test_wait_ends_with_cf_failure_when_redis_dies() -> None:
    with RedisServer() as server:
        cf = await make_cf(server.url, recheck_s=0.2)
        try:
            await define(cf)
            waiter = asyncio.create_task(get(cf, wait_ms=-1))
            await asyncio.wait_for(cf.listener.wait_parked(Q), BOUND_S)
            await asyncio.to_thread(server.kill)
            # 2345 when the kill fell between two of the waiter's looks (its next connect is
            # refused: nothing ran); 2009 when a look was written and the reset came instead of
            # its reply (it may have run: the outcome is unknown, app/cf/deadline.py).
            assert await reason_of(asyncio.wait_for(waiter, BOUND_S)) in (MQRC.CF_NOT_AVAILABLE,
                                                                          MQRC.CONNECTION_BROKEN)
        finally:
            await close_cf(cf)


@pytest.mark.asyncio
async def test_connection_refused_maps_to_cf_not_available() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    cf = CouplingFacility(make_redis(url), QSG, ManualClock())
    try:
        # The CF cannot be reached: retry later (2373 is only for a FAILED structure).
        assert await reason_of(put(cf, "x")) == MQRC.CF_NOT_AVAILABLE
        assert await reason_of(get(cf)) == MQRC.CF_NOT_AVAILABLE
        assert await reason_of(cf.commit(SHARED, "QM1", "C1")) == MQRC.CF_NOT_AVAILABLE
        private = QueueLocation(PRIVATE, "LOCAL.Q")
        assert await reason_of(put(cf, "x", loc=private)) == MQRC.CF_NOT_AVAILABLE
        assert await reason_of(cf.queue_status(private)) == MQRC.CF_NOT_AVAILABLE
    finally:
        await cf.redis.aclose()


@pytest.mark.asyncio
async def test_private_queue_state_lives_under_the_queue_managers_tag(cf: CouplingFacility) -> None:
    private = QueueLocation(PRIVATE, "LOCAL.Q")
    await define(cf, private, offload="1")
    await put(cf, b"p" * 70000, loc=private, syncpoint=True)
    assert await cf.units_of_work(PRIVATE) == [("QM1", "C1")]
    assert await cf.units_of_work(SHARED) == []
    await cf.commit(PRIVATE, "QM1", "C1")
    assert (await get(cf, loc=private)).data_length == 70000
    assert all(k.startswith(b"{" + PRIVATE.encode() + b"}:") for k in await cf.redis.keys("*"))


# ---- fencing (peer recovery of an incarnation that may still run) --------------------------


async def cf_state(cf: CouplingFacility, loc: QueueLocation = Q) -> dict:
    """Everything the scripts could change about one queue and its structure's units of work."""
    qk = QueueKeys(loc)
    return {"ctl": await cf.redis.hgetall(qk.ctl), "idx": await cf.redis.zrange(qk.index, 0, -1),
            "uows": await cf.redis.smembers(keys.uow_registry(loc.tag)),
            "handles": await cf.redis.hgetall(keys.structure_handles(loc.tag, "QM1"))}


@pytest.mark.asyncio
async def test_a_fenced_incarnation_changes_nothing_and_its_commit_is_refused(cf, cf2) -> None:
    await define(cf)
    cf.qmgr, cf.incarnation = "QM1", 100  # QM1's incarnation 100 (what membership sets after joining)
    cf2.qmgr, cf2.incarnation = "QM2", 200
    told: list[str] = []
    cf.on_fenced = told.append
    await put(cf, "committed before")
    await cf.open_queue(Q, "QM1", "H1", input="SHARED")
    await get(cf, syncpoint="YES")  # the message, got under syncpoint by incarnation 100
    await put(cf, "uncommitted", syncpoint=True)

    # QM2 recovers QM1's incarnation 100: fence first, then back its unit of work out.
    await cf2.fence(SHARED, "QM1", 101)
    await cf2.fence(None, "QM1", 101)
    await cf2.backout(SHARED, "QM1", "C1")
    before = await cf_state(cf)
    assert before["idx"] and not before["uows"]  # the got message is back, the put is gone

    for call in (lambda: cf.commit(SHARED, "QM1", "C1"), lambda: cf.backout(SHARED, "QM1", "C1"),
                 lambda: put(cf, "zombie put"), lambda: get(cf), lambda: get(cf, syncpoint="YES"),
                 lambda: cf.open_queue(Q, "QM1", "H2", output=True), lambda: cf.close_queue(Q, "QM1", "H1"),
                 lambda: cf.clear_opens(SHARED, "QM1"), lambda: cf.scan_expired(Q, "QM1"),
                 lambda: cf.take_report(SHARED, "QM1"),
                 lambda: cf.record_commit_intent("QM1", "C1", [SHARED, PRIVATE])):
        with pytest.raises(MQError) as caught:
            await call()
        assert caught.value.reason == MQRC.CONNECTION_BROKEN
    assert await cf_state(cf) == before  # nothing stored changed
    assert not await cf.redis.exists(keys.commit_intent_key(QSG, "QM1", "C1"))
    assert told and all("fenced" in why for why in told)

    # The fence binds incarnations below it only: QM1 rejoined as 101 works again, and QM2 never was fenced.
    cf.incarnation = 101
    await put(cf, "after rejoining")
    assert await bodies(cf2, qmgr="QM2", hconn="C9") == [b"committed before", b"after rejoining"]


@pytest.mark.asyncio
async def test_a_lapsed_lease_stops_calls_before_they_reach_redis(cf) -> None:
    await define(cf)
    cf.qmgr, cf.incarnation = "QM1", 100
    lease = {"valid": True}
    cf.lease_valid = lambda: lease["valid"]
    await put(cf, "while the lease holds")
    lease["valid"] = False  # e.g. the process was paused past its lease: it must not go on optimistically
    with pytest.raises(MQError) as caught:
        await put(cf, "after the lease lapsed")
    assert caught.value.reason == MQRC.CONNECTION_BROKEN
    assert await cf.queue_depth(Q) == 1


@pytest.mark.asyncio
async def test_a_get_overtaken_by_peer_recovery_before_its_release_is_not_delivered(cf, cf2) -> None:
    """Paused past its lease between a NO_SYNCPOINT get's reply and the write of its release,
    while peer recovery restored what the get held: the get answers 2009 (the message is not
    its caller's) and the peer gets the message, once. The same gets with the lease intact are
    delivered and released as always."""
    await define(cf)
    cf.qmgr, cf.incarnation = "QM1", 100
    cf2.qmgr, cf2.incarnation = "QM2", 200
    lease = {"valid": True}
    cf.lease_valid = lambda: lease["valid"]
    cf.confirm_lease = None
    for body in ("kept", "restored"):
        await put(cf, body)
    assert (await get(cf)).body == b"kept"  # released at once: nothing held now
    await cf.releases_done()
    assert await cf.redis.hlen(keys.held_key(SHARED, "QM1")) == 0

    real_send = cf.scripts.send

    async def peer_recovery_first(follow):
        # what the pause let happen before the release reached Redis
        lease["valid"] = False
        await cf2.fence(SHARED, "QM1", 101)
        assert await cf2.restore_held(SHARED, "QM1", 101) == 1
        return await real_send(follow)

    cf.scripts.send = peer_recovery_first
    fenced: list[str] = []
    cf.on_fenced = fenced.append
    with pytest.raises(MQError) as caught:
        await get(cf)
    assert caught.value.reason == MQRC.CONNECTION_BROKEN and fenced
    assert await bodies(cf2, qmgr="QM2", hconn="C2") == [b"restored"]  # once, to the peer's getter


def test_a_connection_closed_under_a_call_is_cf_not_available() -> None:
    """uvloop raises RuntimeError for a write on a transport Redis closed (seen in bench_faults
    when Redis stopped mid-call): the caller gets 2345 like any lost connection, not a 500."""
    from app.cf.errors import cf_access

    with pytest.raises(MQError) as caught, cf_access(SHARED):
        raise RuntimeError("unable to perform operation on <TCPTransport closed=True>; the handler is closed")
    assert caught.value.reason == MQRC.CF_NOT_AVAILABLE
    with pytest.raises(RuntimeError), cf_access(SHARED):
        raise RuntimeError("an error of the program's own")  # not a lost connection: stays what it is


# ---- deadlines (app/cf/deadline.py): a script run after its deadline changes nothing ----------


@pytest.mark.asyncio
async def test_a_script_run_after_its_deadline_changes_nothing_and_answers_2345(cf: CouplingFacility) -> None:
    await define(cf)
    await put(cf, "kept")
    on_time = cf.cf_now_ms
    # As if Redis ran each call long after it was sent: every deadline is already past.
    cf.cf_now_ms = lambda: on_time() - 60_000
    assert await reason_of(put(cf, "late put")) == MQRC.CF_NOT_AVAILABLE
    assert await reason_of(get(cf)) == MQRC.CF_NOT_AVAILABLE
    assert await reason_of(get(cf, syncpoint="YES")) == MQRC.CF_NOT_AVAILABLE
    assert await reason_of(cf.commit(SHARED, "QM1", "C1")) == MQRC.CF_NOT_AVAILABLE
    assert await cf.units_of_work(SHARED) == []  # the late syncpoint get enlisted nothing
    cf.cf_now_ms = on_time
    assert await bodies(cf) == [b"kept"]  # nothing was put, nothing was got


@pytest.mark.asyncio
async def test_a_late_reply_at_once_measures_the_clock_again_and_sends_once_more(cf: CouplingFacility) -> None:
    await define(cf)
    on_time, checks = cf.cf_now_ms, []
    cf.cf_now_ms = lambda: on_time() - 60_000  # a clock measured wrong: every deadline looks past

    async def measure_again() -> None:
        checks.append(1)
        cf.cf_now_ms = on_time

    cf.clock_check = measure_again
    await put(cf, "once")  # LATE at once (nothing done), the clock measured, sent again: put
    assert checks == [1]
    assert await bodies(cf) == [b"once"]


@pytest.mark.asyncio
async def test_a_call_sent_and_not_answered_waits_out_its_deadline_then_is_unknown() -> None:
    # A connection reset after the write (Redis killed mid-call) is no proof that nothing ran:
    # the answer is 2009 (outcome unknown), and only once the script's deadline has passed.
    with RedisServer() as server:
        cf = await make_cf(server.url)
        try:
            await define(cf)
            server.pause()  # the next call is written into the stopped server's buffer ...
            call = asyncio.create_task(put(cf, "in flight"))
            await asyncio.sleep(0.2)  # (the fault's timing: the call is written, no reply comes)
            sent_at = cf.cf_now_ms()
            server.kill()  # ... and the connection is reset: did it run?
            exc = await asyncio.wait_for(_raised(call), BOUND_S)
            assert isinstance(exc, OutcomeUnknownError) and exc.reason == MQRC.CONNECTION_BROKEN
            assert cf.cf_now_ms() >= sent_at + cf.call_budget_ms - 200  # answered after its deadline
        finally:
            await close_cf(cf)


async def _raised(task: asyncio.Task) -> BaseException:
    try:
        await task
    except BaseException as exc:  # noqa: BLE001 - the exception is what the test looks at
        return exc
    raise AssertionError("the call succeeded")
