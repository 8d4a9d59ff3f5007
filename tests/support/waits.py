"""The one bounded poll: await a state another process reaches (a lease lapsing, a peer's
recovery, an agent moving a message) where there is no event to wait on."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(predicate: Callable[[], object], timeout_s: float = 20, what: str = "condition", *,
               every_s: float = 0.1, tolerate: tuple[type[BaseException], ...] = ()) -> None:
    """Return as soon as ``predicate()`` is true; raise AssertionError naming ``what`` after
    ``timeout_s``. Exceptions of the types in ``tolerate`` count as "not yet" (the last one is
    reported)."""
    deadline = time.monotonic() + timeout_s
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except tolerate as exc:
            last = exc
        time.sleep(every_s)
    detail = f" (last error: {last})" if tolerate else ""
    raise AssertionError(f"{what} not reached within {timeout_s}s{detail}")


def eventually(predicate: Callable[[], object], timeout_s: float = 5.0, every_s: float = 0.02) -> bool:
    """``wait_until`` as a truth value: whether ``predicate()`` became true within ``timeout_s``."""
    try:
        wait_until(predicate, timeout_s, every_s=every_s)
    except AssertionError:
        return False
    return True
