"""Soak: producers on every queue manager put uniquely numbered messages to one shared queue
(some under syncpoint with commit, some inside the default unit of work, some outside it) while
consumers on all three queue managers get with WAIT, some under syncpoint with an occasional
backout and retry. Every message must arrive exactly once, with a backout count equal to the
number of times it was backed out, and the queue must end empty."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.mq import MQ, MQFailed
from tests.support.mqsc import shared_q

PRODUCERS = ("QM1", "QM2", "QM3")
PER_PRODUCER = 300
CONSUMERS = ("QM1", "QM1", "QM2", "QM2", "QM3", "QM3")
DEADLINE_S = 60


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2", "QM3"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    return g


def test_soak_every_message_exactly_once(group):
    q = shared_q(group, "DEFSOPT(SHARED)", prefix="SOAK")
    total = len(PRODUCERS) * PER_PRODUCER
    lock = threading.Lock()
    received: list[str] = []
    backouts: Counter[str] = Counter()  # message -> times a consumer backed it out
    final_backout_count: dict[str, int] = {}
    done = threading.Event()
    give_up = time.monotonic() + DEADLINE_S

    def produce(index: int, qm: str) -> None:
        rnd = random.Random(index)
        m = MQ(group.url(qm), f"PRODUCER{index}")
        try:
            h = m.open(q, ["OUTPUT"])
            pending = 0
            for i in range(PER_PRODUCER):
                text = f"{qm}-{i:04d}"
                style = rnd.choice(("NO_SYNCPOINT", "SYNCPOINT", "DEFAULT"))
                options = [] if style == "DEFAULT" else [style]
                m.call("POST", f"/v1/connections/{m.hconn}/objects/{h}/put",
                       {"data": text, "options": options, "md": {"priority": rnd.randint(0, 9)}})
                if style != "NO_SYNCPOINT":
                    pending += 1
                if pending and (rnd.random() < 0.4 or i == PER_PRODUCER - 1):
                    m.commit()
                    pending = 0
        finally:
            m.disconnect()  # commits anything left over as well
            m.http.close()

    def consume(index: int, qm: str) -> None:
        rnd = random.Random(1000 + index)
        syncpoint = index % 2 == 0  # half the consumers work under syncpoint
        m = MQ(group.url(qm), f"CONSUMER{index}")
        try:
            h = m.open(q, ["INPUT_AS_Q_DEF"])
            while not done.is_set():
                assert time.monotonic() < give_up, "soak did not finish in time"
                options = ["WAIT", "SYNCPOINT" if syncpoint else "NO_SYNCPOINT"]
                try:
                    msg = m.get(h, options=options, wait_ms=500)
                except MQFailed as exc:
                    assert exc.reason == 2033, exc.body
                    continue
                text = msg["data"]
                if syncpoint and rnd.random() < 0.15:
                    with lock:
                        backouts[text] += 1
                    m.backout()  # back on the queue for anybody, backout count + 1
                    continue
                if syncpoint:
                    m.commit()
                with lock:
                    received.append(text)
                    final_backout_count[text] = msg["md"]["backout_count"]
                    if len(received) >= total:
                        done.set()
        finally:
            m.disconnect()
            m.http.close()

    with ThreadPoolExecutor(max_workers=len(PRODUCERS) + len(CONSUMERS)) as pool:
        futures = [pool.submit(consume, i, qm) for i, qm in enumerate(CONSUMERS)]
        futures += [pool.submit(produce, i, qm) for i, qm in enumerate(PRODUCERS)]
        for f in futures:
            f.result(timeout=DEADLINE_S + 30)

    expected = {f"{qm}-{i:04d}" for qm in PRODUCERS for i in range(PER_PRODUCER)}
    counts = Counter(received)
    duplicates = {t: n for t, n in counts.items() if n > 1}
    assert not duplicates, f"delivered more than once: {sorted(duplicates)[:10]}"
    missing = expected - set(counts)
    assert not missing, f"{len(missing)} messages lost, e.g. {sorted(missing)[:10]}"
    assert set(counts) == expected and len(received) == total
    assert sum(backouts.values()) > 0  # the backout path was exercised
    wrong = {t: (final_backout_count[t], backouts[t]) for t in expected if final_backout_count[t] != backouts[t]}
    assert not wrong, f"backout_count differs from the number of backouts: {dict(list(wrong.items())[:10])}"
    for qm in ("QM1", "QM2", "QM3"):
        (res,) = group.mqsc(qm, f"DISPLAY QLOCAL({q}) CURDEPTH")
        assert res["objects"][0]["CURDEPTH"] == 0
