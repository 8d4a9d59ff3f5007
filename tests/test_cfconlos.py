"""Loss of coupling-facility connectivity as z/OS handles it (QMGR CFCONLOS): with TOLERATE a
lost CF leaves private-queue work running on the same connections (the private queues are on
the queue manager's page set), shared queues answer 2345 meanwhile and work again on the same
connection when the CF is back; a loss longer than the heartbeat lease ends the connections that
used shared queues (their units of work backed out: 2009/2003) while the others go on, and the
queue manager rejoins the group. Real QMs over real HTTP, a real redis-server stopped and started."""

from __future__ import annotations

import httpx
import pytest

from tests.support.cluster import FAST
from tests.support.mq import MQ, MQFailed, mq_reason
from tests.support.waits import wait_until

SETUP = ("DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\n"
         "DEFINE QLOCAL(CL.SH.Q) QSGDISP(SHARED) CFSTRUCT(APPL1) DEFPSIST(YES)\n"
         "DEFINE QLOCAL(CL.PRIV.Q) DEFPSIST(YES)\n"
         "DEFINE QLOCAL(CL.PRIV2.Q)\n"
         "DEFINE QLOCAL(CL.REPLY.Q)\n"
         "ALTER QMGR CFCONLOS(TOLERATE)")


def _metric(url: str, name: str) -> float | None:
    try:
        text = httpx.get(f"{url}/metrics", timeout=10).text
    except httpx.HTTPError:
        return None
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def test_outage_shorter_than_the_lease_private_work_goes_on(make_fresh_cluster):
    group = make_fresh_cluster(["QM1"], aof=True, env={"QSG_HEARTBEAT_TTL_S": "30"})
    group.mqsc_ok("QM1", SETUP)
    mq = MQ(group.url("QM1"))
    hp = mq.open("CL.PRIV.Q", ["INPUT_SHARED", "OUTPUT"])
    hs = mq.open("CL.SH.Q", ["INPUT_SHARED", "OUTPUT"])
    mq.put(hs, "shared-before")

    group.redis_server.stop()
    try:
        # Private work on the same connection: MQOPEN, MQPUT, MQGET, MQCMIT.
        h2 = mq.open("CL.PRIV2.Q", ["INPUT_SHARED", "OUTPUT"])
        mq.put(hp, "private-during", options=["SYNCPOINT"])
        mq.put(h2, "np-during", md={"persistence": "NOT_PERSISTENT"})
        assert mq.get(h2)["data"] == "np-during"
        mq.commit()
        # Shared queues answer 2345 (nothing done).
        with mq_reason(2345):
            mq.put(hs, "shared-during")
        with mq_reason(2345):
            mq.get(hs)
    finally:
        group.redis_server.start()

    # Back on the same connection, without reconnecting.
    wait_until(lambda: _put_ok(mq, hs, "shared-after"), what="the shared queue works again", timeout_s=30)
    assert mq.get(hs)["data"] == "shared-before"
    assert mq.get(hs)["data"] == "shared-after"

    # A restart keeps the persistent private message put during the outage.
    qm = group.qms["QM1"]
    qm.kill()
    qm.start()
    again = MQ(group.url("QM1"))
    assert again.drain(again.open("CL.PRIV.Q", ["INPUT_SHARED"])) == ["private-during"]


