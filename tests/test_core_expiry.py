"""Expiry arithmetic and expiration reports (app/core/expiry.py; docs/ibm-rules.md §4): lifetimes
in tenths of a second, what md.expiry says on MQGET, the report a discarded message asked for."""

from __future__ import annotations

import pytest

from app.core.expiry import REPORT_DATA_BYTES, UNLIMITED, expiration_report, expiry_at, remaining_tenths
from app.core.mqmd import NO_ID
from app.core.reports import report_code

NOW = 1_800_000_000_000
MSG_ID = "aa" * 24
CORREL_ID = "cc" * 24


def test_unlimited_is_minus_one_and_never_expires():
    assert UNLIMITED == -1
    assert expiry_at(UNLIMITED, NOW) == 0
    assert remaining_tenths(0, NOW) == UNLIMITED


def test_expiry_is_in_tenths_of_a_second():
    assert expiry_at(1, NOW) == NOW + 100
    assert expiry_at(600, NOW) == NOW + 60_000


def test_remaining_counts_down():
    at = expiry_at(100, NOW)  # 10 s
    assert remaining_tenths(at, NOW) == 100
    assert remaining_tenths(at, NOW + 2_500) == 75


def test_remaining_rounds_up_to_whole_tenths():
    at = expiry_at(10, NOW)
    assert remaining_tenths(at, NOW + 1) == 10
    assert remaining_tenths(at, NOW + 901) == 1


def test_remaining_is_never_zero_or_negative_for_a_returned_message():
    at = expiry_at(10, NOW)
    assert remaining_tenths(at, at) == 1
    assert remaining_tenths(at, at + 5_000) == 1


@pytest.mark.parametrize(("report", "kind"), [
    ([], 0), (["COPY_MSG_ID_TO_CORREL_ID"], 0), (["EXCEPTION"], 0),
    (["EXPIRATION"], 1), (["EXPIRATION_WITH_DATA"], 2), (["EXPIRATION_WITH_FULL_DATA"], 3),
    (["EXPIRATION", "EXPIRATION_WITH_DATA"], 2), (["EXPIRATION_WITH_DATA", "EXPIRATION_WITH_FULL_DATA"], 3),
    (["EXPIRATION", "EXPIRATION_WITH_FULL_DATA", "PASS_CORREL_ID"], 3),
])
def test_expiration_report_kind_fullest_wins(report, kind):
    """The expiration part of the coupling facility's report code (a message on its way: no COA/COD)."""
    assert report_code(report, arrival=False) == kind


def test_report_data_is_the_first_100_bytes():
    assert REPORT_DATA_BYTES == 100


def original(**md) -> dict:
    return {"msg_id": MSG_ID, "correl_id": CORREL_ID, "priority": 7, "persistence": "PERSISTENT",
            "expiry": 50, "format": "MQSTR", "report": ["EXPIRATION"], "reply_to_q": "REPLY.Q", **md}


def test_report_default_new_msg_id_and_msg_id_copied_to_correl_id():
    r = expiration_report(original(), "bb" * 24)
    assert r["msg_type"] == "REPORT"
    assert r["feedback"] == 258  # MQFB_EXPIRATION
    assert r["msg_id"] == "bb" * 24
    assert r["correl_id"] == MSG_ID


def test_report_pass_msg_id_and_pass_correl_id():
    r = expiration_report(original(report=["EXPIRATION", "PASS_MSG_ID", "PASS_CORREL_ID"]), "bb" * 24)
    assert (r["msg_id"], r["correl_id"]) == (MSG_ID, CORREL_ID)


def test_report_keeps_priority_and_persistence_and_never_expires():
    r = expiration_report(original(), "bb" * 24)
    assert (r["priority"], r["persistence"], r["expiry"]) == (7, "PERSISTENT", UNLIMITED)
    assert r["report"] == []


def test_report_format_only_when_data_is_carried():
    assert expiration_report(original(), "bb" * 24)["format"] == ""
    assert expiration_report(original(report=["EXPIRATION_WITH_DATA"]), "bb" * 24)["format"] == "MQSTR"
    assert expiration_report(original(report=["EXPIRATION_WITH_FULL_DATA"]), "bb" * 24)["format"] == "MQSTR"


def test_report_of_a_sparse_md_uses_defaults():
    r = expiration_report({"report": ["EXPIRATION", "PASS_MSG_ID"]}, "bb" * 24)
    assert (r["msg_id"], r["correl_id"]) == (NO_ID, NO_ID)
    assert (r["priority"], r["persistence"]) == (0, "NOT_PERSISTENT")


def test_what_remains_is_an_mqlong_however_far_the_stored_expiry_is():
    """A message stored by a version that took an expiry of 2**64-1 tenths: md.expiry on MQGET is
    held to the largest MQLONG (it answered 500, after the get had taken the message)."""
    assert remaining_tenths(NOW + (2**64 - 1) * 100, NOW) == 2**31 - 1
    assert remaining_tenths(expiry_at(2**31 - 1, NOW), NOW) == 2**31 - 1
    assert remaining_tenths(NOW + 1, NOW) == 1  # a part of a tenth rounds up
