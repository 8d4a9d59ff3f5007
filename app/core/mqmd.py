"""The message descriptor (MQMD): the typed value, its validation on put, unique MsgIds across
the QSG.

On the wire and in the coupling facility an MQMD is a JSON object with IBM's field names in
snake_case (docs/api.md); inside the queue manager it is an ``MQMD``.
"""

from __future__ import annotations

import base64
import functools
import itertools
import math
import operator
import re
import struct
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from app.core.errors import MQError
from app.core.reasons import MQRC
from app.core.reports import REPORT_OPTIONS, asks_for_reports, normalise_report  # noqa: F401 (REPORT_OPTIONS: re-exported)

NO_ID = "0" * 48
NO_ACCOUNTING_TOKEN = "0" * 64  # MQACT_NONE: 32 bytes of zeros
PERSISTENCE = ("PERSISTENT", "NOT_PERSISTENT", "AS_Q_DEF")
MSG_TYPES = ("DATAGRAM", "REQUEST", "REPLY", "REPORT")
# Fields an application sets.
INPUT_FIELDS = frozenset({
    "msg_id", "correl_id", "priority", "persistence", "expiry", "reply_to_q", "reply_to_qmgr",
    "report", "msg_type", "feedback", "format", "properties", "encoding", "coded_char_set_id",
    "group_id", "msg_seq_number", "offset", "msg_flags", "original_length",
})
# The context fields: identity (UserIdentifier, AccountingToken, ApplIdentityData) and origin
# (PutApplType, PutApplName, PutDate/PutTime, ApplOriginData). The queue manager sets them at
# MQPUT unless the put-message options let the application set or pass them.
IDENTITY_FIELDS = ("user_identifier", "accounting_token", "appl_identity_data")
ORIGIN_FIELDS = ("put_appl_type", "put_appl_name", "put_date_time", "appl_origin_data")
CONTEXT_FIELDS = frozenset(IDENTITY_FIELDS + ORIGIN_FIELDS)
# Fields only the queue manager sets: accepted on input (an MQMD returned by one call may be
# handed to the next) and ignored.
OUTPUT_FIELDS = frozenset({"backout_count", "put_qmgr"})
MSG_FLAGS = ("SEGMENTATION_ALLOWED", "MSG_IN_GROUP", "LAST_MSG_IN_GROUP", "SEGMENT", "LAST_SEGMENT")
#: MQENC_NATIVE of the platforms clients run on (x86, little-endian), what an MQMD that names
#: no encoding gets.
DEFAULT_ENCODING = 546
#: Text in this API's bodies is UTF-8: an MQMD that names no CodedCharSetId gets 1208 (an
#: explicit MQCCSI_Q_MGR, 0, gets the queue manager's CCSID at MQPUT, as IBM MQ does).
DEFAULT_CCSID = 1208
CCSID_Q_MGR = 0
#: PutApplType the queue manager gives: MQAT_QMGR for its own messages (events, reports,
#: trigger messages), MQAT_UNIX for applications (they reach it over the network from Linux).
APPL_TYPE_QMGR = 7
APPL_TYPE_CLIENT = 6
MAX_PRIORITY = 9
#: An MQLONG: every integer field of the MQMD (and of MQPMO/MQGMO/MQOD/MQSD) is one, so no value
#: outside this range can reach a queue manager through the MQI.
MQLONG_MIN, MQLONG_MAX = -2_147_483_648, 2_147_483_647
#: MQFB_NONE, then MQFB_SYSTEM_FIRST..MQFB_SYSTEM_LAST (1-65535) and MQFB_APPL_FIRST..MQFB_APPL_LAST
#: (65536-999999999): IBM's MQRC_FEEDBACK_ERROR for anything else, whatever the MsgType.
FEEDBACK_MAX = 999_999_999
# Message properties (MQSETMP / JMS user properties, the IBM REST API's ibm-mq-usr-*): a flat
# object of name -> string, number, boolean or null, as the usr folder of an MQRFH2 holds; a byte
# string (MQTYPE_BYTE_STRING) is {"$bytes": base64}.
_PROPERTY_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.]{0,254}")
MAX_PROPERTIES = 100


