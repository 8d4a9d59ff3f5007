"""The queue managers' logs of persistent changes to recoverable CF structures, and the
structure backups: what RECOVER CFSTRUCT reads when a structure's contents are lost.

On z/OS every persistent MQPUT and MQGET on a shared queue is written to the log of the queue
manager that did it, and BACKUP CFSTRUCT copies a structure's persistent messages to the log of
the queue manager that runs it; RECOVER CFSTRUCT reads the backup and then the logs of every
queue manager of the group. Here each queue manager appends JSON lines to files under
``<mqlog_dir>/<QSG>/<QM>/`` and backups go to ``<mqlog_dir>/<QSG>/backups/``; the folder must be
one that every queue manager of the group can read (one disk for ``qsg up``, a shared volume in
docker-compose), as z/OS needs every log of the group for recovery.

Only what recovery needs is logged, and only for structures defined RECOVER(YES):

* a persistent message's PUT once it is committed (at once outside syncpoint, at MQCMIT inside),
* a persistent message's destructive GET once committed,
* CLEAR QLOCAL and DELETE QLOCAL of a shared queue (every message id up to ``upto`` is gone).

A record is written after the coupling facility accepted the change and before the call
returns to the application; with ``QSG_MQLOG_SYNC=commit`` (the default) the call also waits
until it is forced to disk, like a z/OS log write at commit.

Every record is stamped (``t``, nanoseconds) on the group clock (app/cf/groupclock.py), not the
host's: RECOVER CFSTRUCT on any queue manager compares the stamps of every queue manager's log
with a backup's time, so they must all be on one clock. For the same reason pruning looks at a
segment's newest stamp, not at its file time.
"""

from __future__ import annotations

import asyncio
import base64
import errno
import fcntl
import logging
import os
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from app.core.cfrecovery import CLEAR, DELETE, GET, PUT, SavedMessage

log = logging.getLogger(__name__)

SEGMENT_BYTES = 64 * 1024 * 1024
#: Bytes read at a time from a segment's end to find its newest record.
TAIL_CHUNK = 64 * 1024
#: How every record starts (``_write``): its stamp.
_STAMP = re.compile(rb'\{"t":(\d+),')


