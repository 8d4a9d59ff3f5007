"""The typed values of the MQI's message verbs: what a wire adapter (REST v1, IBM REST, the
queue manager's own agents) hands the MQI service for an MQPUT or MQGET, and what it gets back.

Adapters decode their wire format into these once; the MQI service never sees JSON, base64 or
HTTP headers.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from app.core.errors import MQError
from app.core.mqmd import DEFAULT_CCSID, DEFAULT_ENCODING, MQMD
from app.core.options import GetOptions, PutOptions
from app.core.reasons import MQRC, CompCode

#: A get names no buffer length: the whole message fits (100 MB, the largest MAXMSGL).
DEFAULT_BUFFER_LENGTH = 100 * 1024 * 1024

#: Most messages one put-batch or get-batch call takes (docs/api.md §12).
MAX_BATCH = 1000

Warning = tuple[int, str]  # (reason, text) of a completion-code-1 outcome, e.g. MQRC 2049


@dataclass(slots=True)
class PutCall:
    """An MQPUT or MQPUT1: the message descriptor, the data and the put-message options.
    ``warnings`` are those found when the MQMD was validated (reported with the outcome).
    ``context`` is MQPMO Context: the object handle (hobj) whose last got message's context a
    PASS_IDENTITY_CONTEXT / PASS_ALL_CONTEXT put passes; None when not given.
    ``arrival_reports``: see below."""

    md: MQMD
    data: bytes
    pmo: PutOptions
    warnings: list[Warning] = field(default_factory=list)
    context: str | None = None
    # False for a queue manager's put of a message to a queue that is not its destination (a
    # dead letter): its MQMD keeps the COA/COD options, but no such report is made there.
    arrival_reports: bool = True


@dataclass(frozen=True, slots=True)
class PutOutcome:
    """A completed put: the MQMD as the queue manager filled it in (MsgId, context, ...)."""

    md: MQMD
    warnings: list[Warning] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class GetCall:
    """An MQGET or browse: the get-message options, how long to wait (``wait_ms``: with WAIT,
    -1 = up to the queue manager's maximum), what to match and the buffer length."""

    gmo: GetOptions
    wait_ms: int = 0
    match_msg_id: str | None = None
    match_correl_id: str | None = None
    buffer_length: int = DEFAULT_BUFFER_LENGTH
    # MQMO_MATCH_GROUP_ID, _MSG_SEQ_NUMBER, _OFFSET, _MSG_TOKEN (None = not matched)
    match_group_id: str | None = None
    match_msg_seq_number: int | None = None
    match_offset: int | None = None
    match_msg_token: str | None = None
    # MQGMO_CONVERT: the MsgDesc's CodedCharSetId and Encoding the data is wanted in
    # (MQCCSI_Q_MGR, 0, means the queue manager's CCSID).
    ccsid: int = DEFAULT_CCSID
    encoding: int = DEFAULT_ENCODING


@dataclass(frozen=True, slots=True)
class GotMessage:
    """A message got or browsed: its MQMD (BackoutCount and the remaining Expiry filled in), its
    data (truncated to the buffer when ``truncated``) and its full length."""

    md: MQMD
    data: bytes
    data_length: int
    truncated: bool = False
    buffer_length: int = DEFAULT_BUFFER_LENGTH
    msg_token: str = ""  # MQGMO MsgToken: 32 hex digits, unique per message on its queue
    # MQGMO_CONVERT could not convert the data (returned unconverted): (reason, text), e.g. 2119
    warning: tuple[int, str] | None = None


class TruncatedMessageFailed(MQError):
    """MQRC_TRUNCATED_MSG_FAILED (2080), a warning: the message is longer than the buffer and
    ACCEPT_TRUNCATED_MSG was not given, so it stays on the queue (a browse cursor stays where
    it was). As IBM's MQGET, the call still returns the MQMD filled in, DataLength the full
    length and as much of the data as fits: ``got`` (its ``data`` that part)."""

    def __init__(self, got: GotMessage, message: str) -> None:
        super().__init__(MQRC.TRUNCATED_MSG_FAILED, message, comp=CompCode.WARNING)
        self.got = got


def group_status(md: MQMD) -> str:
    """MQGMO GroupStatus of a message: IBM's ' ', 'G', 'L' by name."""
    if "LAST_MSG_IN_GROUP" in md.msg_flags:
        return "LAST_MSG_IN_GROUP"
    if "MSG_IN_GROUP" in md.msg_flags:
        return "MSG_IN_GROUP"
    return "NOT_IN_GROUP"


#: For a call that may wait (MQGET with a wait interval): whether its caller has gone away, set
#: by the transport (an HTTP client that gave up closes its connection). A waiting get asks it
#: before it takes a message, so that nothing is removed for a caller no longer there.
caller_gone: contextvars.ContextVar[Callable[[], Awaitable[bool]] | None] = \
    contextvars.ContextVar("caller_gone", default=None)
