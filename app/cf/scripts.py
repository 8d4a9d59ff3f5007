"""The coupling facility's Lua scripts: loaded from ``app/cf/lua/*.lua`` and registered on a client.

Each script file opens with a header naming its KEYS, ARGV and output (bullmq style). Files whose
name starts with ``_`` are shared fragments, pasted where a script says ``--@include <file>``
(each fragment at most once per script), so they are written once and never copied by hand.

``register_script`` computes the SHA1 and calls EVALSHA, reloading the source on NOSCRIPT (after
a Redis restart); it does not retry anything else, which is what the engine wants.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError, ResponseError

LUA_DIR = Path(__file__).with_name("lua")

_INCLUDE = re.compile(r"^--@include\s+(\S+)\s*$", re.MULTILINE)

#: Every script the engine calls (file ``<name>.lua``).
SCRIPT_NAMES: tuple[str, ...] = (
    "put",
    "put_batch",
    "scan",
    "get",
    "get_batch",
    "commit",
    "backout",
    "open",
    "close",
    "clear_opens",
    "define",
    "alter",
    "delete",
    "clear",
    "status",
    "reset_stats",
    "struct",
    "backup",
    "restore",
    "fence",
    "intent",
    "take_report",
    "claim",
    "renew",
    "lease_take",
    "lease_hold",
    "lease_release",
)


@cache
def load_source(name: str) -> str:
    """Source of ``lua/<name>`` with its ``--@include`` lines replaced by the fragments."""
    return _expand(name, frozenset())


def _expand(name: str, seen: frozenset[str]) -> str:
    path = LUA_DIR / name
    text = path.read_text(encoding="utf-8")
    included: set[str] = set()

    def include(match: re.Match[str]) -> str:
        fragment = match.group(1)
        if fragment in seen or fragment == name:
            raise ValueError(f"{name}: include cycle through {fragment}")
        if fragment in included:
            return f"-- (already included: {fragment})"
        included.add(fragment)
        return f"-- begin {fragment}\n{_expand(fragment, seen | {name})}\n-- end {fragment}"

    return _INCLUDE.sub(include, text)


class ScriptRegistry:
    """All coupling-facility scripts registered on one Redis client (one registry per client)."""

    put: AsyncScript
    put_batch: AsyncScript
    get: AsyncScript
    get_batch: AsyncScript
    commit: AsyncScript
    backout: AsyncScript
    open: AsyncScript
    close: AsyncScript
    clear_opens: AsyncScript
    define: AsyncScript
    alter: AsyncScript
    delete: AsyncScript
    clear: AsyncScript
    status: AsyncScript
    struct: AsyncScript
    backup: AsyncScript
    restore: AsyncScript
    reset_stats: AsyncScript
    scan: AsyncScript
    fence: AsyncScript
    intent: AsyncScript
    take_report: AsyncScript
    claim: AsyncScript
    renew: AsyncScript
    lease_take: AsyncScript
    lease_hold: AsyncScript
    lease_release: AsyncScript

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        for name in SCRIPT_NAMES:
            setattr(self, name, redis.register_script(load_source(f"{name}.lua")))

    async def evalsha(self, script: AsyncScript, keys: list[Any], args: list[Any]) -> Any:
        """EVALSHA ``script`` on a pooled connection: one round trip without redis-py's layers
        around each command (retry wrapper, observability hooks, response callbacks), which
        cost the hot path about as much as its own MQI logic. The rules of ``make_redis`` hold:
        nothing is retried but NOSCRIPT (the script did not run: Redis lost its script cache),
        and a connection that failed or was interrupted mid-call is dropped, never reused with
        a reply still unread."""
        pool = self.redis.connection_pool
        conn = await pool.get_connection()  # type: ignore[no-untyped-call]
        try:
            try:
                await conn.send_command("EVALSHA", script.sha, len(keys), *keys, *args)
                return await conn.read_response()
            except NoScriptError:
                await conn.send_command("SCRIPT", "LOAD", script.script)
                script.sha = (await conn.read_response()).decode()
                await conn.send_command("EVALSHA", script.sha, len(keys), *keys, *args)
                return await conn.read_response()
        except ResponseError:
            raise  # an error reply: the connection is in step
        except BaseException:
            await conn.disconnect(nowait=True)
            raise
        finally:
            await pool.release(conn)

    async def load_all(self) -> None:
        """SCRIPT LOAD every script now (optional: EVALSHA loads lazily on NOSCRIPT anyway)."""
        for name in SCRIPT_NAMES:
            script: AsyncScript = getattr(self, name)
            script.sha = await self.redis.script_load(script.script)
