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
