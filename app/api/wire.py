"""The REST v1 wire format of the message verbs (docs/api.md): request bodies decoded into the
MQI's typed values (``app.core.calls``), outcomes encoded back into response bodies. The one
place where message data is base64 or UTF-8 text and an MQMD is a JSON object."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from pydantic import ValidationError

from app.api.errors import REASON_BY_FIELD
from app.api.schemas import GetBatchRequest, GetRequest, PutBatchMessage, PutBatchRequest, PutRequest
from app.core.calls import GetCall, GotMessage, PutCall, PutOutcome, TruncatedMessageFailed, group_status
from app.core.errors import MQError
from app.core.mqmd import (
    DEFAULT_CCSID,
    DEFAULT_ENCODING,
    MQLONG_MAX,
    MQLONG_MIN,
    MQMD,
    NO_ID,
    as_text,
    fields_but_msg_id,
    hex_id,
    validate_put_md,
)
from app.core.options import parse_get_options, parse_put_options
from app.core.reasons import MQRC, CompCode


def decode_data(data: Any, encoding: Any) -> bytes:
    """Message data of a put request: text as UTF-8 or base64 for binary bodies."""
    if data is None:
        return b""
    if not isinstance(data, str):
        raise MQError(MQRC.BUFFER_ERROR, "data must be a string (utf-8 text or base64)")
    if encoding in (None, "utf-8"):
        return data.encode("utf-8")
    if encoding == "base64":
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise MQError(MQRC.BUFFER_ERROR, "data is not valid base64") from None
    raise MQError(MQRC.BUFFER_ERROR, "data_encoding must be 'utf-8' or 'base64'")


#: The C0 control characters JSON writes as six-byte ``\u00XX`` escapes (all but tab, line feed
#: and carriage return, which take two).
_ESCAPED_CONTROLS = bytes(c for c in range(0x20) if c not in b"\t\n\r")


def _escapes_badly(body: bytes) -> bool:
    """Whether ``body`` as a JSON string would be larger than as base64: each control character
    costs 5 bytes more, base64 a third of the whole. Ordinary text (a few control characters at
    most) stays text; data of control bytes, which would grow six-fold, goes as base64."""
    controls = len(body) - len(body.translate(None, _ESCAPED_CONTROLS))  # one pass in C
    return controls * 15 > len(body)


def encode_data(body: bytes, fmt: str, ccsid: int = DEFAULT_CCSID) -> tuple[str, str]:
    """Body of a get response: text for a text format whose bytes are UTF-8 text (its CCSID
    1208, or pure ASCII in an ASCII-based code page), else base64 (EBCDIC data included). Text
    that JSON would escape badly (control characters beyond one in 15) goes as base64 too, so
    control bytes never make an answer six times its data (quotes and backslashes, escaped in
    two bytes, can still make it twice)."""
    text = as_text(body, fmt, ccsid)
    if text is not None and not _escapes_badly(body):
        return text, "utf-8"
    return base64.b64encode(body).decode("ascii"), "base64"


def put_call(body: PutRequest) -> PutCall:
    """An MQPUT/MQPUT1 request body as the MQI's ``PutCall``."""
    pmo = parse_put_options(body.options)
    md, warnings = validate_put_md(body.md, settable=pmo.settable)
    return PutCall(md, decode_data(body.data, body.data_encoding), pmo, warnings, body.context)


def _match_id(value: Any, name: str) -> str | None:
    """A match option's id: None when absent or all zeros (matches anything)."""
    if value is None:
        return None
    value = hex_id(value, f"match.{name}")
    return None if value == NO_ID else value


