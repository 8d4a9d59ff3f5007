"""Message groups and segments as IBM MQ for z/OS handles them (docs/api.md "Message groups").

IBM MQ documentation followed here: "Message groups", "Logical and physical ordering",
MQPMO_LOGICAL_ORDER / MQGMO_LOGICAL_ORDER, MQGMO MatchOptions, GroupStatus, SegmentStatus,
MsgToken, and the z/OS reason codes 2062 MQRC_SECOND_MARK_NOT_ALLOWED, 2365
MQRC_SEGMENTS_NOT_SUPPORTED and 2394 MQRC_Q_INDEX_TYPE_ERROR. On z/OS:

* the queue manager never segments or reassembles (MQMF_SEGMENTATION_ALLOWED is accepted and
  ignored; SegmentStatus is always MQSS_NOT_A_SEGMENT); segments an application makes itself may
  be put on a queue whose INDXTYPE is not GROUPID (2365 on a GROUPID queue), and are got one by
  one as ordinary messages;
* MQGMO_LOGICAL_ORDER, ALL_MSGS_AVAILABLE, COMPLETE_MSG and ALL_SEGMENTS_AVAILABLE need the queue
  to be INDXTYPE(GROUPID), else 2394. On such a queue there are no segments, so COMPLETE_MSG and
  ALL_SEGMENTS_AVAILABLE change nothing.

Pure functions and the per-handle state; no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.core.calls import GetCall
from app.core.errors import MQError
from app.core.mqmd import MQMD, NO_ID
from app.core.options import GetOptions
from app.core.reasons import MQRC

_GROUP_FLAGS = frozenset({"MSG_IN_GROUP", "LAST_MSG_IN_GROUP"})
_SEGMENT_FLAGS = frozenset({"SEGMENT", "LAST_SEGMENT"})


def in_group(md: MQMD) -> bool:
    """The message is in a group (MQMF_MSG_IN_GROUP or MQMF_LAST_MSG_IN_GROUP)."""
    return bool(_GROUP_FLAGS.intersection(md.msg_flags))


def is_segment(md: MQMD) -> bool:
    """The message is a segment of a logical message (flags or a non-zero Offset)."""
    return bool(_SEGMENT_FLAGS.intersection(md.msg_flags)) or md.offset > 0


def group_entry(md: MQMD, indxtype: str, new_id: Callable[[], str]) -> str:
    """The coupling facility's group index entry of a message put ("" for a message in no group
    and no segment: such a put costs nothing more). A group message whose GroupId is MQGI_NONE
    gets a new one (IBM: the queue manager generates it; ``new_id()`` makes 48 hex digits).
    MQRC_SEGMENTS_NOT_SUPPORTED for a segment put on an INDXTYPE(GROUPID) queue (z/OS)."""
    grouped, segment = in_group(md), is_segment(md)
    if not grouped and not segment:
        return ""
    if segment and indxtype == "GROUPID":
        raise MQError(MQRC.SEGMENTS_NOT_SUPPORTED,
                      "message segments cannot be put on a queue with INDXTYPE(GROUPID) (z/OS)")
    if md.group_id == NO_ID:
        md.group_id = new_id()
    flag = "L" if "LAST_MSG_IN_GROUP" in md.msg_flags else "G" if grouped else "S"
    return f"{md.group_id.upper()}:{md.msg_seq_number:010d}:{md.offset:010d}:{flag}"


@dataclass
class PutMsgGroup:
    """A handle's group in progress under MQPMO_LOGICAL_ORDER."""

    group_id: str
    seq: int
    offset: int
    syncpoint: bool
    grouped: bool  # a message group (else the segments of one message in no group)


def logical_put(state: PutMsgGroup | None, md: MQMD, length: int, syncpoint: bool, logical: bool,
                new_id: Callable[[], str]) -> PutMsgGroup | None:
    """Fill GroupId, MsgSeqNumber and Offset of a put as the queue manager does under
    MQPMO_LOGICAL_ORDER and return the handle's new state. Without LOGICAL_ORDER the
    application's values stand, but not while a group is in progress (MQRC_INCOMPLETE_GROUP).
    Raises 2241 (a message in no group while a group is in progress), 2245 (the group's
    messages not all inside, or all outside, one unit of work)."""
    flags = md.msg_flags
    grouped, segment = in_group(md), bool(_SEGMENT_FLAGS.intersection(flags))
    if not logical:
        if state is not None:
            raise MQError(MQRC.INCOMPLETE_GROUP, "a group put with LOGICAL_ORDER is in progress on this handle")
        return None
    if state is None:
        if not grouped and not segment:
            md.group_id, md.msg_seq_number, md.offset = NO_ID, 1, 0
            return None
        state = PutMsgGroup(new_id(), 1, 0, syncpoint, grouped)
    else:
        if state.grouped and not grouped:
            raise MQError(MQRC.INCOMPLETE_GROUP, "the message group in progress is not complete: "
                                                 "the next message must be in the group")
        if state.syncpoint != syncpoint:
            raise MQError(MQRC.INCONSISTENT_UOW, "every message of a group is put inside one unit of work, "
                                                 "or every one outside")
    md.group_id, md.msg_seq_number, md.offset = state.group_id, state.seq, state.offset
    if segment and "LAST_SEGMENT" not in flags:
        state.offset += length
        return state
    state.seq, state.offset = state.seq + 1, 0
    if "LAST_MSG_IN_GROUP" in flags or not grouped:
        return None
    return state


@dataclass
class GetMsgGroup:
    """A handle's group in progress under MQGMO_LOGICAL_ORDER (gets or browse)."""

    group_id: str
    seq: int
    syncpoint: str = "NO"
    first_cursor: str = ""  # browse: the cursor of the group's first message


def select_args(call: GetCall, logical: str, mark: bool) -> str:
    """The coupling facility's group and token selection (lua/_get.lua ``select``)."""
    gmo: GetOptions = call.gmo
    under_cursor = gmo.mode in ("MSG_UNDER_CURSOR", "BROWSE_UNDER_CURSOR")
    return "|".join((
        "" if call.match_group_id is None or under_cursor else call.match_group_id.upper(),
        "" if call.match_msg_seq_number is None or under_cursor else str(call.match_msg_seq_number),
        "" if call.match_offset is None or under_cursor else str(call.match_offset),
        "" if call.match_msg_token is None or under_cursor else call.match_msg_token,
        logical, "1" if gmo.all_msgs_available else "", "1" if mark else ""))


def next_state(md: MQMD) -> GetMsgGroup | None:
    """A handle's group in progress after it got or browsed ``md`` in logical order."""
    if "MSG_IN_GROUP" in md.msg_flags and "LAST_MSG_IN_GROUP" not in md.msg_flags:
        return GetMsgGroup(md.group_id.upper(), md.msg_seq_number)
    return None