@dataclass(slots=True)
class MQMD:
    """A message descriptor. Input fields are the application's; the context and output fields
    (backout_count and after) are set by the queue manager at MQPUT or MQGET."""

    msg_id: str = NO_ID  # 48 lower-case hex digits; all zeros = none
    correl_id: str = NO_ID
    priority: int = -1  # -1 = the queue's DEFPRTY
    persistence: str = "AS_Q_DEF"  # PERSISTENT, NOT_PERSISTENT, AS_Q_DEF
    expiry: int = -1  # tenths of a second, -1 unlimited; on get what remains
    reply_to_q: str = ""
    reply_to_qmgr: str = ""
    report: list[str] = field(default_factory=list)  # MQRO_ names without the prefix
    msg_type: str = "DATAGRAM"
    feedback: int = 0
    format: str = "MQSTR"
    properties: dict[str, Any] | None = None  # message properties (the usr folder), None = none
    encoding: int = DEFAULT_ENCODING
    coded_char_set_id: int = DEFAULT_CCSID
    group_id: str = NO_ID  # 48 hex digits; all zeros = not in a group
    msg_seq_number: int = 1
    offset: int = 0
    msg_flags: list[str] = field(default_factory=list)  # MQMF_ names without the prefix
    original_length: int = -1
    backout_count: int = 0
    put_appl_type: int = 0
    put_appl_name: str = ""
    put_date_time: str = ""
    appl_origin_data: str = ""
    put_qmgr: str = ""
    user_identifier: str = ""
    accounting_token: str = NO_ACCOUNTING_TOKEN  # 64 hex digits (32 bytes)
    appl_identity_data: str = ""

    def to_dict(self, *, compact: bool = False) -> dict[str, Any]:
        """The JSON shape: the wire's (every field) or, ``compact``, the coupling facility's,
        which leaves out the fields most messages leave at their defaults (group, segment,
        encoding and the rarer context fields): every stored byte costs on every MQPUT/MQGET.
        ``properties`` only when there are some."""
        out = {"msg_id": self.msg_id, "correl_id": self.correl_id, "priority": self.priority,
               "persistence": self.persistence, "expiry": self.expiry, "reply_to_q": self.reply_to_q,
               "reply_to_qmgr": self.reply_to_qmgr, "report": list(self.report), "msg_type": self.msg_type,
               "feedback": self.feedback, "format": self.format, "backout_count": self.backout_count,
               "put_appl_name": self.put_appl_name, "put_date_time": self.put_date_time,
               "put_qmgr": self.put_qmgr, "user_identifier": self.user_identifier}
        for name, default in _RARE_DEFAULTS.items():
            value = getattr(self, name)
            if not compact or value != default:
                out[name] = list(value) if name == "msg_flags" else value
        if self.properties:
            out["properties"] = dict(self.properties)
        return out

    @classmethod
    def from_dict(cls, stored: Any) -> MQMD:
        """An MQMD as the queue manager stored it (``to_dict``'s shape; fields it lacks default).

        Never fails: it runs after a destructive MQGET took the message, so a value no MQMD can
        hold (stored by an older version that did not bound its fields: an expiry of 2**64, a
        priority that is no MQLONG, a field of the wrong type) is repaired, not refused, and the
        message is still delivered with an answer that can be encoded."""
        if not isinstance(stored, dict):
            return cls()
        fields: dict[str, Any] = {}
        well_formed = True
        for name, value in stored.items():  # one pass: take the MQMD's fields, check their types
            kind = _KINDS.get(name)
            if kind is None:
                continue  # not an MQMD field
            fields[name] = value
            if type(value) is not kind:
                well_formed = well_formed and value is None and kind is dict  # properties: None
            elif type(value) is int and not MQLONG_MIN <= value <= MQLONG_MAX:
                well_formed = False
        md = cls(**fields)
        if not well_formed:
            _repair(md)
        return md

    @property
    def persistent(self) -> bool:
        return self.persistence == "PERSISTENT"

    def copy(self, msg_id: str) -> MQMD:
        """A copy of this MQMD (its lists and properties copied too) with ``msg_id``."""
        md = MQMD(msg_id, *_BUT_MSG_ID(self))
        md.report, md.msg_flags = list(md.report), list(md.msg_flags)
        if md.properties is not None:
            md.properties = dict(md.properties)
        return md


