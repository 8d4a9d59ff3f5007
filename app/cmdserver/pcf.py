"""Programmable Command Format (PCF) messages: encode and decode, pure (standard library only).

A PCF message is an MQCFH header followed by ``ParameterCount`` parameter structures. Every
field is an MQLONG (4 bytes; MQCFIN64/MQCFIL64 values 8 bytes) in the byte order of the
message's MQMD Encoding: MQENC_INTEGER_REVERSED (little-endian, an x86 client's native 546)
or MQENC_INTEGER_NORMAL (big-endian, z/OS's 785 / 273). Strings carry their own CCSID (0: the
message's). Structures are padded to a multiple of 4 bytes, as IBM requires.

Used by the queue manager's command server (``app.cmdserver.server``) and by the pymqi-shaped
client's ``PCFExecute`` (``app.client.pcf``): one codec for both ends.
"""

from __future__ import annotations

import codecs
import struct
from dataclasses import dataclass, field
from typing import Any

# ---- constants (IBM cmqcfc.h) ----------------------------------------------------------------

MQCFH_STRUC_LENGTH = 36
MQCFH_VERSION_1, MQCFH_VERSION_2, MQCFH_VERSION_3 = 1, 2, 3

MQCFT_COMMAND = 1
MQCFT_RESPONSE = 2
MQCFT_INTEGER = 3
MQCFT_STRING = 4
MQCFT_INTEGER_LIST = 5
MQCFT_STRING_LIST = 6
MQCFT_EVENT = 7
MQCFT_BYTE_STRING = 9
MQCFT_INTEGER_FILTER = 13
MQCFT_STRING_FILTER = 14
MQCFT_BYTE_STRING_FILTER = 15
MQCFT_COMMAND_XR = 16
MQCFT_XR_MSG = 17
MQCFT_XR_ITEM = 18
MQCFT_XR_SUMMARY = 19
MQCFT_GROUP = 20
MQCFT_INTEGER64 = 23
MQCFT_INTEGER64_LIST = 25

MQCFC_NOT_LAST, MQCFC_LAST = 0, 1

# Filter operators (MQCFOP_*)
MQCFOP_LESS = 1
MQCFOP_EQUAL = 2
MQCFOP_NOT_GREATER = 3
MQCFOP_GREATER = 4
MQCFOP_NOT_EQUAL = 5
MQCFOP_NOT_LESS = 6
MQCFOP_CONTAINS = 10
MQCFOP_EXCLUDES = 13
MQCFOP_LIKE = 18
MQCFOP_NOT_LIKE = 21
MQCFOP_CONTAINS_GEN = 26
MQCFOP_EXCLUDES_GEN = 29
OPERATORS = frozenset({1, 2, 3, 4, 5, 6, 10, 13, 18, 21, 26, 29})

MQENC_INTEGER_NORMAL = 0x1
MQENC_INTEGER_REVERSED = 0x2
MQENC_NATIVE = 0x222  # little-endian: x86 clients
MQENC_ZOS = 0x311  # big-endian integers, S/390 decimals and floats: what z/OS programs send

# Structure errors (MQRCCF_*)
RC_CFH_TYPE_ERROR = 3001
RC_CFH_LENGTH_ERROR = 3002
RC_CFH_VERSION_ERROR = 3003
RC_CFH_PARM_COUNT_ERROR = 3006
RC_CFIN_LENGTH_ERROR = 3009
RC_CFST_LENGTH_ERROR = 3010
RC_STRUCTURE_TYPE_ERROR = 3013
RC_MSG_LENGTH_ERROR = 3016
RC_CFSL_LENGTH_ERROR = 3024
RC_CFIL_LENGTH_ERROR = 3028
RC_CFIF_LENGTH_ERROR = 3241
RC_CFIF_OPERATOR_ERROR = 3242
RC_CFSF_LENGTH_ERROR = 3245
RC_CFSF_OPERATOR_ERROR = 3246
RC_CFBS_LENGTH_ERROR = 3255

#: Most parameters one message may carry (a guard against a header claiming millions).
MAX_PARAMETERS = 10_000