def get_call(body: GetRequest) -> GetCall:
    """An MQGET request body as the MQI's ``GetCall``."""
    gmo = parse_get_options(body.options)
    match = body.match or {}
    if not isinstance(match, dict) or set(match) - _MATCH_FIELDS:
        raise MQError(MQRC.MD_ERROR, f"match may hold {', '.join(sorted(_MATCH_FIELDS))} only")
    if not 0 <= body.buffer_length <= MQLONG_MAX:  # MQGET's BufferLength is an MQLONG
        raise MQError(MQRC.BUFFER_LENGTH_ERROR, f"buffer_length must be an integer from 0 to {MQLONG_MAX}")
    # MQGMO WaitInterval is an MQLONG (IBM looks at it only with MQGMO_WAIT; no value beyond an
    # MQLONG can be one, WAIT or not)
    if (gmo.wait and body.wait_ms < -1) or not MQLONG_MIN <= body.wait_ms <= MQLONG_MAX:
        raise MQError(MQRC.WAIT_INTERVAL_ERROR, f"wait_ms must be -1 (unlimited) or an integer from 0 to {MQLONG_MAX}")
    ccsid, encoding = _wanted_ccsid(body.md) if body.md else (DEFAULT_CCSID, DEFAULT_ENCODING)
    if not match.keys() - {"msg_id", "correl_id"}:
        return GetCall(gmo, body.wait_ms if gmo.wait else 0, _match_id(match.get("msg_id"), "msg_id"),
                       _match_id(match.get("correl_id"), "correl_id"), body.buffer_length,
                       ccsid=ccsid, encoding=encoding)
    token = match.get("msg_token")
    if token is not None:
        if not isinstance(token, str) or len(token) != 32 or any(c not in "0123456789abcdefABCDEF" for c in token):
            raise MQError(MQRC.MSG_TOKEN_ERROR, "match.msg_token must be 32 hex digits")
        if gmo.wait:
            # IBM: MQMO_MATCH_MSG_TOKEN is not valid with MQGMO_WAIT
            raise MQError(MQRC.OPTIONS_ERROR, "match.msg_token cannot be combined with WAIT")
        token = token.upper()
    group = match.get("group_id")
    return GetCall(gmo, body.wait_ms if gmo.wait else 0, _match_id(match.get("msg_id"), "msg_id"),
                   _match_id(match.get("correl_id"), "correl_id"), body.buffer_length,
                   None if group is None else hex_id(group, "match.group_id"),
                   _match_int(match, "msg_seq_number", 1, MQRC.MSG_SEQ_NUMBER_ERROR),
                   _match_int(match, "offset", 0, MQRC.OFFSET_ERROR), token, ccsid=ccsid, encoding=encoding)


_MATCH_FIELDS = frozenset({"msg_id", "correl_id", "group_id", "msg_seq_number", "offset", "msg_token"})


def _match_int(match: dict[str, Any], name: str, low: int, reason: int) -> int | None:
    value = match.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= 999999999:
        raise MQError(reason, f"match.{name} must be an integer from {low} to 999999999")
    return value


def _wanted_ccsid(md: dict[str, Any]) -> tuple[int, int]:
    """The CodedCharSetId and Encoding of a get's MsgDesc: what MQGMO_CONVERT converts to."""
    ccsid = md.get("coded_char_set_id", DEFAULT_CCSID)
    encoding = md.get("encoding", DEFAULT_ENCODING)
    for name, value in (("coded_char_set_id", ccsid), ("encoding", encoding)):
        if not isinstance(value, int) or isinstance(value, bool) or not -4 <= value <= MQLONG_MAX:
            raise MQError(MQRC.MD_ERROR, f"md.{name} must be an integer")
    return ccsid, encoding


def _with_warning(out: dict[str, Any], warnings: list[tuple[int, str]]) -> dict[str, Any]:
    if warnings:
        out.update(completion_code=CompCode.WARNING, reason=int(warnings[0][0]), message=warnings[0][1])
    return out


def put_response(outcome: PutOutcome) -> dict[str, Any]:
    """The body of a completed put: the MQMD the queue manager filled in (and a warning)."""
    return _with_warning({"md": outcome.md.to_dict()}, outcome.warnings)


