"""The message descriptor as IBM's messaging REST API carries it: ``ibm-mq-md-*`` and
``ibm-mq-usr-*`` headers, the ``correlationId`` / ``messageId`` / ``wait`` / ``limit`` query
parameters, and the request's Content-Type. Pure functions between HTTP strings and docs/api.md's
MQMD fields; every invalid value raises ``IbmRestError`` (400) naming the header or parameter.

IBM's rules (messaging POST/DELETE/GET pages, https://www.ibm.com/docs/en/ibm-mq/9.3.x?topic=
messagingqmgrqmgrnamequeuequeuenamemessage-post and siblings):

* ``ibm-mq-md-correlationId``: v1/v2 a 48-digit hex string (24 bytes); v3 ``ID:`` + 48 hex
  digits, or an application-specific id (the message then is a JMS TextMessage; MQ stores such
  an id in the MQMD as its bytes, NUL-padded to 24).
* ``ibm-mq-md-messageId`` (response header and query parameter): v1/v2 48 hex digits, v3 with
  the ``ID:`` prefix.
* ``ibm-mq-md-expiry``: ``unlimited`` or milliseconds (the MQMD counts tenths of a second).
* ``ibm-mq-md-persistence``: ``persistent`` or ``nonPersistent`` (the default).
* ``ibm-mq-md-replyTo``: ``queue[@qmgr]``.
* v3 only: ``ibm-mq-md-priority`` (0-9) and user properties ``ibm-mq-usr-<name>``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.core.mqmd import NO_ID
from app.ibmrest.errors import bad_charset, bad_header, bad_query, unsupported_media_type

VERSIONS = ("v1", "v2", "v3")
# IBM: "This header must be sent with one of the following values: text/plain;charset=utf-8,
# text/html;charset=utf-8, text/xml;charset=utf-8, application/json;charset=utf-8,
# application/xml;charset=utf-8". The IBM samples send them without a charset, which mqweb
# accepts as UTF-8.
TEXT_MEDIA_TYPES = frozenset({"text/plain", "text/html", "text/xml", "application/json", "application/xml"})
RESPONSE_CONTENT_TYPE = "text/plain; charset=utf-8"

MD_CORRELATION_ID = "ibm-mq-md-correlationId"
MD_MESSAGE_ID = "ibm-mq-md-messageId"
MD_EXPIRY = "ibm-mq-md-expiry"
MD_PERSISTENCE = "ibm-mq-md-persistence"
MD_REPLY_TO = "ibm-mq-md-replyTo"
MD_PRIORITY = "ibm-mq-md-priority"
USR_PREFIX = "ibm-mq-usr-"

# The largest MQMD Expiry (tenths, a 32-bit field) in milliseconds.
MAX_EXPIRY_MS = 2_147_483_647 * 100
# JMS default priority: what mqweb's v1/v2 puts carry (v3 lets the queue's DEFPRTY apply).
JMS_DEFAULT_PRIORITY = 4
_HEX48 = re.compile(r"[0-9A-Fa-f]{48}")
_NAME = re.compile(r"[A-Za-z0-9./_%]{1,48}")


def is_v3(version: str) -> bool:
    return version == "v3"


# ---- request body ----------------------------------------------------------------------------


def request_text(content_type: str | None, body: bytes) -> str:
    """The message text of a POST: a text media type, UTF-8 (IBM accepts no other charset)."""
    media, params = _media_type(content_type or "")
    if media not in TEXT_MEDIA_TYPES:
        raise unsupported_media_type(f"Content-Type '{content_type or ''}' is not one of "
                                     f"{', '.join(sorted(TEXT_MEDIA_TYPES))} (charset utf-8)")
    charset = params.get("charset", "utf-8")
    if charset.lower().replace("_", "-") not in ("utf-8", "utf8"):
        raise bad_charset(charset)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise bad_charset("utf-8 (the body is not valid UTF-8)") from None


def _media_type(value: str) -> tuple[str, dict[str, str]]:
    media, *rest = value.split(";")
    params = {}
    for part in rest:
        key, _, val = part.partition("=")
        params[key.strip().lower()] = val.strip().strip('"')
    return media.strip().lower(), params


# ---- message descriptor of a POST -------------------------------------------------------------


def put_md(version: str, headers: Mapping[str, str]) -> dict[str, Any]:
    """docs/api.md's MQMD for a message POSTed with these request headers (names matched
    case-insensitively, as HTTP headers are)."""
    h = {k.lower(): v for k, v in headers.items()}
    md: dict[str, Any] = {"format": "MQSTR", "msg_type": "DATAGRAM",
                          "persistence": _persistence(h.get(MD_PERSISTENCE.lower())),
                          "expiry": _expiry(h.get(MD_EXPIRY.lower())),
                          "priority": -1 if is_v3(version) else JMS_DEFAULT_PRIORITY}
    correl = h.get(MD_CORRELATION_ID.lower())
    if correl is not None:
        md["correl_id"] = parse_correlation_id(version, correl, MD_CORRELATION_ID, header=True)
    reply_to = h.get(MD_REPLY_TO.lower())
    if reply_to is not None:
        md["reply_to_q"], md["reply_to_qmgr"] = _reply_to(reply_to)
        md["msg_type"] = "REQUEST"  # MQ JMS: a message with JMSReplyTo is an MQMT_REQUEST
    if is_v3(version):
        priority = h.get(MD_PRIORITY.lower())
        if priority is not None:
            md["priority"] = _priority(priority)
        properties = user_properties(h)
        if properties:
            md["properties"] = properties
    return md


def _persistence(value: str | None) -> str:
    if value is None:
        return "NOT_PERSISTENT"
    word = value.strip()
    if word.lower() == "persistent":
        return "PERSISTENT"
    if word.lower() == "nonpersistent":
        return "NOT_PERSISTENT"
    raise bad_header(MD_PERSISTENCE, value, "use persistent or nonPersistent")


def _expiry(value: str | None) -> int:
    """``unlimited`` or milliseconds -> MQMD tenths (-1 unlimited). 0 ms is JMS's "never
    expires"; a part of a tenth rounds up so that a short expiry never becomes unlimited."""
    if value is None or value.strip().lower() == "unlimited":
        return -1
    text = value.strip()
    if not text.isdigit() or int(text) > MAX_EXPIRY_MS:
        raise bad_header(MD_EXPIRY, value, f"use unlimited or 0-{MAX_EXPIRY_MS} milliseconds")
    ms = int(text)
    return -1 if ms == 0 else max(1, math.ceil(ms / 100))