_FIELD_NAMES = tuple(MQMD.__dataclass_fields__)
#: Every field of an MQMD but its MsgId, read in one C call (messages of a batch usually differ
#: only in their generated MsgIds: their encodings are made once, ``fields_but_msg_id``).
_BUT_MSG_ID = operator.attrgetter(*(name for name in _FIELD_NAMES if name != "msg_id"))


def fields_but_msg_id(md: MQMD) -> tuple[Any, ...]:
    """The values of every field of ``md`` but ``msg_id``: two MQMDs with equal tuples differ at
    most in their MsgIds (the test a batch makes before it reuses one message's encoding for
    the next). The lists in it are ``md``'s own: compare it while ``md`` is not changed."""
    return _BUT_MSG_ID(md)


_DEFAULTS = MQMD()
_INT_FIELDS = tuple(n for n in _FIELD_NAMES if isinstance(getattr(_DEFAULTS, n), int))
_STR_FIELDS = tuple(n for n in _FIELD_NAMES if isinstance(getattr(_DEFAULTS, n), str))
_LIST_FIELDS = ("report", "msg_flags")
_KINDS: dict[str, type] = {**{n: int for n in _INT_FIELDS}, **{n: str for n in _STR_FIELDS},
                           **{n: list for n in _LIST_FIELDS}, "properties": dict}


def _repair(md: MQMD) -> None:
    """Make a stored MQMD one that can be answered: an integer out of the MQLONG range is held
    at its nearest bound (an expiry beyond 2**31 tenths is still "a very long time"), a field
    of the wrong type takes its default."""
    for name in _INT_FIELDS:
        value = getattr(md, name)
        if type(value) is float and math.isfinite(value):  # JSON's integers past 64 bits decode as floats
            value = int(value)
        if type(value) is not int:
            setattr(md, name, getattr(_DEFAULTS, name))
        elif not MQLONG_MIN <= value <= MQLONG_MAX:
            setattr(md, name, min(max(value, MQLONG_MIN), MQLONG_MAX))
    for name in _STR_FIELDS:
        if type(getattr(md, name)) is not str:
            setattr(md, name, getattr(_DEFAULTS, name))
    for name in _LIST_FIELDS:
        value = getattr(md, name)
        setattr(md, name, [v for v in value if type(v) is str] if type(value) is list else [])
    if md.properties is not None and type(md.properties) is not dict:
        md.properties = None


# The fields a compact MQMD leaves out when they hold these values.
_RARE_DEFAULTS: dict[str, Any] = {
    "encoding": DEFAULT_ENCODING, "coded_char_set_id": DEFAULT_CCSID, "group_id": NO_ID, "msg_seq_number": 1,
    "offset": 0, "msg_flags": [], "original_length": -1, "put_appl_type": 0, "appl_origin_data": "",
    "accounting_token": NO_ACCOUNTING_TOKEN, "appl_identity_data": "",
}

# Formats whose bodies are text: MQSTR, and the queue manager's own messages, whose bodies this
# emulator writes as JSON (events MQEVENT, trigger messages MQTRIG, dead letters MQDEAD).
TEXT_FORMATS = frozenset({"MQSTR", "MQEVENT", "MQTRIG", "MQDEAD"})