def test_display_cfstatus_and_the_console_during_an_outage_answer_what_the_qm_knows(make_fresh_cluster):
    """z/OS answers DISPLAY CFSTATUS while a queue manager has lost connectivity to the coupling
    facility: the structure's status is not known from there (UNKNOWN), and its own connection
    to the structure has FAILED (TYPE(CONNECT), with when). The console shows the loss too."""
    group = make_fresh_cluster(["QM1"], aof=True, env={"QSG_HEARTBEAT_TTL_S": "30", "QSG_HEARTBEAT_INTERVAL_S": "0.5"})
    group.mqsc_ok("QM1", SETUP)
    url = group.url("QM1")
    assert _console(url)["qmgr"]["cf"] == {"state": "CONNECTED", "since": None, "cfconlos": "TOLERATE"}
    (summary,) = group.mqsc_ok("QM1", "DISPLAY CFSTATUS(APPL1)")[0]["objects"]
    (connect,) = group.mqsc_ok("QM1", "DISPLAY CFSTATUS(APPL1) TYPE(CONNECT)")[0]["objects"]
    assert (summary["STATUS"], connect["QMNAME"], connect["STATUS"]) == ("ACTIVE", "QM1", "ACTIVE")

    group.redis_server.stop()
    try:
        wait_until(lambda: _console(url)["qmgr"]["cf"]["state"] == "LOST", what="the console showing the loss",
                   timeout_s=30)
        (summary,) = group.mqsc_ok("QM1", "DISPLAY CFSTATUS(APPL1)")[0]["objects"]
        (connect,) = group.mqsc_ok("QM1", "DISPLAY CFSTATUS(*) TYPE(CONNECT)")[0]["objects"]
        assert (summary["CFSTATUS"], summary["STATUS"]) == ("APPL1", "UNKNOWN")
        assert (connect["QMNAME"], connect["STATUS"]) == ("QM1", "FAILED") and connect["FAILTIME"]
        assert _console(url)["qmgr"]["cf"]["cfconlos"] == "TOLERATE"
        # The same through the command server (its queues are private: it goes on serving).
        lines = _command(MQ(url), "DISPLAY CFSTATUS(APPL1)")
        assert any("CFSTATUS(APPL1)" in line and "STATUS(UNKNOWN)" in line for line in lines), lines
    finally:
        group.redis_server.start()
    wait_until(lambda: _console(url)["qmgr"]["cf"]["state"] == "CONNECTED", what="the console showing it back",
               timeout_s=30)
    (summary,) = group.mqsc_ok("QM1", "DISPLAY CFSTATUS(APPL1)")[0]["objects"]
    assert summary["STATUS"] == "ACTIVE"


def _command(mq: MQ, command: str) -> list[str]:
    """``command`` put to SYSTEM.COMMAND.INPUT as an MQSC string: its CSQN205I-framed reply lines."""
    reply = mq.open("CL.REPLY.Q", ["INPUT_EXCLUSIVE"])
    mq.put1("SYSTEM.COMMAND.INPUT", command, md={"format": "MQSTR", "msg_type": "REQUEST", "reply_to_q": "CL.REPLY.Q"})
    lines = []
    while not any("CSQ9022I" in line or "CSQ9023E" in line for line in lines):
        lines.append(mq.get(reply, ["WAIT", "NO_SYNCPOINT"], wait_ms=10_000)["data"])
        assert len(lines) < 50, lines
    mq.close(reply)
    return lines


