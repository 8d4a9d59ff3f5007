"""The recovery log (app/qmgr/mqlog.py) when the disk takes only part of a write, and when the
log is closed under a caller's force: a call is answered as logged only when its record is whole
in a segment and synced.

A partial write is a real one: the writer runs in a child process whose file-size limit
(RLIMIT_FSIZE, as a full disk does) lets the kernel write only the first bytes of a turn's
records; the next write is refused (EFBIG)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

from app.qmgr.mqlog import MessageLog

_CHILD = r"""
import asyncio, json, resource, sys, time
from app.qmgr.mqlog import MessageLog

root, limit = sys.argv[1], int(sys.argv[2])
log = MessageLog(root, "QSG1", "QM1", sync=True, structure_of=lambda tag: "APPL1", now_ns=time.time_ns)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
answered, refused = [], []

async def put(i):
    log.put("t", "QM1", f"h{i}", False, "Q", i, "{}", b"{}", b"x" * 1500)
    try:
        await log.force()
    except OSError:
        refused.append(i)
    else:
        answered.append(i)

async def main():
    await asyncio.gather(*(put(i) for i in (1, 2)))  # one turn: their records in one write
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    await put(3)  # the disk has room again
    _, messages = log.read("APPL1", 0)
    log.stop()
    print(json.dumps({"answered": answered, "refused": refused,
                      "recovered": sorted(m.id for m in messages)}))