class MessageLog:
    """One queue manager's log writer, and the reader of every queue manager's log.

    ``structure_of(tag)``: the structure name when the tag is a RECOVER(YES) structure, else None.
    """

    def __init__(self, root: str | Path, qsg: str, qmgr: str, *, sync: bool,
                 structure_of: Callable[[str], str | None], now_ns: Callable[[], int]) -> None:
        self.group_dir = Path(root) / qsg
        self.own_dir = self.group_dir / qmgr
        self.backup_dir = self.group_dir / "backups"
        self.sync = sync
        self.structure_of = structure_of
        self.now_ns = now_ns  # the group clock
        self._last_segment_ns = 0
        self._pending: dict[tuple[str, str, str], list[bytes]] = {}
        self._fd: int | None = None
        self._size = 0
        self._written = 0  # records written, ever (those in _buffer included)
        #: Records written but not yet handed to the OS: the writes of one event-loop turn go
        #: out in one os.write (a persistent put's answer waits for ``force``, which drains).
        self._buffer: list[bytes] = []
        self._buffered = 0  # records in _buffer
        self._drain_due = False  # a drain of _buffer is scheduled (call_soon)
        self._forced = 0  # records known to be on disk
        #: The fsync the callers of ``force`` wait on together (group commit), None between them.
        self._flush: asyncio.Future[None] | None = None
        #: The thread that runs the fsyncs (one at a time: each covers what was written before it).
        self._syncer: ThreadPoolExecutor | None = ThreadPoolExecutor(max_workers=1,
                                                                     thread_name_prefix=f"mqlog-{qmgr}")
        #: fsyncs of the log, ever (``/metrics``: how many calls each one served).
        self.fsyncs = 0
        # The folder exists from the start, so that every other queue manager's RECOVER
        # CFSTRUCT can tell a log it cannot see (storage not shared) from one still empty.
        self.own_dir.mkdir(parents=True, exist_ok=True)

    # ---- writing --------------------------------------------------------------------------

    def wanted(self, tag: str) -> bool:
        """Whether changes to structure ``tag`` are logged (it is defined RECOVER(YES))."""
        return self.structure_of(tag) is not None

    def put(self, tag: str, qmgr: str, hconn: str, syncpoint: bool, queue: str, ident: int,
            meta: str, md: bytes, data: bytes) -> None:
        """A persistent message was put (logged now, or at MQCMIT when ``syncpoint``)."""
        self._record(tag, qmgr, hconn, syncpoint, {"o": PUT, "q": queue, "i": ident, "m": meta,
                                                    "d": md.decode(), "b": base64.b64encode(data).decode()})

    def got(self, tag: str, qmgr: str, hconn: str, syncpoint: bool, queue: str, ident: int) -> None:
        """A persistent message was got destructively (logged now, or at MQCMIT)."""
        self._record(tag, qmgr, hconn, syncpoint, {"o": GET, "q": queue, "i": ident})

    def removed_all(self, tag: str, queue: str, upto: int, *, deleted: bool) -> None:
        """CLEAR QLOCAL (or DELETE QLOCAL) removed every message of ``queue`` with id <= ``upto``."""
        self._record(tag, "", "", False, {"o": DELETE if deleted else CLEAR, "q": queue, "upto": upto})

    def committed(self, qmgr: str, hconn: str, tag: str) -> None:
        """MQCMIT of the connection's work in ``tag`` succeeded: its records go to the log."""
        lines = self._pending.pop((qmgr, hconn, tag), None)
        if lines:
            self._write(lines)

    def backed_out(self, qmgr: str, hconn: str, tag: str) -> None:
        """MQBACK: the connection's records for ``tag`` are forgotten."""
        self._pending.pop((qmgr, hconn, tag), None)

    def _record(self, tag: str, qmgr: str, hconn: str, syncpoint: bool, record: dict[str, Any]) -> None:
        structure = self.structure_of(tag)
        if structure is None:
            return
        record["s"] = structure
        if syncpoint:
            # Stamped at commit, not now: the time says when the change became committed.
            self._pending.setdefault((qmgr, hconn, tag), []).append(orjson.dumps(record))
        else:
            self._write([orjson.dumps(record)])

    def _write(self, records: list[bytes]) -> None:
        stamp = b'{"t":%d,' % self.now_ns()
        self._buffer.append(b"".join(stamp + r[1:] + b"\n" for r in records))
        self._buffered += len(records)
        self._written += len(records)
        if not self._drain_due:  # the first of this turn: the turn's records go out together
            try:
                asyncio.get_running_loop().call_soon(self._drain_soon)
            except RuntimeError:  # no event loop (a tool, a test): at once
                self._drain()
                return
            self._drain_due = True

    def _drain_soon(self) -> None:
        # The next write schedules the next drain, also when this one fails: the records kept
        # go out with it (else, without sync, nothing would write them again).
        self._drain_due = False
        try:
            self._drain()
        except OSError as exc:  # kept in the buffer: the next force() tries again and tells its callers
            log.error("recovery log %s cannot be written: %s", self.own_dir, exc)

    def _drain(self) -> None:
        """Hand the buffered records to the OS (one write), in order. On failure they stay
        buffered and the error is raised."""
        if not self._buffer:
            return
        blob = b"".join(self._buffer)
        fd = self._segment_held()
        try:
            _write_all(fd, blob)
        except OSError as exc:
            if getattr(exc, "written", 0):
                self._cut_back()
            raise
        finally:
            _flock(fd, fcntl.LOCK_UN)
        self._size += len(blob)
        self._buffer, self._buffered = [], 0

    def _segment_held(self) -> int:
        """The segment to write to, locked (shared) until the write is done: a new one when
        this one is full, or was deleted (BACKUP CFSTRUCT on another queue manager prunes
        segments idle since before the last backup). ``prune`` takes the lock exclusively
        from reading a segment's newest stamp to deleting it, so a record is never written
        to a segment between the two (it would be in a file no folder names)."""
        for _ in range(8):  # bounded: a new segment counts as new to a prune (its name's time)
            if self._fd is None or self._size > SEGMENT_BYTES:
                self._open_segment()
            assert self._fd is not None
            _flock(self._fd, fcntl.LOCK_SH)  # waits at most for one prune's look at this segment
            if os.fstat(self._fd).st_nlink:
                return self._fd
            _flock(self._fd, fcntl.LOCK_UN)
            self._size = SEGMENT_BYTES + 1  # deleted: the next pass leaves it for a new one
        raise OSError(errno.EIO, f"recovery log {self.own_dir}: every new segment was deleted at once")

    def _cut_back(self) -> None:
        """A drain was written in part: cut the segment back to its records before it, so that
        the next write does not continue half a record's line (read back, that line would be
        skipped, the next record with it). When even that fails, the segment is left (its cut
        line is last, skipped when read) and the next drain starts a new one."""
        assert self._fd is not None
        try:
            os.ftruncate(self._fd, self._size)
        except OSError:
            log.exception("recovery log %s: a record cut short ends a segment", self.own_dir)
            self._size = SEGMENT_BYTES + 1

    async def force(self) -> None:
        """Return once every record written so far is on disk (with ``sync``; else at once).

        Group commit: concurrent callers share one fsync. The first one to need it lets the calls
        that are ready to run write their records first (one turn of the event loop), then one
        fsync covers all of them; a caller whose record came after that fsync began waits for
        the next one, which starts as soon as this one ends. No caller returns before its own
        record is on disk.

        The fsync runs on a thread of the log's own, so that the event loop goes on serving
        calls while the disk works (an fsync takes milliseconds on a virtual disk: on the loop it
        would stall every connection that long); those calls' records are covered by the next
        fsync. (Run on the loop while the disk answers in 0.15 ms, it made persistent calls
        slower, not faster: the calls of a round are no longer gathered while it runs.)
        """
        upto = self._written
        if not self.sync:
            # Left to the OS, not to the disk (QSG_MQLOG_SYNC=none): the records are written
            # (the OS has them: a queue manager that dies now loses none) before the caller is
            # answered - by the turn's drain, scheduled before this, or now to learn why not.
            if self._written - self._buffered < upto:
                await asyncio.sleep(0)
                if self._written - self._buffered < upto:
                    self._drain()
            return
        while self._forced < upto:
            if self._fd is None and not self._buffer:
                # No segment left to sync and the records not known on disk (``_leave_segment``
                # forces a segment before closing it, so this is a safety net): never answered
                raise OSError(errno.EIO, f"recovery log {self.own_dir}: records were not forced to disk")
            flush = self._flush
            if flush is None:
                flush = self._flush = asyncio.ensure_future(self._sync_round())
            await asyncio.shield(flush)  # this round, or the one under way; then look again

    async def _sync_round(self) -> None:
        """One fsync of the log, covering every record written when it starts."""
        try:
            await asyncio.sleep(0)  # the other ready calls write their records: this fsync is theirs too
            self._drain()
            covered = self._written
            if self._fd is None or self._forced >= covered:
                return
            # On a duplicate of the descriptor: the segment may be left (and its descriptor
            # closed and reused) while the thread syncs it; the duplicate still names its file.
            fd = os.dup(self._fd)
            try:
                if self._syncer is None:  # stopped: a straggler syncs on the loop
                    _sync_data(fd)
                else:
                    await asyncio.get_running_loop().run_in_executor(self._syncer, _sync_data, fd)
            finally:
                os.close(fd)
            self.fsyncs += 1
            self._forced = max(self._forced, covered)
        finally:
            self._flush = None

    def _open_segment(self) -> None:
        self._leave_segment()
        self.own_dir.mkdir(parents=True, exist_ok=True)
        # Named by the group time it starts at (unique: a clock held still gives the next ns).
        self._last_segment_ns = max(self.now_ns(), self._last_segment_ns + 1)
        path = self.own_dir / f"{self._last_segment_ns:020d}.log"
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._size = 0
        if self.sync:
            # The new segment's name on disk too: a forced record must not be in a file that a
            # crash leaves out of its folder.
            folder = os.open(self.own_dir, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)

    def close(self) -> None:
        """Close the current segment (a new one starts with the next record), its records
        forced first: a caller waiting in ``force`` finds no segment left to sync."""
        self._drain()
        self._leave_segment()

    def _leave_segment(self) -> None:
        """Close the current segment, what went to it on disk first (with ``sync``)."""
        if self._fd is None:
            return
        if self.sync:
            os.fsync(self._fd)  # raises with the segment still open: the next drain tries again
            self.fsyncs += 1
            self._forced = self._written - self._buffered  # the buffered ones go to the next segment
        os.close(self._fd)
        self._fd = None

    def stop(self) -> None:
        """Close the log and end its sync thread (the queue manager stops)."""
        try:
            self.close()
        except OSError as exc:  # the callers still forcing are told by their force
            log.error("recovery log %s cannot be closed: %s", self.own_dir, exc)
        syncer, self._syncer = self._syncer, None
        if syncer is not None:
            syncer.shutdown(wait=False)

    # ---- reading (RECOVER CFSTRUCT) -------------------------------------------------------

    def missing_logs(self, qmgrs: list[str]) -> list[str]:
        """The queue managers among ``qmgrs`` whose log folder this one cannot see."""
        return [q for q in qmgrs if not (self.group_dir / q).is_dir()]

    def segments(self) -> list[Path]:
        """Every log segment of every queue manager of the group."""
        if not self.group_dir.exists():
            return []
        return sorted(p for d in self.group_dir.iterdir() if d.is_dir() and d != self.backup_dir
                      for p in d.glob("*.log"))

    def flush(self) -> None:
        """Hand the records buffered in this event-loop turn to the OS now (on the loop, before
        ``read`` on a thread: this queue manager's records of the last moment too)."""
        self._drain()

    def read(self, structure: str, since_ns: int) -> tuple[list[dict[str, Any]], list[SavedMessage]]:
        """Records of ``structure`` written at or after ``since_ns`` in every queue manager's
        log: (GET/CLEAR/DELETE records, messages of PUT records)."""
        records: list[dict[str, Any]] = []
        puts: list[SavedMessage] = []
        # Not ``_drain`` here: RECOVER CFSTRUCT reads on a thread while the event loop goes on
        # writing; the writer's state is the loop's own (its caller ``flush``es there first).
        for segment in self.segments():
            for rec in _lines(segment):
                if rec.get("s") != structure or rec.get("t", 0) < since_ns:
                    continue
                if rec["o"] == PUT:
                    puts.append(SavedMessage(rec["q"], int(rec["i"]), rec["m"], rec["d"].encode(),
                                             base64.b64decode(rec["b"])))
                else:
                    records.append(rec)
        return records, puts

    def prune(self, keep_since_ns: int) -> int:
        """Delete the segments (of every queue manager) whose newest record is older than
        ``keep_since_ns``: no recovery reads them, every recoverable structure has a newer
        backup. A writer whose segment went starts a new one. Returns how many were deleted."""
        removed = 0
        for segment in self.segments():
            try:
                fd = os.open(segment, os.O_RDONLY)
            except FileNotFoundError:
                continue  # pruned by another queue manager meanwhile
            try:
                # Held from the look at its newest record to its deletion: its writer cannot
                # add a record in between (``_segment_held``), which the deletion would take.
                try:
                    _flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # its writer is writing to it now: it is not idle (and a stopped one cannot hold us)
                if os.fstat(fd).st_nlink and _newest_stamp(segment) < keep_since_ns:  # its newest is older
                    segment.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
            finally:
                os.close(fd)
        return removed

    # ---- backups --------------------------------------------------------------------------

    def write_backup(self, name: str, messages: list[SavedMessage]) -> tuple[Path, int]:
        """Write a backup file (atomically: complete or absent); returns its path and size."""
        self.backup_dir.mkdir(parents=True, exist_ok=True)
        path = self.backup_dir / name
        tmp = path.with_suffix(".tmp")
        try:
            with open(tmp, "wb") as f:
                for m in messages:
                    f.write(orjson.dumps({"q": m.queue, "i": m.id, "m": m.meta, "d": m.md.decode(),
                                          "b": base64.b64encode(m.data).decode()}) + b"\n")
                f.flush()
                os.fsync(f.fileno())
            tmp.replace(path)
        except OSError:
            tmp.unlink(missing_ok=True)  # a part-written backup would only take disk space
            raise
        return path, path.stat().st_size

    @staticmethod
    def read_backup(path: str | Path) -> list[SavedMessage]:
        """The messages of a backup file."""
        return [SavedMessage(r["q"], int(r["i"]), r["m"], r["d"].encode(), base64.b64decode(r["b"]))
                for r in _lines(Path(path))]


