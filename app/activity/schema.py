"""The activity record: one documented, versioned schema (the counterpart of SMF 116 accounting
and SMF 115 statistics records on z/OS).

Every queue manager writes one JSON object per line for each MQI call it served (successful or
not) and for each notable happening (an event issued, a trigger message, an expiry discard, a
peer recovery, ...). A field that does not apply to a record is left out (read back as null).

This module is the one source of truth: ``FIELDS`` documents every field, the Spark job builds
its read schema from it (``spark_jobs.schema``) and docs/howto/analytics.md's table is the same list.

Adding a kind of record: add a member to ``Verb`` (and, when it needs a field no record has
yet, a ``Field`` here with a new ``SCHEMA_VERSION``); emit it with ``ActivityLog.emit``. The
nightly job counts records by verb, so figures computed from the new kind fill in by themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

#: Version of the record layout; every record carries it in ``v``. Readers accept every version
#: up to theirs (fields are only ever added).
SCHEMA_VERSION = 1


class Verb(StrEnum):
    """What a record stands for: an MQI call, or something the queue manager did by itself."""

    # MQI calls (one record per call, whatever its outcome)
    CONN = "CONN"            # MQCONN
    DISC = "DISC"            # MQDISC (also an idle connection ended, or shutdown)
    OPEN = "OPEN"            # MQOPEN
    CLOSE = "CLOSE"          # MQCLOSE
    PUT = "PUT"              # MQPUT
    PUT1 = "PUT1"            # MQPUT1
    GET = "GET"              # MQGET, destructive
    BROWSE = "BROWSE"        # MQGET with BROWSE_FIRST / BROWSE_NEXT
    CMIT = "CMIT"            # MQCMIT
    BACK = "BACK"            # MQBACK
    INQ = "INQ"              # MQINQ
    SET = "SET"              # MQSET
    # Happenings (``rc`` / ``count`` / ``detail`` say what happened)
    EVENT = "EVENT"                  # an instrumentation event issued; ``rc`` is its reason (2224, ...)
    TRIGGER = "TRIGGER"              # a trigger message put; ``object`` is the application queue
    EXPIRY = "EXPIRY"                # expired messages discarded; ``count`` of them
    PEER_RECOVERY = "PEER_RECOVERY"  # this QM recovered ``object`` (a failed QM); ``count`` units of work
    IGQ = "IGQ"                      # a message moved by intra-group queuing
    REPORT = "REPORT"                # a report message put (COA, COD, expiration); ``object`` its ReplyToQ
    LOST = "LOST"                    # ``count`` records were dropped (activity_overflow=drop)


#: Verbs that are MQI calls (an application asked for them).
MQI_VERBS = frozenset({Verb.CONN, Verb.DISC, Verb.OPEN, Verb.CLOSE, Verb.PUT, Verb.PUT1, Verb.GET,
                       Verb.BROWSE, Verb.CMIT, Verb.BACK, Verb.INQ, Verb.SET})


@dataclass(frozen=True)
class Field:
    """One field of the record: its JSON name, its type (``string``, ``int``, ``long``,
    ``bool``) and what it means."""

    name: str
    type: str
    doc: str


FIELDS: tuple[Field, ...] = (
    Field("v", "int", "schema version of the record (SCHEMA_VERSION)"),
    Field("ts", "long", "when the call ended (or the happening happened): ms since the epoch, UTC, "
                        "from the group's clock"),
    Field("qsg", "string", "queue-sharing group"),
    Field("qmgr", "string", "queue manager that served the call"),
    Field("hconn", "string", "connection handle"),
    Field("appl", "string", "application name of the connection (MQCONN appl_name)"),
    Field("verb", "string", "what the record stands for (Verb)"),
    Field("object", "string", "the local queue the call resolved to (through an alias: its base "
                              "queue); for OPEN that failed, the name asked for; a QM for PEER_RECOVERY"),
    Field("qsgdisp", "string", "QSGDISP of that local queue: QMGR, COPY or SHARED"),
    Field("alias", "string", "the alias queue the application named, when it went through one"),
    Field("msg_id", "string", "MsgId (48 hex digits) of the message put or got"),
    Field("correl_id", "string", "CorrelId (48 hex digits)"),
    Field("priority", "int", "message priority"),
    Field("persistent", "bool", "message persistence"),
    Field("size", "long", "message data length in bytes"),
    Field("syncpoint", "bool", "the put or get was inside the unit of work"),
    Field("cc", "int", "completion code: 0 ok, 1 warning, 2 failed"),
    Field("rc", "int", "reason code (MQRC); for EVENT the event's reason"),
    Field("depth", "long", "queue depth (CURDEPTH) after the put or get"),
    Field("put_ts", "long", "on GET/BROWSE: when the message was put (ms since the epoch), so "
                            "residency = ts - put_ts"),
    Field("backout_count", "int", "on GET/BROWSE: the message's BackoutCount"),
    Field("bothresh", "int", "on GET/BROWSE: the queue's BOTHRESH (0 = none), for poison messages"),
    Field("latency_us", "long", "time the queue manager spent on the call, microseconds"),
    Field("count", "long", "how many things the record stands for (EXPIRY, PEER_RECOVERY, LOST); "
                           "absent means 1"),
    Field("detail", "string", "free text or JSON with more about a happening"),
)

FIELD_NAMES = tuple(f.name for f in FIELDS)


def markdown_table() -> str:
    """The schema as a Markdown table (docs/howto/analytics.md's copy is checked against it by a test)."""
    rows = ["| field | type | meaning |", "|---|---|---|"]
    rows += [f"| `{f.name}` | {f.type} | {f.doc} |" for f in FIELDS]
    return "\n".join(rows)
