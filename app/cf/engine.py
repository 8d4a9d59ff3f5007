"""The coupling-facility engine: shared (and private) queue state in Redis, one script per verb.

``CouplingFacility`` is the async API the queue manager calls for MQPUT, MQGET, MQCMIT, MQBACK,
MQOPEN/MQCLOSE counting and the queue administration that touches runtime state. Every call is
one Lua script (``app/cf/lua``), so every QM of the group sees each verb atomically; the scripts
return codes and ``mq_error`` is the one function that turns a code into an ``MQError``.
Redis connection failures become ``MQRC_CF_NOT_AVAILABLE`` in ``errors.cf_access`` (retry later;
``MQRC_CF_STRUC_FAILED`` is only for a structure that is FAILED); nothing is ever retried
automatically (a retried destructive MQGET could hand a message to nobody).

Fencing: every state-changing script is called as this queue manager's current incarnation
(``base.CFBase._script``) and refuses, in the same atomic step, an incarnation that peer recovery has
fenced (lua/_fence.lua). The engine also refuses to call at all once this process's own lease
has lapsed (``lease_valid``): a queue manager that could not renew its lease must not go on
committing in the hope that nobody recovered it. Either way the call ends with ``FencedError``
(MQRC_CONNECTION_BROKEN) and ``on_fenced`` tells the queue manager to rejoin.

Waiting getters do not poll: a get that finds nothing keeps the queue's ``waiters`` key alive
in Redis; puts and commits on a queue with that key SPUBLISH the queue's name on its structure's
availability channel (sharded pub/sub, in the structure's slot), and the engine's
``AvailabilityListener`` (its channels subscribed by ``app.cf.shardsub``) wakes the local waiters.

Time: message timestamps and statistics use the injected ``Clock`` (passed to the scripts);
wait intervals are measured on the event loop's monotonic clock.
"""

from __future__ import annotations

from app.cf.admin import Admin
from app.cf.errors import FencedError, OutcomeUnknownError, TruncatedMessageError, mq_error
from app.cf.hooks import CFHooks, PersistentLog
from app.cf.listener import AvailabilityListener
from app.cf.messaging import Messaging
from app.cf.placement import Placement
from app.cf.recovery import Recovery
from app.cf.results import (
    OFFLOAD_THRESHOLD,
    BatchMessage,
    CloseResult,
    GetMode,
    GetResult,
    InputMode,
    OpenResult,
    PutBatchResult,
    PutResult,
    QueueStatistics,
    QueueStatus,
    StructureState,
    Syncpoint,
    UowQueueResult,
)


class CouplingFacility(Messaging, Admin, Recovery, Placement):
    """Async API over the coupling-facility scripts for one queue-sharing group.

    ``redis`` must be made by ``app.cf.redisconn.make_redis`` (RESP2, no retry, bytes).
    ``listener_redis``: client for the structures' notices (default: ``redis``; their
    subscriptions only read with bounded timeouts shorter than the socket timeout).
    ``recheck_s``: a waiting getter retries at least this often even without a wake-up.

    The verbs live in ``app.cf.messaging``, administration in ``app.cf.admin``, recovery in
    ``app.cf.recovery``; the shared calling conventions in ``app.cf.base``.
    """


__all__ = [
    "AvailabilityListener", "BatchMessage", "CFHooks", "CloseResult", "CouplingFacility", "FencedError", "GetMode",
    "GetResult", "InputMode", "OFFLOAD_THRESHOLD", "OpenResult", "OutcomeUnknownError", "PersistentLog",
    "PutBatchResult", "PutResult",
    "QueueStatistics", "QueueStatus", "StructureState", "Syncpoint", "TruncatedMessageError", "UowQueueResult",
    "mq_error",
]
