"""MQMD UserIdentifier is 12 characters (app.core.userid): an authenticated user with a longer
name puts messages whose UserIdentifier is the name's first 12 characters, as IBM MQ truncates
a longer user ID; the authority checks still use the whole name. With authentication off the
UserIdentifier is never blank: the configured default user or the operating-system user of the
queue manager's process. Real queue-manager processes over real HTTP."""

from __future__ import annotations

import getpass

import pytest

from app.core.userid import mqmd_user_id
from tests.support.cluster import FAST
from tests.support.mq import MQ
from tests.support.security import ADMIN, mqsc_ok, qsg_cli

LONG = ("averylongusername", "long-secret")


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1"], env={**FAST, "QSG_AUTH": "on"})
    qsg_cli(g, "user", "add", "admin", "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    qsg_cli(g, "user", "add", LONG[0], "--password-stdin", stdin=LONG[1] + "\n")
    mqsc_ok(g, "QM1", "DEFINE QLOCAL(UID.Q)\n"
                      f"SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('{LONG[0]}') AUTHADD(CONNECT)\n"
                      f"SET AUTHREC PROFILE('UID.Q') OBJTYPE(QUEUE) PRINCIPAL('{LONG[0]}') AUTHADD(PUT,GET)")
    return g


def test_a_longer_user_name_is_truncated_to_12_characters_in_the_mqmd(group):
    mq = MQ(group.url("QM1"), "LONGUSER", auth=LONG)
    put = mq.put1("UID.Q", "who am I")["md"]
    assert put["user_identifier"] == "averylonguse" == mqmd_user_id(LONG[0])
    got = mq.get(mq.open("UID.Q", ["INPUT_SHARED"]), ["NO_SYNCPOINT"])
    assert got["md"]["user_identifier"] == "averylonguse"  # 12 characters, the field's length


# ---- authentication off: the connection's identity is still a user (IBM never leaves it blank) --


@pytest.fixture(scope="module")
def open_group(make_cluster):
    """Two QMs with authentication off: QM1 names its default user (QSG_DEFAULT_USER), QM2 does
    not, so its connections run as the operating-system user of its process (this test's)."""
    g = make_cluster(["QM1", "QM2"], env={**FAST, "QSG_AUTH": "off"},
                     qm_env={"QM1": {"QSG_DEFAULT_USER": "batchuser.longname"}})
    g.mqsc_ok("QM1", "DEFINE QLOCAL(UID.Q)")
    g.mqsc_ok("QM2", "DEFINE QLOCAL(UID.Q)")
    return g


def test_with_authentication_off_user_identifier_is_the_configured_or_the_process_user(open_group):
    for qm, expected in (("QM1", "batchuser.lo"), ("QM2", mqmd_user_id(getpass.getuser()))):
        mq = MQ(open_group.url(qm), "NOAUTH")
        assert mq.put1("UID.Q", "who am I")["md"]["user_identifier"] == expected
        got = mq.get(mq.open("UID.Q", ["INPUT_SHARED"]), ["NO_SYNCPOINT"])
        assert got["md"]["user_identifier"] == expected
        (conn,) = [c for c in open_group.mqsc_ok(qm, "DISPLAY CONN(*) TYPE(CONN)")[0]["objects"]
                   if c.get("APPLTAG") == "NOAUTH"]
        assert conn["USERID"] == expected  # DISPLAY CONN shows the same identity
