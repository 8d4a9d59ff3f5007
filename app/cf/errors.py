"""The one place coupling-facility outcomes become exceptions.

``mq_error`` turns a script's return code into an ``MQError``; ``cf_access`` turns a Redis
connection failure into MQRC_CF_NOT_AVAILABLE (retry later; ``MQRC_CF_STRUC_FAILED`` is only for
a structure that is FAILED); ``FencedError`` is MQRC_CONNECTION_BROKEN for an incarnation that
lost its place in the group. Code outside ``app.cf`` catches ``MQError``, never a Redis error.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis.exceptions as redis_errors

from app.cf.keys import QueueLocation
from app.cf.replies import GetReply, get_result
from app.cf.results import GetResult
from app.core.errors import MQError
from app.core.reasons import MQRC, CompCode

#: Every Redis failure code outside app.cf used to catch (RedisError, OSError): the CF layer
#: maps them all to MQRC_CF_NOT_AVAILABLE. A cluster client's "no node reachable", "slot not
#: covered" are RedisClusterException, which is not a RedisError.
REDIS_FAILURES: tuple[type[Exception], ...] = (redis_errors.RedisError, redis_errors.RedisClusterException,
                                               OSError)
#: The same, for code outside app.cf that must catch what no CF call mapped (it never names Redis).
CF_FAILURES = REDIS_FAILURES
#: An MQError, or a failure of the coupling facility that no call mapped to one (a caller that
#: retries later, whatever went wrong with the coupling facility).
MQ_OR_CF_FAILURES: tuple[type[Exception], ...] = (MQError, *REDIS_FAILURES)
#: The coupling facility client's own exception class (an API's last-resort handler maps it).
CFClientError = redis_errors.RedisError

class TruncatedMessageError(MQError):
    """MQRC_TRUNCATED_MSG_FAILED: the message is longer than the buffer and stays on the queue.

    Carries what IBM's MQGET returns with it (reason code 2080): the MQMD filled in, DataLength
    the message's full length and the buffer holding as much of the message as fits -
    ``result``, as a get's. The completion code is MQCC_WARNING: the call did not take the
    message, nothing was removed, a browse cursor did not move.
    """

    def __init__(self, message: str, *, result: GetResult) -> None:
        super().__init__(MQRC.TRUNCATED_MSG_FAILED, message, comp=CompCode.WARNING)
        self.result = result


class FencedError(MQError):
    """MQRC_CONNECTION_BROKEN: this incarnation of the queue manager lost its place in the group
    (its lease lapsed, or peer recovery fenced it); the call changed nothing."""

    def __init__(self, message: str) -> None:
        super().__init__(MQRC.CONNECTION_BROKEN, message)


class OutcomeUnknownError(MQError):
    """MQRC_CONNECTION_BROKEN: a state-changing call was sent to the coupling facility and no
    reply came; it may have run before its deadline (the reply was lost), and it can no longer
    run (the deadline has passed: app/cf/deadline.py). The queue manager cannot know what it
    did: the connection's unit of work is backed out (its next MQCMIT answers MQRC_BACKED_OUT),
    a commit's outcome is completed (rolled forward) by the next MQCMIT or MQDISC.

    ``tag``: the structure (or the group's records) the call went to."""

    def __init__(self, message: str, tag: str) -> None:
        super().__init__(MQRC.CONNECTION_BROKEN, message)
        self.tag = tag


#: What a fenced script returns (lua/_fence.lua).
FENCED = MQRC.CONNECTION_BROKEN
#: What a script run after its deadline returns (lua/_fence.lua): it changed nothing.
LATE = MQRC.CF_NOT_AVAILABLE


def is_fenced(reply: Any) -> bool:
    return isinstance(reply, list) and len(reply) == 1 and reply[0] == FENCED


def is_late(reply: Any) -> bool:
    """True for the reply of a script that Redis ran after its deadline (nothing changed)."""
    return isinstance(reply, list) and len(reply) == 1 and reply[0] == LATE


# ---- the one code -> MQError function -----------------------------------------------------

_TEXTS: dict[int, str] = {
    MQRC.UNKNOWN_OBJECT_NAME: "queue '{q}' is not defined",
    MQRC.Q_DELETED: "queue '{q}' was deleted",
    MQRC.OBJECT_CHANGED: "queue '{q}' was changed since it was opened",
    MQRC.PUT_INHIBITED: "puts are inhibited for queue '{q}'",
    MQRC.GET_INHIBITED: "gets are inhibited for queue '{q}'",
    MQRC.MSG_TOO_BIG_FOR_Q: "message is too big for queue '{q}'",
    MQRC.Q_FULL: "queue '{q}' is full",
    MQRC.NO_MSG_AVAILABLE: "no message available on queue '{q}'",
    MQRC.NO_MSG_UNDER_CURSOR: "no message under the browse cursor of queue '{q}'",
    MQRC.OBJECT_IN_USE: "queue '{q}' is in use",
    MQRC.Q_NOT_EMPTY: "queue '{q}' holds messages or uncommitted work",
    MQRC.HOBJ_ERROR: "object handle already records a different open of '{q}'",
    MQRC.TRUNCATED_MSG_FAILED: "message of {n} bytes does not fit the buffer (queue '{q}')",
}


def mq_error(code: int, loc: QueueLocation | None, *, reply: GetReply | None = None) -> MQError:
    """The ``MQError`` for a script's return code (the one place codes become exceptions).

    ``reply`` is the parsed get.lua reply, used for MQRC_TRUNCATED_MSG_FAILED, which carries the
    MQMD and data length.
    """
    q = loc.name if loc else "?"
    if code == MQRC.TRUNCATED_MSG_FAILED and reply is not None:
        return TruncatedMessageError(_TEXTS[code].format(q=q, n=reply.data_length),
                                     result=get_result(reply, browse=True))
    template = _TEXTS.get(code, "coupling facility returned reason {c} for queue '{q}'")
    return MQError(code, template.format(q=q, c=code, n=0))


def check(code: int, loc: QueueLocation | None, ok: tuple[int, ...] = (0,), *,
          reply: GetReply | None = None) -> None:
    """Raise the ``MQError`` of a parsed reply's ``code`` unless it is in ``ok``."""
    if code not in ok:
        raise mq_error(code, loc, reply=reply)


def _dead_transport(exc: RuntimeError) -> bool:
    """uvloop's answer to a write on a connection that Redis closed under it (redis-py does not
    turn it into a ConnectionError): the coupling facility went away mid-call."""
    return "closed" in str(exc)


class cf_access:  # noqa: N801 - used as a ``with`` block, like contextlib's helpers
    """``with cf_access(tag):`` turns Redis connection failures inside the block into
    MQRC_CF_NOT_AVAILABLE: the coupling facility cannot be reached now (retry); its structures
    have not failed. A class, not a generator context manager: every script call enters one."""

    __slots__ = ("tag",)

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError)):
            raise MQError(MQRC.CF_NOT_AVAILABLE, f"the coupling facility cannot be reached "
                                                 f"(structure {self.tag}): {exc}") from exc
        if isinstance(exc, RuntimeError) and _dead_transport(exc):
            raise MQError(MQRC.CF_NOT_AVAILABLE, f"the coupling facility closed the connection "
                                                 f"(structure {self.tag}): {exc}") from exc


def is_cf_failure(exc: BaseException) -> bool:
    """True for a failure to use the coupling facility that no call of app.cf mapped to an
    MQError (any Redis error, or an OS error on its connection): code outside app.cf asks this
    instead of naming Redis's exceptions."""
    return isinstance(exc, REDIS_FAILURES)


@contextmanager
def group_access(what: str) -> Iterator[None]:
    """Like ``cf_access`` for the group's records, leases, broadcasts and tokens, which were
    always retried later on any Redis failure: every Redis error (not only a connection
    failure) becomes MQRC_CF_NOT_AVAILABLE."""
    try:
        yield
    except REDIS_FAILURES as exc:
        raise MQError(MQRC.CF_NOT_AVAILABLE, f"the coupling facility cannot be reached ({what}): {exc}") from exc
    except RuntimeError as exc:
        if not _dead_transport(exc):
            raise
        raise MQError(MQRC.CF_NOT_AVAILABLE, f"the coupling facility closed the connection ({what}): {exc}") from exc
