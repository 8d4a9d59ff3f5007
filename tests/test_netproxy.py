"""The test proxy (tests/support/netproxy.py) against a real redis-server, with redis-py: commands pass,
a partition makes commands time out (not fail with a reset), heal makes new commands work,
reset closes connections at once."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest
import redis

from tests.support.netproxy import NetProxy
from tests.support.redis_server import RedisServer
from tests.support.waits import eventually


@pytest.fixture
def proxy(redis_server: RedisServer, redis_url: str) -> Iterator[NetProxy]:
    p = NetProxy("127.0.0.1", redis_server.port).start()
    try:
        yield p
    finally:
        p.stop()


def client(p: NetProxy, timeout_s: float = 0.5) -> redis.Redis:
    """A redis-py client through the proxy that never retries (a timeout surfaces at once)."""
    return redis.Redis.from_url(p.redis_url(), socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
                                retry_on_timeout=False, retry=None, retry_on_error=[], protocol=2)


def test_commands_pass_through(proxy: NetProxy) -> None:
    r = client(proxy)
    assert r.ping()
    r.set("k", b"v" * 200_000)  # larger than one chunk: the stream is copied whole
    assert r.get("k") == b"v" * 200_000
    assert proxy.connections == 1
    r.close()


def test_partition_times_out_and_heal_serves_again(proxy: NetProxy, redis_server: RedisServer) -> None:
    r = client(proxy)
    assert r.set("before", 1)
    proxy.partition()
    started = time.monotonic()
    with pytest.raises(redis.exceptions.TimeoutError):  # held, not reset: the client times out
        r.set("during", 1)
    assert time.monotonic() - started >= 0.4
    fresh = client(proxy)
    with pytest.raises(redis.exceptions.TimeoutError):  # a new connection is accepted, then nothing
        fresh.ping()
    assert proxy.connections == 2
    direct = redis.Redis(port=redis_server.port)
    assert direct.exists("during") == 0  # the held command never reached Redis
    proxy.heal()
    assert eventually(lambda: proxy.connections == 0)  # the held connections were reset
    assert r.get("before") == b"1"  # redis-py reconnects: new connections are forwarded
    assert fresh.ping()
    time.sleep(0.2)  # a negative check (no event to await): nothing held arrives late after a resetting heal
    assert direct.exists("during") == 0
    for c in (r, fresh, direct):
        c.close()


def test_heal_with_resume_delivers_held_bytes(proxy: NetProxy, redis_server: RedisServer) -> None:
    raw = socket.create_connection(proxy.address, timeout=2)
    raw.sendall(b"*1\r\n$4\r\nPING\r\n")
    assert raw.recv(64) == b"+PONG\r\n"
    proxy.partition()
    raw.sendall(b"*3\r\n$3\r\nSET\r\n$4\r\nlate\r\n$1\r\n1\r\n")
    raw.settimeout(0.3)
    with pytest.raises(TimeoutError):
        raw.recv(64)
    direct = redis.Redis(port=redis_server.port)
    assert direct.exists("late") == 0
    proxy.heal(resume=True)
    raw.settimeout(2)
    assert raw.recv(64) == b"+OK\r\n"  # the held command ran after the heal
    assert direct.get("late") == b"1"
    raw.close()
    direct.close()


def test_reset_closes_every_connection(proxy: NetProxy) -> None:
    raw = socket.create_connection(proxy.address, timeout=2)
    raw.sendall(b"*1\r\n$4\r\nPING\r\n")
    assert raw.recv(64) == b"+PONG\r\n"
    proxy.reset()
    raw.settimeout(2)
    try:
        got = raw.recv(64)  # the reset arrives at once: no timeout
    except ConnectionResetError:
        got = b""
    assert got == b""
    raw.close()
    r = client(proxy)
    assert r.ping()  # new connections are forwarded as before
    r.close()


def test_stop_is_bounded_while_partitioned(redis_server: RedisServer) -> None:
    p = NetProxy("127.0.0.1", redis_server.port).start()
    conns = [socket.create_connection(p.address, timeout=2) for _ in range(5)]
    p.partition()
    conns.append(socket.create_connection(p.address, timeout=2))
    started = time.monotonic()
    p.stop()
    assert time.monotonic() - started < 3
    for c in conns:
        c.close()


def test_a_link_closed_while_it_is_being_connected_does_not_end_the_proxy(proxy: NetProxy) -> None:
    """A heal closes every link, also one the accept thread is still connecting: connecting it
    then fails on its closed socket ("Bad file descriptor"), which must end that link only. Before,
    it ended the accept thread, and every later connection hung unanswered."""
    from tests.support.netproxy import _Link

    mine, theirs = socket.socketpair()
    link = _Link(proxy, mine)
    proxy.links.add(link)
    link.close(reset=True)  # what the heal does to it meanwhile
    assert link.connect_upstream() is False
    theirs.close()

    taken = proxy._take
    calls = []

    def fails_once(sock: socket.socket) -> None:
        calls.append(sock)
        if len(calls) == 1:
            raise OSError(9, "Bad file descriptor")
        taken(sock)

    proxy._take = fails_once  # type: ignore[method-assign]
    first = client(proxy)
    with pytest.raises(redis.exceptions.ConnectionError):
        first.ping()  # its connection was the one that failed
    r = client(proxy)
    assert r.ping()  # the proxy still accepts and forwards
    r.close()
    first.close()
