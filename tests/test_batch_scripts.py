"""put_batch.lua and get_batch.lua against the single-message scripts, on a real redis-server.

A batch script reads the queue's attributes once and writes its messages with one command per
key; it must still do exactly what the same puts or gets one by one do. Each test runs one
mixed workload twice - message by message on one queue, in batches on another - and compares
every reply, every event and the whole stored state of the two queues (names aside).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import pytest_asyncio

from app.cf import keys
from app.cf.engine import BatchMessage, CouplingFacility
from app.cf.keys import QueueKeys, QueueLocation
from app.cf.replies import GetBatchReply, GetReply
from app.cf.scriptargs import GetArgs, GetBatchArgs
from app.core.clock import ManualClock
from app.core.errors import MQError
from tests.test_cf_engine import RUNTIME, close_cf, make_cf, mid

QSG = "QSG1"
SHARED = keys.shared_tag(QSG, "APPL1")
ONE = QueueLocation(SHARED, "ONE.BY.ONE")
BATCH = QueueLocation(SHARED, "IN.BATCHES")
#: Each queue's connection (a unit of work of its own).
HCONN = {ONE.name: "C1", BATCH.name: "C2"}
#: Event switches on, depth thresholds low enough to cross: Queue Depth High at 6 of 12 messages,
#: Queue Full at 12, Queue Depth Low at 3.
ATTRS: dict[str, str | int] = {**RUNTIME, "maxdepth": 12, "qdepthhi": 50, "qdepthlo": 25, "qdphiev": "ENABLED",
                               "qdpmaxev": "ENABLED", "qdploev": "ENABLED", "offload": "1"}


def workload(now_ms: int, n: int = 14) -> list[BatchMessage]:
    """Messages of every kind a put can store: priorities, persistence, ids, expiry (some
    expire once the clock moves 2 s on), expiration / COD / COA reports, an offloaded body."""
    out = []
    for i in range(n):
        body = b"B" * 70_000 if i == 4 else f"message {i}".encode()
        out.append(BatchMessage(
            priority=i % 4, persistent=i % 3 == 0, msg_id=mid(i + 1), correl_id=mid(100 + i) if i % 2 else None,
            md_json=f'{{"i":{i}}}', body=body, expiry_at_ms=now_ms + 1000 if i % 4 == 2 else 0,
            report=(1 + 4) if i % 7 == 2 else (16 if i == 3 else 0), report_qmgr="QM2" if i % 7 == 2 else ""))
    return out


async def queue_state(cf: CouplingFacility, loc: QueueLocation) -> dict[str, Any]:
    """Everything stored for ``loc`` (its keys, the unit-of-work list, held messages, queued
    reports), with the queue's name replaced so that two queues compare equal."""
    r = cf.redis
    prefix = QueueKeys(loc).queue_prefix
    state: dict[str, Any] = {}

    def norm(value: Any) -> Any:
        if isinstance(value, bytes):
            return value.replace(loc.name.encode(), b"<Q>")
        if isinstance(value, (list, tuple)):
            return [norm(v) for v in value]
        if isinstance(value, dict):
            return {norm(k): norm(v) for k, v in value.items()}
        return value

    async for key in r.scan_iter(match=prefix + "*"):
        name = key.decode()[len(prefix):]
        kind = (await r.type(key)).decode()
        if kind == "hash":
            value: Any = await r.hgetall(key)
            if name == "ctl":
                value.pop(b"gen", None)
        elif kind == "zset":
            value = await r.zrange(key, 0, -1, withscores=True)
        elif kind == "set":
            value = sorted(await r.smembers(key))
        elif kind == "list":
            value = await r.lrange(key, 0, -1)
        else:
            value = await r.get(key)
        state[name] = norm(value)
    state["uow"] = norm(await r.lrange(keys.uow_key(loc.tag, "QM1", HCONN[loc.name]), 0, -1))
    # held entries "<queue>:<id>,<id>" under per-call tokens: the ids held for this queue
    held = [v.decode() for v in (await r.hgetall(keys.held_key(loc.tag, "QM1"))).values()]
    state["held"] = sorted(i for v in held if v.startswith(loc.name + ":") for i in v.split(":", 1)[1].split(","))
    for qmgr in ("QM1", "QM2"):  # reports queued for the queue managers that send them
        state[f"expreports:{qmgr}"] = norm(await r.lrange(keys.structure_prefix(loc.tag) + f"expreports:{qmgr}", 0, -1))
    state["expq"] = await r.zscore(keys.expiry_queues(loc.tag), loc.name)
    return state