#: Code pages whose first 128 code points are ASCII (ISO 8859-1 819, ASCII 367, the PC pages):
#: data of one of them that is pure ASCII is the same bytes in UTF-8.
_ASCII_COMPATIBLE = frozenset({819, 367, 437, 850, 1252})


def as_text(data: bytes, fmt: str, ccsid: int = DEFAULT_CCSID) -> str | None:
    """A message's data as text, when its format is a text format and the bytes are that text
    in UTF-8: a UTF-8 (1208) message that is valid UTF-8, or a pure-ASCII message of an
    ASCII-based code page. Anything else (EBCDIC, Latin-1 beyond ASCII) is not UTF-8 text, and
    returning it as such would change its bytes: the wire gives it as base64 instead."""
    if fmt.strip() not in TEXT_FORMATS:
        return None
    if ccsid != DEFAULT_CCSID:
        if ccsid in _ASCII_COMPATIBLE and data.isascii():
            return data.decode("ascii")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _is_int(value: Any) -> bool:
    # bool is an int subclass in Python; MQ fields must not accept true/false (docs/design.md §5)
    return isinstance(value, int) and not isinstance(value, bool)


def hex_id(value: Any, field: str) -> str:
    """A MsgId/CorrelId as 48 lower-case hex digits; MQRC_MD_ERROR naming ``field`` otherwise."""
    if value == NO_ID:
        return NO_ID  # the usual CorrelId (and MsgId left to the queue manager): nothing to check
    if not isinstance(value, str) or len(value) != 48:
        raise MQError(MQRC.MD_ERROR, f"{field} must be 48 hexadecimal digits (24 bytes)")
    try:
        bytes.fromhex(value)
    except ValueError:
        raise MQError(MQRC.MD_ERROR, f"{field} must be 48 hexadecimal digits (24 bytes)") from None
    return value.lower()


#: C0 control characters and DEL: no MQCHAR field of an MQMD holds them here. IBM does not
#: check these fields' characters, but this API gives them back in JSON and in the IBM REST API's
#: response headers (ibm-mq-md-replyTo), where a line break would end the header.
_CONTROL = re.compile(r"[\x01-\x1f\x7f]")


def _name(value: Any, field: str, max_len: int) -> str:
    """An MQCHAR field of the MQMD: IBM's rule that a NUL ends the value (the NUL and what
    follows are blanks), then at most ``max_len`` characters and no control characters
    (MQRC_MD_ERROR)."""
    if type(value) is str and len(value) <= max_len and (not value or value.isalnum()):
        return value  # the common case (MQSTR, blank): nothing to cut, strip or refuse
    if not isinstance(value, str):
        raise MQError(MQRC.MD_ERROR, f"md.{field} must be a string of at most {max_len} characters")
    text = value.partition("\x00")[0]
    if len(text) > max_len:
        raise MQError(MQRC.MD_ERROR, f"md.{field} must be a string of at most {max_len} characters")
    if _CONTROL.search(text):
        raise MQError(MQRC.MD_ERROR, f"md.{field} must not hold control characters")
    return text.strip()


#: The characters of an MQ object or queue manager name (blank: none).
_MQ_NAME_CHARS = re.compile(r"[A-Za-z0-9./_%]*")


def _reply_to_name(value: Any, field: str) -> str:
    """ReplyToQ / ReplyToQMgr: blank or a name of IBM's characters (A-Z a-z 0-9 . / _ %), at
    most 48. IBM does not check these names at MQPUT, but here they are addresses: a report is
    routed to the ReplyToQMgr through the coupling facility's message metadata, and the IBM
    REST API gives them back in a header; a name no queue or queue manager can have is refused
    (MQRC_MD_ERROR) rather than stored."""
    name = _name(value, field, 48)
    if name and not _MQ_NAME_CHARS.fullmatch(name):
        raise MQError(MQRC.MD_ERROR, f"md.{field} must be blank or an MQ name (A-Z a-z 0-9 . / _ %)")
    return name


