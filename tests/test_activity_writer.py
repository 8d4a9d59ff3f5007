"""The activity writer: rotation by size, age and date, atomic shipping into the store, recovery
of a killed process's files, bounded memory with a slow disk, nothing lost on a clean stop."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import threading
from pathlib import Path
from typing import Any

import fsspec

from app.activity.store import FolderStore, FsspecStore, open_store, partition, safe_segment
from app.activity.writer import ActivityWriter, Spool, encode

DAY = 1_748_736_000_000  # 2025-06-01T00:00:00Z


def rec(i: int, ts: int | None = None) -> dict[str, Any]:
    return {"v": 1, "ts": DAY + 36_000_000 + i if ts is None else ts, "qsg": "QSG1", "qmgr": "QM1",
            "verb": "PUT", "object": "APP.Q", "size": i}


def enc(*records: dict[str, Any]) -> list[tuple[int, bytes]]:
    """Records as the spool takes them (what ActivityWriter.submit makes of them)."""
    return [encode(r) for r in records]


def shipped(store: Path, date: str = "2025-06-01", qmgr: str = "QM1") -> list[Path]:
    return sorted((store / partition(date, qmgr)).glob("*.jsonl"))


def lines(files: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(line) for f in files for line in f.read_text().splitlines()]


def make_spool(tmp_path: Path, store: Any = None, **kwargs: Any) -> Spool:
    return Spool(tmp_path / "spool", store or FolderStore(tmp_path / "store"), qsg="QSG1", qmgr="QM1", **kwargs)


def test_files_rotate_by_size_and_only_closed_files_reach_the_store(tmp_path):
    spool = make_spool(tmp_path, rotate_bytes=500)
    for i in range(0, 40, 4):
        spool.write(enc(*(rec(i + k) for k in range(4))))
    spool.write(enc(rec(40)))
    open_files = list((tmp_path / "spool").glob("*.open"))
    assert len(open_files) == 1  # the one being written stays in the spool
    before_close = shipped(tmp_path / "store")
    assert len(before_close) >= 3
    assert all(f.read_bytes().endswith(b"\n") for f in before_close)  # whole records only
    spool.close()
    files = shipped(tmp_path / "store")
    assert [r["size"] for r in lines(files)] == list(range(41))  # in order, none lost or doubled
    assert not list((tmp_path / "spool").iterdir())
    assert all(f.name.startswith("QSG1.QM1.20250601T100000.") for f in files)


def test_files_rotate_by_age_even_without_new_records(tmp_path):
    now = [0.0]
    spool = make_spool(tmp_path, rotate_s=60, monotonic=lambda: now[0])
    spool.write(enc(rec(1)))
    spool.tick()
    assert shipped(tmp_path / "store") == []
    now[0] = 61.0
    spool.tick()
    assert [r["size"] for r in lines(shipped(tmp_path / "store"))] == [1]


def test_every_record_lands_in_the_partition_of_its_date(tmp_path):
    spool = make_spool(tmp_path)
    before_midnight = DAY + 86_400_000 - 1
    spool.write(enc(rec(1, before_midnight), rec(2, before_midnight + 1), rec(3, before_midnight + 2)))
    # a call that ended just before midnight, submitted after the first call of the new day
    spool.write(enc(rec(4, before_midnight - 5), rec(5, before_midnight + 3)))
    spool.close()
    assert [r["size"] for r in lines(shipped(tmp_path / "store"))] == [1, 4]
    assert [r["size"] for r in lines(shipped(tmp_path / "store", "2025-06-02"))] == [2, 3, 5]


def test_files_left_by_a_killed_process_are_cut_to_whole_records_and_shipped(tmp_path):
    spool = make_spool(tmp_path)
    spool.write(enc(rec(1), rec(2)))
    path = next((tmp_path / "spool").glob("*.open"))
    with open(path, "ab") as f:
        f.write(b'{"v": 1, "ts": 17487')  # the process died in the middle of a line
    restarted = make_spool(tmp_path)
    restarted.recover()
    assert [r["size"] for r in lines(shipped(tmp_path / "store"))] == [1, 2]
    assert not list((tmp_path / "spool").iterdir())


class FlakyStore(FolderStore):
    """A store that cannot be reached until ``up`` is set."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.up = False

    def ship(self, local: Path, date: str, qmgr: str) -> str:
        if not self.up:
            raise OSError("store unreachable")
        return super().ship(local, date, qmgr)


def test_a_file_the_store_refuses_waits_in_the_spool(tmp_path):
    store = FlakyStore(tmp_path / "store")
    spool = make_spool(tmp_path, store=store)
    spool.write(enc(rec(1)))
    spool.close()
    assert shipped(tmp_path / "store") == [] and len(list((tmp_path / "spool").glob("*.jsonl"))) == 1
    store.up = True
    spool.tick()
    assert [r["size"] for r in lines(shipped(tmp_path / "store"))] == [1]


def test_a_uri_store_receives_files_under_a_final_name_only(tmp_path):
    store = open_store("memory://activity-test")
    assert isinstance(store, FsspecStore)
    spool = make_spool(tmp_path, store=store)
    spool.write(enc(rec(1), rec(2)))
    spool.close()
    fs = fsspec.filesystem("memory")
    names = fs.find("/activity-test")
    assert len(names) == 1 and names[0].startswith(f"/activity-test/{partition('2025-06-01', 'QM1')}/QSG1.QM1.")
    assert [json.loads(x)["size"] for x in fs.cat(names[0]).decode().splitlines()] == [1, 2]
    fs.rm("/activity-test", recursive=True)


