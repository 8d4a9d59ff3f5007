"""Queue managers whose hosts' clocks disagree by minutes still agree on time (docs/explanation/group.md): every
time compared across queue managers is on the group clock, the coupling facility's.

Real ``qsg serve`` processes over real HTTP and a real redis-server; QM1's wall clock runs five
minutes behind and QM2's ten minutes ahead, through Debian's libfaketime (LD_PRELOAD; the
monotonic clock is left alone, so timeouts and sleeps are real). Redis, whose ``TIME`` is the
group clock, runs on the true clock. Without the group clock a message put on QM1 with a minute
to live would be long expired on QM2, and one put on QM2 would live eleven minutes on QM1.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis as syncredis
from redis.cluster import ClusterNode, RedisCluster

from app.cf import keys
from app.cf.redisconn import cluster_seeds, is_cluster_url
from tests.support.mq import MQ, mq_reason
from tests.support.waits import wait_until

# On one redis-server and on a 3-master Redis Cluster (tests/conftest.py).
pytestmark = pytest.mark.group_suite

FAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
BEHIND_S, AHEAD_S = -300, 600  # QM1 and QM2, against the true clock (Redis's)
PERSISTENT = {"persistence": "PERSISTENT"}


def skewed(seconds: int) -> dict[str, str]:
    """Environment of a process whose wall clock is ``seconds`` off (monotonic time untouched)."""
    return {"LD_PRELOAD": str(FAKETIME), "FAKETIME": f"{seconds:+d}s", "DONT_FAKE_MONOTONIC": "1"}


@pytest.fixture(scope="module")
def group(make_cluster):
    if not FAKETIME.exists():
        pytest.fail(f"{FAKETIME} is missing: apt-get install faketime (.ci/run does)")
    g = make_cluster(["QM1", "QM2"], qm_env={"QM1": skewed(BEHIND_S), "QM2": skewed(AHEAD_S)})
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1)\nDEFINE CFSTRUCT(REC1) CFLEVEL(5) RECOVER(YES) RECAUTO(NO)\n"
                     "DEFINE QLOCAL(SKEW.Q) QSGDISP(SHARED) CFSTRUCT(APPL1)\n"
                     "DEFINE QLOCAL(SCAN.Q) QSGDISP(SHARED) CFSTRUCT(APPL1)\n"
                     "DEFINE QLOCAL(REC.Q) QSGDISP(SHARED) CFSTRUCT(REC1)")
    return g


def group_now_ms(group) -> int:
    """The group clock read at its source: Redis TIME where the group's records are."""
    url = group.redis_url
    if is_cluster_url(url):
        seeds, creds = cluster_seeds(url)
        cluster: Any = RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in seeds], **creds)
        try:
            node = cluster.get_node_from_key(keys.members_key(group.qsg))
            seconds, micros = cluster.execute_command("TIME", target_nodes=node)
        finally:
            cluster.close()
    else:
        with syncredis.Redis.from_url(url) as client:
            seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def put_ms(md: dict[str, Any]) -> int:
    """An MQMD's put date-time (ISO-8601 UTC) in ms since the epoch."""
    return int(datetime.fromisoformat(md["put_date_time"].replace("Z", "+00:00")).timestamp() * 1000)


def depth(group, qm: str, queue: str) -> int:
    (res,) = group.mqsc_ok(qm, f"DISPLAY QLOCAL({queue}) CURDEPTH")
    return int(res["objects"][0]["CURDEPTH"])


def test_each_queue_manager_measures_its_offset_from_the_group_clock(group):
    for qm, skew in (("QM1", BEHIND_S), ("QM2", AHEAD_S)):
        info = httpx.get(f"{group.url(qm)}/v1/qmgr", timeout=10).json()
        # the group clock is the true one here: the offset undoes the host's skew
        assert abs(info["clock_offset_ms"] + skew * 1000) < 2000, (qm, info["clock_offset_ms"])
        metrics = httpx.get(f"{group.url(qm)}/metrics", timeout=10).text
        (value,) = re.findall(r"^qsg_clock_offset_ms ([-0-9.e+]+)$", metrics, re.MULTILINE)
        assert abs(float(value) + skew * 1000) < 2000
        assert "local clock differs from the group clock by" in group.qms[qm].log()


