"""The console's message rates (app/console/rates.py): per queue and per queue manager from the
MsgEnqCount / MsgDeqCount counters read a second apart, across a reset of the counters (RESET
QSTATS, or a performance event message issued), a queue seen for the first time, and several
consoles reading at once (one point); and how the timeline reads a happening's detail."""

from __future__ import annotations

from app.console.rates import Counters, QueueReading, RateHistory


def reading(name: str, depth: int, **counters: tuple[int, int, int]) -> QueueReading:
    return QueueReading(name, depth, {qm: Counters(*c) for qm, c in counters.items()})


def test_rates_per_queue_and_per_qmgr_from_two_readings():
    h = RateHistory()
    assert h.add(1_000, [reading("A", 0, QM1=(10, 4, 0)), reading("B", 2, QM2=(5, 0, 0))]) is None
    point = h.add(3_000, [reading("A", 6, QM1=(20, 8, 0), QM2=(4, 0, 0)), reading("B", 0, QM2=(5, 2, 0))])
    assert point is not None and (point["t"], point["ms"]) == (3_000, 2_000)
    assert point["queues"]["A"] == {"depth": 6, "put": 7.0, "get": 2.0, "by_qm": {"QM1": [5.0, 2.0], "QM2": [2.0, 0.0]}}
    assert point["queues"]["B"]["get"] == 1.0 and point["queues"]["B"]["put"] == 0.0
    assert point["qmgrs"] == {"QM1": {"put": 5.0, "get": 2.0}, "QM2": {"put": 2.0, "get": 1.0}}
    assert h.latest() == point and h.history() == [point]


def test_a_reset_counts_from_zero_and_a_new_queue_is_a_baseline():
    h = RateHistory()
    h.add(0, [reading("A", 0, QM1=(100, 100, 0))])
    # the QM issued an event message (its counters reset at 500) and put 3 more since
    point = h.add(1_000, [reading("A", 3, QM1=(3, 0, 500)), reading("NEW", 50, QM1=(50, 0, 0))])
    assert point is not None
    assert point["queues"]["A"]["put"] == 3.0
    assert point["queues"]["NEW"]["put"] == 0.0  # its 50 puts were before this console looked


def test_readings_closer_than_the_interval_make_one_point():
    h = RateHistory(points=3, min_interval_ms=800)
    assert h.due(0)
    h.add(0, [])
    assert not h.due(500) and h.due(800)
    for t in (1_000, 2_000, 3_000, 4_000):
        h.add(t, [reading("A", 0, QM1=(t // 100, 0, 0))])
    assert [p["t"] for p in h.history()] == [2_000, 3_000, 4_000]  # the oldest dropped
    assert h.history()[-1]["queues"]["A"]["put"] == 10.0


def test_the_timeline_reads_a_happenings_detail():
    from app.console.state import _happening

    event = _happening({"ts": 1, "verb": "EVENT", "object": "Q", "rc": 2224, "qmgr": "QM1",
                        "detail": '{"coordinator": "QM2"}'})
    assert (event["reason"], event["coordinator"]) == ("MQRC_Q_DEPTH_HIGH", "QM2")
    igq = _happening({"verb": "IGQ", "object": "Q", "detail": '{"from": "QM1", "to": "QM3", "object": "X"}'})
    assert (igq["from"], igq["to"], igq["object"]) == ("QM1", "QM3", "Q")  # a record's own field stays
    assert _happening({"verb": "TRIGGER", "detail": "INITQ"})["detail"] == "INITQ"
    assert "reason" not in _happening({"verb": "EXPIRY", "detail": "[1]", "count": 2})