def test_a_folder_store_on_another_file_system_copies_then_renames(tmp_path, monkeypatch):
    real_replace = os.replace
    calls: list[tuple[str, str]] = []

    def replace(src, dst):
        calls.append((Path(src).name, Path(dst).name))
        if len(calls) == 1:  # the first, direct move crosses file systems
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real_replace(src, dst)

    local = tmp_path / "QSG1.QM1.20250601T100000.000001.ab.jsonl"
    local.write_text('{"v": 1}\n')
    monkeypatch.setattr(os, "replace", replace)
    FolderStore(tmp_path / "store").ship(local, "2025-06-01", "QM1")
    assert calls[1] == (f".{local.name}.part", local.name)  # hidden copy, then an atomic rename
    assert not local.exists()
    assert (tmp_path / "store" / partition("2025-06-01", "QM1") / local.name).read_text() == '{"v": 1}\n'


def test_zos_names_become_safe_path_segments():
    assert safe_segment("QM#1") == "QM_231" and safe_segment("Q@$A") == "Q_40_24A"
    assert partition("2025-06-01", "QM1") == "date=2025-06-01/qmgr=QM1"


class GatedSpool(Spool):
    """A disk that hangs until ``gate`` is set (``entered`` tells a write is stuck in it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gate = threading.Event()
        self.entered = threading.Event()

    def write(self, records):
        self.entered.set()
        assert self.gate.wait(30), "the test never opened the gate"
        super().write(records)


async def test_a_slow_disk_bounds_the_buffer_and_callers_wait_for_room(tmp_path):
    spool = GatedSpool(tmp_path / "spool", FolderStore(tmp_path / "store"), qsg="QSG1", qmgr="QM1")
    writer = ActivityWriter(spool, max_records=100, batch_records=10, flush_s=0.05)
    await writer.start()
    for i in range(10):
        writer.submit(rec(i))
    assert await asyncio.to_thread(spool.entered.wait, 10)  # the first batch is stuck on the disk
    for i in range(10, 110):
        writer.submit(rec(i))
    assert writer.full and len(writer._buf) == 100  # memory bounded: buffer + the batch in flight
    waiting = asyncio.create_task(writer.room())
    done, _ = await asyncio.wait({waiting}, timeout=0.2)
    assert not done  # the caller is held while the disk is stuck (the event loop is not)
    spool.gate.set()
    await asyncio.wait_for(waiting, 10)
    assert writer.waits >= 1
    await writer.stop()
    assert [r["size"] for r in lines(shipped(tmp_path / "store"))] == list(range(110))


async def test_drop_policy_never_waits_and_reports_what_it_lost(tmp_path):
    spool = GatedSpool(tmp_path / "spool", FolderStore(tmp_path / "store"), qsg="QSG1", qmgr="QM1")
    writer = ActivityWriter(spool, max_records=100, batch_records=10, flush_s=0.05, overflow="drop",
                            now_ms=lambda: DAY + 36_000_000)
    await writer.start()
    for i in range(10):
        writer.submit(rec(i))
    assert await asyncio.to_thread(spool.entered.wait, 10)
    for i in range(10, 160):
        writer.submit(rec(i))
    await asyncio.wait_for(writer.room(), 1)  # returns at once under this policy
    assert len(writer._buf) == 100 and writer.dropped == 50
    spool.gate.set()
    await writer.stop()
    got = lines(shipped(tmp_path / "store"))
    assert [r["size"] for r in got if r["verb"] == "PUT"] == list(range(110))
    assert [(r["verb"], r["count"]) for r in got if r["verb"] != "PUT"] == [("LOST", 50)]


async def test_clean_stop_writes_everything_buffered(tmp_path):
    spool = Spool(tmp_path / "spool", FolderStore(tmp_path / "store"), qsg="QSG1", qmgr="QM1")
    writer = ActivityWriter(spool, max_records=50_000, flush_s=60)  # no periodic flush before the stop
    await writer.start()
    for i in range(20_000):
        writer.submit(rec(i))
    await writer.stop()
    assert [r["size"] for r in lines(shipped(tmp_path / "store"))] == list(range(20_000))
    assert not list((tmp_path / "spool").iterdir())


class FailingOnceSpool(Spool):
    """A disk that fails one write (e.g. ENOSPC for a moment)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.failed = threading.Event()

    def write(self, records):
        if not self.failed.is_set():
            self.failed.set()
            raise OSError(errno.ENOSPC, "No space left on device")
        super().write(records)


async def test_a_failed_write_is_retried_in_order(tmp_path):
    spool = FailingOnceSpool(tmp_path / "spool", FolderStore(tmp_path / "store"), qsg="QSG1", qmgr="QM1")
    writer = ActivityWriter(spool, batch_records=5, flush_s=0.01)
    await writer.start()
    for i in range(5):
        writer.submit(rec(i))
    assert await asyncio.to_thread(spool.failed.wait, 10)  # the writer hit the failure
    for i in range(5, 8):
        writer.submit(rec(i))
    await writer.stop()
    assert [r["size"] for r in lines(shipped(tmp_path / "store"))] == list(range(8))
