"""DISPLAY ... WHERE as IBM MQ for z/OS answers it, over real HTTP (POST /v1/admin/mqsc): with no
attribute named, a generic DISPLAY with WHERE shows each object's name, TYPE, QSGDISP and the
filter attribute (plus the attributes asked for) - not every attribute; the event switches
and QSGDISP/CMDSCOPE are no filter keywords (IBM: "you cannot use the CMDSCOPE, QDPHIEV,
QDPLOEV, QDPMAXEV, QSGDISP, or QSVCIEV parameters as filter keywords")."""

from __future__ import annotations

import pytest

from tests.support.names import uniq


@pytest.fixture(scope="module")
def group(make_cluster):
    return make_cluster(["QM1"])


def test_where_shows_the_name_type_qsgdisp_and_the_filter_attribute(group):
    stem = uniq("WHR")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({stem}.A) MAXDEPTH(10)\nDEFINE QLOCAL({stem}.B) MAXDEPTH(20)")
    (res,) = group.mqsc_ok("QM1", f"DISPLAY QLOCAL({stem}.*) WHERE(MAXDEPTH GT 15)")
    assert res["objects"] == [{"QUEUE": f"{stem}.B", "TYPE": "QLOCAL", "QSGDISP": "QMGR", "MAXDEPTH": 20}]
    (res,) = group.mqsc_ok("QM1", f"DISPLAY QUEUE({stem}.*) WHERE(MAXDEPTH LT 15) DESCR")
    assert res["objects"] == [{"QUEUE": f"{stem}.A", "TYPE": "QLOCAL", "QSGDISP": "QMGR", "MAXDEPTH": 10,
                               "DESCR": ""}]
    (res,) = group.mqsc_ok("QM1", f"DISPLAY QLOCAL({stem}.*) WHERE(MAXDEPTH GT 15) ALL")
    assert len(res["objects"][0]) > 20  # ALL: every attribute
    (res,) = group.mqsc_ok("QM1", f"DISPLAY QLOCAL({stem}.*)")  # no WHERE, no names: every attribute
    assert all(len(o) > 20 for o in res["objects"])


@pytest.mark.parametrize("keyword", ["QDPHIEV", "QDPLOEV", "QDPMAXEV", "QSVCIEV", "QSGDISP", "CMDSCOPE"])
def test_event_switches_qsgdisp_and_cmdscope_are_no_filter_keywords(group, keyword):
    (res,) = group.mqsc("QM1", f"DISPLAY QLOCAL(*) WHERE({keyword} EQ ENABLED)")
    assert res["completion_code"] == 2 and res["reason"] == 3150  # MQRCCF_FILTER_ERROR


@pytest.mark.parametrize("asked", ["CURDEPTH(5)", "MAXDEPTH(10)", "ALL(YES)", "DESCR('x')"])
def test_a_value_on_an_attribute_asked_for_is_a_syntax_error(group, asked):
    """On z/OS, DISPLAY's attribute keywords take no value: the command preprocessor refuses
    ``CURDEPTH(5)`` (CSQ9011E) and the command ends abnormally, with MQRCCF_PARM_SYNTAX_ERROR;
    before, the value was silently ignored and every attribute shown."""
    q = uniq("VAL")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    (res,) = group.mqsc("QM1", f"DISPLAY QLOCAL({q}) {asked}")
    assert (res["completion_code"], res["reason"], res["objects"]) == (2, 3097, []), res
    keyword = asked.split("(")[0]
    assert res["messages"][0].startswith(f"CSQ9011E Parameter(s) not allowed for '{keyword}'"), res
    assert res["messages"][-1] == "CSQ9023E QM1 ABNORMAL COMPLETION"


def test_keywords_that_take_a_value_on_display_still_work(group):
    stem = uniq("KVAL")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({stem}.A) MAXDEPTH(10)\nDEFINE QALIAS({stem}.B) TARGET({stem}.A)")
    (res,) = group.mqsc_ok("QM1", f"DISPLAY QUEUE({stem}.*) TYPE(QALIAS) QSGDISP(QMGR) CMDSCOPE(QM1) TARGET")
    assert [(o["QUEUE"], o["TARGET"]) for o in res["objects"]] == [(f"{stem}.B", f"{stem}.A")]
    (res,) = group.mqsc_ok("QM1", f"DISPLAY QLOCAL({stem}.*) WHERE(MAXDEPTH EQ 10) CURDEPTH")
    assert res["objects"] == [{"QUEUE": f"{stem}.A", "TYPE": "QLOCAL", "QSGDISP": "QMGR", "MAXDEPTH": 10,
                               "CURDEPTH": 0}]
    (res,) = group.mqsc_ok("QM1", f"DISPLAY QSTATUS({stem}.A) TYPE(HANDLE) OPENTYPE(ALL)")
    assert res["objects"] == []



def test_display_channel_selects_by_chltype_as_by_type(group):
    """IBM's DISPLAY CHANNEL: "You cannot use TYPE (or CHLTYPE) if it is also used to select
    channels" - CHLTYPE(type) selects channels of that type, as TYPE(type) does (not CSQ9011E)."""
    stem = uniq("CT")
    group.mqsc_ok("QM1", f"DEFINE CHANNEL({stem}.S) CHLTYPE(SVRCONN)\nDEFINE CHANNEL({stem}.R) CHLTYPE(RCVR)")
    (res,) = group.mqsc_ok("QM1", f"DISPLAY CHANNEL({stem}.*) CHLTYPE(RCVR)")
    assert [(o["CHANNEL"], o["CHLTYPE"]) for o in res["objects"]] == [(f"{stem}.R", "RCVR")]
    (res,) = group.mqsc_ok("QM1", f"DISPLAY CHANNEL({stem}.*) CHLTYPE")  # the attribute asked for
    assert sorted(o["CHLTYPE"] for o in res["objects"]) == ["RCVR", "SVRCONN"]
    (res,) = group.mqsc("QM1", f"DISPLAY CHANNEL({stem}.*) CHLTYPE(NOSUCH)")
    assert (res["completion_code"], res["reason"]) == (2, 4005)  # MQRCCF_ATTR_VALUE_ERROR
