"""Trigger conditions (docs/ibm-rules.md §3) as the pure functions of app/core/triggers.py decide
them: no Redis, no HTTP. The numbers in the test names are IBM's condition numbers."""

from __future__ import annotations

import dataclasses

import pytest

from app.core.triggers import (
    APPL_TYPES,
    MQAT_UNKNOWN,
    TriggerSnapshot,
    enough_waiting,
    failed_condition,
    mqtm,
    trigger_messages_for,
    trigint_elapsed,
    type_in_effect,
)

APP_Q = {"TRIGGER": True, "TRIGTYPE": "FIRST", "TRIGMPRI": 0, "TRIGDPTH": 1, "GET": "ENABLED",
         "PROCESS": "PAYPROC", "INITQ": "INITQ", "USAGE": "NORMAL", "TRIGDATA": "data"}
INITQ = {"GET": "ENABLED", "PUT": "ENABLED", "USAGE": "NORMAL"}
PROCESS = {"APPLTYPE": "UNIX", "APPLICID": "/bin/payroll", "ENVRDATA": "env", "USERDATA": "user"}


def snap(**changes) -> TriggerSnapshot:
    """A snapshot in which every condition 4-10 holds, with ``changes`` applied."""
    attrs = {**APP_Q, **changes.pop("attrs", {})}
    base = TriggerSnapshot(queue="APP.Q", attrs=attrs, shared=True, my_input=0, others_input=0,
                           exclusive_anywhere=False, process=PROCESS, initq=INITQ, initq_open_for_input=True)
    return dataclasses.replace(base, **changes)


# ---- conditions 4 to 10 ---------------------------------------------------------------------


def test_all_conditions_hold():
    assert failed_condition(snap(), "FIRST") is None
    assert failed_condition(snap(), "EVERY") is None
    assert failed_condition(snap(), "DEPTH") is None


@pytest.mark.parametrize("trigtype", ["FIRST", "DEPTH"])
def test_condition_4_own_open_input_stops_first_and_depth(trigtype):
    assert failed_condition(snap(my_input=1), trigtype) == 4


def test_condition_4_does_not_apply_to_every():
    assert failed_condition(snap(my_input=3), "EVERY") is None


def test_condition_4_another_qms_shared_input_does_not_stop_this_qm():
    """Note b: the OpenInputCount that counts is this queue manager's own."""
    assert failed_condition(snap(others_input=2), "FIRST") is None


@pytest.mark.parametrize("trigtype", ["FIRST", "EVERY", "DEPTH"])
def test_condition_4_exclusive_input_anywhere_stops_every_qm(trigtype):
    assert failed_condition(snap(exclusive_anywhere=True), trigtype) == 4


def test_condition_4_exclusive_flag_is_about_shared_queues_only():
    assert failed_condition(snap(shared=False, exclusive_anywhere=True), "EVERY") is None


def test_condition_5_get_inhibited_application_queue():
    assert failed_condition(snap(attrs={"GET": "DISABLED"}), "FIRST") == 5


def test_condition_6_process_must_exist():
    assert failed_condition(snap(process=None), "FIRST") == 6


def test_condition_6_transmission_queue_needs_no_process_when_process_name_blank():
    xmitq = {"USAGE": "XMITQ", "PROCESS": "  "}
    assert failed_condition(snap(process=None, attrs=xmitq), "FIRST") is None


def test_condition_6_transmission_queue_naming_an_undefined_process_fails():
    xmitq = {"USAGE": "XMITQ", "PROCESS": "NO.SUCH.PROC"}
    assert failed_condition(snap(process=None, attrs=xmitq), "FIRST") == 6


def test_condition_6_blank_process_on_a_normal_queue_fails():
    assert failed_condition(snap(process=None, attrs={"PROCESS": ""}), "FIRST") == 6


@pytest.mark.parametrize("initq", [None, {**INITQ, "GET": "DISABLED"}, {**INITQ, "PUT": "DISABLED"},
                                   {**INITQ, "USAGE": "XMITQ"}])
def test_condition_7_initiation_queue_defined_get_and_put_allowed_usage_normal(initq):
    assert failed_condition(snap(initq=initq), "FIRST") == 7


def test_condition_8_a_trigger_monitor_must_have_the_initiation_queue_open():
    assert failed_condition(snap(initq_open_for_input=False), "FIRST") == 8


def test_condition_9_trigger_control_off():
    assert failed_condition(snap(attrs={"TRIGGER": False}), "FIRST") == 9


def test_condition_10_trigger_type_none():
    assert failed_condition(snap(), "NONE") == 10


def test_first_failing_condition_is_reported():
    s = snap(my_input=1, attrs={"GET": "DISABLED", "TRIGGER": False}, initq=None)
    assert failed_condition(s, "FIRST") == 4
    assert failed_condition(s, "EVERY") == 5


def test_skipped_conditions_are_not_checked():
    """Re-trigger cases exclude some conditions (e.g. condition 13 excludes 8)."""
    s = snap(initq_open_for_input=False, attrs={"GET": "DISABLED"})
    assert failed_condition(s, "FIRST", frozenset({5})) == 8
    assert failed_condition(s, "FIRST", frozenset({5, 8})) is None
    assert failed_condition(snap(my_input=1), "FIRST", frozenset({4})) is None


# ---- condition 4 note a: the type in effect on a shared queue --------------------------------


def test_type_in_effect_is_the_definition_when_nobody_has_it_open():
    s = snap(attrs={"TRIGTYPE": "DEPTH", "TRIGMPRI": 5})
    assert type_in_effect(s) == ("DEPTH", 5)


def test_type_in_effect_is_first_priority_0_while_another_qm_has_it_open_for_input():
    s = snap(others_input=1, attrs={"TRIGTYPE": "EVERY", "TRIGMPRI": 7})
    assert type_in_effect(s) == ("FIRST", 0)


