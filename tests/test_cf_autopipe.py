"""AutoPipe (app/cf/autopipe.py): the script calls of one event-loop turn share one write on one
connection, and each caller gets what a connection of its own would have told it - its own
reply, its own error reply, SentUnanswered for a call written and never answered, a plain
connection error for one never written. Against a real redis-server, faults through the test's
TCP proxy."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
import redis as redis_sync
from redis.exceptions import ConnectionError, NoScriptError, ResponseError

from app.cf.autopipe import AutoPipe
from app.cf.connio import SentUnanswered
from app.cf.redisconn import make_redis
from app.cf.scripts import LARGE_REQUEST_BYTES, ScriptRegistry
from tests.support.netproxy import NetProxy

ECHO = "return ARGV[1]"
FAIL_ON_X = "if ARGV[1] == 'x' then return redis.error_reply('ERR refused x') end return ARGV[1]"


def sha_of(url: str, source: str) -> str:
    return str(redis_sync.Redis.from_url(url).script_load(source))


def client_count(url: str, name: str) -> int:
    return sum(1 for c in redis_sync.Redis.from_url(url).client_list() if c.get("name") == name)


@pytest_asyncio.fixture
async def pipe_client(redis_url: str) -> AsyncIterator[tuple[AutoPipe, str]]:
    client = make_redis(redis_url)
    await client.client_setname("autopipe-test")  # from a pooled connection, released after
    client.connection_pool.connection_kwargs["client_name"] = "autopipe-test"
    yield AutoPipe(client.connection_pool), redis_url
    await client.aclose()



@pytest_asyncio.fixture
async def proxied(redis_server) -> AsyncIterator[tuple[NetProxy, Any]]:
    """A client whose connections go through the test's TCP proxy (1 s socket timeout)."""
    proxy = NetProxy("127.0.0.1", redis_server.port).start()
    client = make_redis(proxy.redis_url(), socket_timeout_s=1.0)
    try:
        yield proxy, client
    finally:
        await client.aclose()
        proxy.stop()

async def test_one_turns_calls_share_one_connection_and_each_gets_its_own_reply(pipe_client):
    pipe, url = pipe_client
    sha = sha_of(url, ECHO)
    replies = await asyncio.gather(*(pipe.call(("EVALSHA", sha, 0, f"call-{i}")) for i in range(200)))
    assert replies == [f"call-{i}".encode() for i in range(200)]
    # all 200 went over one connection (the pool's, named by the fixture) and none is left owed
    assert client_count(url, "autopipe-test") == 1
    assert pipe._lane is not None and not pipe._lane.inflight


async def test_an_error_reply_is_its_callers_alone(pipe_client):
    pipe, url = pipe_client
    sha = sha_of(url, FAIL_ON_X)
    calls = [pipe.call(("EVALSHA", sha, 0, arg)) for arg in ("a", "x", "b", "x", "c")]
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert results[0] == b"a" and results[2] == b"b" and results[4] == b"c"
    assert all(isinstance(results[i], ResponseError) and "refused x" in str(results[i]) for i in (1, 3))
    assert await pipe.call(("EVALSHA", sha, 0, "after")) == b"after"  # the connection is in step


async def test_noscript_mid_batch_is_that_calls_and_the_registry_loads_and_resends(redis_url):
    client = make_redis(redis_url)
    try:
        registry = ScriptRegistry(client)
        script = client.register_script(ECHO)
        redis_sync.Redis.from_url(redis_url).script_flush()
        pipe = registry._pipe
        assert pipe is not None
        # raw calls: the lost script is each one's own NOSCRIPT, the others of the turn are answered
        known = sha_of(redis_url, FAIL_ON_X)
        raw = await asyncio.gather(pipe.call(("EVALSHA", script.sha, 0, "lost")),
                                   pipe.call(("EVALSHA", known, 0, "kept")), return_exceptions=True)
        assert isinstance(raw[0], NoScriptError) and raw[1] == b"kept"
        # through the registry: loaded again and sent again, every caller answered
        replies = await asyncio.gather(*(registry.evalsha(script, [], [f"m{i}"]) for i in range(20)))
        assert replies == [f"m{i}".encode() for i in range(20)]
    finally:
        await client.aclose()