def _priority(value: str) -> int:
    text = value.strip()
    if not text.isdigit() or not 0 <= int(text) <= 9:
        raise bad_header(MD_PRIORITY, value, "use 0-9")
    return int(text)


def _reply_to(value: str) -> tuple[str, str]:
    queue, _, qmgr = value.strip().partition("@")
    if not _NAME.fullmatch(queue) or (qmgr and not _NAME.fullmatch(qmgr)):
        raise bad_header(MD_REPLY_TO, value, "use queue[@qmgr] with IBM MQ object names")
    return queue, qmgr


def user_properties(headers: Mapping[str, str]) -> dict[str, Any]:
    """v3 ``ibm-mq-usr-<name>: <value>``: a JSON value (``"text"``, ``12``, ``1.5``, ``true``,
    ``null``) keeps its type; anything that is not JSON is a string."""
    out: dict[str, Any] = {}
    for key, raw in headers.items():
        if not key.lower().startswith(USR_PREFIX):
            continue
        name = key[len(USR_PREFIX):]
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        if isinstance(value, (list, dict)):
            raise bad_header(key, raw, "a user property is a string, number, boolean or null")
        out[name] = value
    return out


# ---- identifiers ------------------------------------------------------------------------------


def parse_correlation_id(version: str, value: str, name: str = "correlationId", *, header: bool = False) -> str:
    """A correlation id of a header or query parameter as 48 hex digits (docs/api.md's correl_id)."""
    fail = bad_header if header else bad_query
    if not is_v3(version):
        if not _HEX48.fullmatch(value):
            raise fail(name, value, "use 48 hexadecimal digits (24 bytes)")
        return value.lower()
    if value.startswith("ID:"):
        if not _HEX48.fullmatch(value[3:]):
            raise fail(name, value, "use ID: followed by 48 hexadecimal digits")
        return value[3:].lower()
    raw = value.encode("utf-8")
    if not raw or len(raw) > 24:
        raise fail(name, value, "an application-specific id is 1-24 bytes of UTF-8; or use ID:<48 hex digits>")
    return raw.ljust(24, b"\0").hex()


def parse_message_id(version: str, value: str) -> str:
    """The ``messageId`` query parameter as 48 hex digits (v3 requires the ``ID:`` prefix)."""
    text = value
    if is_v3(version):
        if not value.startswith("ID:"):
            raise bad_query("messageId", value, "REST API v3 message ids carry the ID: prefix")
        text = value[3:]
    if not _HEX48.fullmatch(text):
        raise bad_query("messageId", value, "use 48 hexadecimal digits" + (" after ID:" if is_v3(version) else ""))
    return text.lower()


def format_message_id(version: str, msg_id: str) -> str:
    return f"ID:{msg_id}" if is_v3(version) else msg_id


def format_correlation_id(version: str, correl_id: str) -> str | None:
    """The correlation id header of a message, or None when it has none (all zeros).

    v3 gives an application-specific id back as its text: MQ JMS remembers it in the RFH2; here
    an id that is printable ASCII padded with NULs is taken to be one.
    """
    if not correl_id or correl_id == NO_ID:
        return None
    if not is_v3(version):
        return correl_id
    raw = bytes.fromhex(correl_id)
    text = raw.rstrip(b"\0")
    if text and all(0x20 <= b < 0x7F for b in text):
        return text.decode("ascii")
    return f"ID:{correl_id}"


