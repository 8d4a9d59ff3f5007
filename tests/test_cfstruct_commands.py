"""CF structure commands answer as IBM MQ for z/OS does (docs/reference/mqsc.md), over real HTTP between real
queue managers and a real redis-server: RESET CFSTRUCT only on CFLEVEL(5) structures and not
on one already failed, RECOVER CFSTRUCT only of a failed structure, DISPLAY CFSTATUS(*) one row
per structure, and RECAUTO(YES) recovering a failed structure without an operator."""

from __future__ import annotations

import pytest

from tests.support.mq import MQ
from tests.support.waits import wait_until

PERSISTENT = {"persistence": "PERSISTENT"}


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(LEVEL4) CFLEVEL(4) RECOVER(YES)\n"
                     "DEFINE CFSTRUCT(MANUAL) CFLEVEL(5) RECOVER(YES) RECAUTO(NO)\n"
                     "DEFINE CFSTRUCT(AUTO) CFLEVEL(5) RECOVER(YES) RECAUTO(YES)\n"
                     "DEFINE QLOCAL(MANUAL.Q) QSGDISP(SHARED) CFSTRUCT(MANUAL)\n"
                     "DEFINE QLOCAL(AUTO.Q) QSGDISP(SHARED) CFSTRUCT(AUTO)")
    return g


def status(group, qm: str, name: str) -> str:
    (res,) = group.mqsc_ok(qm, f"DISPLAY CFSTATUS({name})")
    return res["objects"][0]["STATUS"]


def test_reset_needs_a_cflevel_5_structure(group):
    res = group.mqsc_failed("QM1", "RESET CFSTRUCT(LEVEL4) ACTION(FAIL)")
    assert res["reason"] == 3236 and res["reason_name"] == "MQRCCF_CF_STRUC_ERROR"
    assert "CFLEVEL(5)" in " ".join(res["messages"])
    assert status(group, "QM2", "LEVEL4") == "ACTIVE"  # nothing was failed


def test_recover_of_an_active_structure_is_refused_with_csqe102e(group):
    res = group.mqsc_failed("QM2", "RECOVER CFSTRUCT(MANUAL)")
    assert res["reason"] == 3236 and res["reason_name"] == "MQRCCF_CF_STRUC_ERROR"
    assert "CSQE102E" in " ".join(res["messages"])


def test_backup_of_a_failed_structure_and_reset_of_a_failed_one_are_refused(group):
    MQ(group.url("QM1")).put1("MANUAL.Q", "kept", md=PERSISTENT)
    group.mqsc_ok("QM1", "BACKUP CFSTRUCT(MANUAL)\nRESET CFSTRUCT(MANUAL) ACTION(FAIL)")
    assert status(group, "QM2", "MANUAL") == "FAILED"  # RECAUTO(NO): it stays failed
    res = group.mqsc_failed("QM2", "RESET CFSTRUCT(MANUAL) ACTION(FAIL)")
    assert res["reason"] == 3351 and res["reason_name"] == "MQRCCF_CF_STRUC_ALREADY_FAILED"
    res = group.mqsc_failed("QM1", "BACKUP CFSTRUCT(MANUAL)")
    assert res["reason"] == 3236
    group.mqsc_ok("QM2", "RECOVER CFSTRUCT(MANUAL)")
    app = MQ(group.url("QM2"))
    assert app.drain(app.open("MANUAL.Q", ["INPUT_SHARED"])) == ["kept"]


def test_recauto_yes_recovers_a_failed_structure_by_itself(group):
    MQ(group.url("QM1")).put1("AUTO.Q", "auto-kept", md=PERSISTENT)
    group.mqsc_ok("QM1", "RESET CFSTRUCT(AUTO) ACTION(FAIL)")
    wait_until(lambda: status(group, "QM2", "AUTO") == "ACTIVE", 30, "automatic recovery of AUTO")
    app = MQ(group.url("QM2"))
    assert app.drain(app.open("AUTO.Q", ["INPUT_SHARED"])) == ["auto-kept"]


def test_a_failed_structure_altered_to_recauto_yes_is_recovered_by_the_next_qmgr_that_sees_it(group):
    """RECAUTO(YES) acts when a queue manager finds the structure failed, whichever one and
    whenever: not only the one that saw it fail, at the moment it failed."""
    MQ(group.url("QM1")).put1("MANUAL.Q", "manual-kept", md=PERSISTENT)
    group.mqsc_ok("QM1", "RESET CFSTRUCT(MANUAL) ACTION(FAIL)")
    assert status(group, "QM2", "MANUAL") == "FAILED"
    group.mqsc_ok("QM2", "ALTER CFSTRUCT(MANUAL) RECAUTO(YES)")
    wait_until(lambda: status(group, "QM2", "MANUAL") == "ACTIVE", 30, "automatic recovery of MANUAL")
    app = MQ(group.url("QM1"))
    assert app.drain(app.open("MANUAL.Q", ["INPUT_SHARED"])) == ["manual-kept"]


def test_display_cfstatus_generic_lists_each_structure_once(group):
    """Also after backups, failures, recoveries and an ALTER of the structures (the tests above)."""
    for kind in ("SUMMARY", "BACKUP"):
        (res,) = group.mqsc_ok("QM1", f"DISPLAY CFSTATUS(*) TYPE({kind})")
        names = [o["CFSTATUS"] for o in res["objects"]]
        assert sorted(names) == ["AUTO", "LEVEL4", "MANUAL"], (kind, names)
