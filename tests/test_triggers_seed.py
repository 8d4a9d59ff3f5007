"""Trigger conditions 11 and 13 (docs/ibm-rules.md §3.5 and §3.7) over real HTTP against a
real queue-manager process: condition 11 when no trigger message was written yet (FIRST), the
DEPTH form of condition 11, and a TRIGDPTH change re-triggering only a DEPTH queue."""

from __future__ import annotations

import orjson
import pytest

from tests.support.mq import MQ, MQFailed
from tests.support.names import uniq


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1"])
    g.mqsc_ok("QM1", "DEFINE PROCESS(SEED.PROC) APPLICID('/bin/true') APPLTYPE(UNIX)")
    return g


class Monitor:
    """A trigger monitor: holds an initiation queue open for input (condition 8)."""

    def __init__(self, group, initq: str) -> None:
        self.mq = MQ(group.url("QM1"), "MONITOR")
        self.h = self.mq.open(initq, ["INPUT_SHARED"])

    def triggers(self) -> list[str]:
        """The QName of every trigger message now on the initiation queue (taken off). The
        trigger message of a put outside syncpoint is put before the MQPUT answers."""
        names = []
        while True:
            try:
                m = self.mq.get(self.h, ["NO_SYNCPOINT"])
            except MQFailed as exc:
                assert exc.reason == 2033
                return names
            names.append(orjson.loads(m["data"])["QName"])


def setup(group, attrs: str, initq_attrs: str = "") -> tuple[str, str, Monitor, MQ, str]:
    initq, app = uniq("INIT"), uniq("APP")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({initq}) {initq_attrs}\n"
                         f"DEFINE QLOCAL({app}) TRIGGER INITQ({initq}) {attrs}")
    monitor = Monitor(group, initq)
    putter = MQ(group.url("QM1"), "PUTTER")
    return initq, app, monitor, putter, putter.open(app, ["OUTPUT"])


def test_first_triggers_on_a_non_empty_queue_when_no_trigger_message_was_written_yet(group):
    """The first trigger was suppressed (initiation queue get-inhibited, which no re-trigger case
    covers): the next suitable put triggers although the queue was not empty, because no trigger
    message was written yet; the one after it does not (TRIGINT not passed)."""
    initq, app, monitor, putter, h = setup(group, "TRIGTYPE(FIRST) PROCESS(SEED.PROC)")
    group.mqsc_ok("QM1", f"ALTER QLOCAL({initq}) GET(DISABLED)")
    putter.put(h, "one")
    group.mqsc_ok("QM1", f"ALTER QLOCAL({initq}) GET(ENABLED)")
    assert monitor.triggers() == []
    putter.put(h, "two")  # not previously empty, no trigger message written yet: condition 11
    assert monitor.triggers() == [app]
    putter.put(h, "three")  # now one was written and TRIGINT (the default, 999999999) has not passed
    assert monitor.triggers() == []


def test_first_triggers_once_the_process_is_defined(group):
    """Condition 6 failed on the first put (no process yet); after DEFINE PROCESS a put to the
    non-empty queue triggers."""
    proc = uniq("PROC")
    initq, app, monitor, putter, h = setup(group, f"TRIGTYPE(FIRST) PROCESS({proc})")
    putter.put(h, "one")
    assert monitor.triggers() == []
    group.mqsc_ok("QM1", f"DEFINE PROCESS({proc}) APPLICID('/bin/true')")
    putter.put(h, "two")
    assert monitor.triggers() == [app]


def test_depth_triggers_on_a_put_to_a_queue_that_already_had_trigdpth_messages(group):
    """DEPTH's condition 11: TRIGDPTH(2) reached while the initiation queue was get-inhibited;
    a put to the queue that already holds TRIGDPTH messages triggers (and TRIGGER goes off)."""
    initq, app, monitor, putter, h = setup(group, "TRIGTYPE(DEPTH) TRIGDPTH(2) PROCESS(SEED.PROC)")
    group.mqsc_ok("QM1", f"ALTER QLOCAL({initq}) GET(DISABLED)")
    putter.put(h, "one")
    putter.put(h, "two")
    group.mqsc_ok("QM1", f"ALTER QLOCAL({initq}) GET(ENABLED)")
    assert monitor.triggers() == []
    putter.put(h, "three")
    assert monitor.triggers() == [app]
    (res,) = group.mqsc_ok("QM1", f"DISPLAY QLOCAL({app}) TRIGGER")
    assert res["objects"][0]["TRIGGER"] == "NOTRIGGER"  # the QM turns DEPTH triggering off
    putter.put(h, "four")
    assert monitor.triggers() == []


def test_trigdpth_change_retriggers_only_a_depth_queue(group):
    """Condition 13: TriggerDepth "if relevant" - a TRIGDPTH change on a FIRST or EVERY queue with
    messages waiting makes no trigger message; on a DEPTH queue that now has enough, it does."""
    for trigtype in ("FIRST", "EVERY"):
        initq, app, monitor, putter, h = setup(group, f"TRIGTYPE({trigtype}) PROCESS(SEED.PROC)")
        putter.put(h, "waiting")
        assert monitor.triggers() == [app]
        group.mqsc_ok("QM1", f"ALTER QLOCAL({app}) TRIGDPTH(7)")
        assert monitor.triggers() == [], trigtype
        with_set = putter.open(app, ["SET"])
        putter.set(with_set, {"TRIGDPTH": 3})  # MQSET: the same rule
        assert monitor.triggers() == [], trigtype
    initq, app, monitor, putter, h = setup(group, "TRIGTYPE(DEPTH) TRIGDPTH(5) PROCESS(SEED.PROC)")
    putter.put(h, "one")
    putter.put(h, "two")
    assert monitor.triggers() == []
    group.mqsc_ok("QM1", f"ALTER QLOCAL({app}) TRIGDPTH(2)")
    assert monitor.triggers() == [app]
