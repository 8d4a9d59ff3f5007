"""Trigger conditions of docs/ibm-rules.md §3, as plain functions over a snapshot of what the
queue manager knows (definitions, open counts). The coupling facility supplies the counts of
messages that count (priority >= TRIGMPRI) atomically; these rules decide what they mean."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# MQAT_* application types of the MQTM (cmqc.h), by the APPLTYPE keywords of DEFINE PROCESS.
APPL_TYPES = {"CICS": 1, "MVS": 2, "IMS": 3, "OS2": 4, "DOS": 5, "UNIX": 6, "OS400": 8, "WINDOWS": 9,
              "WINDOWSNT": 11, "VMS": 12, "NSK": 13, "NOTESAGENT": 22, "WLM": 31, "DEF": 2}
MQAT_UNKNOWN = -1


@dataclass(frozen=True)
class TriggerSnapshot:
    """What one queue manager sees of an application queue when it evaluates a trigger."""

    queue: str
    attrs: dict[str, Any]  # the application queue's definition (TRIGGER, TRIGTYPE, INITQ, ...)
    shared: bool
    my_input: int  # this QM's OpenInputCount of the application queue
    others_input: int  # other QMs' OpenInputCount (shared queues)
    exclusive_anywhere: bool  # some QM has it open MQOO_INPUT_EXCLUSIVE (shared queues)
    process: dict[str, Any] | None  # the named process definition, None if blank or undefined
    initq: dict[str, Any] | None  # the initiation queue's definition on this QM, None if undefined
    initq_open_for_input: bool  # a trigger monitor of this QM has the initiation queue open


def type_in_effect(s: TriggerSnapshot) -> tuple[str, int]:
    """(TriggerType, TriggerMsgPriority) that apply on this QM. Condition 4 note a: while another
    QM has a shared queue open for input, the others evaluate as FIRST with priority 0."""
    if s.shared and s.others_input > 0 and s.my_input == 0:
        return "FIRST", 0
    return str(s.attrs.get("TRIGTYPE", "FIRST")), int(s.attrs.get("TRIGMPRI", 0))


def failed_condition(s: TriggerSnapshot, trigtype: str, skip: frozenset[int] = frozenset()) -> int | None:
    """The number of the first of conditions 4-10 that does not hold (None when all do);
    ``skip`` names the conditions a re-trigger case excludes."""
    a = s.attrs
    if 4 not in skip and trigtype in ("FIRST", "DEPTH") and s.my_input > 0:
        return 4
    if 4 not in skip and s.shared and s.exclusive_anywhere:
        return 4  # note b: exclusive input anywhere in the group stops every QM's triggering
    if 5 not in skip and a.get("GET") == "DISABLED":
        return 5
    if 6 not in skip and s.process is None and not (not str(a.get("PROCESS", "")).strip()
                                                    and a.get("USAGE") == "XMITQ"):
        return 6
    i = s.initq
    if 7 not in skip and (i is None or i.get("GET") == "DISABLED" or i.get("PUT") == "DISABLED"
                          or i.get("USAGE") != "NORMAL"):
        return 7
    if 8 not in skip and not s.initq_open_for_input:
        return 8
    if 9 not in skip and not a.get("TRIGGER"):
        return 9
    if 10 not in skip and trigtype == "NONE":
        return 10
    return None


def trigint_elapsed(last_ms: int | None, now_ms: int, trigint_ms: int) -> bool:
    """Condition 11's interval: TRIGINT has passed since the last trigger message written for
    the queue - or none was written yet (a first trigger that was suppressed, for instance
    because the initiation queue was get-inhibited or the process not yet defined, must not
    stop every later trigger)."""
    return last_ms is None or now_ms - last_ms >= trigint_ms


def trigger_messages_for(trigtype: str, before: int, after: int, trigdpth: int, *,
                         trigint_elapsed: bool) -> int:
    """How many trigger messages a change of the count of messages that count from ``before``
    to ``after`` makes (conditions 3 and 11).

    * FIRST: when the count was zero (3); when the queue was not empty, only once TRIGINT has
      passed since the last trigger message or when none was written yet (11,
      ``trigint_elapsed``, see ``trigint_elapsed()``).
    * EVERY: one per message (3).
    * DEPTH: when the count reaches TRIGDPTH (3), and - condition 11 for DEPTH - when a message
      arrives while the queue already had TRIGDPTH or more messages (the interval applies to
      FIRST only: docs/ibm-rules.md §3.5). The queue manager sets TRIGGER off after a DEPTH trigger, so
      this fires only after TRIGGER was set on again with the depth already reached."""
    if after <= before:
        return 0
    if trigtype == "FIRST":
        return 1 if before == 0 or trigint_elapsed else 0
    if trigtype == "EVERY":
        return after - before
    if trigtype == "DEPTH":
        return 1 if before < trigdpth <= after or before >= trigdpth else 0
    return 0


def enough_waiting(trigtype: str, count: int, trigdpth: int) -> bool:
    """Re-trigger conditions 12 and 13: at least one message (FIRST, EVERY) or TRIGDPTH (DEPTH)."""
    return count >= (trigdpth if trigtype == "DEPTH" else 1) and trigtype != "NONE"


def mqtm(queue: str, attrs: dict[str, Any], process_name: str, process: dict[str, Any] | None) -> dict[str, Any]:
    """The MQTM trigger message (the JSON form of docs/api.md §9); a transmission queue with no process gets
    blanks and MQAT_UNKNOWN (condition 6)."""
    p = process or {}
    appl_type = str(p.get("APPLTYPE", "")) if process else ""
    return {
        "StrucId": "TM  ", "Version": 1, "QName": queue, "ProcessName": process_name if process else "",
        "TriggerData": str(attrs.get("TRIGDATA", "")),
        "ApplType": (APPL_TYPES.get(appl_type, int(appl_type) if appl_type.isdigit() else MQAT_UNKNOWN)
                     if process else MQAT_UNKNOWN),
        "ApplId": str(p.get("APPLICID", "")), "EnvData": str(p.get("ENVRDATA", "")),
        "UserData": str(p.get("USERDATA", "")),
    }