async def test_a_caller_that_gives_up_leaves_the_others_in_step(pipe_client):
    pipe, url = pipe_client
    slow = sha_of(url, "redis.call('SET', KEYS[1], ARGV[1]) local t = redis.call('TIME') while true do "
                       "local n = redis.call('TIME') if (n[1] - t[1]) * 1000000 + (n[2] - t[2]) > 200000 then "
                       "break end end return ARGV[1]")
    fast = sha_of(url, ECHO)
    assert await pipe.call(("EVALSHA", fast, 0, "warm-up")) == b"warm-up"  # the lane is up
    first = asyncio.ensure_future(pipe.call(("EVALSHA", slow, 1, "autopipe:abandoned", "abandoned")))
    second = asyncio.ensure_future(pipe.call(("EVALSHA", fast, 0, "second")))
    for _ in range(3):
        await asyncio.sleep(0)  # the turn's batch is flushed: both written
    assert pipe._lane is not None and len(pipe._lane.inflight) == 2
    first.cancel()
    assert await second == b"second"  # its own reply, not the abandoned call's
    assert redis_sync.Redis.from_url(url).get("autopipe:abandoned") == b"abandoned"  # it was sent and ran
    assert await pipe.call(("EVALSHA", fast, 0, "third")) == b"third"


async def test_the_registry_sends_a_turns_calls_on_one_connection(redis_url):
    client = make_redis(redis_url)
    client.connection_pool.connection_kwargs["client_name"] = "registry-test"
    try:
        registry = ScriptRegistry(client)
        script = client.register_script(ECHO)
        replies = await asyncio.gather(*(registry.evalsha(script, [], [f"m{i}"]) for i in range(100)))
        assert replies == [f"m{i}".encode() for i in range(100)]
        assert client_count(redis_url, "registry-test") == 1  # a connection per call before AutoPipe
    finally:
        await client.aclose()


async def test_a_connection_that_fails_after_the_write_leaves_every_call_of_it_unanswered(proxied, redis_server):
    proxy, client = proxied
    pipe = AutoPipe(client.connection_pool)
    direct = redis_sync.Redis(port=redis_server.port)
    sha = sha_of(f"redis://127.0.0.1:{redis_server.port}/0", "redis.call('INCR', KEYS[1]) return 1")
    direct.delete("autopipe:ran")
    assert await pipe.call(("EVALSHA", sha, 1, "autopipe:ran")) == 1  # the lane is up
    proxy.drop_replies()  # the calls reach Redis and run; their replies are lost
    results = await asyncio.gather(*(pipe.call(("EVALSHA", sha, 1, "autopipe:ran")) for _ in range(5)),
                                   return_exceptions=True)
    assert all(isinstance(r, SentUnanswered) for r in results), results
    assert int(direct.get("autopipe:ran")) == 6  # they did run: "unanswered", never "failed"
    proxy.heal()
    assert await pipe.call(("EVALSHA", sha, 1, "autopipe:ran")) == 1  # a new lane


async def test_a_call_never_written_is_a_plain_connection_error(redis_server):
    proxy = NetProxy("127.0.0.1", redis_server.port).start()
    client = make_redis(proxy.redis_url(), socket_timeout_s=1.0)
    try:
        pipe = AutoPipe(client.connection_pool)
        proxy.stop()  # nothing listens: the lane cannot be made, nothing is written
        with pytest.raises(ConnectionError) as failure:
            await pipe.call(("EVALSHA", "0" * 40, 0))
        assert not isinstance(failure.value, SentUnanswered)
    finally:
        await client.aclose()