def test_put_times_are_on_the_group_clock_whichever_queue_manager_puts(group):
    for qm in ("QM1", "QM2"):
        app = MQ(group.url(qm))
        before = group_now_ms(group)
        md = app.put(app.open("SKEW.Q", ["OUTPUT"]), f"from {qm}")["md"]
        after = group_now_ms(group)
        assert before - 2000 <= put_ms(md) <= after + 2000, (qm, md["put_date_time"])
        app.disconnect()
    reader = MQ(group.url("QM1"))
    h = reader.open("SKEW.Q", ["INPUT_SHARED"])
    got = [reader.get(h)["md"] for _ in range(2)]
    assert abs(put_ms(got[0]) - put_ms(got[1])) < 5000  # QM1's and QM2's, put a moment apart
    reader.disconnect()


@pytest.mark.parametrize(("putter", "getter"), [("QM1", "QM2"), ("QM2", "QM1")])
def test_a_minute_to_live_is_a_minute_on_every_queue_manager(group, putter, getter):
    out, into = MQ(group.url(putter)), MQ(group.url(getter))
    out.put(out.open("SKEW.Q", ["OUTPUT"]), "a minute", md={"expiry": 600})
    got = into.get(into.open("SKEW.Q", ["INPUT_SHARED"]))
    assert got["data"] == "a minute"
    assert 550 <= got["md"]["expiry"] <= 600  # tenths of a second left, not expired (nor 11 minutes)
    out.disconnect()
    into.disconnect()


def test_a_short_expiry_passes_for_both_when_the_group_clock_passes_it(group):
    qm1, qm2 = MQ(group.url("QM1")), MQ(group.url("QM2"))
    sent = qm1.put(qm1.open("SKEW.Q", ["OUTPUT"]), "two seconds", md={"expiry": 20})["md"]
    qm2.put(qm2.open("SKEW.Q", ["OUTPUT"]), "two seconds too", md={"expiry": 20})
    # Not expired at once on either (QM2 is ten minutes ahead, QM1 five behind).
    for app in (qm1, qm2):
        browse = app.open("SKEW.Q", ["BROWSE"])
        assert app.get(browse, options=["BROWSE_FIRST"])["data"] == "two seconds"
        assert app.get(browse, options=["BROWSE_NEXT"])["data"] == "two seconds too"
    wait_until(lambda: group_now_ms(group) > put_ms(sent) + 2500, timeout_s=10, what="the group clock passing 2 s")
    for app in (qm1, qm2):  # QM1 first: on its own clock QM2's message would live 15 minutes more
        with mq_reason(2033):  # both messages expired for whichever queue manager asks
            app.get(app.open("SKEW.Q", ["INPUT_SHARED"]))
    assert depth(group, "QM1", "SKEW.Q") == 0
    qm1.disconnect()
    qm2.disconnect()


def test_the_expiry_scanner_of_a_fast_host_removes_only_what_the_group_clock_expired(group):
    app = MQ(group.url("QM1"))
    h = app.open("SCAN.Q", ["OUTPUT"])
    app.put(h, "a minute", md={"expiry": 600})
    app.put(h, "a second", md={"expiry": 10})
    group.mqsc_ok("QM2", "ALTER QMGR EXPRYINT(1)")  # QM2, ten minutes ahead, scans
    try:
        wait_until(lambda: depth(group, "QM1", "SCAN.Q") == 1, timeout_s=20, what="the scanner removing 'a second'")
        got = app.get(app.open("SCAN.Q", ["INPUT_SHARED"]))
        assert got["data"] == "a minute" and got["md"]["expiry"] > 400
    finally:
        group.mqsc_ok("QM2", "ALTER QMGR EXPRYINT(OFF)")
        app.disconnect()


def test_recover_on_a_slow_host_replays_what_a_fast_host_logged_after_its_backup(group):
    qm1, qm2 = MQ(group.url("QM1")), MQ(group.url("QM2"))
    qm1.put(qm1.open("REC.Q", ["OUTPUT"]), "before", md=PERSISTENT)
    (res,) = group.mqsc_ok("QM2", "BACKUP CFSTRUCT(REC1) EXCLINT(30)")  # QM2's host is ten minutes ahead
    assert "Backup of CF structure REC1 complete" in res["messages"][0]
    # Logged by QM1 (five minutes behind) after the backup: on the hosts' clocks its record
    # would be fifteen minutes older than the backup, before any margin recovery reads from.
    qm1.put(qm1.open("REC.Q", ["OUTPUT"]), "after", md=PERSISTENT)
    group.mqsc_ok("QM1", "RESET CFSTRUCT(REC1) ACTION(FAIL)")
    (res,) = group.mqsc_ok("QM1", "RECOVER CFSTRUCT(REC1)")
    assert "Recovery of CF structure REC1 complete" in res["messages"][0]
    h = qm2.open("REC.Q", ["INPUT_SHARED"])
    assert sorted(qm2.drain(h)) == ["after", "before"]
    qm1.disconnect()
    qm2.disconnect()