def get_response(got: GotMessage, like: dict[str, Any] | None = None) -> dict[str, Any]:
    """The body of a get or browse: MQMD, data (text or base64) and its full length. ``like``:
    the answer's MQMD of a message whose MQMD differs from this one's only in its MsgId."""
    data, encoding = encode_data(got.data, got.md.format, got.md.coded_char_set_id)
    if like is None:
        md = got.md.to_dict()
    else:
        md = like.copy()
        md["msg_id"] = got.md.msg_id
    out = {"md": md, "data": data, "data_encoding": encoding, "data_length": got.data_length,
           # MQGMO output fields; z/OS never reassembles segments (SegmentStatus and
           # Segmentation are always NOT_A_SEGMENT and INHIBITED there)
           "group_status": group_status(got.md), "segment_status": "NOT_A_SEGMENT",
           "segmentation": "INHIBITED", "msg_token": got.msg_token}
    if got.truncated:
        return _with_warning(out, [(MQRC.TRUNCATED_MSG_ACCEPTED,
                                    f"message of {got.data_length} bytes truncated to {got.buffer_length}")])
    if got.warning is not None:  # MQGMO_CONVERT could not convert it (2110, 2111, 2115, 2119, 2120)
        return _with_warning(out, [got.warning])
    return out


def truncation_failed_response(exc: TruncatedMessageFailed) -> dict[str, Any]:
    """The body of an MQGET answered MQRC_TRUNCATED_MSG_FAILED (2080, a warning, so HTTP 200 as
    docs/api.md §2 has it): the message stays on the queue, and as IBM's MQGET the answer holds
    its MQMD, ``data_length`` its full length and ``data`` as much of it as fits the buffer."""
    return _with_warning(get_response(exc.got), [(exc.reason, exc.message)])


# ---- batches (docs/api.md §12) ----------------------------------------------------------------


def _message_error(index: int, exc: ValidationError) -> MQError:
    """A malformed message of a put-batch: the reason its field maps to, naming the message."""
    errors = exc.errors()
    loc = errors[0]["loc"] if errors else ()
    field = str(loc[0]) if loc else ""
    # No field: the message itself is not an object (the nearest reason: its MQMD is not valid).
    reason = REASON_BY_FIELD.get(field, MQRC.OPTIONS_ERROR) if field else MQRC.MD_ERROR
    where = f"messages[{index}]" + (f".{field}" if field else "")
    return MQError(reason, f"malformed request: {where}: {errors[0]['msg'] if errors else 'not valid'}")


def put_batch_calls(body: PutBatchRequest) -> list[PutCall]:
    """A put-batch request body as one ``PutCall`` per message (sharing the batch's options).
    Every message is checked before anything is put: a malformed one (MQMD, data, encoding)
    fails the whole call with its reason, its index in the message text, and nothing put. (How
    many messages a batch may hold is the MQI's rule: ``Mqi.put_batch``.)"""
    pmo = parse_put_options(body.options)
    calls = []
    # The MQMD a message gives as the message before it did (the usual batch) is checked once: a
    # dict of plain strings and integers equal to one already checked passes the same checks.
    checked_raw: dict[str, Any] | None = None
    checked: tuple[MQMD, list[tuple[int, str]]] | None = None
    for i, raw in enumerate(body.messages):
        # A message as JSON gives it (an object of the three fields, of their types) is taken as
        # it is; anything else goes through the schema, which says what is wrong with it.
        if type(raw) is dict and raw.keys() <= _MESSAGE_FIELDS:
            raw_md, text, encoding = raw.get("md"), raw.get("data", ""), raw.get("data_encoding", "utf-8")
            plain = (raw_md is None or type(raw_md) is dict) and type(text) is str and type(encoding) is str
        else:
            plain = False
        if not plain:
            try:
                message = PutBatchMessage.model_validate(raw)
            except ValidationError as exc:
                raise _message_error(i, exc) from None
            raw_md, text, encoding = message.md, message.data, message.data_encoding
        try:
            if checked is not None and raw_md == checked_raw and _plain_md(raw_md):
                md, warnings = checked[0].copy(checked[0].msg_id), checked[1]
            else:
                md, warnings = validate_put_md(raw_md, settable=pmo.settable)
                if raw_md and _plain_md(raw_md):
                    checked_raw, checked = raw_md, (md.copy(md.msg_id), warnings)
            data = decode_data(text, encoding)
        except MQError as exc:
            raise MQError(exc.reason, f"messages[{i}]: {exc.message}", exc.comp) from None
        calls.append(PutCall(md, data, pmo, warnings, body.context))
    return calls