async def test_a_send_is_written_with_the_turn_and_its_reply_comes_later(pipe_client):
    pipe, url = pipe_client
    sha = sha_of(url, "redis.call('SET', KEYS[1], ARGV[1]) return ARGV[1]")
    (written, reply), echoed = await asyncio.gather(pipe.send(("EVALSHA", sha, 1, "autopipe:sent", "sent")),
                                                   pipe.call(("EVALSHA", sha, 1, "autopipe:called", "called")))
    assert written is True and echoed == b"called"
    assert await reply == b"sent"
    assert client_count(url, "autopipe-test") == 1  # the send went with the call, on one connection


async def test_a_send_that_could_not_be_written_says_so(redis_server):
    proxy = NetProxy("127.0.0.1", redis_server.port).start()
    client = make_redis(proxy.redis_url(), socket_timeout_s=1.0)
    try:
        pipe = AutoPipe(client.connection_pool)
        proxy.stop()
        written, reply = await pipe.send(("EVALSHA", "0" * 40, 0))
        assert written is False
        with pytest.raises(ConnectionError):
            await reply
    finally:
        await client.aclose()


async def test_calls_queued_behind_a_failing_attempt_fail_with_it(proxied):
    """While Redis cannot be reached, each call waits for at most one attempt to make the
    connection, however many turns queue up behind it (before, each turn's batch made an attempt
    of its own after the one before it had failed: the fifth waited five times as long)."""
    proxy, client = proxied
    pipe = AutoPipe(client.connection_pool)
    proxy.partition()  # accepted, never answered: the new connection's health check times out
    calls = []
    for _ in range(5):
        calls.append(asyncio.ensure_future(pipe.call(("PING",))))
        for _ in range(2):
            await asyncio.sleep(0)  # each call in a turn, a batch, of its own
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(r, Exception) and not isinstance(r, SentUnanswered) for r in results), results
    assert len({id(r) for r in results}) == 1  # one attempt, and its failure told to all five
    proxy.heal()
    assert await pipe.call(("PING",)) in (b"PONG", "PONG", True)  # the next turn tries again


async def test_an_idle_lane_whose_health_check_fails_is_replaced(proxied, redis_server):
    proxy, client = proxied
    client.connection_pool.connection_kwargs["health_check_interval"] = 0.05
    pipe = AutoPipe(client.connection_pool)
    sha = sha_of(f"redis://127.0.0.1:{redis_server.port}/0", ECHO)
    assert await pipe.call(("EVALSHA", sha, 0, "first")) == b"first"
    first_lane = pipe._lane
    await asyncio.sleep(0.1)  # past the health-check interval: the next batch PINGs first
    proxy.partition()
    with pytest.raises(Exception) as failure:
        await pipe.call(("EVALSHA", sha, 0, "lost"))
    assert not isinstance(failure.value, SentUnanswered)  # the PING failed: the call was not sent
    assert first_lane is not None and first_lane.broken and pipe._lane is None
    proxy.heal()
    replies = await asyncio.gather(*(pipe.call(("EVALSHA", sha, 0, f"after-{i}")) for i in range(5)))
    assert replies == [f"after-{i}".encode() for i in range(5)]  # each its own reply, on a new lane
    assert pipe._lane is not first_lane


