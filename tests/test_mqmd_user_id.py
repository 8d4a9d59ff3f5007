"""MQMD UserIdentifier is 12 characters (app.core.userid): an authenticated user with a longer
name puts messages whose UserIdentifier is the name's first 12 characters, as IBM MQ truncates
a longer user ID; the authority checks still use the whole name. Real queue-manager process
with authentication on, over real HTTP."""

from __future__ import annotations

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