#: flock errors of a file system that has no locks (some network file systems): the log goes on
#: without them, as before they were taken (a prune racing a write is then possible again).
_NO_LOCKS = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL})
_warned_no_locks = False


def _flock(fd: int, how: int) -> None:
    """``fcntl.flock``, a no-op where the file system has no locks (warned once)."""
    global _warned_no_locks
    try:
        fcntl.flock(fd, how)
    except BlockingIOError:
        raise
    except OSError as exc:
        if exc.errno not in _NO_LOCKS:
            raise
        if not _warned_no_locks:
            _warned_no_locks = True
            log.warning("recovery log: the file system takes no file locks (%s): BACKUP CFSTRUCT's prune of "
                        "segments is not kept apart from their writes", exc)


def _write_all(fd: int, blob: bytes) -> int:
    """Append all of ``blob`` to ``fd``; raises (``written`` on the exception: the bytes that
    went) when the file takes no more. A regular file takes only part of a write when the disk
    (or the file-size limit) runs out in the middle of it, or past 2 GiB at once: the rest is
    written again, and that write says why it cannot be."""
    done = 0
    try:
        while done < len(blob):  # bounded: each pass writes at least one byte or raises
            n = os.write(fd, memoryview(blob)[done:] if done else blob)
            if n <= 0:
                raise OSError(errno.ENOSPC, "the recovery log's segment takes no more bytes")
            done += n
    except OSError as exc:
        exc.written = done  # type: ignore[attr-defined]
        raise
    return done


