"""Background loops of a queue manager: how they are stopped."""

from __future__ import annotations

import asyncio
from typing import Any


async def stop_task(task: asyncio.Task[Any] | None, stopping: asyncio.Event, timeout_s: float = 3.0) -> None:
    """Stop a background loop: ask it through ``stopping`` and wait; cancel only as a fallback.

    A loop awaiting redis-py can lose a bare cancel() (the client swallows the CancelledError
    while it tears down a connection) and would then run on; the event cannot be lost.
    """
    stopping.set()
    if task is None:
        return
    done, _ = await asyncio.wait([task], timeout=timeout_s)
    if not done:
        task.cancel()
        await asyncio.wait([task], timeout=timeout_s)
