"""The group clock (app/cf/groupclock.py) against a real redis-server: the offset it measures,
that it never runs backwards, that a failed or untrustworthy measurement keeps the last offset,
and that a running queue manager measures again on its heartbeats."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis as syncredis

from app.cf.groupclock import GroupClock
from app.cf.redisconn import make_redis
from app.core.errors import MQError
from app.core.reasons import MQRC

MINUTES_5_NS = 300 * 10**9


def redis_now_ms(url: str) -> int:
    with syncredis.Redis.from_url(url) as client:
        seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


class Wall:
    """A local wall clock a test can set off (the host's clock wrong by ``skew_ns``)."""

    def __init__(self, skew_ns: int = 0) -> None:
        self.skew_ns = skew_ns

    def __call__(self) -> int:
        return time.time_ns() + self.skew_ns


async def test_the_offset_undoes_the_hosts_skew_and_now_is_redis_time(redis_url):
    from app.cf.engine import CouplingFacility
    from app.core.clock import ManualClock

    redis = make_redis(redis_url)
    try:
        cf = CouplingFacility(redis, "QSG1", ManualClock())
        clock = GroupClock(cf.group.server_time_us, name="QM1", wall_ns=Wall(-MINUTES_5_NS))
        assert not clock.synced and abs(clock.now_ms() - (redis_now_ms(redis_url) - 300_000)) < 1000
        offset = await clock.sync()
        assert abs(offset - 300_000) < 1000 and clock.synced
        assert abs(clock.now_ms() - redis_now_ms(redis_url)) < 1000
    finally:
        await redis.aclose()


async def test_the_group_clock_never_runs_backwards():
    server_us = [1_800_000_000_000_000]

    async def source() -> int:
        return server_us[0]

    wall = Wall()
    clock = GroupClock(source, wall_ns=lambda: 1_800_000_000_000_000_000 + wall.skew_ns)
    await clock.sync()
    first = clock.now_ms()
    assert first == 1_800_000_000_000
    server_us[0] -= 5_000_000  # the CF now says five seconds earlier (a failover to another node)
    await clock.sync()
    assert clock.offset_ms == -5000
    assert clock.now_ms() == first  # held still, not five seconds back
    wall.skew_ns = 6 * 10**9  # local time moves on six seconds: the group clock one past the hold
    assert clock.now_ms() == first + 1000


async def test_a_failed_or_slow_measurement_keeps_the_last_offset():
    calls: list[str] = []
    now_ns = [1_800_000_000_000_000_000]

    async def source() -> int:
        calls.append("time")
        if len(calls) == 2:
            raise MQError(MQRC.CF_NOT_AVAILABLE, "Redis away")
        if len(calls) == 3:
            now_ns[0] += 3 * 10**9  # a three-second round trip: its midpoint is not trusted
        return 1_800_000_060_000_000  # the CF is a minute ahead

    clock = GroupClock(source, wall_ns=lambda: now_ns[0])
    assert await clock.sync() == 60_000
    assert await clock.refresh() is False and clock.offset_ms == 60_000
    assert await clock.refresh() is True and clock.offset_ms == 60_000
    with pytest.raises(MQError):
        await GroupClock(_failing).sync()  # the first measurement must succeed (before serving)


async def _failing() -> int:
    raise MQError(MQRC.CF_NOT_AVAILABLE, "Redis away")


async def test_a_running_queue_manager_measures_again_on_its_heartbeats(redis_url, tmp_path):
    from app.cmdserver.server import CommandServer
    from app.qmgr.qmgr import QueueManager
    from app.repository.db import make_engine, upgrade
    from app.repository.store import Repository
    from app.settings import Settings

    url = f"sqlite:///{tmp_path / 'q.db'}"
    upgrade(url)
    manager = QueueManager(Settings(qmgr="QM1", redis_url=redis_url, database_url=url, auth="off",
                                    mqlog_dir=str(tmp_path / "mqlog"), activity_enabled=False),
                           Repository(make_engine(url), "QSG1"), make_redis(redis_url), command_server=CommandServer)
    assert manager.group_clock is not None and manager.clock is manager.group_clock
    await manager.start()
    try:
        assert abs(manager.info()["clock_offset_ms"]) < 1000  # one host: its clock is Redis's
        manager.group_clock._wall_ns = Wall(MINUTES_5_NS)  # the host's clock is stepped 5 minutes ahead
        for _ in range(50):  # bounded: the heartbeat renews every second
            if abs(manager.clock_offset_ms() + 300_000) < 1000:
                break
            await asyncio.sleep(0.1)
        assert abs(manager.clock_offset_ms() + 300_000) < 1000, manager.clock_offset_ms()
    finally:
        await manager.stop()
        await manager.redis.aclose()