asyncio.run(main())
"""


def test_a_write_the_disk_takes_only_in_part_answers_no_call_as_logged(tmp_path: Path) -> None:
    """Two records of one turn (about 2 KB each) where the file may grow to 3 KB: the kernel
    writes the first and part of the second. The second call must not be answered as logged
    (its record is cut), and the cut must not spoil the records written after it."""
    done = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path), "3000"], capture_output=True,
                          text=True, timeout=60, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # every answered call's message is in the log (what RECOVER CFSTRUCT replays)
    assert set(out["answered"]) <= set(out["recovered"]), out
    assert 3 in out["answered"], out  # once the disk has room, calls are logged again
    assert out["refused"], out  # the limit did refuse something: a call was told
    # no record cut in the middle stays in front of what came after: every line is whole
    for segment in (tmp_path / "QSG1" / "QM1").glob("*.log"):
        for line in segment.read_bytes().splitlines():
            json.loads(line)


async def test_closing_the_log_under_a_force_still_syncs_the_record(tmp_path: Path) -> None:
    """The queue manager stops (``stop`` closes the segment) while a call waits for its record to
    be forced: the call must not come back before its record is synced."""
    log = MessageLog(tmp_path, "QSG1", "QM1", sync=True, structure_of=lambda tag: "APPL1", now_ns=time.time_ns)
    log.put("t", "QM1", "h1", False, "Q", 1, "{}", b"{}", b"message")
    forcing = asyncio.ensure_future(log.force())
    await asyncio.sleep(0)  # the record is handed to the OS, the force has begun its round
    log.stop()
    await forcing
    assert log._forced == 1 and log.fsyncs >= 1
    _, messages = log.read("APPL1", 0)
    assert [m.id for m in messages] == [1]


async def test_a_prune_on_another_queue_manager_never_takes_a_record_being_written(tmp_path: Path,
                                                                                    monkeypatch) -> None:
    """BACKUP CFSTRUCT on another queue manager prunes this one's idle segment: it reads the
    segment's newest stamp (old), and unlinks it. A record written to the segment between the
    two went to a file no folder names any more: its call was answered as logged, and RECOVER
    CFSTRUCT never finds it. The prune and the write must not interleave so."""
    import threading

    import app.qmgr.mqlog as mqlog

    log = MessageLog(tmp_path, "QSG1", "QM1", sync=True, structure_of=lambda tag: "APPL1", now_ns=time.time_ns)
    other = MessageLog(tmp_path, "QSG1", "QM2", sync=True, structure_of=lambda tag: "APPL1", now_ns=time.time_ns)
    log.put("t", "QM1", "h1", False, "Q", 1, "{}", b"{}", b"old")
    await log.force()
    keep_since = time.time_ns() + 1  # a backup newer than the segment's only record: it may go
    stamp_read, written = threading.Event(), threading.Event()
    real_stamp = mqlog._newest_stamp

    def stamp_then_pause(path: Path) -> int:  # the prune between reading the stamp and unlinking
        found = real_stamp(path)
        stamp_read.set()
        written.wait(2)  # the write comes now - or cannot until the prune is done
        return found

    monkeypatch.setattr(mqlog, "_newest_stamp", stamp_then_pause)
    pruning = threading.Thread(target=other.prune, args=(keep_since,))
    pruning.start()
    assert stamp_read.wait(10)
    writer = threading.Thread(target=lambda: (log.put("t", "QM1", "h2", False, "Q", 2, "{}", b"{}", b"new"),
                                              written.set()))
    writer.start()  # no event loop in the thread: the record is written at once
    writer.join(10)
    pruning.join(10)
    assert not pruning.is_alive() and not writer.is_alive()
    await log.force()  # answered: its record is on disk
    _, messages = other.read("APPL1", 0)
    assert 2 in [m.id for m in messages]
    log.stop()
    other.stop()


def _on_file(root: Path) -> list[int]:
    """The message ids of the PUT records in QM1's segments as the files hold them now (not
    ``read``, which hands its own buffered records to the OS first)."""
    return [json.loads(line)["i"] for segment in sorted((root / "QSG1" / "QM1").glob("*.log"))
            for line in segment.read_bytes().splitlines()]


async def test_without_sync_a_record_is_with_the_os_when_its_call_is_answered(tmp_path: Path, monkeypatch) -> None:
    """QSG_MQLOG_SYNC=none: a logged change "survives a QM crash, not a machine crash" - so its
    record is written to the file (the OS has it) before the call returns; a write the disk
    refuses is told to the call, and the records after it are written once it takes them."""
    import app.qmgr.mqlog as mqlog

    log = MessageLog(tmp_path, "QSG1", "QM1", sync=False, structure_of=lambda tag: "APPL1", now_ns=time.time_ns)
    log.put("t", "QM1", "h1", False, "Q", 1, "{}", b"{}", b"one")
    await log.force()
    assert _on_file(tmp_path) == [1]  # a SIGKILL now would not lose it
    real_write = mqlog.os.write
    full = True

    def write(fd: int, data: bytes) -> int:
        if full:
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(mqlog.os, "write", write)
    log.put("t", "QM1", "h2", False, "Q", 2, "{}", b"{}", b"two")
    try:
        await log.force()
    except OSError:
        pass
    else:
        raise AssertionError("a record the disk refused was answered as written")
    assert _on_file(tmp_path) == [1]
    full = False
    for i in (3, 4):  # the disk takes writes again: what was refused goes with them
        log.put("t", "QM1", f"h{i}", False, "Q", i, "{}", b"{}", b"more")
        await log.force()
        assert _on_file(tmp_path) == list(range(1, i + 1))
    log.stop()


async def test_reading_the_logs_on_a_thread_loses_no_record_written_meanwhile(tmp_path: Path, monkeypatch) -> None:
    """RECOVER CFSTRUCT reads every log on a thread (``asyncio.to_thread(read)``) while the
    event loop goes on logging other structures' persistent calls. A record the loop writes
    while the reading thread is in the middle of writing out the buffer must not be dropped
    with it: that call is answered once the record is forced, so the record must be there."""
    import threading

    import app.qmgr.mqlog as mqlog

    log = MessageLog(tmp_path, "QSG1", "QM1", sync=True, structure_of=lambda tag: "APPL1", now_ns=time.time_ns)
    loop_thread = threading.get_ident()
    in_write, appended = threading.Event(), threading.Event()
    real_write = mqlog.os.write

    def write(fd: int, data: bytes) -> int:  # a write off the loop waits for the loop's next record
        if threading.get_ident() != loop_thread and not in_write.is_set():
            in_write.set()
            appended.wait(2)
        return real_write(fd, data)

    monkeypatch.setattr(mqlog.os, "write", write)
    log.put("t", "QM1", "h1", False, "Q", 1, "{}", b"{}", b"one")
    reader = threading.Thread(target=log.read, args=("APPL1", 0))
    reader.start()  # as to_thread does: the loop goes on meanwhile
    in_write.wait(0.5)  # a reader that writes out the buffer is in that write now
    log.put("t", "QM1", "h2", False, "Q", 2, "{}", b"{}", b"two")  # another structure's call, on the loop
    appended.set()
    reader.join(10)
    assert not reader.is_alive()
    await log.force()  # the second call is answered: its record is on disk
    assert _on_file(tmp_path) == [1, 2]
    log.stop()


async def test_a_file_system_without_locks_still_takes_the_log(tmp_path: Path, monkeypatch) -> None:
    """Where the file system has no file locks (flock: ENOLCK, as some network file systems
    answer), records are still written and forced, and BACKUP CFSTRUCT's prune still prunes:
    the locks keep a prune and a write apart where they exist, never stop the log."""
    import errno

    import app.qmgr.mqlog as mqlog

    def no_locks(fd: int, how: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(mqlog.fcntl, "flock", no_locks)
    log = MessageLog(tmp_path, "QSG1", "QM1", sync=True, structure_of=lambda tag: "APPL1", now_ns=time.time_ns)
    log.put("t", "QM1", "h1", False, "Q", 1, "{}", b"{}", b"one")
    await log.force()
    assert _on_file(tmp_path) == [1] and log._forced == 1
    log.close()
    assert log.prune(time.time_ns() + 1) == 1 and _on_file(tmp_path) == []
    log.stop()


async def test_a_persistent_put_the_log_cannot_take_is_answered_2009_not_500(redis_url, tmp_path, monkeypatch):
    """A full disk under the recovery log: the persistent MQPUT is stored in the coupling
    facility but not logged. Its answer is MQRC_CONNECTION_BROKEN (may have happened), never a
    success nor a 500; once the disk takes writes again its record goes to the log with the next
    one, and RECOVER CFSTRUCT brings both messages back."""
    import app.qmgr.mqlog as mqlog
    from app.core.clock import ManualClock
    from tests.support.inproc import inprocess_group

    clock = ManualClock(1_780_000_000_000)
    async with inprocess_group(["QM1"], redis_url, tmp_path, clock, activity_enabled=False) as qms:
        qm1 = qms["QM1"]
        await qm1.mqsc("DEFINE CFSTRUCT(LOGGED) CFLEVEL(5) RECOVER(YES) RECAUTO(NO)\n"
                       "DEFINE QLOCAL(DISK.Q) QSGDISP(SHARED) CFSTRUCT(LOGGED)")
        app = await qm1.connect("DISKFULL")
        hobj = await app.open("DISK.Q", ["OUTPUT"])
        real_write = mqlog.os.write

        def full(fd: int, data: bytes) -> int:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(mqlog.os, "write", full)
        r = await app.http.post(f"/v1/connections/{app.hconn}/objects/{hobj}/put",
                                json={"data": "first", "md": {"persistence": "PERSISTENT"},
                                      "options": ["NO_SYNCPOINT"]})
        assert r.status_code != 500 and r.json()["error"]["reason"] == 2009, r.text
        assert "recovery log" in r.json()["error"]["message"]

        monkeypatch.setattr(mqlog.os, "write", real_write)  # room on the disk again
        app = await qm1.connect("DISKFULL")  # the 2009 ended the connection
        await app.put1("DISK.Q", "second", md={"persistence": "PERSISTENT"}, options=["NO_SYNCPOINT"])
        await qm1.mqsc("RESET CFSTRUCT(LOGGED) ACTION(FAIL)")  # the structure's contents lost
        await qm1.mqsc("RECOVER CFSTRUCT(LOGGED)")
        hin = await app.open("DISK.Q", ["INPUT_SHARED"])
        got = [(await app.get(hin, ["NO_SYNCPOINT"]))["data"] for _ in range(2)]
        assert sorted(got) == ["first", "second"]


async def test_recover_purge_the_log_cannot_take_answers_an_mq_reason_not_500(redis_url, tmp_path, monkeypatch):
    """RECOVER CFSTRUCT TYPE(PURGE) forces its CLEAR records before it answers; a disk that
    refuses them must give the command an MQ failure (the structure stays FAILED, to be
    recovered again), never a 500. Once the disk takes writes again the recovery completes."""
    import app.qmgr.mqlog as mqlog
    from app.core.clock import ManualClock
    from tests.support.inproc import inprocess_group

    clock = ManualClock(1_780_000_000_000)
    async with inprocess_group(["QM1"], redis_url, tmp_path, clock, activity_enabled=False) as qms:
        qm1 = qms["QM1"]
        await qm1.mqsc("DEFINE CFSTRUCT(PURGED) CFLEVEL(5) RECOVER(YES) RECAUTO(NO)\n"
                       "DEFINE QLOCAL(PURGE.Q) QSGDISP(SHARED) CFSTRUCT(PURGED)")
        app = await qm1.connect("DISKFULL")
        await app.put1("PURGE.Q", "gone", md={"persistence": "PERSISTENT"}, options=["NO_SYNCPOINT"])
        await qm1.mqsc("RESET CFSTRUCT(PURGED) ACTION(FAIL)")
        real_write = mqlog.os.write

        def full(fd: int, data: bytes) -> int:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(mqlog.os, "write", full)
        r = await qm1.http.post("/v1/admin/mqsc", json={"script": "RECOVER CFSTRUCT(PURGED) TYPE(PURGE)"})
        assert r.status_code != 500, r.text
        (res,) = r.json()["results"]
        assert res["completion_code"] == 2 and res["reason"] == 2102, res
        assert "recovery log" in " ".join(res["messages"]), res
        r = await qm1.http.post("/v1/admin/mqsc", json={"script": "DISPLAY CFSTATUS(PURGED)"})
        assert r.json()["results"][0]["objects"][0]["STATUS"] == "FAILED", r.text

        monkeypatch.setattr(mqlog.os, "write", real_write)
        (res,) = await qm1.mqsc("RECOVER CFSTRUCT(PURGED) TYPE(PURGE)")
        assert "recovered empty" in res["messages"][0]


async def test_backup_the_disk_does_not_take_answers_an_mq_reason_not_500(redis_url, tmp_path, monkeypatch):
    """BACKUP CFSTRUCT on a full disk: the backup file cannot be written. The command fails with
    an MQ reason (insufficient resources), no backup is recorded and no part-written file is
    left; once the disk takes writes again the backup completes."""
    import app.qmgr.mqlog as mqlog
    from app.core.clock import ManualClock
    from tests.support.inproc import inprocess_group

    clock = ManualClock(1_780_000_000_000)
    async with inprocess_group(["QM1"], redis_url, tmp_path, clock, activity_enabled=False) as qms:
        qm1 = qms["QM1"]
        await qm1.mqsc("DEFINE CFSTRUCT(BACKED) CFLEVEL(5) RECOVER(YES) RECAUTO(NO)\n"
                       "DEFINE QLOCAL(BACKED.Q) QSGDISP(SHARED) CFSTRUCT(BACKED)")
        app = await qm1.connect("DISKFULL")
        await app.put1("BACKED.Q", "kept", md={"persistence": "PERSISTENT"}, options=["NO_SYNCPOINT"])
        real_fsync = mqlog.os.fsync

        def full(fd: int) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(mqlog.os, "fsync", full)
        r = await qm1.http.post("/v1/admin/mqsc", json={"script": "BACKUP CFSTRUCT(BACKED)"})
        assert r.status_code != 500, r.text
        (res,) = r.json()["results"]
        assert res["completion_code"] == 2 and res["reason"] == 2102, res
        r = await qm1.http.post("/v1/admin/mqsc", json={"script": "DISPLAY CFSTATUS(BACKED) TYPE(BACKUP)"})
        assert r.json()["results"][0]["objects"][0]["BKUPDATE"] == "", r.text  # no backup recorded
        assert not list((tmp_path / "mqlog" / "QSG1" / "backups").glob("*.tmp"))

        monkeypatch.setattr(mqlog.os, "fsync", real_fsync)
        (res,) = await qm1.mqsc("BACKUP CFSTRUCT(BACKED)")
        assert "Backup of CF structure BACKED complete" in res["messages"][0], res