#: The fields of a put-batch message (``PutBatchMessage``).
_MESSAGE_FIELDS = frozenset(PutBatchMessage.model_fields)


def _plain_md(raw_md: Any) -> bool:
    """Whether an application's MQMD holds only strings and integers (not booleans, which equal
    1 and 0): two such dicts that compare equal are the same MQMD."""
    return all(type(v) is str or type(v) is int for v in raw_md.values())


def put_batch_response(outcomes: list[PutOutcome]) -> dict[str, Any]:
    """The body of a completed put-batch: ``count`` and the MQMD of every message, in order. A
    message's warning (e.g. 2049) is listed in ``warnings`` with its index, and the first one
    is the body's completion_code/reason, as a single put's warning is."""
    mds: list[dict[str, Any]] = []
    key: tuple[Any, ...] | None = None
    previous: dict[str, Any] = {}
    for outcome in outcomes:
        md = outcome.md
        fields = fields_but_msg_id(md)
        if fields == key:  # as the previous message's but the MsgId: a copy of its answer
            answer = previous.copy()
            answer["msg_id"] = md.msg_id
        else:
            answer = md.to_dict()
            key, previous = fields, answer
        mds.append(answer)
    out: dict[str, Any] = {"count": len(outcomes), "md": mds}
    warnings = [{"index": i, "reason": int(reason), "message": text}
                for i, o in enumerate(outcomes) for reason, text in o.warnings]
    if warnings:
        out.update(completion_code=CompCode.WARNING, reason=warnings[0]["reason"], message=warnings[0]["message"],
                   warnings=warnings)
    return out


def get_batch_call(body: GetBatchRequest) -> tuple[GetCall, int]:
    """A get-batch request body as the MQI's ``GetCall`` (for every message) and the most
    messages to return (its bounds are the MQI's rule: ``Mqi.get_batch``)."""
    return get_call(body), body.max_messages


def get_batch_response(messages: list[GotMessage]) -> dict[str, Any]:
    """The body of a get-batch: each message as a get returns it (a truncated one with its
    2079 warning); when any was truncated, the body's completion_code/reason say so too."""
    answers: list[dict[str, Any]] = []
    key: tuple[Any, ...] | None = None
    previous: dict[str, Any] = {}
    for message in messages:
        # The MQMDs of a batch's messages often differ only in their MsgIds: the answer's MQMD
        # is then a copy of the previous one's with its own MsgId.
        fields = fields_but_msg_id(message.md)
        answer = get_response(message, previous if fields == key else None)
        if fields != key:
            key, previous = fields, answer["md"]
        answers.append(answer)
    out: dict[str, Any] = {"messages": answers}
    truncated = sum(1 for m in messages if m.truncated)
    if truncated:
        out.update(completion_code=CompCode.WARNING, reason=int(MQRC.TRUNCATED_MSG_ACCEPTED),
                   message=f"{truncated} message(s) truncated to the buffer length")
    elif any(m.warning is not None for m in messages):
        first = next(m.warning for m in messages if m.warning is not None)
        out.update(completion_code=CompCode.WARNING, reason=int(first[0]), message=first[1])
    return out
