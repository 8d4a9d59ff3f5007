"""The message descriptor rules of app/core/mqmd.py, through its public functions (validate_put_md,
hex_id, MsgIdGenerator, format_put_time): validation on put as IBM MQ answers it.
Kept apart from other core tests: the module is being given a typed MQMD, and these tests state
behaviour, not representation."""

from __future__ import annotations

import re

import pytest

from app.core.errors import MQError
from app.core.mqmd import (
    MQMD,
    NO_ID,
    MsgIdGenerator,
    format_put_time,
    hex_id,
    message_length,
    properties_length,
    validate_put_md,
)
from app.core.reasons import MQRC


def reason(md) -> int:
    with pytest.raises(MQError) as caught:
        validate_put_md(md)
    return caught.value.reason


# ---- defaults ---------------------------------------------------------------------------------


@pytest.mark.parametrize("md", [None, {}])
def test_defaults(md):
    out, warnings = validate_put_md(md)
    assert warnings == []
    assert out.msg_id == out.correl_id == NO_ID == "0" * 48
    assert out.priority == -1  # MQPRI_PRIORITY_AS_Q_DEF
    assert out.persistence == "AS_Q_DEF"
    assert out.expiry == -1  # MQEI_UNLIMITED
    assert out.msg_type == "DATAGRAM"
    assert out.format == "MQSTR"
    assert out.report == [] and out.feedback == 0
    assert out.reply_to_q == out.reply_to_qmgr == ""


def test_defaults_are_a_fresh_copy():
    out, _ = validate_put_md(None)
    out.priority = 9
    assert validate_put_md(None)[0].priority == -1


# ---- MsgId / CorrelId -----------------------------------------------------------------------------


def test_hex_id_is_lowercased():
    assert hex_id("AB" * 24, "md.msg_id") == "ab" * 24


@pytest.mark.parametrize("value", ["ab" * 23, "ab" * 25, "zz" * 24, 12, None, b"\x00" * 24])
def test_hex_id_must_be_48_hex_digits(value):
    with pytest.raises(MQError) as caught:
        hex_id(value, "md.correl_id")
    assert caught.value.reason == MQRC.MD_ERROR == 2026
    assert "md.correl_id" in str(caught.value)


def test_ids_are_validated_in_the_md():
    assert reason({"msg_id": "xyz"}) == 2026
    assert reason({"correl_id": "0" * 47}) == 2026
    assert validate_put_md({"msg_id": "AB" * 24})[0].msg_id == "ab" * 24


# ---- priority --------------------------------------------------------------------------------------


@pytest.mark.parametrize("priority", [-1, 0, 5, 9])
def test_priority_in_range_no_warning(priority):
    out, warnings = validate_put_md({"priority": priority})
    assert out.priority == priority and warnings == []


def test_priority_above_9_is_a_warning_2049_and_the_md_keeps_it():
    out, warnings = validate_put_md({"priority": 12})
    assert out.priority == 12
    assert [w[0] for w in warnings] == [MQRC.PRIORITY_EXCEEDS_MAXIMUM] == [2049]


@pytest.mark.parametrize("priority", [-2, True, False, "5", 5.0, None])
def test_priority_errors_2050(priority):
    """Booleans are not integers for MQ (docs/design.md: strict fields)."""
    assert reason({"priority": priority}) == MQRC.PRIORITY_ERROR == 2050


# ---- persistence, expiry, message type, report -------------------------------------------------------


@pytest.mark.parametrize("persistence", ["PERSISTENT", "NOT_PERSISTENT", "AS_Q_DEF"])
def test_persistence_values(persistence):
    assert validate_put_md({"persistence": persistence})[0].persistence == persistence


@pytest.mark.parametrize("persistence", ["persistent", "YES", 1, True, ""])
def test_persistence_error_2047(persistence):
    assert reason({"persistence": persistence}) == MQRC.PERSISTENCE_ERROR == 2047


@pytest.mark.parametrize("expiry", [-1, 1, 600])
def test_expiry_values(expiry):
    assert validate_put_md({"expiry": expiry})[0].expiry == expiry


@pytest.mark.parametrize("expiry", [0, -2, True, 1.5, "10"])
def test_expiry_error_2013(expiry):
    """MQEI_UNLIMITED (-1) or a positive number of tenths; zero is not a lifetime."""
    assert reason({"expiry": expiry}) == MQRC.EXPIRY_ERROR == 2013


@pytest.mark.parametrize("msg_type", ["DATAGRAM", "REPLY", "REPORT"])
def test_msg_types(msg_type):
    assert validate_put_md({"msg_type": msg_type})[0].msg_type == msg_type


def test_msg_type_error():
    assert reason({"msg_type": "NOTICE"}) == MQRC.MSG_TYPE_ERROR


