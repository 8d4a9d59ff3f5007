"""MQOO_, MQPMO_ and MQGMO_ option rules (app/core/options.py) checked directly: IBM's
combinations, z/OS defaults (no syncpoint option = inside the unit of work), input modes."""

from __future__ import annotations

import pytest

from app.core.errors import MQError
from app.core.options import OpenOptions, parse_get_options, parse_open_options, parse_put_options, resolve_open_options
from app.core.reasons import MQRC


def reason(call, *args, **kwargs) -> int:
    with pytest.raises(MQError) as caught:
        call(*args, **kwargs)
    return caught.value.reason


# ---- MQOPEN -------------------------------------------------------------------------------------


def test_open_options_accept_names_with_or_without_prefix_and_any_case():
    assert parse_open_options(["MQOO_OUTPUT", "input_shared", "Browse"]) == {"OUTPUT", "INPUT_SHARED", "BROWSE"}


@pytest.mark.parametrize("options", [["INPUT_SHARED", "INPUT_EXCLUSIVE"], ["INPUT_AS_Q_DEF", "INPUT_SHARED"],
                                     ["INPUT_AS_Q_DEF", "INPUT_EXCLUSIVE", "OUTPUT"]])
def test_open_only_one_input_option(options):
    assert reason(parse_open_options, options) == MQRC.OPTIONS_ERROR == 2046


@pytest.mark.parametrize("options", [[], ["FAIL_IF_QUIESCING"]])
def test_open_needs_an_access_option(options):
    assert reason(parse_open_options, options) == 2046


@pytest.mark.parametrize("options", [["OUTPUT", "NO_SUCH"], ["SYNCPOINT"], ["MQPMO_OUTPUT"], [7]])
def test_open_unknown_options(options):
    assert reason(parse_open_options, options) == 2046


def test_resolve_explicit_input_modes():
    assert resolve_open_options(frozenset({"INPUT_SHARED"}), shareable=True, defsopt="EXCL").input == "SHARED"
    assert resolve_open_options(frozenset({"INPUT_EXCLUSIVE"}), shareable=True, defsopt="SHARED").input == "EXCLUSIVE"


def test_resolve_input_as_q_def_takes_defsopt():
    shared = resolve_open_options(frozenset({"INPUT_AS_Q_DEF"}), shareable=True, defsopt="SHARED")
    excl = resolve_open_options(frozenset({"INPUT_AS_Q_DEF"}), shareable=True, defsopt="EXCL")
    assert (shared.input, shared.input_as_q_def) == ("SHARED", True)
    assert (excl.input, excl.input_as_q_def) == ("EXCLUSIVE", True)


@pytest.mark.parametrize("chosen", [{"INPUT_SHARED"}, {"INPUT_AS_Q_DEF"}])
def test_resolve_noshare_queue_opens_input_exclusively(chosen):
    assert resolve_open_options(frozenset(chosen), shareable=False, defsopt="SHARED").input == "EXCLUSIVE"


def test_resolve_no_input():
    o = resolve_open_options(frozenset({"OUTPUT", "INQUIRE", "SET", "BROWSE", "FAIL_IF_QUIESCING"}),
                             shareable=True, defsopt="SHARED")
    assert o == OpenOptions(input=None, input_as_q_def=False, browse=True, output=True, inquire=True, set=True,
                            fail_if_quiescing=True)
    assert not o.any_input


# ---- MQPUT --------------------------------------------------------------------------------------


def test_put_without_syncpoint_option_is_in_the_unit_of_work_on_zos():
    assert parse_put_options([]).syncpoint is True
    assert parse_put_options(["SYNCPOINT"]).syncpoint is True
    assert parse_put_options(["NO_SYNCPOINT"]).syncpoint is False


def test_put_flags():
    o = parse_put_options(["MQPMO_NEW_MSG_ID", "new_correl_id", "FAIL_IF_QUIESCING"])
    assert (o.new_msg_id, o.new_correl_id, o.fail_if_quiescing) == (True, True, True)
    o = parse_put_options(["NO_SYNCPOINT"])
    assert (o.new_msg_id, o.new_correl_id, o.fail_if_quiescing) == (False, False, False)


@pytest.mark.parametrize("options", [["SYNCPOINT", "NO_SYNCPOINT"], ["WAIT"], ["BROWSE_FIRST"], ["OUTPUT"]])
def test_put_bad_options(options):
    assert reason(parse_put_options, options) == 2046


@pytest.mark.parametrize("options", [[["SYNCPOINT"]], [{"a": 1}], [None]])
def test_put_and_get_options_must_be_names(options):
    assert reason(parse_put_options, options) == 2046
    assert reason(parse_get_options, options) == 2046


# ---- MQGET --------------------------------------------------------------------------------------


def test_get_defaults_destructive_under_syncpoint_no_wait():
    o = parse_get_options([])
    assert (o.mode, o.syncpoint, o.wait, o.accept_truncated, o.browse) == ("GET", "YES", False, False, False)


@pytest.mark.parametrize(("options", "syncpoint"), [(["SYNCPOINT"], "YES"), (["NO_SYNCPOINT"], "NO"),
                                                    (["SYNCPOINT_IF_PERSISTENT"], "IF_PERSISTENT")])
def test_get_syncpoint_choices(options, syncpoint):
    assert parse_get_options(options).syncpoint == syncpoint


@pytest.mark.parametrize("options", [["SYNCPOINT", "NO_SYNCPOINT"], ["SYNCPOINT", "SYNCPOINT_IF_PERSISTENT"],
                                     ["NO_SYNCPOINT", "SYNCPOINT_IF_PERSISTENT"]])
def test_get_one_syncpoint_option(options):
    assert reason(parse_get_options, options) == 2046


def test_get_wait_and_no_wait_exclusive():
    assert reason(parse_get_options, ["WAIT", "NO_WAIT"]) == 2046
    assert parse_get_options(["WAIT"]).wait and not parse_get_options(["NO_WAIT"]).wait


@pytest.mark.parametrize("options", [["BROWSE_FIRST", "BROWSE_NEXT"], ["BROWSE_NEXT", "MSG_UNDER_CURSOR"]])
def test_get_one_browse_mode(options):
    assert reason(parse_get_options, options) == 2046


@pytest.mark.parametrize("mode", ["BROWSE_FIRST", "BROWSE_NEXT"])
def test_browse_is_never_under_syncpoint(mode):
    assert parse_get_options([mode]).syncpoint == "NO"
    assert parse_get_options([mode]).browse
    assert reason(parse_get_options, [mode, "SYNCPOINT"]) == 2046


def test_msg_under_cursor_is_destructive_and_may_be_under_syncpoint():
    o = parse_get_options(["MSG_UNDER_CURSOR", "SYNCPOINT"])
    assert (o.mode, o.syncpoint, o.browse) == ("MSG_UNDER_CURSOR", "YES", False)


def test_get_accept_truncated():
    assert parse_get_options(["ACCEPT_TRUNCATED_MSG"]).accept_truncated


@pytest.mark.parametrize("options", [["OUTPUT"], ["NEW_MSG_ID"], ["MQPMO_WAIT"]])
def test_get_unknown_options(options):
    assert reason(parse_get_options, options) == 2046


def test_cached_parse_returns_equal_results_for_equal_lists():
    assert parse_get_options(["WAIT", "NO_SYNCPOINT"]) == parse_get_options(("WAIT", "NO_SYNCPOINT"))
    assert parse_put_options(["NO_SYNCPOINT"]) is parse_put_options(["NO_SYNCPOINT"])
