"""Asynchronous, bounded writing of activity records to rotated files that are shipped to the
activity store.

Two halves:

* ``ActivityWriter`` lives on the event loop. ``submit`` encodes a record as its JSON line
  (a few microseconds) and appends it to an in-memory buffer (never blocks, never does I/O); a
  background task hands the buffer over in batches to one dedicated worker thread, which only
  joins and writes bytes (file I/O releases the GIL, so it hardly competes with the loop).
  The buffer is bounded (``max_records`` encoded lines, about 400 bytes each): when it is full,
  ``room()`` lets a caller wait for space (policy ``wait``: a slow disk slows the calls down,
  nothing is lost) or the record is dropped and counted (policy ``drop``: the calls never wait;
  a ``LOST`` record tells the analytics how many went missing). ``stop`` writes everything that is buffered, closes the
  current file and ships it, so a clean shutdown loses nothing.
* ``Spool`` runs only in that worker thread: it appends the lines to the current file in the
  spool folder, rotates it by age, size and date (a file never spans two UTC days, so it
  belongs to one date partition), and ships every closed file into the store. A file the store
  could not take stays in the spool and is shipped later; files a killed process left behind
  are shipped at the next start (after cutting a torn last line).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from app.activity.schema import SCHEMA_VERSION, Verb
from app.activity.store import ActivityStore, safe_segment
from app.core.clock import SystemClock

log = logging.getLogger(__name__)

DAY_MS = 86_400_000
OPEN_SUFFIX = ".jsonl.open"   # being written
CLOSED_SUFFIX = ".jsonl"      # complete, waiting to be shipped

#: A record as the writer keeps it: its timestamp (for the date of its file) and its JSON line.
Line = tuple[int, bytes]


class Spool:
    """The current activity file of one queue manager and the closed files waiting for the store.

    Not thread-safe: one worker thread calls it.
    """

    def __init__(self, folder: Path, store: ActivityStore, *, qsg: str, qmgr: str,
                 rotate_s: float = 600.0, rotate_bytes: int = 64 * 1024 * 1024,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.folder = folder
        self.store = store
        self.qsg = qsg
        self.qmgr = qmgr
        self.rotate_s = rotate_s
        self.rotate_bytes = rotate_bytes
        self._monotonic = monotonic
        # Unique per process: a restarted QM never reuses an earlier file name.
        self._instance = secrets.token_hex(4)
        self._seq = 0
        self._file: Any = None
        self._path: Path | None = None
        self._day: int | None = None       # day number (ts // DAY_MS) of the current file
        self._opened_at = 0.0
        self._bytes = 0
        #: Closed files shipped into the store so far.
        self.shipped = 0

    # -- writing --

    def write(self, lines: Sequence[Line]) -> None:
        """Append encoded records (in order) and rotate where their date, the size or the age
        says so."""
        i = 0
        n = len(lines)
        while i < n:
            day = lines[i][0] // DAY_MS
            j = i + 1
            while j < n and lines[j][0] // DAY_MS == day:
                j += 1
            data = b"\n".join([line for _, line in lines[i:j]]) + b"\n"
            if self._file is not None and self._day is not None and day < self._day:
                # Records of the day before, submitted after the first of the new day (calls
                # ending around midnight): a small file of their own keeps every record in the
                # partition of its date, which is all the nightly job reads.
                self._write_late(lines[i][0], data)
                i = j
                continue
            if self._file is None or self._day is None or day > self._day:
                self._open(day, lines[i][0])
            self._file.write(data)
            self._bytes += len(data)
            if self._bytes >= self.rotate_bytes:
                self.close_current()
            i = j
        if self._file is not None:
            self._file.flush()  # in the OS's hands: a killed process loses nothing written

    def tick(self) -> None:
        """Rotate a file older than ``rotate_s`` (also when no record came) and retry shipping."""
        if self._file is not None and self._monotonic() - self._opened_at >= self.rotate_s:
            self.close_current()
        self.ship_pending()

    def _name(self, first_ts: int) -> str:
        """Named after its first record's time (the group's clock), which also gives its date."""
        self._seq += 1
        stamp = datetime.fromtimestamp(first_ts / 1000, tz=UTC).strftime("%Y%m%dT%H%M%S")
        return f"{safe_segment(self.qsg)}.{safe_segment(self.qmgr)}.{stamp}.{self._seq:06d}.{self._instance}"

    def _write_late(self, first_ts: int, data: bytes) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / (self._name(first_ts) + CLOSED_SUFFIX)
        tmp = path.with_name(path.name[:-len(CLOSED_SUFFIX)] + OPEN_SUFFIX)
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        self.ship_pending()

    def _open(self, day: int, first_ts: int) -> None:
        self.close_current()
        name = self._name(first_ts)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._path = self.folder / (name + OPEN_SUFFIX)
        self._file = open(self._path, "wb")
        self._day = day
        self._opened_at = self._monotonic()
        self._bytes = 0

    # -- closing and shipping --

    def close_current(self) -> None:
        """Close the current file (fsync: it is about to be someone else's) and ship it."""
        if self._file is None:
            return
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        assert self._path is not None
        os.replace(self._path, self._path.with_name(self._path.name[:-len(OPEN_SUFFIX)] + CLOSED_SUFFIX))
        self._file = None
        self._path = None
        self.ship_pending()

    def ship_pending(self) -> None:
        """Ship every closed file of the spool; one the store refuses waits for the next try."""
        if not self.folder.exists():
            return
        for path in sorted(self.folder.glob("*" + CLOSED_SUFFIX)):
            date = _date_of(path.name)
            try:
                self.store.ship(path, date, self.qmgr)
                self.shipped += 1
            except OSError as exc:
                log.warning("activity file %s not shipped to %s yet: %s", path.name, self.store.url, exc)
                return

    def recover(self) -> None:
        """At start: files a killed process left open are closed (a torn last line is cut:
        each line is one record, written whole or not at all) and everything is shipped."""
        if not self.folder.exists():
            return
        for path in self.folder.glob("*" + OPEN_SUFFIX):
            data = path.read_bytes()
            end = data.rfind(b"\n") + 1
            if end < len(data):
                with open(path, "r+b") as f:
                    f.truncate(end)
            if end == 0:
                path.unlink()
                continue
            os.replace(path, path.with_name(path.name[:-len(OPEN_SUFFIX)] + CLOSED_SUFFIX))
        self.ship_pending()

    def close(self) -> None:
        """Clean shutdown: close and ship the current file."""
        self.close_current()


def _date_of(name: str) -> str:
    """The date partition of a spool file, from its name (QSG.QM.YYYYMMDDTHHMMSS.seq.inst...)."""
    stamp = name.split(".")[2]
    return f"{stamp[0:4]}-{stamp[4:6]}-{stamp[6:8]}"


class ActivityWriter:
    """Bounded buffer on the event loop, files written by one worker thread."""

    def __init__(self, spool: Spool, *, max_records: int = 20_000, batch_records: int = 1000,
                 flush_s: float = 0.5, overflow: str = "wait",
                 now_ms: Callable[[], int] | None = None) -> None:
        if overflow not in ("wait", "drop"):
            raise ValueError("activity overflow policy must be 'wait' or 'drop'")
        self.spool = spool
        self.max_records = max_records
        self.batch_records = batch_records
        self.flush_s = flush_s
        self.overflow = overflow
        self._now_ms = now_ms or SystemClock().now_ms  # a queue manager gives its group clock
        self._buf: list[Line] = []
        self._wake = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"activity-{spool.qmgr}")
        #: Records dropped under policy ``drop`` and not yet reported by a LOST record.
        self.dropped = 0
        #: Records handed to the spool (observability and tests).
        self.written = 0
        #: Times a caller had to wait for room (policy ``wait``).
        self.waits = 0

    # -- the event loop side --

    @property
    def full(self) -> bool:
        return len(self._buf) >= self.max_records

    def submit(self, record: dict[str, Any]) -> None:
        """Buffer one record as its JSON line; never blocks. Under policy ``drop`` a full
        buffer drops it."""
        if len(self._buf) >= self.max_records and self.overflow == "drop":
            self.dropped += 1
            return
        self._buf.append(encode(record))
        if len(self._buf) >= self.batch_records:
            self._wake.set()
        if len(self._buf) >= self.max_records:
            self._room.clear()

    async def room(self) -> None:
        """Wait until the buffer has room (policy ``wait``); returns at once otherwise."""
        if self.overflow != "wait":
            return
        while len(self._buf) >= self.max_records and not self._stopping:
            self.waits += 1
            self._room.clear()
            self._wake.set()
            await self._room.wait()

    async def start(self) -> None:
        """Ship what an earlier process left in the spool, then start writing."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._pool, self.spool.recover)
        self._task = asyncio.create_task(self._run(), name=f"activity-writer-{self.spool.qmgr}")

    async def stop(self) -> None:
        """Write everything buffered, close and ship the current file (clean shutdown)."""
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        loop = asyncio.get_running_loop()
        try:
            await self._drain(loop)  # records submitted while the task ended
            await loop.run_in_executor(self._pool, self.spool.close)
        except OSError as exc:
            log.error("activity log of %s: %d record(s) could not be written at shutdown: %s",
                      self.spool.qmgr, len(self._buf), exc)
        finally:
            self._room.set()
            self._pool.shutdown(wait=True)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        backoff = 0.1
        while not self._stopping:
            try:
                await asyncio.wait_for(self._wake.wait(), self.flush_s)
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                await self._drain(loop)
                await loop.run_in_executor(self._pool, self.spool.tick)
                backoff = 0.1
            except Exception as exc:  # the writer must outlive any failure, or callers would wait forever
                # A full or failing disk: the batch went back to the buffer; callers wait for
                # room (or drop); try again a little later.
                if isinstance(exc, OSError):
                    log.error("activity log of %s cannot be written: %s", self.spool.qmgr, exc)
                else:
                    log.exception("activity log of %s", self.spool.qmgr)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)

    async def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        """Hand the buffer to the worker thread until it is empty."""
        while self._buf or self.dropped:
            if self.dropped:
                self._buf.append(self._lost_record())
            batch, self._buf = self._buf, []
            try:
                await loop.run_in_executor(self._pool, self.spool.write, batch)
            except OSError:
                self._buf[:0] = batch  # nothing is lost: back in front, in order
                raise
            except Exception:
                # Not the disk but the batch (a bug): retrying would fail forever and stall
                # every caller, so it is dropped and reported as LOST.
                log.exception("activity records of %s could not be written; %d dropped",
                              self.spool.qmgr, len(batch))
                self.dropped += len(batch)
                if len(self._buf) < self.max_records:
                    self._room.set()
                return  # the LOST record is tried at the next drain, not in a tight loop
            self.written += len(batch)
            if len(self._buf) < self.max_records:
                self._room.set()

    def _lost_record(self) -> Line:
        lost, self.dropped = self.dropped, 0
        ts = self._buf[-1][0] if self._buf else self._now_ms()
        return encode({"v": SCHEMA_VERSION, "ts": ts, "qsg": self.spool.qsg, "qmgr": self.spool.qmgr,
                       "verb": Verb.LOST.value, "count": lost,
                       "detail": "records dropped: the activity buffer was full (activity_overflow=drop)"})


def encode(record: dict[str, Any]) -> Line:
    """A record as the writer keeps it. Values JSON does not know (none should come) are written
    as text rather than failing the record."""
    return record["ts"], orjson.dumps(record, default=str)


def unshipped(activity_dir: str | Path, date: str) -> tuple[int, int]:
    """What the queue managers' spools under ``activity_dir`` still hold of ``date``
    (YYYY-MM-DD): (files, records) written but not yet in the store, so that a job run for that
    day can say what it could not see (files ship when they rotate, every ``activity_rotate_s``)."""
    stamp = date.replace("-", "")
    files = records = 0
    spool_root = Path(activity_dir) / ".spool"
    if not spool_root.is_dir():
        return 0, 0
    for path in spool_root.glob("*/*"):
        name = path.name
        if not name.endswith((OPEN_SUFFIX, CLOSED_SUFFIX)) or name.split(".")[2][:8] != stamp:
            continue
        try:
            with open(path, "rb") as f:
                records += sum(1 for line in f if line.strip())
        except OSError:  # shipped (moved) meanwhile: the store has it
            continue
        files += 1
    return files, records