def get_args(cf: CouplingFacility, loc: QueueLocation, sync: str, token: str, buflen: int,
             accept: bool) -> tuple[str, ...]:
    qk = QueueKeys(loc)
    hconn = HCONN[loc.name]
    return (qk.ctl, keys.uow_key(loc.tag, "QM1", hconn), keys.uow_registry(loc.tag), keys.held_key(loc.tag, "QM1"),
            qk.queue_prefix, loc.name, "QM1", hconn, "", "GET", sync, "", "", "", str(buflen),
            "1" if accept else "0", str(cf.clock.now_ms()), "0", keys.structure_prefix(loc.tag),
            cf._perf(loc), "", token)


#: A get's fields that must agree (the id of a message is its place in its own queue: equal too).
FIELDS = ("code", "md", "data", "data_length", "backout_count", "persistent", "cursor", "depth_after",
          "depth_before", "available_after", "id", "syncpoint", "expiry_ms")


@pytest_asyncio.fixture
async def engine(redis_url: str):
    cf = await make_cf(redis_url, recheck_s=60.0, clock=ManualClock())
    events: list[tuple[str, int]] = []
    cf.on_event = lambda loc, reason: events.append((loc.name, reason))
    yield cf, events
    await close_cf(cf)


async def put_both(cf: CouplingFacility, events: list[tuple[str, int]], syncpoint: bool) -> None:
    """The workload put message by message on ONE and as batches of 5 on BATCH: the same
    results (Queue Full stops both at the 13th message), events and stored state."""
    messages = workload(cf.clock.now_ms())
    singles = []
    for m in messages:
        try:
            done = await cf.put(ONE, qmgr="QM1", hconn=HCONN[ONE.name], gen=None, syncpoint=syncpoint,
                                priority=m.priority, persistent=m.persistent, msg_id=m.msg_id,
                                correl_id=m.correl_id, md_json=m.md_json, body=m.body,
                                expiry_at_ms=m.expiry_at_ms, report=m.report, report_qmgr=m.report_qmgr)
        except MQError as exc:
            singles.append(exc.reason)
            break
        singles.append(done)
    batched: list[Any] = []
    for start in range(0, len(messages), 5):
        result = await cf.put_batch(BATCH, qmgr="QM1", hconn=HCONN[BATCH.name], gen=None, syncpoint=syncpoint,
                                    messages=messages[start:start + 5])
        batched += result.puts
        if result.error is not None:
            batched.append(result.error.reason)
            break
    assert batched == singles and singles[-1] == 2053
    assert [e for q, e in events if q == BATCH.name] == [e for q, e in events if q == ONE.name] == [2224, 2053]


@pytest.mark.asyncio
@pytest.mark.parametrize("syncpoint", [False, True])
async def test_put_batch_does_what_puts_one_by_one_do(engine, syncpoint: bool) -> None:
    cf, events = engine
    for loc in (ONE, BATCH):
        await cf.define_queue(loc, ATTRS)
    await put_both(cf, events, syncpoint)
    one, batch = await queue_state(cf, ONE), await queue_state(cf, BATCH)
    assert one == batch
    assert (len(one["uow"]) == 12) is syncpoint and len(one.get("idx", [])) == (0 if syncpoint else 12)


