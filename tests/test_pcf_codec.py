"""The PCF codec (app/cmdserver/pcf.py), pure: every parameter structure type round trips in
both byte orders, and malformed messages are refused with IBM's MQRCCF_* reasons."""

from __future__ import annotations

import struct

import pytest

from app.cmdserver import pcf

ALL_TYPES = [
    pcf.Parameter(pcf.MQCFT_INTEGER, 15, 4321),
    pcf.Parameter(pcf.MQCFT_INTEGER64, 1, -(2 ** 40)),
    pcf.Parameter(pcf.MQCFT_STRING, 2016, "APP.Q", ccsid=1208),
    pcf.Parameter(pcf.MQCFT_INTEGER_LIST, 1002, [15, 2013, -1]),
    pcf.Parameter(pcf.MQCFT_INTEGER64_LIST, 2, [2 ** 33, 0]),
    pcf.Parameter(pcf.MQCFT_STRING_LIST, 3011, ["A", "BBBBB", ""], ccsid=1208),
    pcf.Parameter(pcf.MQCFT_BYTE_STRING, 7004, b"\x00\x01\xff"),
    pcf.Parameter(pcf.MQCFT_INTEGER_FILTER, 3, 10, operator=pcf.MQCFOP_GREATER),
    pcf.Parameter(pcf.MQCFT_STRING_FILTER, 2013, "PAY*", operator=pcf.MQCFOP_LIKE, ccsid=1208),
    pcf.Parameter(pcf.MQCFT_BYTE_STRING_FILTER, 7006, b"\x01\x02", operator=pcf.MQCFOP_EQUAL),
]


@pytest.mark.parametrize("big", [False, True])
def test_every_parameter_type_round_trips(big):
    header = pcf.Header(pcf.MQCFT_COMMAND_XR, 13, pcf.MQCFH_VERSION_3, 1, pcf.MQCFC_LAST)
    data = pcf.encode(header, ALL_TYPES, big=big)
    assert len(data) % 4 == 0
    back = pcf.decode(data, big=big)
    assert back.header.type == pcf.MQCFT_COMMAND_XR and back.header.parameter_count == len(ALL_TYPES)
    for sent, got in zip(ALL_TYPES, back.parameters, strict=True):
        assert (got.type, got.parameter, got.value, got.operator) == (sent.type, sent.parameter,
                                                                      sent.value if sent.type != pcf.MQCFT_STRING_LIST
                                                                      else [v.rstrip() for v in sent.value],
                                                                      sent.operator)


def test_byte_order_follows_the_encoding():
    assert pcf.is_big_endian(pcf.MQENC_ZOS) and pcf.is_big_endian(0x111) and not pcf.is_big_endian(pcf.MQENC_NATIVE)
    data = pcf.encode(pcf.Header(pcf.MQCFT_COMMAND, 18), [pcf.Parameter(pcf.MQCFT_INTEGER, 20, 1)], big=True)
    assert data[:4] == b"\x00\x00\x00\x01" and data[36:40] == b"\x00\x00\x00\x03"
    little = pcf.encode(pcf.Header(pcf.MQCFT_COMMAND, 18), [], big=False)
    assert little[:4] == b"\x01\x00\x00\x00"


def test_groups_nest_their_parameters():
    group = pcf.Parameter(pcf.MQCFT_GROUP, 8001, group=[pcf.Parameter(pcf.MQCFT_INTEGER, 3, 7),
                                                        pcf.Parameter(pcf.MQCFT_STRING, 2016, "Q")])
    back = pcf.decode(pcf.encode(pcf.Header(pcf.MQCFT_RESPONSE), [group]), big=False)
    (g,) = back.parameters
    assert [(p.parameter, p.value) for p in g.group] == [(3, 7), (2016, "Q")]


def test_ebcdic_strings_by_their_ccsid():
    p = pcf.Parameter(pcf.MQCFT_STRING, 2016, "SYSTEM.DEFAULT.LOCAL.QUEUE", ccsid=500)
    data = pcf.encode(pcf.Header(), [p], big=True)
    assert b"SYSTEM" not in data and "SYSTEM".encode("cp500") in data
    assert pcf.decode(data, big=True).parameters[0].value == "SYSTEM.DEFAULT.LOCAL.QUEUE"


@pytest.mark.parametrize(("data", "reason"), [
    (b"\x01\x00\x00\x00", pcf.RC_CFH_LENGTH_ERROR),
    (struct.pack("<9i", 1, 40, 1, 18, 1, 1, 0, 0, 0), pcf.RC_CFH_LENGTH_ERROR),
    (struct.pack("<9i", 1, 36, 9, 18, 1, 1, 0, 0, 0), pcf.RC_CFH_VERSION_ERROR),
    (struct.pack("<9i", 1, 36, 1, 18, 1, 1, 0, 0, -1), pcf.RC_CFH_PARM_COUNT_ERROR),
    (struct.pack("<9i", 1, 36, 1, 18, 1, 1, 0, 0, 1), pcf.RC_MSG_LENGTH_ERROR),
    (struct.pack("<9i", 1, 36, 1, 18, 1, 1, 0, 0, 1) + struct.pack("<4i", 99, 16, 1, 1), pcf.RC_STRUCTURE_TYPE_ERROR),
    (struct.pack("<9i", 1, 36, 1, 18, 1, 1, 0, 0, 1) + struct.pack("<4i", 3, 12, 1, 1), pcf.RC_CFIN_LENGTH_ERROR),
    (struct.pack("<9i", 1, 36, 1, 18, 1, 1, 0, 0, 1) + struct.pack("<5i", 4, 20, 1, 0, 99), pcf.RC_CFST_LENGTH_ERROR),
    (struct.pack("<9i", 1, 36, 1, 18, 1, 1, 0, 0, 1) + struct.pack("<5i", 13, 20, 1, 77, 1),
     pcf.RC_CFIF_OPERATOR_ERROR),
    (struct.pack("<9i", 1, 36, 1, 18, 1, 1, 0, 0, 0) + b"\0\0\0\0", pcf.RC_MSG_LENGTH_ERROR),
])
def test_malformed_messages_are_refused_with_mqrccf_reasons(data, reason):
    with pytest.raises(pcf.PcfError) as caught:
        pcf.decode(data, big=False)
    assert caught.value.reason == reason
