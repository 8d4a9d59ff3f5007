"""Group commit of the recovery log (app/qmgr/mqlog.py; docs/explanation/performance.md, Group
commit): concurrent MQPUT/MQCMIT calls share one fsync, and no call is answered before its
record is on disk. In-process on the log itself, and over real HTTP: persistent puts answered by
a queue manager that is then killed (SIGKILL) come back when another queue manager recovers the
structure from the logs."""

from __future__ import annotations

import asyncio
import re
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from app.qmgr.mqlog import MessageLog
from tests.support.mq import MQ

PERSISTENT = {"persistence": "PERSISTENT"}


def fsyncs_of(url: str) -> int:
    text = httpx.get(f"{url}/metrics", timeout=30).text
    return int(float(re.search(r"^qsg_mqlog_fsyncs_total (\S+)$", text, re.M).group(1)))


async def test_concurrent_puts_share_one_fsync_and_each_returns_with_its_record_on_disk(tmp_path):
    log = MessageLog(tmp_path, "QSG1", "QM1", sync=True, structure_of=lambda tag: "APPL1", now_ns=time.time_ns)
    on_disk_when_answered = []

    async def put(i: int) -> None:
        log.put("t", "QM1", f"h{i}", False, "Q", i, "{}", b"{}", b"message %d" % i)
        await log.force()
        on_disk_when_answered.append(log._forced >= i)  # the records are numbered 1.. as written

    await asyncio.gather(*(put(i) for i in range(1, 21)))
    assert log.fsyncs == 1  # twenty calls, one fsync
    assert on_disk_when_answered == [True] * 20
    # a put that comes after: its own fsync
    await put(21)
    assert log.fsyncs == 2 and on_disk_when_answered[-1]
    assert await log.force() is None and log.fsyncs == 2  # nothing new: no fsync
    _, messages = log.read("APPL1", 0)
    assert sorted(m.id for m in messages) == list(range(1, 22))
    log.close()


def test_answered_persistent_puts_survive_a_sigkill_and_a_structure_failure(make_fresh_cluster):
    group = make_fresh_cluster(["QM1", "QM2"])
    group.mqsc_ok("QM1", "DEFINE CFSTRUCT(GC1) CFLEVEL(5) RECOVER(YES) RECAUTO(NO)\n"
                         "DEFINE QLOCAL(GC.Q) QSGDISP(SHARED) CFSTRUCT(GC1)")
    before = fsyncs_of(group.url("QM1"))

    def put(i: int) -> str:
        MQ(group.url("QM1")).put1("GC.Q", f"M{i}", md=PERSISTENT)  # answered: on QM1's log on disk
        return f"M{i}"

    with ThreadPoolExecutor(max_workers=16) as pool:
        answered = set(pool.map(put, range(64)))
    shared = fsyncs_of(group.url("QM1")) - before
    assert 1 <= shared <= 64
    group.qms["QM1"].kill()  # SIGKILL right after the answers: no clean shutdown
    (res,) = group.mqsc_ok("QM2", "RESET CFSTRUCT(GC1) ACTION(FAIL)")  # the structure's contents lost
    group.mqsc_ok("QM2", "RECOVER CFSTRUCT(GC1)")  # from the backup-less logs: QM1's included
    app = MQ(group.url("QM2"))
    assert set(app.drain(app.open("GC.Q", ["INPUT_SHARED"]))) == answered


async def test_forcing_while_segments_turn_over_and_after_stop(tmp_path, monkeypatch):
    """The sync runs on the log's own thread while calls go on writing: segments that fill up
    and are left meanwhile (their descriptor closed) lose nothing, every call returns with its
    record on disk; a log stopped (the queue manager ends) still forces a straggler's record."""
    import app.qmgr.mqlog as mqlog

    monkeypatch.setattr(mqlog, "SEGMENT_BYTES", 2000)  # a new segment every few records
    log = MessageLog(tmp_path, "QSG1", "QM1", sync=True, structure_of=lambda tag: "APPL1", now_ns=time.time_ns)
    answered = []

    async def put(i: int) -> None:
        for _ in range(i % 4):  # the calls of a wave write in different turns (a write per turn)
            await asyncio.sleep(0)
        log.put("t", "QM1", f"h{i}", False, "Q", i, "{}", b"{}", b"x" * 500)
        mine = log._written  # the records up to this call's own
        await log.force()
        answered.append(log._forced >= mine)

    for wave in range(5):
        await asyncio.gather(*(put(wave * 10 + i) for i in range(1, 11)))
    assert answered == [True] * 50
    assert len(log.segments()) > 5 and 1 <= log.fsyncs
    log.stop()
    await put(51)  # after stop: synced on the caller's loop
    assert answered[-1] and log._forced == 51
    _, messages = log.read("APPL1", 0)
    assert sorted(m.id for m in messages) == list(range(1, 52))
    log.close()


async def test_a_turns_records_go_out_in_one_write_and_a_failed_write_fails_the_force(tmp_path, monkeypatch):
    """The records of one event-loop turn are handed to the OS together (one write for many
    calls); a write the disk refuses fails every caller forcing it, the records stay buffered,
    and the next force writes them: a call is never answered as logged when it is not."""
    import app.qmgr.mqlog as mqlog

    log = MessageLog(tmp_path, "QSG1", "QM1", sync=True, structure_of=lambda tag: "APPL1", now_ns=time.time_ns)
    writes: list[int] = []
    real_write = mqlog.os.write
    refuse = True

    def write(fd: int, data: bytes) -> int:
        if refuse:
            raise OSError(28, "No space left on device")
        writes.append(data.count(b"\n"))
        return real_write(fd, data)

    monkeypatch.setattr(mqlog.os, "write", write)

    async def put(i: int) -> None:
        log.put("t", "QM1", f"h{i}", False, "Q", i, "{}", b"{}", b"message %d" % i)
        await log.force()

    outcomes = await asyncio.gather(*(put(i) for i in range(1, 11)), return_exceptions=True)
    assert all(isinstance(o, OSError) for o in outcomes) and log._forced == 0
    refuse = False
    await asyncio.gather(*(put(i) for i in range(11, 21)))
    assert writes == [20]  # the ten refused records first, then the turn's ten, in one write
    _, messages = log.read("APPL1", 0)
    assert [m.id for m in messages] == list(range(1, 21))
    log.close()
