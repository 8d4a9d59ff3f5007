"""Data conversion of MQGET with MQGMO_CONVERT: character data of MQFMT_STRING messages between
the code pages a z/OS shop meets (EBCDIC 037, 500, 1047, 1140; ASCII/Latin-1 819; UTF-8 1208).

Pure: no I/O. The queue manager calls :func:`convert_message` after the coupling facility
handed the message over, and only for a get that asked for CONVERT, so other gets pay nothing.

IBM's rules (IBM MQ reference, reason codes 2110, 2111, 2115, 2119, 2120 and MQGMO_CONVERT):
* the data is converted to the CodedCharSetId/Encoding the application's MsgDesc names, and the
  returned MsgDesc says so;
* when it cannot be converted the message is returned unconverted with MQCC_WARNING and the
  MsgDesc keeps the message's own CodedCharSetId/Encoding: 2111 MQRC_SOURCE_CCSID_ERROR (the
  message's CCSID is not supported), 2115 MQRC_TARGET_CCSID_ERROR (the requested one is not),
  2119 MQRC_NOT_CONVERTED (a character has no equivalent), 2110 MQRC_FORMAT_ERROR (a format
  with no built-in conversion, MQFMT_NONE included), 2120 MQRC_CONVERTED_MSG_TOO_BIG (the data
  fitted the buffer before conversion but not after).
"""

from __future__ import annotations

from dataclasses import dataclass

import app.core.cp1047  # noqa: F401  (registers the cp1047 codec)
from app.core.reasons import MQRC

#: Python codec of each supported CCSID.
CODECS: dict[int, str] = {
    37: "cp037", 500: "cp500", 1047: "cp1047", 1140: "cp1140",  # EBCDIC
    819: "latin-1",  # ISO 8859-1
    1208: "utf-8",
}
EBCDIC = frozenset({37, 500, 1047, 1140})
#: Code pages whose first 128 code points are ASCII: pure-ASCII data reads the same in them.
ASCII_COMPATIBLE = frozenset({819, 1208, 367, 437, 850, 1252})
#: Formats converted as text. The queue manager's own messages (MQEVENT, MQTRIG, MQDEAD) are
#: JSON in UTF-8 here and need no conversion.
STRING_FORMATS = frozenset({"MQSTR"})
OWN_FORMATS = frozenset({"MQEVENT", "MQTRIG", "MQDEAD"})


class ConversionError(Exception):
    """Data that cannot be converted, with IBM's reason."""

    def __init__(self, reason: int, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def codec(ccsid: int) -> str | None:
    """The Python codec of a supported CCSID, or None."""
    return CODECS.get(ccsid)


def convert_string(data: bytes, source: int, target: int, *, partial: bool = False) -> bytes:
    """``data`` in CCSID ``source`` as CCSID ``target``. ``partial``: the data was truncated, so
    an incomplete multi-byte character at its end is left out rather than refused. Raises
    ConversionError (2111, 2115, 2119)."""
    src, tgt = codec(source), codec(target)
    if src is None:
        raise ConversionError(MQRC.SOURCE_CCSID_ERROR, f"the message's CCSID {source} is not supported for conversion")
    if tgt is None:
        raise ConversionError(MQRC.TARGET_CCSID_ERROR, f"CCSID {target} is not supported for conversion")
    if source == target:
        return data
    try:
        text = data.decode(src)
    except UnicodeDecodeError as exc:
        if not (partial and exc.end == len(data)):
            raise ConversionError(MQRC.NOT_CONVERTED, f"the data is not valid CCSID {source} text "
                                                      f"(byte {exc.start})") from None
        text = data[:exc.start].decode(src, errors="strict")
    try:
        return text.encode(tgt)
    except UnicodeEncodeError as exc:
        raise ConversionError(MQRC.NOT_CONVERTED, f"character {text[exc.start]!r} has no equivalent in "
                                                  f"CCSID {target}") from None


@dataclass(frozen=True, slots=True)
class Converted:
    """What MQGET returns after conversion: the data, the MsgDesc's CodedCharSetId and Encoding,
    and the warning (reason, text) when it was returned unconverted."""

    data: bytes
    ccsid: int
    encoding: int
    warning: tuple[int, str] | None = None


def convert_message(fmt: str, data: bytes, ccsid: int, encoding: int, target_ccsid: int, target_encoding: int,
                    *, buffer_length: int, truncated: bool = False) -> Converted:
    """MQGMO_CONVERT of one message's data (``ccsid``/``encoding``: the message's MsgDesc;
    ``target_*``: what the application asked for, MQCCSI_Q_MGR already resolved)."""
    name = fmt.strip()
    unconverted = Converted(data, ccsid, encoding)
    if name in OWN_FORMATS or (ccsid == target_ccsid and encoding == target_encoding):
        # nothing to convert: the data is already what was asked for, whatever its format
        # (MQGMO_CONVERT: the queue manager converts only when the CCSID or encoding differ)
        return unconverted
    if name not in STRING_FORMATS:
        what = "MQFMT_NONE" if not name else f"format {name!r}"
        return Converted(data, ccsid, encoding,
                         (MQRC.FORMAT_ERROR, f"{what} has no built-in conversion: the message is not converted"))
    try:
        out = convert_string(data, ccsid, target_ccsid, partial=truncated)
    except ConversionError as exc:
        return Converted(data, ccsid, encoding, (exc.reason, exc.message + ": the message is not converted"))
    if len(out) > buffer_length:
        if not truncated:
            return Converted(data, ccsid, encoding, (
                MQRC.CONVERTED_MSG_TOO_BIG,
                f"converted, the data is {len(out)} bytes: more than the buffer's {buffer_length}"))
        out = out[:buffer_length]
    return Converted(out, target_ccsid, target_encoding)


def as_unicode(data: bytes, ccsid: int) -> str | None:
    """The data as text when it is valid text in ``ccsid``, a supported CCSID; else None."""
    name = codec(ccsid)
    if name is None:
        return None
    try:
        return data.decode(name)
    except UnicodeDecodeError:
        return None