def test_request_needs_a_reply_to_queue():
    assert reason({"msg_type": "REQUEST"}) == MQRC.MISSING_REPLY_TO_Q
    assert reason({"msg_type": "REQUEST", "reply_to_q": "   "}) == MQRC.MISSING_REPLY_TO_Q
    out, _ = validate_put_md({"msg_type": "REQUEST", "reply_to_q": " REPLY.Q ", "reply_to_qmgr": "QM2"})
    assert (out.reply_to_q, out.reply_to_qmgr) == ("REPLY.Q", "QM2")


def test_report_options_sorted_and_deduplicated():
    out, _ = validate_put_md({"report": ["PASS_CORREL_ID", "EXPIRATION", "EXPIRATION"], "reply_to_q": "R.Q"})
    assert out.report == ["EXPIRATION", "PASS_CORREL_ID"]


@pytest.mark.parametrize("report", [["NO_SUCH"], "EXPIRATION", [1]])
def test_report_options_error(report):
    assert reason({"report": report}) == MQRC.REPORT_OPTIONS_ERROR


def test_feedback_must_be_an_integer():
    assert validate_put_md({"feedback": 258})[0].feedback == 258
    assert reason({"feedback": "258"}) == 2014
    assert reason({"feedback": True}) == 2014


# ---- names and fields ----------------------------------------------------------------------------------


def test_format_at_most_8_characters():
    assert validate_put_md({"format": "MQHRF2  "})[0].format == "MQHRF2"
    assert reason({"format": "TOOLONGFMT"}) == 2026


def test_reply_to_names_at_most_48_characters():
    assert reason({"reply_to_q": "Q" * 49}) == 2026
    assert reason({"reply_to_qmgr": 5}) == 2026
    assert validate_put_md({"reply_to_q": "Q" * 48})[0].reply_to_q == "Q" * 48


def test_unknown_fields_are_md_errors():
    assert reason({"colour": "red"}) == 2026


def test_md_must_be_an_object():
    assert reason(["priority", 5]) == 2026
    assert reason("md") == 2026


def test_output_fields_are_accepted_but_not_taken_from_the_application():
    out, _ = validate_put_md({"put_appl_name": "FORGED", "backout_count": 3, "user_identifier": "root"})
    assert (out.put_appl_name, out.backout_count, out.user_identifier) == ("", 0, "")


# ---- message properties -----------------------------------------------------------------------------------


def test_properties_kept_when_given():
    props = {"colour": "red", "size": 3, "ratio": 0.5, "ok": True, "nothing": None, "a.b$c": "x"}
    assert validate_put_md({"properties": props})[0].properties == props


def test_empty_properties_are_left_out():
    out, _ = validate_put_md({"properties": {}})
    assert out.properties is None and "properties" not in out.to_dict()


@pytest.mark.parametrize("props", [{"1bad": "x"}, {"bad name": "x"}, {"nested": {"a": 1}}, {"list": [1]},
                                   ["a"], {f"p{i}": i for i in range(101)}])
def test_bad_properties(props):
    assert reason({"properties": props}) == 2026


# ---- put time, MsgIds, completion codes ---------------------------------------------------------------------


def test_format_put_time_iso_utc_milliseconds():
    assert format_put_time(0) == "1970-01-01T00:00:00.000Z"
    assert format_put_time(1_800_000_000_123) == "2027-01-15T08:00:00.123Z"
    assert format_put_time(1_800_000_000_999) == "2027-01-15T08:00:00.999Z"
    assert format_put_time(1_800_000_001_000) == "2027-01-15T08:00:01.000Z"


def test_msg_ids_are_48_hex_digits_naming_the_queue_manager():
    gen = MsgIdGenerator("QM1")
    mid = gen.next()
    assert re.fullmatch(r"[0-9a-f]{48}", mid)
    assert bytes.fromhex(mid)[:8] == b"CSQ QM1 "


def test_msg_ids_are_unique_within_and_across_generators():
    a, b = MsgIdGenerator("QM1"), MsgIdGenerator("QM2")
    ids = [a.next() for _ in range(1000)] + [b.next() for _ in range(1000)]
    assert len(set(ids)) == 2000
    restarted = MsgIdGenerator("QM1")  # a restart of the same QM never repeats an id
    assert restarted.next() not in ids


# ---- MQLONG bounds, MQCHAR fields, stored MQMDs (docs/howto/security.md, Limits) ---------------------------

MQLONG_MAX = 2**31 - 1


@pytest.mark.parametrize(("md", "expected"), [
    ({"expiry": MQLONG_MAX + 1}, 2013), ({"expiry": 2**64 - 1}, 2013), ({"priority": MQLONG_MAX + 1}, 2050),
    ({"feedback": -1}, 2014), ({"feedback": 10**9}, 2014), ({"original_length": MQLONG_MAX + 1}, 2252),
    ({"msg_seq_number": MQLONG_MAX + 1}, 2250), ({"offset": MQLONG_MAX + 1}, 2251),
    ({"reply_to_q": "A B"}, 2026), ({"reply_to_qmgr": "QM\n1"}, 2026), ({"format": "MQ\x7fSTR"}, 2026),
])
def test_integers_are_mqlongs_and_names_are_names(md, expected):
    assert reason(md) == expected


