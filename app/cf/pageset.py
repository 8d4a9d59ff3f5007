"""A queue manager's page set: where its private queues live (QSGDISP QMGR/COPY, permanent and
dynamic), apart from the coupling facility - DESIGN.md principle 8, as on z/OS where a queue
manager's own queues are on its page sets and only shared queues are in CF structures.

The page set is a plain ``redis-server`` of the queue manager's own, so the whole engine and its
Lua serve private queues unchanged (``CFBase._client_for`` routes every call whose keys are under
the QM's private tag to it). ``qsg serve`` starts one by itself (``EmbeddedPageSet``), with its
data under ``<QSG_MQLOG_DIR>/<QSG>/pagesets/<QM>/``, unless ``QSG_PAGESET_URL`` names a separate
server (docker-compose: a service per queue manager).

Durability: AOF with ``appendfsync always`` - the promise docs/explanation/reliability.md makes for the
coupling facility under ``qsg up`` and docker-compose: a persistent message whose call returned
survives a kill -9 of the queue manager (and of the page set's server) and a machine crash.

The server is the queue manager's child and ends with it: on Linux it is told SIGTERM when its
parent dies (``PR_SET_PDEATHSIG``; a kill -9 of the QM ends it too, AOF already on disk), and a
restart waits for a previous one still shutting down (its pid file) before it opens the files.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import os
import select
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

#: Seconds a page set's server has to start answering, or to end when asked.
START_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 15.0


def pageset_folder(mqlog_dir: str | Path, qsg: str, qmgr: str) -> Path:
    """Where the embedded page set of ``qmgr`` keeps its data (next to the recovery logs)."""
    return Path(mqlog_dir) / qsg / "pagesets" / qmgr


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    libc_name = ctypes.util.find_library("c")
    if libc_name:
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(libc_name, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def free_port() -> int:
    """A free TCP port on the loopback address (taken a moment later: a race the callers retry)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_answers(port: int) -> bool:
    """True when a redis-server on the loopback ``port`` answers PING."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    cmdline = Path(f"/proc/{pid}/cmdline")
    with contextlib.suppress(OSError):
        return b"redis-server" in cmdline.read_bytes()
    return True


class EmbeddedPageSet:
    """The page set ``qsg serve`` starts by itself: a ``redis-server`` on a free loopback port
    with its AOF in ``folder``."""

    def __init__(self, folder: Path, *, fsync: str = "always", binary: str | None = None) -> None:
        self.folder = folder
        self.fsync = fsync
        self.binary = binary or shutil.which("redis-server") or "/usr/bin/redis-server"
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pidfile(self) -> Path:
        return self.folder / "redis.pid"

    async def start(self) -> str:
        """Start the server (after a previous one of this folder has ended); its URL once it
        answers. Raises RuntimeError when it cannot be started."""
        if not Path(self.binary).exists():
            raise RuntimeError("no redis-server is installed for the page set: install Redis or set "
                               "QSG_PAGESET_URL to a page-set server")
        self.folder.mkdir(parents=True, exist_ok=True)
        await self._previous_ended()
        last = ""
        for _ in range(3):  # a free port can be taken between choosing and binding it
            self.port = free_port()
            self.proc = subprocess.Popen(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder.resolve()),
                 "--appendonly", "yes", "--appendfsync", self.fsync, "--save", "", "--daemonize", "no",
                 "--protected-mode", "yes", "--pidfile", str(self.pidfile.resolve()),
                 "--logfile", str((self.folder / "redis.log").resolve())],
                stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
                # not the QM's LD_PRELOAD: libfaketime (the clock-skew tests) crashes redis-server
                env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"})
            deadline = time.monotonic() + START_TIMEOUT_S
            while time.monotonic() < deadline and self.proc.poll() is None:
                if redis_answers(self.port):
                    (self.folder / "url").write_text(self.url + "\n")  # for tools and tests
                    return self.url
                # asyncio's sleep, not time.sleep: a QM whose clock is skewed by libfaketime (the
                # clock-skew test) gets EINVAL from an intercepted clock_nanosleep
                await asyncio.sleep(0.02)
            last = self._tail_log()
            self.stop()
        raise RuntimeError(f"the page set's redis-server in {self.folder} did not start: {last}")

    async def _previous_ended(self) -> None:
        """A previous server of this folder (its QM was killed a moment ago and it is still
        writing its AOF) ends before this one opens the same files."""
        try:
            pid = int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        if pid == os.getpid() or not _alive(pid):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while _alive(pid) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    def _tail_log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.folder / "redis.log").read_text(errors="replace")[-500:]
        return ""

    def stop(self) -> None:
        """End the server (SIGTERM: it flushes its AOF and exits)."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while proc.poll() is None and time.monotonic() < deadline:
            # select, not time.sleep (nor Popen.wait's timeout, which sleeps): under libfaketime
            # (the clock-skew tests skew a QM's clock) an intercepted clock_nanosleep gives EINVAL
            select.select([], [], [], 0.05)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
