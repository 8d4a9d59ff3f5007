"""Unit tests of the CCSID 1047 codec (app/core/cp1047.py) and of the pure conversion rules
(app/core/convert.py)."""

from __future__ import annotations

import codecs

import pytest

from app.core import convert
from app.core.cp1047 import DECODING_TABLE, DIFFERENCES_FROM_037


def test_1047_differs_from_037_at_exactly_six_code_points():
    cp037 = bytes(range(256)).decode("cp037")
    differing = {i for i in range(256) if cp037[i] != DECODING_TABLE[i]}
    assert differing == {0x5F, 0xAD, 0xB0, 0xBA, 0xBB, 0xBD} == set(DIFFERENCES_FROM_037)


@pytest.mark.parametrize("char,byte", [("[", 0xAD), ("]", 0xBD), ("^", 0x5F), ("¬", 0xB0), ("Ý", 0xBA),
                                       ("¨", 0xBB), ("\n", 0x25), ("\x85", 0x15), ("A", 0xC1), ("a", 0x81),
                                       ("0", 0xF0), (" ", 0x40), ("{", 0xC0), ("}", 0xD0), ("|", 0x4F)])
def test_1047_code_points(char, byte):
    assert char.encode("cp1047") == bytes([byte])
    assert bytes([byte]).decode("cp1047") == char


def test_1047_is_a_full_round_trip_of_latin1():
    assert len(set(DECODING_TABLE)) == 256
    assert {ord(c) for c in DECODING_TABLE} == set(range(256))  # every Latin-1 character once
    data = bytes(range(256))
    assert data.decode("cp1047").encode("cp1047") == data
    assert codecs.lookup("IBM-1047").name == "cp1047" and codecs.lookup("ibm1047").name == "cp1047"


def test_1047_refuses_characters_outside_latin1():
    with pytest.raises(UnicodeEncodeError):
        "€".encode("cp1047")


def test_convert_string_rules():
    assert convert.convert_string("é[x]".encode("cp037"), 37, 1047) == "é[x]".encode("cp1047")
    assert convert.convert_string(b"same", 1208, 1208) == b"same"
    for source, target, reason in ((1234, 1208, 2111), (1208, 1234, 2115)):
        with pytest.raises(convert.ConversionError) as caught:
            convert.convert_string(b"x", source, target)
        assert caught.value.reason == reason
    with pytest.raises(convert.ConversionError) as caught:
        convert.convert_string("€".encode(), 1208, 819)
    assert caught.value.reason == 2119
    with pytest.raises(convert.ConversionError) as caught:
        convert.convert_string(b"\xff\xfe", 1208, 500)  # not UTF-8 at all
    assert caught.value.reason == 2119
    # truncated UTF-8: the incomplete last character is left out
    assert convert.convert_string("aé".encode()[:2], 1208, 819, partial=True) == b"a"


def test_convert_message_rules():
    done = convert.convert_message("MQSTR", "abc".encode("cp500"), 500, 785, 1208, 546, buffer_length=100)
    assert (done.data, done.ccsid, done.encoding, done.warning) == (b"abc", 1208, 546, None)
    kept = convert.convert_message("MQSTR   ", b"\xe9\xe9", 819, 546, 1208, 546, buffer_length=3)
    assert kept.warning[0] == 2120 and kept.data == b"\xe9\xe9" and kept.ccsid == 819
    cut = convert.convert_message("MQSTR", b"\xe9\xe9", 819, 546, 1208, 546, buffer_length=3, truncated=True)
    # ACCEPT_TRUNCATED_MSG: converted, then cut to the buffer (the 2079 warning says so)
    assert cut.warning is None and cut.data == b"\xc3\xa9\xc3"
    assert convert.convert_message("", b"x", 37, 785, 1208, 546, buffer_length=9).warning[0] == 2110
    same = convert.convert_message("", b"x", 1208, 546, 1208, 546, buffer_length=9)  # nothing to convert
    assert same.warning is None and same.data == b"x"
    own = convert.convert_message("MQEVENT", b"{}", 1208, 546, 500, 785, buffer_length=9)
    assert own.warning is None and own.ccsid == 1208