def validate_put_md(md: Any, *, settable: frozenset[str] = frozenset()) -> tuple[MQMD, list[tuple[int, str]]]:
    """Check the application's MQMD (its JSON object) for MQPUT/MQPUT1.

    Returns the MQMD with its input fields normalised and the warnings to report (IBM's 2049
    when the priority exceeds the maximum: the message is queued at priority 9, but its MQMD
    keeps the priority the application gave). Of the context fields only those in ``settable``
    (what MQPMO_SET_IDENTITY_CONTEXT / SET_ALL_CONTEXT allow) are checked and taken; the others,
    and the output fields, are ignored, as IBM MQ ignores them: the queue manager sets them.
    """
    if md is None or md == {}:
        return MQMD(), []  # the common case: every field defaulted
    if not isinstance(md, dict):
        raise MQError(MQRC.MD_ERROR, "md must be an object")
    unknown = md.keys() - INPUT_FIELDS - CONTEXT_FIELDS - OUTPUT_FIELDS
    if unknown:
        raise MQError(MQRC.MD_ERROR, f"unknown md field(s): {', '.join(sorted(unknown))}")
    out: dict[str, Any] = {}
    warnings: list[tuple[int, str]] = []
    out["msg_id"] = hex_id(md.get("msg_id", NO_ID), "md.msg_id")
    out["correl_id"] = hex_id(md.get("correl_id", NO_ID), "md.correl_id")

    priority = md.get("priority", -1)
    if not _is_int(priority) or not -1 <= priority <= MQLONG_MAX:
        # IBM accepts a priority above 9 (the warning below), but a Priority is an MQLONG
        raise MQError(MQRC.PRIORITY_ERROR, "md.priority must be -1 (queue default) or 0-9")
    if priority > MAX_PRIORITY:
        warnings.append((MQRC.PRIORITY_EXCEEDS_MAXIMUM, f"priority {priority} exceeds 9; the message is queued at 9"))
    out["priority"] = priority

    persistence = md.get("persistence", "AS_Q_DEF")
    if persistence not in PERSISTENCE:
        raise MQError(MQRC.PERSISTENCE_ERROR, f"md.persistence must be one of {', '.join(PERSISTENCE)}")
    out["persistence"] = persistence

    expiry = md.get("expiry", -1)
    if not _is_int(expiry) or (expiry != -1 and not 0 < expiry <= MQLONG_MAX):
        raise MQError(MQRC.EXPIRY_ERROR, "md.expiry must be -1 (unlimited) or a positive number of tenths of a second"
                                         f" up to {MQLONG_MAX}")
    out["expiry"] = expiry

    msg_type = md.get("msg_type", "DATAGRAM")
    if msg_type not in MSG_TYPES:
        raise MQError(MQRC.MSG_TYPE_ERROR, f"md.msg_type must be one of {', '.join(MSG_TYPES)}")
    out["msg_type"] = msg_type

    report = md.get("report", [])
    out["report"] = normalise_report(report) if report != [] else []  # app/core/reports.py: IBM's rules

    feedback = md.get("feedback", 0)
    # IBM's check of Feedback is MQRC_FEEDBACK_ERROR (2014) for any value it does not take, as
    # 2013 for Expiry and 2050 for Priority: a value that is no integer is one of those.
    if not _is_int(feedback) or not 0 <= feedback <= FEEDBACK_MAX:
        raise MQError(MQRC.FEEDBACK_ERROR, "md.feedback must be 0 (MQFB_NONE), 1-65535 (system) or "
                                           f"65536-{FEEDBACK_MAX} (application)")
    out["feedback"] = feedback

    out["format"] = _name(md.get("format", "MQSTR"), "format", 8)
    out["reply_to_q"] = _reply_to_name(md.get("reply_to_q", ""), "reply_to_q")
    out["reply_to_qmgr"] = _reply_to_name(md.get("reply_to_qmgr", ""), "reply_to_qmgr")
    if msg_type == "REQUEST" and not out["reply_to_q"]:
        raise MQError(MQRC.MISSING_REPLY_TO_Q, "a REQUEST message needs md.reply_to_q")
    if out["report"] and not out["reply_to_q"] and asks_for_reports(out["report"]):
        # IBM, MQRC_MISSING_REPLY_TO_Q (2027): a blank ReplyToQ while a report is requested
        raise MQError(MQRC.MISSING_REPLY_TO_Q, "a message that asks for reports needs md.reply_to_q")
    if "properties" in md:
        properties = _properties(md["properties"])
        if properties:  # kept out of the MQMD when empty, so MQMDs stay the shape they always were
            out["properties"] = properties
    if not md.keys() <= _COMMON_FIELDS:  # the rarer fields: checked only when given
        _rare_fields(md, out, settable)
    return MQMD(**out), warnings


