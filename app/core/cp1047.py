"""A codec for EBCDIC CCSID 1047 (Latin-1/Open Systems), which Python does not ship.

CCSID 1047 is the code page of z/OS UNIX and of most C programs on z/OS. It holds the same
characters as CCSID 037 (both are Latin-1 in EBCDIC) and differs from it at six code points,
where 1047 puts the characters C compilers need: IBM's code page CPGID 01047 table (IBM
Globalization, "Code page 1047"; also the CCSID 1047 layout with the 037 differences marked in
https://en.everybodywiki.com/EBCDIC_1047):

    byte   CCSID 037   CCSID 1047
    X'5F'  ¬ U+00AC    ^ U+005E
    X'B0'  ^ U+005E    ¬ U+00AC
    X'AD'  Ý U+00DD    [ U+005B
    X'BA'  [ U+005B    Ý U+00DD
    X'BB'  ] U+005D    ¨ U+00A8
    X'BD'  ¨ U+00A8    ] U+005D

Line ends are the same in both (X'15' NEL U+0085, X'25' LF U+000A), so the table below is
CCSID 037's (Python's ``cp037``) with those six bytes changed.
"""

from __future__ import annotations

import codecs
from typing import Any

#: The bytes at which CCSID 1047 differs from CCSID 037, and what 1047 has there.
DIFFERENCES_FROM_037: dict[int, str] = {
    0x5F: "\u005e", 0xB0: "\u00ac", 0xAD: "\u005b", 0xBA: "\u00dd", 0xBB: "\u00a8", 0xBD: "\u005d",
}


def _decoding_table() -> str:
    table = list(bytes(range(256)).decode("cp037"))
    for byte, char in DIFFERENCES_FROM_037.items():
        table[byte] = char
    return "".join(table)


DECODING_TABLE = _decoding_table()
ENCODING_TABLE = codecs.charmap_build(DECODING_TABLE)


def encode(text: str, errors: str = "strict") -> tuple[bytes, int]:
    """Text as CCSID 1047 bytes (UnicodeEncodeError for a character 1047 lacks)."""
    return codecs.charmap_encode(text, errors, ENCODING_TABLE)


def decode(data: Any, errors: str = "strict") -> tuple[str, int]:
    """CCSID 1047 bytes as text (every byte maps: 1047 is a full 256-character page). ``data``
    is any buffer codecs hands a decoder (collections.abc.Buffer, typed from Python 3.12)."""
    return codecs.charmap_decode(data, errors, DECODING_TABLE)


def _search(name: str) -> codecs.CodecInfo | None:
    if name.replace("-", "").replace("_", "") not in ("cp1047", "ibm1047"):
        return None
    return codecs.CodecInfo(encode, decode, name="cp1047")


codecs.register(_search)