async def test_a_long_reply_that_keeps_coming_is_read_to_its_end(proxied, redis_server):
    """A reply that takes longer than the socket timeout to arrive, its bytes coming all along (a
    3 MB message on a slow or busy link), is no stalled connection: it and the calls of the lane
    behind it get their replies. (Timed over the whole reply, the reader gave up after the socket
    timeout and told every call of the lane SentUnanswered: MQRC_CONNECTION_BROKEN for unrelated
    applications' commits, for one application's large get.)"""
    proxy, client = proxied
    pipe = AutoPipe(client.connection_pool)
    url = f"redis://127.0.0.1:{redis_server.port}/0"
    big = b"m" * 3_000_000
    redis_sync.Redis.from_url(url).set("autopipe:big", big)
    get = sha_of(url, "return redis.call('GET', KEYS[1])")
    echo = sha_of(url, ECHO)
    assert await pipe.call(("EVALSHA", echo, 0, "up")) == b"up"  # the lane is up
    proxy.slow_replies(1_000_000)  # 3 MB of reply: 3 s at least, a 64 KB chunk every 66 ms
    got, *small = await asyncio.gather(pipe.call(("EVALSHA", get, 1, "autopipe:big")),
                                       *(pipe.call(("EVALSHA", echo, 0, f"s{i}")) for i in range(5)),
                                       return_exceptions=True)
    assert got == big, repr(got)[:200]
    assert small == [f"s{i}".encode() for i in range(5)]
    proxy.slow_replies(None)
    proxy.partition()  # no byte at all: the lane still gives up after the socket timeout
    assert isinstance((await asyncio.gather(pipe.call(("EVALSHA", echo, 0, "held")),
                                            return_exceptions=True))[0], SentUnanswered)


async def test_aclose_leaves_nothing_pending_and_tells_every_caller(proxied, redis_server):
    proxy, client = proxied
    pipe = AutoPipe(client.connection_pool)
    sha = sha_of(f"redis://127.0.0.1:{redis_server.port}/0", ECHO)
    assert await pipe.call(("EVALSHA", sha, 0, "up")) == b"up"
    proxy.partition()  # the next calls are written and never answered
    owed = [asyncio.ensure_future(pipe.call(("EVALSHA", sha, 0, f"o{i}"))) for i in range(3)]
    for _ in range(3):
        await asyncio.sleep(0)  # written: the reader waits for their replies
    assert pipe._lane is not None and len(pipe._lane.inflight) == 3 and pipe.tasks
    await pipe.aclose()
    assert not pipe.tasks  # no reader or flush left for the event loop's end to find
    results = await asyncio.gather(*owed, return_exceptions=True)
    assert all(isinstance(r, SentUnanswered) for r in results), results


async def test_a_large_request_over_a_slow_link_fails_only_itself(proxied, redis_server):
    """A request too large to go out within the socket timeout (a put of many MB over a slow link)
    has a connection of its own (``LARGE_REQUEST_BYTES``): it times out alone, and the small calls
    of its turn and of the turns after it keep their answers. (Written in the turn's batch, it held
    up every call of the shared connection behind it until the reader gave up: 2009 for each.)"""
    proxy, client = proxied
    url = f"redis://127.0.0.1:{redis_server.port}/0"
    registry = ScriptRegistry(client)
    store = client.register_script("redis.call('SET', KEYS[1], ARGV[1]) return 1")
    echo = client.register_script(ECHO)
    for script in (store, echo):
        assert sha_of(url, script.script) == script.sha  # loaded: no NOSCRIPT round trip
    assert await registry.evalsha(echo, [], ["up"]) == b"up"  # the shared connection is up
    big_value = b"m" * (4 * LARGE_REQUEST_BYTES)
    proxy.slow_requests(1_000_000)  # 4 MiB at 1 MB/s: over 4 s to go out; the socket timeout is 1 s
    try:
        big = asyncio.ensure_future(registry.evalsha(store, ["autopipe:big"], [big_value]))
        same_turn = [asyncio.ensure_future(registry.evalsha(echo, [], [f"t{i}"])) for i in range(5)]
        assert await asyncio.gather(*same_turn, return_exceptions=True) == [f"t{i}".encode() for i in range(5)]
        later = [await registry.evalsha(echo, [], [f"l{i}"]) for i in range(5)]  # one turn each
        assert later == [f"l{i}".encode() for i in range(5)]
        assert not big.done()  # all answered while the large request was still going out
        with pytest.raises(SentUnanswered):
            await big
    finally:
        proxy.slow_requests(None)
    assert await registry.evalsha(echo, [], ["after"]) == b"after"
    await registry.aclose()