_COMMON_FIELDS = frozenset({
    "msg_id", "correl_id", "priority", "persistence", "expiry", "reply_to_q", "reply_to_qmgr",
    "report", "msg_type", "feedback", "format", "properties"}) | OUTPUT_FIELDS


def _int_field(md: dict[str, Any], name: str, low: int, reason: int, default: int) -> int:
    value = md.get(name, default)
    if not _is_int(value) or value < low or value > MQLONG_MAX:
        raise MQError(reason, f"md.{name} must be an integer from {low} to 2147483647")
    return int(value)


def _rare_fields(md: dict[str, Any], out: dict[str, Any], settable: frozenset[str]) -> None:
    """Check the encoding, character set, group and segment fields, and the context fields the
    application may set, of an application's MQMD into ``out``."""
    out["encoding"] = _int_field(md, "encoding", 0, MQRC.MD_ERROR, DEFAULT_ENCODING)
    ccsid = md.get("coded_char_set_id", DEFAULT_CCSID)
    # 0 MQCCSI_Q_MGR, -1 EMBEDDED, -2 INHERIT, -3 APPL, -4 AS_PUBLISHED, or a CCSID
    if not _is_int(ccsid) or not -4 <= ccsid <= 65535:
        raise MQError(MQRC.MD_ERROR, "md.coded_char_set_id must be a CCSID (1-65535) or 0 (MQCCSI_Q_MGR)")
    out["coded_char_set_id"] = ccsid
    if "group_id" in md:
        out["group_id"] = hex_id(md["group_id"], "md.group_id")
    out["msg_seq_number"] = _int_field(md, "msg_seq_number", 1, MQRC.MSG_SEQ_NUMBER_ERROR, 1)
    out["offset"] = _int_field(md, "offset", 0, MQRC.OFFSET_ERROR, 0)
    original_length = md.get("original_length", -1)
    if not _is_int(original_length) or not -1 <= original_length <= MQLONG_MAX:
        raise MQError(MQRC.ORIGINAL_LENGTH_ERROR,
                      f"md.original_length must be -1 (MQOL_UNDEFINED) or 0-{MQLONG_MAX}")
    out["original_length"] = original_length
    flags = md.get("msg_flags", [])
    if not isinstance(flags, list) or any(f not in MSG_FLAGS and f != "NONE" for f in flags):
        raise MQError(MQRC.MSG_FLAGS_ERROR, f"md.msg_flags must be a list of {', '.join(MSG_FLAGS)}")
    out["msg_flags"] = [f for f in MSG_FLAGS if f in flags]  # IBM's order, no duplicates
    # context fields, in the MQMD's lengths
    md = {name: value for name, value in md.items() if name in settable}
    if "user_identifier" in md:
        out["user_identifier"] = _name(md["user_identifier"], "user_identifier", 12)
    if "accounting_token" in md:
        token = md["accounting_token"]
        if not isinstance(token, str) or len(token) != 64:
            raise MQError(MQRC.MD_ERROR, "md.accounting_token must be 64 hexadecimal digits (32 bytes)")
        try:
            bytes.fromhex(token)
        except ValueError:
            raise MQError(MQRC.MD_ERROR, "md.accounting_token must be 64 hexadecimal digits (32 bytes)") from None
        out["accounting_token"] = token.lower()
    if "appl_identity_data" in md:
        out["appl_identity_data"] = _name(md["appl_identity_data"], "appl_identity_data", 32)
    if "put_appl_type" in md:
        out["put_appl_type"] = _int_field(md, "put_appl_type", -1, MQRC.MD_ERROR, 0)
    if "put_appl_name" in md:
        out["put_appl_name"] = _name(md["put_appl_name"], "put_appl_name", 28)
    if "put_date_time" in md:
        out["put_date_time"] = _name(md["put_date_time"], "put_date_time", 24)
    if "appl_origin_data" in md:
        out["appl_origin_data"] = _name(md["appl_origin_data"], "appl_origin_data", 4)