# ---- query parameters -------------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """Which message a DELETE / GET / messagelist call selects, and how long it waits."""

    msg_id: str | None = None
    correl_id: str | None = None
    wait_ms: int = 0
    limit: int | None = None

    @property
    def match(self) -> dict[str, str]:
        out = {}
        if self.msg_id:
            out["msg_id"] = self.msg_id
        if self.correl_id:
            out["correl_id"] = self.correl_id
        return out


def selection(version: str, query: Mapping[str, str], *, allow_wait: bool = True,
              allow_limit: bool = False) -> Selection:
    """Parse ``messageId``, ``correlationId``, ``wait`` (ms) and, for messagelist, ``limit``."""
    msg_id = query.get("messageId")
    correl = query.get("correlationId")
    wait = query.get("wait") if allow_wait else None
    limit = query.get("limit") if allow_limit else None
    return Selection(
        msg_id=parse_message_id(version, msg_id) if msg_id is not None else None,
        correl_id=parse_correlation_id(version, correl) if correl is not None else None,
        wait_ms=_non_negative("wait", wait) if wait is not None else 0,
        limit=_non_negative("limit", limit) if limit is not None else None,
    )


def _non_negative(name: str, value: str) -> int:
    if not value.isdigit() or int(value) > 2_147_483_647:
        raise bad_query(name, value, "use a non-negative integer")
    return int(value)


# ---- response -------------------------------------------------------------------------------


def response_headers(version: str, md: Mapping[str, Any]) -> dict[str, str]:
    """The ``ibm-mq-md-*`` (and for v3 ``ibm-mq-usr-*``) headers of a received message."""
    out = {MD_MESSAGE_ID: format_message_id(version, md["msg_id"]),
           MD_PERSISTENCE: "persistent" if md.get("persistence") == "PERSISTENT" else "nonPersistent",
           MD_EXPIRY: format_expiry(md.get("expiry", -1))}
    correl = format_correlation_id(version, md.get("correl_id", NO_ID))
    if correl is not None:
        out[MD_CORRELATION_ID] = correl
    reply_to = format_reply_to(md)
    if reply_to:
        out[MD_REPLY_TO] = _header_text(reply_to)
    if is_v3(version):
        out[MD_PRIORITY] = str(md.get("priority", 0))
        for name, value in (md.get("properties") or {}).items():
            out[USR_PREFIX + name] = _usr_value(value)
    return out


def _header_text(text: str) -> str:
    """Text an HTTP header can carry (printable ASCII): the headers of a message are sent after
    a DELETE took it from its queue, so a name with a character no header may hold (stored by
    an older version, or any non-ASCII name) is shown with ``?`` in its place rather than
    failing the answer and losing the message."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(c if c.isascii() and c.isprintable() else "?" for c in text)


def _usr_value(value: Any) -> str:
    """A property as a header value that ``user_properties`` reads back with its type: a plain
    string stays bare unless it would read as JSON (``"12"``, ``"true"``) or is not ASCII."""
    if not isinstance(value, str):
        return json.dumps(value)
    try:
        json.loads(value)
    except ValueError:
        if value.isascii() and value == value.strip():
            return value
    return json.dumps(value)


def format_expiry(tenths: int) -> str:
    return "unlimited" if tenths is None or tenths < 0 else str(tenths * 100)


def format_reply_to(md: Mapping[str, Any]) -> str:
    queue = (md.get("reply_to_q") or "").strip()
    if not queue:
        return ""
    qmgr = (md.get("reply_to_qmgr") or "").strip()
    return f"{queue}@{qmgr}" if qmgr else queue


def summary(version: str, md: Mapping[str, Any]) -> dict[str, Any]:
    """One element of a messagelist response: the message's descriptor without its body."""
    out: dict[str, Any] = {"messageId": format_message_id(version, md["msg_id"]),
                           "format": str(md.get("format", "")).strip(),
                           "persistence": "persistent" if md.get("persistence") == "PERSISTENT" else "nonPersistent",
                           "expiry": _expiry_json(md.get("expiry", -1)),
                           "putDateTime": md.get("put_date_time", "")}
    correl = format_correlation_id(version, md.get("correl_id", NO_ID))
    if correl is not None:
        out["correlationId"] = correl
    reply_to = format_reply_to(md)
    if reply_to:
        out["replyTo"] = reply_to
    if is_v3(version):
        out["priority"] = md.get("priority", 0)
    return out


def _expiry_json(tenths: int) -> str | int:
    return "unlimited" if tenths is None or tenths < 0 else tenths * 100