def test_the_largest_values_ibm_allows_are_accepted():
    out, warnings = validate_put_md({"expiry": MQLONG_MAX, "priority": MQLONG_MAX, "feedback": 999_999_999,
                                     "original_length": MQLONG_MAX, "offset": MQLONG_MAX})
    assert (out.expiry, out.priority, out.feedback) == (MQLONG_MAX, MQLONG_MAX, 999_999_999)
    assert [w[0] for w in warnings] == [MQRC.PRIORITY_EXCEEDS_MAXIMUM]


def test_a_nul_ends_an_mqchar_field():
    out, _ = validate_put_md({"format": "MQSTR\x00anything\n", "reply_to_q": "R.Q\x00", "reply_to_qmgr": "\x00x"})
    assert (out.format, out.reply_to_q, out.reply_to_qmgr) == ("MQSTR", "R.Q", "")


def test_a_stored_mqmd_with_values_no_mqmd_holds_is_repaired_not_refused():
    stored = {"msg_id": "ab" * 24, "priority": 2**40, "expiry": -(2**70), "feedback": 1.5e21, "format": 5,
              "report": "EXPIRATION", "msg_flags": ["LAST_SEGMENT", 3], "properties": [1], "encoding": None}
    md = MQMD.from_dict(stored)
    assert md.msg_id == "ab" * 24 and md.priority == MQLONG_MAX and md.expiry == -(2**31)
    assert md.feedback == MQLONG_MAX and md.format == "MQSTR" and md.report == [] and md.msg_flags == ["LAST_SEGMENT"]
    assert md.properties is None and md.encoding == 546
    assert MQMD.from_dict(["not", "an", "object"]) == MQMD()


def test_properties_count_in_the_message_length():
    md = MQMD(properties={"a": "xyz", "é": "€", "n": 12, "b": {"$bytes": "AAAA"}, "t": True, "z": None})
    assert properties_length(md.properties) == (1 + 3) + (2 + 3) + (1 + 2) + (1 + 3) + (1 + 4) + (1 + 4)
    assert message_length(md, 10) == 10 + properties_length(md.properties)
    assert message_length(MQMD(), 10) == 10


# ---- a batch's MQMDs: encoded and parsed once for messages that differ only in their MsgIds ----


def _batch_mds() -> list[MQMD]:
    ids = MsgIdGenerator("QM1")
    mds = []
    for i in range(6):
        md = MQMD(msg_id=ids.next(), priority=4, persistence="PERSISTENT", report=["COA"] if i < 3 else [],
                  put_appl_name="APP", put_date_time="2026-11-27T18:00:00.000Z", put_qmgr="QM1")
        if i == 4:
            md.properties = {"colour": "red"}
        mds.append(md)
    mds.append(MQMD(msg_id="ab" * 24, correl_id="cd" * 24))
    return mds


def test_stored_mds_are_the_bytes_each_message_would_be_encoded_as() -> None:
    import orjson

    from app.qmgr.mqi.batchmds import StoredMDs

    stored = StoredMDs()
    mds = _batch_mds()
    encoded = [stored.encode(md) for md in mds]
    assert encoded == [orjson.dumps(md.to_dict(compact=True)) for md in mds]
    assert len(set(encoded)) == len(mds)  # each with its own MsgId
    # a change to an encoded MQMD's list after it was encoded does not leak into the next message's
    first = MQMD(msg_id="01" * 24, report=["COA"])
    stored.encode(first)
    first.report[:] = ["COD"]
    second = MQMD(msg_id="02" * 24, report=["COD"])
    assert stored.encode(second) == orjson.dumps(second.to_dict(compact=True))


def test_parsed_mds_are_what_each_stored_mqmd_parses_as_and_independent() -> None:
    import orjson

    from app.qmgr.mqi.batchmds import ParsedMDs, StoredMDs

    stored, parsed = StoredMDs(), ParsedMDs()
    mds = _batch_mds()
    got = [parsed.parse(stored.encode(md)) for md in mds]
    assert got == [MQMD.from_dict(orjson.loads(orjson.dumps(md.to_dict(compact=True)))) for md in mds]
    got[1].report.append("COD")  # the caller changes what it got (backout count, expiry, ...)
    got[1].backout_count = 3
    again = parsed.parse(stored.encode(mds[2]))
    assert again.report == ["COA"] and again.backout_count == 0
    with pytest.raises(orjson.JSONDecodeError):
        parsed.parse(b"not json")