def properties_length(properties: dict[str, Any] | None) -> int:
    """The bytes the message properties add to a message's length: each name and value as text
    in UTF-8 (as an MQRFH2 usr folder carries them; a byte string its bytes). IBM MQ for z/OS
    counts message properties in the message length checked against MAXMSGL of the queue and
    of the queue manager (MQRC_MSG_TOO_BIG_FOR_Q 2030 / _Q_MGR 2031)."""
    if not properties:
        return 0
    total = 0
    for name, value in properties.items():
        total += len(name.encode("utf-8"))
        if isinstance(value, str):
            total += len(value.encode("utf-8", "surrogatepass"))
        elif isinstance(value, dict):  # {"$bytes": base64}: its bytes
            total += len(value.get("$bytes", "")) * 3 // 4
        else:
            total += len(str(value))
    return total


def message_length(md: MQMD, data_length: int) -> int:
    """A message's length as MAXMSGL limits it: its data and its properties."""
    return data_length + properties_length(md.properties) if md.properties else data_length


def _properties(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or len(value) > MAX_PROPERTIES:
        raise MQError(MQRC.MD_ERROR, f"md.properties must be an object of at most {MAX_PROPERTIES} properties")
    for name, prop in value.items():
        if not _PROPERTY_NAME.fullmatch(name):
            raise MQError(MQRC.MD_ERROR, f"md.properties: '{name}' is not a valid property name")
        if prop is not None and not isinstance(prop, (str, int, float, bool)) and not _is_byte_string(prop):
            raise MQError(MQRC.MD_ERROR, f"md.properties.{name} must be a string, number, boolean, null"
                                         " or {\"$bytes\": base64}")
    return dict(value)


def _is_byte_string(prop: Any) -> bool:
    """A byte-string property (MQTYPE_BYTE_STRING) as JSON carries it: ``{"$bytes": base64}``,
    kept as given (the queue manager never looks inside a property)."""
    if not isinstance(prop, dict) or prop.keys() != {"$bytes"} or not isinstance(prop["$bytes"], str):
        return False
    try:
        base64.b64decode(prop["$bytes"], validate=True)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=4)
def _second_prefix(second: int) -> str:
    return datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.")


def format_put_time(ms: int) -> str:
    """ISO-8601 UTC with milliseconds, as docs/api.md §6's put_date_time (the formatted second is
    cached: strftime on every MQPUT is measurable)."""
    return f"{_second_prefix(ms // 1000)}{ms % 1000:03d}Z"


class MsgIdGenerator:
    """MsgIds unique across the QSG, shaped like z/OS's: ``CSQ `` + QM name + a unique stamp.

    The stamp is the generator's start time in nanoseconds and a counter, so a restarted queue
    manager (QM names are unique in the group) never repeats an earlier id.
    """

    def __init__(self, qmgr: str) -> None:
        self._prefix = b"CSQ " + qmgr.encode().ljust(4)
        self._start = time.time_ns()
        self._counter = itertools.count(1)

    def next(self) -> str:
        return (self._prefix + struct.pack(">QQ", self._start, next(self._counter))).hex()

