"""What a queue manager tells its coupling facility: one ``CFHooks`` given to
``CouplingFacility(...)`` at construction (``QueueManager.__init__`` builds it), instead of
attributes set on the engine afterwards by each service. Every field has the default an engine
without a queue manager needs (engine tests, tools): wall-clock deadlines, no log, no events.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from app.cf import deadline
from app.cf.keys import QueueLocation


class PersistentLog(Protocol):
    """Where the engine reports committed persistent changes to recoverable structures
    (``app.qmgr.mqlog.MessageLog``): what RECOVER CFSTRUCT replays after a structure is lost."""

    def wanted(self, tag: str) -> bool: ...
    def put(self, tag: str, qmgr: str, hconn: str, syncpoint: bool, queue: str, ident: int,
            meta: str, md: bytes, data: bytes) -> None: ...
    def got(self, tag: str, qmgr: str, hconn: str, syncpoint: bool, queue: str, ident: int) -> None: ...
    def removed_all(self, tag: str, queue: str, upto: int, *, deleted: bool) -> None: ...
    def committed(self, qmgr: str, hconn: str, tag: str) -> None: ...
    def backed_out(self, qmgr: str, hconn: str, tag: str) -> None: ...
    async def force(self) -> None: ...


def _no_error() -> int:
    return 0


def _never() -> bool:
    return False


def _always() -> bool:
    return True


@dataclass(frozen=True)
class CFHooks:
    """The queue manager's side of the engine, in sections."""

    # ---- who calls ------------------------------------------------------------------------
    #: This queue manager's name (the scripts' caller; "" for an engine without one).
    qmgr: str = ""
    #: False once this process's heartbeat lease may have lapsed (membership keeps it).
    lease_valid: Callable[[], bool] = _always
    #: When the lease is in doubt: True once a late renewal confirmed it never lapsed.
    confirm_lease: Callable[[], Awaitable[bool]] | None = None
    #: Called when a call found this incarnation fenced or its lease lapsed.
    on_fenced: Callable[[str], None] | None = None
    #: QMGR CFCONLOS(TOLERATE): private-queue work goes on while the CF is lost.
    tolerate_cf_loss: Callable[[], bool] = _never

    # ---- clocks (app/cf/deadline.py) ------------------------------------------------------
    #: The coupling facility's clock as this QM reads it (the group clock's offset, not an
    #: injected test clock): what state-changing scripts' deadlines are measured on.
    cf_now_ms: deadline.NowMs = deadline.wall_ms
    #: Measures the CF's clock again (the group clock's ``refresh``); None: nothing to measure.
    clock_check: Callable[[], Awaitable[object]] | None = None
    #: How far ``cf_now_ms`` may be off, in ms (half the round trip of its measurement).
    clock_error_ms: Callable[[], int] = _no_error
    #: The page set's clock as this QM reads it, and that reading's error.
    pageset_now_ms: deadline.NowMs = deadline.wall_ms
    pageset_clock_error_ms: Callable[[], int] = _no_error

    # ---- replica acknowledgement (QSG_CF_REPLICA_ACKS / QSG_CF_REPLICA_TIMEOUT_MS) ------------
    #: After every state-changing script, WAIT for this many replicas of its master (0: do not).
    replica_acks: int = 0
    replica_timeout_ms: int = 500
    #: Told the tag of a structure (or group records) whose call got fewer acknowledgements.
    on_replica_shortfall: Callable[[str], None] | None = None

    # ---- what the engine reports ------------------------------------------------------------
    #: Told each fenced script's name and round trip in seconds (the QM's metrics).
    observe_call: Callable[[str, float], None] | None = None
    #: Called with a structure's tag when a call queued expiration reports there.
    on_reports: Callable[[str], None] | None = None
    #: Called when a put/get/scan fired a performance event (the queue, its reason code).
    on_event: Callable[[QueueLocation, int], None] | None = None
    #: Called when a get or browse discarded expired messages (the queue, how many).
    on_expired: Callable[[QueueLocation, int], None] | None = None
    #: Whether this QM has PERFMEV(ENABLED): its private queues switch event flags only then.
    perfmev_enabled: Callable[[], bool] = _never

    # ---- recovery ---------------------------------------------------------------------------
    #: The log of persistent changes to RECOVER(YES) structures (None: nothing is logged).
    recovery_log: PersistentLog | None = None
    #: Called when a queue's state is missing: True when that is because its structure was
    #: lost (now handled: failed, reallocated, rebuilt), so the call is worth one retry.
    structure_lost: Callable[[str], Awaitable[bool]] | None = None