@pytest.mark.asyncio
@pytest.mark.parametrize(("sync", "token", "buflen", "accept"), [
    ("NO", "", -1, False), ("NO", "T", -1, False), ("IF_PERSISTENT", "T", -1, False), ("YES", "", -1, False),
    ("NO", "", 9, False), ("NO", "T", 9, True),
])
async def test_get_batch_does_what_gets_one_by_one_do(engine, sync: str, token: str, buflen: int,
                                                      accept: bool) -> None:
    """Gets of the workload after some of it expired (discarded on the way, with their
    expiration reports), with COD reports, an offloaded body, held or unit-of-work messages;
    a buffer of 9 bytes: the first message longer than that stops both (2080), or each is
    truncated (2079) when that is accepted."""
    cf, events = engine
    for loc in (ONE, BATCH):
        await cf.define_queue(loc, ATTRS)
    await put_both(cf, events, False)
    cf.clock.advance(2000)
    events.clear()
    incarnation = cf.caller()

    singles: list[GetReply] = []
    totals = {ONE.name: [0, 0], BATCH.name: [0, 0]}
    n = 0
    while True:
        n += 1
        args1 = GetArgs(*get_args(cf, ONE, sync, token and f"{token}{n}", buflen, accept))
        reply = GetReply.parse(await cf._script(args1, ONE.tag, incarnation))
        totals[ONE.name][0] += reply.reports
        totals[ONE.name][1] += reply.discarded
        if reply.depth_event:
            events.append((ONE.name, reply.depth_event))
        if reply.code not in (0, 2079):
            last_single = reply
            break
        singles.append(reply)
    batched: list[GetReply] = []
    while True:
        n += 1
        args = GetBatchArgs(*get_args(cf, BATCH, sync, token and f"{token}{n}", buflen, accept), "4")
        reply_b = GetBatchReply.parse(await cf._script(args, BATCH.tag, incarnation))
        totals[BATCH.name][0] += reply_b.reports
        totals[BATCH.name][1] += reply_b.discarded
        if reply_b.depth_event:
            events.append((BATCH.name, reply_b.depth_event))
        if reply_b.code:
            last_batch = reply_b
            break
        batched += reply_b.messages

    def fields(r: GetReply) -> tuple[Any, ...]:
        return tuple(getattr(r, f) for f in FIELDS)

    assert [fields(r) for r in batched] == [fields(r) for r in singles]
    assert last_batch.code == last_single.code == (2080 if buflen >= 0 and not accept else 2033)
    if last_single.code == 2080:
        assert fields(last_batch.messages[0])[1:] == fields(last_single)[1:]
    assert len(singles) >= 2 and (not accept or all(r.code == 2079 for r in singles if r.data_length > 9))
    assert totals[ONE.name] == totals[BATCH.name]
    assert totals[ONE.name][1] == 3 or last_single.code == 2080  # every expired one discarded on the way
    assert [e for q, e in events if q == BATCH.name] == [e for q, e in events if q == ONE.name]
    if last_single.code == 2033:
        assert (ONE.name, 2225) in events  # Queue Depth Low on the way down
    assert await queue_state(cf, ONE) == await queue_state(cf, BATCH)


def test_the_workload_has_every_kind_of_message() -> None:
    """The comparison above is only as good as its workload: it holds what it says it holds."""
    messages = workload(0, 12)
    assert {m.priority for m in messages} == {0, 1, 2, 3}
    assert any(m.persistent for m in messages) and not all(m.persistent for m in messages)
    assert sum(1 for m in messages if m.expiry_at_ms) == 3
    assert any(len(m.body) > 64512 for m in messages)
    assert {m.report for m in messages} >= {0, 5, 16}
    assert re.fullmatch(r"[0-9A-F]{48}", messages[0].msg_id or "")


@pytest.mark.asyncio
async def test_getters_waiting_on_two_queue_managers_are_woken_by_one_put_batch(redis_url: str) -> None:
    """A put-batch wakes waiting getters with one notice for its messages (not one per message):
    getters parked on two queue managers both get a message of it, at once."""
    import asyncio

    clock = ManualClock()
    engines = [await make_cf(redis_url, recheck_s=60.0, clock=clock) for _ in range(3)]
    try:
        await engines[0].define_queue(ONE, ATTRS)
        waiters = [asyncio.create_task(cf.get(ONE, qmgr=f"QM{i + 1}", hconn="W", gen=None, wait_ms=60_000))
                   for i, cf in enumerate(engines[:2])]
        for cf in engines[:2]:
            await asyncio.wait_for(cf.listener.wait_parked(ONE), 10)
        messages = [BatchMessage(priority=0, persistent=False, msg_id=mid(i + 1), correl_id=None, md_json="{}",
                                 body=b"m%d" % i) for i in range(3)]
        done = await engines[2].put_batch(ONE, qmgr="QM3", hconn="P", gen=None, syncpoint=False, messages=messages)
        assert done.error is None and len(done.puts) == 3
        got = await asyncio.wait_for(asyncio.gather(*waiters), 10)  # recheck_s is 60 s: only a wake-up is fast
        assert sorted(g.body for g in got) == [b"m0", b"m1"]
    finally:
        for cf in engines:
            await close_cf(cf)
