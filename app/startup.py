"""Checks ``qsg serve`` makes before it starts: Redis answers, the repository answers and its
schema is current. Each failure is one clear line for the operator."""

from __future__ import annotations

import redis as syncredis
from sqlalchemy.exc import SQLAlchemyError

from app.repository.db import make_engine, schema_status
from app.settings import Settings


class StartupError(Exception):
    """A dependency of the queue manager is missing; the message says which and what to do."""


def check_dependencies(settings: Settings) -> None:
    """Raise StartupError when the coupling facility or the repository is not usable."""
    try:
        client = syncredis.Redis.from_url(settings.redis_url, socket_connect_timeout=3, socket_timeout=3)
        client.ping()
        client.close()
    except (syncredis.RedisError, OSError, ValueError) as exc:
        raise StartupError(f"cannot reach the coupling facility (Redis) at {settings.redis_url}: {exc}") from None
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