def _console(url: str) -> dict:
    answer = httpx.get(f"{url}/console/state", timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _put_ok(mq: MQ, hobj: str, data: str) -> bool:
    try:
        mq.put(hobj, data)
    except MQFailed as exc:
        assert exc.reason == 2345, exc.body
        return False
    return True


def test_outage_longer_than_the_lease_ends_only_shared_connections(make_fresh_cluster):
    group = make_fresh_cluster(["QM1"], aof=True, env=FAST)
    group.mqsc_ok("QM1", SETUP)
    url = group.url("QM1")
    private = MQ(url)
    hp = private.open("CL.PRIV.Q", ["INPUT_SHARED", "OUTPUT"])
    private.put(hp, "private-uow-1", options=["SYNCPOINT"])
    shared = MQ(url)
    hs = shared.open("CL.SH.Q", ["OUTPUT"])
    shared.put(hs, "shared-uow", options=["SYNCPOINT"])
    mixed = MQ(url)
    hm = mixed.open("CL.PRIV2.Q", ["OUTPUT"])
    mixed.put(hm, "mixed-private-part", options=["SYNCPOINT"])
    mixed.put(mixed.open("CL.SH.Q", ["OUTPUT"]), "mixed-shared-part", options=["SYNCPOINT"])

    group.redis_server.stop()
    try:
        wait_until(lambda: _metric(url, "qsg_cf_connected") == 0, what="the QM saw the CF lost", timeout_s=30)
        assert httpx.get(f"{url}/v1/qmgr", timeout=10).json()["CFCONN"] == "LOST"
        assert _console(url)["qmgr"]["cf"]["state"] == "REJOINING"  # the lease lapsed
        # The private-only connection goes on: its unit of work too.
        private.put(hp, "private-uow-2", options=["SYNCPOINT"])
        private.commit()
        # Those that used shared queues ended: their units of work backed out.
        with mq_reason(2003):
            shared.commit()
        with mq_reason(2003):
            mixed.commit()
        with mq_reason(2009):
            shared.put(hs, "after the end")
    finally:
        group.redis_server.start()

    wait_until(lambda: _metric(url, "qsg_cf_connected") == 1, what="the QM rejoined the group", timeout_s=60)
    assert _metric(url, "qsg_cf_reconnections_total") == 1
    assert "CSQE006I Structure APPL1" in group.qms["QM1"].log()  # z/OS: the structure disconnected
    assert httpx.get(f"{url}/v1/qmgr", timeout=10).json()["CFCONN"] == "CONNECTED"
    # The private connection works with shared queues again, on the same connection.
    hs2 = private.open("CL.SH.Q", ["INPUT_SHARED"])
    with mq_reason(2033):
        private.get(hs2)  # the shared unit of work was backed out by the recovery
    assert private.drain(hp) == ["private-uow-1", "private-uow-2"]
    reader = MQ(url)
    with mq_reason(2033):
        reader.get(reader.open("CL.PRIV2.Q", ["INPUT_SHARED"]))  # the mixed UOW's private part backed out


def test_unit_of_work_over_private_and_shared_queues_during_an_outage(make_fresh_cluster):
    group = make_fresh_cluster(["QM1"], aof=True, env={"QSG_HEARTBEAT_TTL_S": "30"})
    group.mqsc_ok("QM1", SETUP)
    mq = MQ(group.url("QM1"))
    hp, hs = mq.open("CL.PRIV.Q", ["OUTPUT"]), mq.open("CL.SH.Q", ["OUTPUT"])
    mq.put(hp, "private", options=["SYNCPOINT"])
    mq.put(hs, "shared", options=["SYNCPOINT"])
    group.redis_server.stop()
    try:
        with mq_reason(2345):
            mq.commit()  # nothing committed: the unit of work stays whole
    finally:
        group.redis_server.start()
    wait_until(lambda: _commit_ok(mq), what="the commit once the CF is back", timeout_s=30)
    reader = MQ(group.url("QM1"))
    assert reader.drain(reader.open("CL.PRIV.Q", ["INPUT_SHARED"])) == ["private"]
    assert reader.drain(reader.open("CL.SH.Q", ["INPUT_SHARED"])) == ["shared"]


def _commit_ok(mq: MQ) -> bool:
    try:
        mq.commit()
    except MQFailed as exc:
        assert exc.reason == 2345, exc.body
        return False
    return True


@pytest.mark.parametrize("terminate", ["ALTER QMGR CFCONLOS(TERMINATE)", "ALTER CFSTRUCT(APPL1) CFCONLOS(TERMINATE)"])
def test_terminate_ends_every_connection_as_today(make_fresh_cluster, terminate):
    """QMGR CFCONLOS(TERMINATE) (IBM's default), or a structure's TERMINATE: a loss longer than
    the lease ends every connection, private-only ones too (the stand-in for IBM's termination)."""
    group = make_fresh_cluster(["QM1"], aof=True, env=FAST)
    group.mqsc_ok("QM1", SETUP + "\n" + terminate)
    url = group.url("QM1")
    private = MQ(url)
    hp = private.open("CL.PRIV.Q", ["INPUT_SHARED", "OUTPUT"])
    private.put(hp, "private-uow", options=["SYNCPOINT"])
    group.redis_server.stop()
    try:
        wait_until(lambda: _metric(url, "qsg_cf_connected") == 0, what="the QM saw the CF lost", timeout_s=30)
        with mq_reason(2003):
            private.commit()
    finally:
        group.redis_server.start()