def test_type_in_effect_unchanged_on_the_qm_that_has_it_open():
    s = snap(others_input=1, my_input=1, attrs={"TRIGTYPE": "EVERY", "TRIGMPRI": 7})
    assert type_in_effect(s) == ("EVERY", 7)


def test_type_in_effect_private_queue_ignores_other_qms():
    s = snap(shared=False, others_input=1, attrs={"TRIGTYPE": "DEPTH", "TRIGMPRI": 2})
    assert type_in_effect(s) == ("DEPTH", 2)


def test_type_in_effect_defaults():
    s = snap(attrs={})
    bare = dataclasses.replace(s, attrs={k: v for k, v in s.attrs.items() if k not in ("TRIGTYPE", "TRIGMPRI")})
    assert type_in_effect(bare) == ("FIRST", 0)


# ---- conditions 3 and 11: how many trigger messages a put makes ------------------------------


def test_first_triggers_on_empty_to_one():
    assert trigger_messages_for("FIRST", 0, 1, 1, trigint_elapsed=False) == 1


def test_first_does_not_trigger_on_a_non_empty_queue_within_trigint():
    assert trigger_messages_for("FIRST", 1, 2, 1, trigint_elapsed=False) == 0


def test_first_triggers_on_a_non_empty_queue_once_trigint_has_passed():
    """Condition 11: a queue server that ended before emptying the queue is started again."""
    assert trigger_messages_for("FIRST", 3, 4, 1, trigint_elapsed=True) == 1


def test_trigint_elapsed_when_no_trigger_message_was_written_yet():
    assert trigint_elapsed(None, 1_000, 999_999_999)
    assert not trigint_elapsed(500, 1_000, 999_999_999)
    assert trigint_elapsed(500, 1_500, 1_000)


def test_every_triggers_once_per_message():
    assert trigger_messages_for("EVERY", 0, 1, 1, trigint_elapsed=False) == 1
    assert trigger_messages_for("EVERY", 5, 8, 1, trigint_elapsed=False) == 3


def test_depth_triggers_when_trigdpth_is_reached():
    assert trigger_messages_for("DEPTH", 2, 3, 3, trigint_elapsed=False) == 1
    assert trigger_messages_for("DEPTH", 1, 2, 3, trigint_elapsed=False) == 0
    # condition 11 for DEPTH: a put to a queue that already had TRIGDPTH messages (no TRIGINT)
    assert trigger_messages_for("DEPTH", 3, 4, 3, trigint_elapsed=False) == 1
    assert trigger_messages_for("DEPTH", 1, 5, 3, trigint_elapsed=False) == 1  # crossing it in one step


def test_no_trigger_when_the_count_does_not_grow():
    """Condition 2: a message below TRIGMPRI leaves the count of messages that count unchanged."""
    for trigtype in ("FIRST", "EVERY", "DEPTH"):
        assert trigger_messages_for(trigtype, 0, 0, 1, trigint_elapsed=True) == 0
        assert trigger_messages_for(trigtype, 2, 1, 1, trigint_elapsed=True) == 0


def test_trigger_type_none_never_triggers():
    assert trigger_messages_for("NONE", 0, 1, 1, trigint_elapsed=True) == 0


# ---- conditions 12 and 13: enough messages waiting -------------------------------------------


@pytest.mark.parametrize("trigtype", ["FIRST", "EVERY"])
def test_enough_waiting_first_and_every_need_one(trigtype):
    assert enough_waiting(trigtype, 1, 5)
    assert not enough_waiting(trigtype, 0, 5)


def test_enough_waiting_depth_needs_trigdpth():
    assert enough_waiting("DEPTH", 5, 5)
    assert enough_waiting("DEPTH", 6, 5)
    assert not enough_waiting("DEPTH", 4, 5)


def test_enough_waiting_none_is_never_enough():
    assert not enough_waiting("NONE", 100, 1)


# ---- the trigger message (MQTM) ----------------------------------------------------------------


def test_mqtm_from_the_queue_and_process():
    tm = mqtm("APP.Q", APP_Q, "PAYPROC", PROCESS)
    assert tm == {"StrucId": "TM  ", "Version": 1, "QName": "APP.Q", "ProcessName": "PAYPROC",
                  "TriggerData": "data", "ApplType": APPL_TYPES["UNIX"], "ApplId": "/bin/payroll",
                  "EnvData": "env", "UserData": "user"}


def test_mqtm_numeric_and_unknown_appltype():
    assert mqtm("Q", {}, "P", {"APPLTYPE": "65536"})["ApplType"] == 65536
    assert mqtm("Q", {}, "P", {"APPLTYPE": "MARTIAN"})["ApplType"] == MQAT_UNKNOWN


def test_mqtm_transmission_queue_without_process_has_blanks_and_unknown_type():
    """Condition 6: ProcessName, ApplId, EnvData, UserData blank; ApplType MQAT_UNKNOWN."""
    tm = mqtm("XMIT.Q", {"TRIGDATA": "CHANNEL1"}, "", None)
    assert tm["ProcessName"] == "" and tm["ApplId"] == "" and tm["EnvData"] == "" and tm["UserData"] == ""
    assert tm["ApplType"] == MQAT_UNKNOWN == -1
    assert tm["TriggerData"] == "CHANNEL1" and tm["QName"] == "XMIT.Q"


def test_mqat_values_follow_cmqc():
    assert (APPL_TYPES["CICS"], APPL_TYPES["MVS"], APPL_TYPES["IMS"], APPL_TYPES["UNIX"]) == (1, 2, 3, 6)
    assert APPL_TYPES["DEF"] == APPL_TYPES["MVS"]  # on z/OS the default application type is MVS