def _sync_data(fd: int) -> None:
    """Force what was written to ``fd`` to disk: its data and what reading it back needs (the
    file's size), as a database's write-ahead log does (fdatasync; fsync where there is none)."""
    sync = getattr(os, "fdatasync", os.fsync)
    sync(fd)


def _newest_stamp(path: Path) -> int:
    """The stamp (``t``) of a segment's last complete record, read from its end (a segment can
    be large). A segment with no complete record yet (its writer may be writing it now) counts
    as the group time in its name, when it was opened."""
    with open(path, "rb") as f:
        last_newline = _newline_before(f, f.seek(0, os.SEEK_END))
        if last_newline >= 0:
            f.seek(_newline_before(f, last_newline) + 1)  # the last complete record starts here
            found = _STAMP.match(f.read(40))
            if found:
                return int(found.group(1))
    try:
        return int(path.stem)
    except ValueError:
        return 0


def _newline_before(f: BinaryIO, end: int) -> int:
    """Offset of the last newline before offset ``end`` of ``f``, -1 when there is none."""
    pos = end
    while pos > 0:  # bounded by the file's size
        step = min(TAIL_CHUNK, pos)
        pos -= step
        f.seek(pos)
        at = f.read(step).rfind(b"\n")
        if at >= 0:
            return pos + at
    return -1


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    """JSON records of a file; a last line cut short by a crash is skipped."""
    try:
        with open(path, "rb") as f:
            for line in f:
                try:
                    yield orjson.loads(line)
                except orjson.JSONDecodeError:
                    log.warning("%s: skipping an incomplete record", path)
    except FileNotFoundError:
        return