class PcfError(Exception):
    """A malformed PCF message: ``reason`` is the MQRCCF_* code IBM's command server answers."""

    def __init__(self, reason: int, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass
class Header:
    """MQCFH."""

    type: int = MQCFT_COMMAND
    command: int = 0
    version: int = MQCFH_VERSION_1
    msg_seq_number: int = 1
    control: int = MQCFC_LAST
    comp_code: int = 0
    reason: int = 0
    parameter_count: int = 0


@dataclass
class Parameter:
    """One parameter structure. ``value``: int (MQCFIN, MQCFIN64), str (MQCFST), list[int]
    (MQCFIL, MQCFIL64), list[str] (MQCFSL), bytes (MQCFBS), a filter's value (int, str or bytes
    with ``operator``), or for MQCFGR the nested parameters (``group``)."""

    type: int
    parameter: int
    value: Any = None
    operator: int = 0
    ccsid: int = 0
    group: list[Parameter] = field(default_factory=list)


@dataclass
class Message:
    header: Header
    parameters: list[Parameter]


def is_big_endian(encoding: int) -> bool:
    """Whether an MQMD Encoding's integers are big-endian (MQENC_INTEGER_NORMAL)."""
    return (encoding & 0xF) != MQENC_INTEGER_REVERSED


# ---- strings ---------------------------------------------------------------------------------

_CODECS = {1208: "utf-8", 819: "latin-1", 367: "ascii", 437: "cp437", 850: "cp850", 1252: "cp1252",
           37: "cp037", 500: "cp500", 1140: "cp1140", 1047: "cp500"}
# CCSID 1047 differs from 500 only in a few punctuation code points; Python has no codec for it,
# and the names, keywords and words of commands are the same in both.


def _codec(ccsid: int) -> str:
    name = _CODECS.get(ccsid)
    if name is None:
        try:
            return codecs.lookup(f"cp{ccsid}").name
        except LookupError:
            return "utf-8"
    return name


def decode_text(raw: bytes, ccsid: int) -> str:
    """A PCF string's text (trailing blanks and NULs dropped, as MQ's fixed fields are padded)."""
    return raw.decode(_codec(ccsid), errors="replace").rstrip(" \0")


def encode_text(text: str, ccsid: int) -> bytes:
    return text.encode(_codec(ccsid), errors="replace")


# ---- encode ----------------------------------------------------------------------------------


def _pad4(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 4)


def encode_parameter(p: Parameter, *, big: bool, ccsid: int = 1208) -> bytes:
    """One parameter structure in the byte order ``big`` (True: big-endian)."""
    e = ">" if big else "<"
    own = p.ccsid or ccsid
    if p.type == MQCFT_INTEGER:
        return struct.pack(f"{e}4i", p.type, 16, p.parameter, int(p.value))
    if p.type == MQCFT_INTEGER64:
        return struct.pack(f"{e}4iq", p.type, 24, p.parameter, 0, int(p.value))
    if p.type == MQCFT_STRING:
        raw = p.value if isinstance(p.value, bytes) else encode_text(str(p.value), own)
        body = _pad4(raw)
        return struct.pack(f"{e}5i", p.type, 20 + len(body), p.parameter, own, len(raw)) + body
    if p.type in (MQCFT_INTEGER_LIST, MQCFT_INTEGER64_LIST):
        values = [int(v) for v in p.value]
        item = "i" if p.type == MQCFT_INTEGER_LIST else "q"
        data = struct.pack(f"{e}{len(values)}{item}", *values)
        return struct.pack(f"{e}4i", p.type, 16 + len(data), p.parameter, len(values)) + data
    if p.type == MQCFT_STRING_LIST:
        items = [v if isinstance(v, bytes) else encode_text(str(v), own) for v in p.value]
        width = max((len(i) for i in items), default=0)
        blank = encode_text(" ", own)
        data = b"".join(i + blank * (width - len(i)) for i in items)
        body = _pad4(data)
        return struct.pack(f"{e}6i", p.type, 24 + len(body), p.parameter, own, len(items), width) + body
    if p.type == MQCFT_BYTE_STRING:
        raw = bytes(p.value)
        body = _pad4(raw)
        return struct.pack(f"{e}4i", p.type, 16 + len(body), p.parameter, len(raw)) + body
    if p.type == MQCFT_INTEGER_FILTER:
        return struct.pack(f"{e}5i", p.type, 20, p.parameter, p.operator, int(p.value))
    if p.type == MQCFT_STRING_FILTER:
        raw = p.value if isinstance(p.value, bytes) else encode_text(str(p.value), own)
        body = _pad4(raw)
        return struct.pack(f"{e}6i", p.type, 24 + len(body), p.parameter, p.operator, own, len(raw)) + body
    if p.type == MQCFT_BYTE_STRING_FILTER:
        raw = bytes(p.value)
        body = _pad4(raw)
        return struct.pack(f"{e}5i", p.type, 20 + len(body), p.parameter, p.operator, len(raw)) + body
    if p.type == MQCFT_GROUP:
        inner = b"".join(encode_parameter(g, big=big, ccsid=ccsid) for g in p.group)
        return struct.pack(f"{e}4i", p.type, 16, p.parameter, len(p.group)) + inner
    raise PcfError(RC_STRUCTURE_TYPE_ERROR, f"parameter structure type {p.type} cannot be encoded")


def encode(header: Header, parameters: list[Parameter], *, big: bool = False, ccsid: int = 1208) -> bytes:
    """A whole PCF message; ``header.parameter_count`` is set from ``parameters``."""
    e = ">" if big else "<"
    head = struct.pack(f"{e}9i", header.type, MQCFH_STRUC_LENGTH, header.version, header.command,
                       header.msg_seq_number, header.control, header.comp_code, header.reason, len(parameters))
    return head + b"".join(encode_parameter(p, big=big, ccsid=ccsid) for p in parameters)


# ---- decode ----------------------------------------------------------------------------------


def decode_header(data: bytes, *, big: bool) -> Header:
    if len(data) < MQCFH_STRUC_LENGTH:
        raise PcfError(RC_CFH_LENGTH_ERROR, f"a PCF message needs a 36-byte MQCFH; {len(data)} bytes given")
    f = struct.unpack_from(f"{'>' if big else '<'}9i", data)
    if f[1] != MQCFH_STRUC_LENGTH:
        raise PcfError(RC_CFH_LENGTH_ERROR, f"MQCFH StrucLength {f[1]} is not 36")
    if f[2] not in (MQCFH_VERSION_1, MQCFH_VERSION_2, MQCFH_VERSION_3):
        raise PcfError(RC_CFH_VERSION_ERROR, f"MQCFH Version {f[2]} is not 1, 2 or 3")
    if not 0 <= f[8] <= MAX_PARAMETERS:
        raise PcfError(RC_CFH_PARM_COUNT_ERROR, f"MQCFH ParameterCount {f[8]} is not valid")
    return Header(type=f[0], version=f[2], command=f[3], msg_seq_number=f[4], control=f[5], comp_code=f[6],
                  reason=f[7], parameter_count=f[8])


def decode(data: bytes, *, big: bool, ccsid: int = 1208) -> Message:
    """A whole PCF message (``ccsid``: the MQMD's, for strings whose own CCSID is 0)."""
    header = decode_header(data, big=big)
    params: list[Parameter] = []
    pos = MQCFH_STRUC_LENGTH
    for _ in range(header.parameter_count):
        p, pos = _decode_one(data, pos, big=big, ccsid=ccsid)
        params.append(p)
    if pos != len(data):
        raise PcfError(RC_MSG_LENGTH_ERROR, f"{len(data) - pos} bytes follow the {header.parameter_count} "
                                            "parameters the MQCFH counts")
    return Message(header, params)


_FIXED = {MQCFT_INTEGER: (16, RC_CFIN_LENGTH_ERROR), MQCFT_INTEGER64: (24, RC_CFIN_LENGTH_ERROR),
          MQCFT_STRING: (20, RC_CFST_LENGTH_ERROR), MQCFT_INTEGER_LIST: (16, RC_CFIL_LENGTH_ERROR),
          MQCFT_INTEGER64_LIST: (16, RC_CFIL_LENGTH_ERROR), MQCFT_STRING_LIST: (24, RC_CFSL_LENGTH_ERROR),
          MQCFT_BYTE_STRING: (16, RC_CFBS_LENGTH_ERROR), MQCFT_INTEGER_FILTER: (20, RC_CFIF_LENGTH_ERROR),
          MQCFT_STRING_FILTER: (24, RC_CFSF_LENGTH_ERROR), MQCFT_BYTE_STRING_FILTER: (20, RC_CFSF_LENGTH_ERROR),
          MQCFT_GROUP: (16, RC_STRUCTURE_TYPE_ERROR)}


def _decode_one(data: bytes, pos: int, *, big: bool, ccsid: int) -> tuple[Parameter, int]:
    e = ">" if big else "<"
    if pos + 8 > len(data):
        raise PcfError(RC_MSG_LENGTH_ERROR, "the message ends before the parameters the MQCFH counts")
    ptype, length = struct.unpack_from(f"{e}2i", data, pos)
    if ptype not in _FIXED:
        raise PcfError(RC_STRUCTURE_TYPE_ERROR, f"parameter structure type {ptype} is not valid here")
    fixed, length_error = _FIXED[ptype]
    exact = ptype in (MQCFT_INTEGER, MQCFT_INTEGER64, MQCFT_INTEGER_FILTER, MQCFT_GROUP)
    if length < fixed or (exact and length != fixed) or length % 4 or pos + length > len(data):
        raise PcfError(length_error, f"structure type {ptype} at offset {pos}: StrucLength {length} is not valid")
    body = data[pos:pos + length]

    def need(n: int) -> None:
        if n > length:
            raise PcfError(length_error, f"structure type {ptype} at offset {pos}: its data passes StrucLength")

    if ptype == MQCFT_INTEGER:
        _, _, parm, value = struct.unpack_from(f"{e}4i", body)
        return Parameter(ptype, parm, value), pos + length
    if ptype == MQCFT_INTEGER64:
        _, _, parm, _, value = struct.unpack_from(f"{e}4iq", body)
        return Parameter(ptype, parm, value), pos + length
    if ptype == MQCFT_STRING:
        _, _, parm, own, n = struct.unpack_from(f"{e}5i", body)
        need(20 + max(n, 0))
        if n < 0:
            raise PcfError(length_error, f"MQCFST StringLength {n} is negative")
        own = own or ccsid
        return Parameter(ptype, parm, decode_text(body[20:20 + n], own), ccsid=own), pos + length
    if ptype in (MQCFT_INTEGER_LIST, MQCFT_INTEGER64_LIST):
        _, _, parm, count = struct.unpack_from(f"{e}4i", body)
        size = 4 if ptype == MQCFT_INTEGER_LIST else 8
        if count < 0:
            raise PcfError(length_error, f"list Count {count} is negative")
        need(16 + count * size)
        values = list(struct.unpack_from(f"{e}{count}{'i' if size == 4 else 'q'}", body, 16))
        return Parameter(ptype, parm, values), pos + length
    if ptype == MQCFT_STRING_LIST:
        _, _, parm, own, count, width = struct.unpack_from(f"{e}6i", body)
        if count < 0 or width < 0:
            raise PcfError(length_error, "MQCFSL Count and StringLength must not be negative")
        need(24 + count * width)
        own = own or ccsid
        items = [decode_text(body[24 + i * width:24 + (i + 1) * width], own) for i in range(count)]
        return Parameter(ptype, parm, items, ccsid=own), pos + length
    if ptype == MQCFT_BYTE_STRING:
        _, _, parm, n = struct.unpack_from(f"{e}4i", body)
        if n < 0:
            raise PcfError(length_error, f"MQCFBS StringLength {n} is negative")
        need(16 + n)
        return Parameter(ptype, parm, bytes(body[16:16 + n])), pos + length
    if ptype == MQCFT_INTEGER_FILTER:
        _, _, parm, op, value = struct.unpack_from(f"{e}5i", body)
        if op not in OPERATORS:
            raise PcfError(RC_CFIF_OPERATOR_ERROR, f"MQCFIF Operator {op} is not valid")
        return Parameter(ptype, parm, value, operator=op), pos + length
    if ptype == MQCFT_STRING_FILTER:
        _, _, parm, op, own, n = struct.unpack_from(f"{e}6i", body)
        if op not in OPERATORS:
            raise PcfError(RC_CFSF_OPERATOR_ERROR, f"MQCFSF Operator {op} is not valid")
        if n < 0:
            raise PcfError(length_error, f"MQCFSF FilterValueLength {n} is negative")
        need(24 + n)
        own = own or ccsid
        return Parameter(ptype, parm, decode_text(body[24:24 + n], own), operator=op, ccsid=own), pos + length
    if ptype == MQCFT_BYTE_STRING_FILTER:
        _, _, parm, op, n = struct.unpack_from(f"{e}5i", body)
        if op not in OPERATORS:
            raise PcfError(RC_CFSF_OPERATOR_ERROR, f"MQCFBF Operator {op} is not valid")
        if n < 0:
            raise PcfError(length_error, f"MQCFBF FilterValueLength {n} is negative")
        need(20 + n)
        return Parameter(ptype, parm, bytes(body[20:20 + n]), operator=op), pos + length
    # MQCFGR: the group's parameters follow it
    _, _, parm, count = struct.unpack_from(f"{e}4i", body)
    if not 0 <= count <= MAX_PARAMETERS:
        raise PcfError(RC_CFH_PARM_COUNT_ERROR, f"MQCFGR ParameterCount {count} is not valid")
    group = Parameter(ptype, parm)
    pos += length
    for _ in range(count):
        inner, pos = _decode_one(data, pos, big=big, ccsid=ccsid)
        group.group.append(inner)
    return group, pos
