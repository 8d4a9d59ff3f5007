"""Checks ``qsg serve`` makes before it starts: Redis answers, the repository answers and its
schema is current. Each failure is one clear line for the operator."""

from __future__ import annotations

import time

import redis as syncredis
from sqlalchemy.exc import SQLAlchemyError

from app.cf.keys import heartbeat_key
from app.repository.db import make_engine, schema_status
from app.settings import Settings


def _live_holder(client: syncredis.Redis, settings: Settings) -> str | None:
    """Who holds this QM's heartbeat lease, if that holder is alive.

    A lease left by a QM that died lapses within the heartbeat TTL; one held by a live process
    is renewed every heartbeat interval. So watch it: renewed means a live duplicate, gone
    means the name is free (a restart after a failure).
    """
    key = heartbeat_key(settings.qsg, settings.qmgr)
    deadline = time.monotonic() + settings.heartbeat_ttl_s + 2 * settings.heartbeat_interval_s
    last = client.pttl(key)
    while last > 0 and time.monotonic() < deadline:
        time.sleep(min(0.1, settings.heartbeat_interval_s / 4))
        now = client.pttl(key)
        if now > last:  # renewed: the holder is alive
            return _text(client.get(key))
        last = now
    return None if last <= 0 else _text(client.get(key))


def _text(value: bytes | str | None) -> str:
    """A value read with a bytes client (``?`` when it is gone meanwhile)."""
    if value is None:
        return "?"
    return value.decode() if isinstance(value, bytes) else value


class StartupError(Exception):
    """A dependency of the queue manager is missing; the message says which and what to do."""


def check_dependencies(settings: Settings) -> None:
    """Raise StartupError when the coupling facility or the repository is not usable."""
    try:
        client = syncredis.Redis.from_url(settings.redis_url, socket_connect_timeout=3, socket_timeout=3)
        client.ping()
        holder = _live_holder(client, settings)
        client.close()
    except (syncredis.RedisError, OSError, ValueError) as exc:
        raise StartupError(f"cannot reach the coupling facility (Redis) at {settings.redis_url}: {exc}") from None
    if holder is not None:
        raise StartupError(f"queue manager {settings.qmgr} is already active in {settings.qsg} "
                           f"({holder}): a QM name is unique in the group")
    try:
        engine = make_engine(settings.database_url)
        try:
            current, head = schema_status(engine)
        finally:
            engine.dispose()
    except (SQLAlchemyError, OSError, ValueError) as exc:
        raise StartupError(f"cannot reach the shared repository at {settings.database_url}: "
                           f"{type(exc).__name__}: {str(exc).splitlines()[0]}") from None
    if current != head:
        raise StartupError(f"the shared repository schema is at {current or 'nothing'}, not {head}: "
                           f"run 'qsg db upgrade --database-url {settings.database_url}'")
