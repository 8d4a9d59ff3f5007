"""A TCP proxy under a test's control, for network faults between a queue manager and Redis.

``NetProxy(target_host, target_port)`` listens on 127.0.0.1 (a free port) and forwards every
connection to the target, with plain threads in the test process: one accept thread and two
pump threads per connection (one per direction), each blocking call bounded by a short timeout
so that ``stop()`` and mode changes take effect within ``POLL_S``.

Fault modes:

* ``partition()`` - a real partition, not a refusal: connections already open stay open, but no
  byte is forwarded in either direction (the pumps stop reading, so what the peers send waits in
  kernel buffers and nothing is answered); new connections are accepted by the listener but
  connected to nothing. Peers see their reads time out, never a reset or a refusal.
* ``heal(resume=False)`` - forward again. By default every connection that lived through the
  partition is reset (RST) first, and so is every connection accepted during it: a client
  whose command timed out has given that connection up anyway, and bytes held for seconds must
  not reach Redis late (a command a client gave up on would run after all). Clients reconnect
  and start clean. ``heal(resume=True)`` instead resumes the held connections where they stopped
  (held bytes are delivered late, as TCP retransmission would after a real partition heals;
  connections accepted during the partition are connected to the target then), for tests of
  late-arriving commands.
* ``reset()`` - close every connection now with a reset (SO_LINGER 0); the proxy keeps
  forwarding new connections (and leaves a partition as it is).
* ``drop_replies(after=None)`` - forward what clients send, but read and throw away what the
  target answers: a command runs and its reply is lost (a network that fails right after the
  request went through). With ``after`` (bytes), only on a connection that has sent those bytes,
  from the chunk that held them on (a command before them on that connection is answered).
  ``heal()`` ends it as it ends a partition.
* ``slow_replies(bytes_per_s)`` - forward the target's answers at most that fast, in chunks of at
  most ``CHUNK`` bytes (a slow or busy link: a long reply keeps coming, never stops);
  ``slow_replies(None)`` ends it.
* ``slow_requests(bytes_per_s)`` - the same for what clients send (a large request written over a
  slow link goes out for a long time); ``slow_requests(None)`` ends it.

Bounded: at most ``max_connections`` at once (more are closed on accept), pumps read at most
``CHUNK`` bytes at a time, and ``stop()`` joins every thread with a timeout.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Iterator

#: Longest a proxy thread blocks before it looks at the mode and the stop flag again.
POLL_S = 0.1
#: Bytes read at a time.
CHUNK = 65536


def _rst_close(sock: socket.socket) -> None:
    """Close ``sock`` with a TCP reset (linger on, timeout 0), ignoring sockets already closed."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


class _Link:
    """One client connection and, once connected, its upstream connection to the target."""

    def __init__(self, proxy: NetProxy, client: socket.socket) -> None:
        self.proxy = proxy
        self.client = client
        self.upstream: socket.socket | None = None
        self.closed = threading.Event()
        self.dropping = threading.Event()  # sent the bytes ``drop_replies(after=...)`` waits for
        self.threads: list[threading.Thread] = []
        self.lock = threading.Lock()

    def connect_upstream(self) -> bool:
        """Connect to the target and start both pumps; False (and closed) when it fails."""
        try:
            up = socket.create_connection((self.proxy.target_host, self.proxy.target_port),
                                          timeout=self.proxy.connect_timeout_s)
        except OSError:
            self.close(reset=True)
            return False
        try:
            up.settimeout(POLL_S)
            self.client.settimeout(POLL_S)  # raises when a heal closed the link meanwhile
        except OSError:
            _rst_close(up)
            self.close(reset=True)
            return False
        with self.lock:
            if self.closed.is_set():
                _rst_close(up)
                return False
            self.upstream = up
        for src, dst, name in ((self.client, up, "c2s"), (up, self.client, "s2c")):
            t = threading.Thread(target=self._pump, args=(src, dst, name == "s2c"), daemon=True,
                                 name=f"netproxy-{self.proxy.port}-{name}")
            self.threads.append(t)
            t.start()
        return True

    def _pump(self, src: socket.socket, dst: socket.socket, replies: bool) -> None:
        """Copy ``src`` to ``dst`` while forwarding; hold (read nothing) while partitioned; throw
        replies (``replies``: the target's direction) away while dropping them."""
        pending = b""  # read just as a partition began: delivered on resume, dropped on reset
        proxy = self.proxy
        while not self.closed.is_set() and not proxy.stopped.is_set():
            if not proxy.forwarding.wait(POLL_S):
                continue  # partitioned: leave the bytes in the kernel's buffers
            if self.closed.is_set():
                return
            if not pending:
                try:
                    pending = src.recv(CHUNK)
                except TimeoutError:
                    continue
                except OSError:
                    break
                if not pending:  # orderly end from this side
                    break
                if not proxy.forwarding.is_set():
                    continue  # the partition began while we read: hold the chunk
            if proxy.dropping_replies.is_set():
                if not replies and proxy.drop_after is not None and proxy.drop_after in pending:
                    self.dropping.set()
                if replies and (proxy.drop_after is None or self.dropping.is_set()):
                    pending = b""  # lost on the way back
                    continue
            if not self._send(dst, pending):
                break
            rate = proxy.reply_rate if replies else proxy.request_rate
            if rate:
                time.sleep(len(pending) / rate)  # the link's pace, not a synchronisation
            pending = b""
        self.close(reset=True)

    def _send(self, dst: socket.socket, data: bytes) -> bool:
        """Send all of ``data`` (a receiver that reads slowly - a paused peer - is waited for, in
        steps of ``POLL_S``, until the link closes); False when the link ended first."""
        view = memoryview(data)
        while view:
            if self.closed.is_set() or self.proxy.stopped.is_set():
                return False
            try:
                sent = dst.send(view)  # with a timeout: raises only when nothing was sent
            except TimeoutError:
                continue
            except OSError:
                return False
            view = view[sent:]
        return True

    def close(self, reset: bool) -> None:
        with self.lock:
            if self.closed.is_set():
                return
            self.closed.set()
            socks = [s for s in (self.client, self.upstream) if s is not None]
        for s in socks:
            if reset:
                _rst_close(s)
            else:
                with contextlib.suppress(OSError):
                    s.close()
        self.proxy._forget(self)


class NetProxy:
    """A loopback TCP proxy with partition / heal / reset faults (see the module docstring)."""

    def __init__(self, target_host: str, target_port: int, *, listen_port: int = 0,
                 max_connections: int = 256, connect_timeout_s: float = 2.0) -> None:
        assert target_host in ("127.0.0.1", "localhost"), "loopback only"
        self.target_host = "127.0.0.1"
        self.target_port = target_port
        self.max_connections = max_connections
        self.connect_timeout_s = connect_timeout_s
        self._listen_port = listen_port
        self.listener: socket.socket | None = None
        self.links: set[_Link] = set()
        self.held: list[_Link] = []  # accepted during a partition, not connected to the target
        self.lock = threading.Lock()
        self.forwarding = threading.Event()
        self.forwarding.set()
        self.dropping_replies = threading.Event()
        self.drop_after: bytes | None = None
        self.reply_rate: float | None = None  # bytes per second of the target's answers (slow_replies)
        self.request_rate: float | None = None  # bytes per second of what clients send (slow_requests)
        self.stopped = threading.Event()
        self._accept_thread: threading.Thread | None = None
        self._closed_links: list[_Link] = []  # recently closed, for joining their threads on stop
        self.accepted = 0  # connections accepted since start (for tests of the proxy itself)

    # ---- addresses -------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return "127.0.0.1"

    @property
    def port(self) -> int:
        assert self.listener is not None, "start() the proxy first"
        return int(self.listener.getsockname()[1])

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    def redis_url(self, db: int = 0) -> str:
        """The Redis URL that goes through this proxy."""
        return f"redis://127.0.0.1:{self.port}/{db}"

    # ---- life cycle ------------------------------------------------------------------------

    def start(self) -> NetProxy:
        """Listen and accept in a background thread; returns self."""
        assert self.listener is None, "already started"
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", self._listen_port))
        ls.listen(128)
        ls.settimeout(POLL_S)
        self.listener = ls
        self.stopped.clear()
        self._accept_thread = threading.Thread(target=self._accept_loop, daemon=True,
                                               name=f"netproxy-{self.port}-accept")
        self._accept_thread.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop accepting, reset every connection and join the threads (bounded)."""
        self.stopped.set()
        self.forwarding.set()  # wake pumps waiting out a partition
        for link in self._all_links():
            link.close(reset=True)
        if self._accept_thread is not None:
            self._accept_thread.join(timeout_s)
        threads = [t for link in self._all_links(include_closed=True) for t in link.threads]
        for t in threads:
            t.join(timeout_s)
        if self.listener is not None:
            with contextlib.suppress(OSError):
                self.listener.close()
        self._closed_links.clear()

    def __enter__(self) -> NetProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- faults ----------------------------------------------------------------------------

    @property
    def partitioned(self) -> bool:
        return not self.forwarding.is_set()

    def partition(self) -> None:
        """Hold every byte in both directions; new connections go nowhere (peers time out)."""
        self.forwarding.clear()

    def drop_replies(self, after: bytes | None = None) -> None:
        """Forward requests, throw the replies away (see the module docstring)."""
        self.drop_after = after
        self.dropping_replies.set()

    def slow_replies(self, bytes_per_s: float | None) -> None:
        """Forward the target's answers at most ``bytes_per_s`` fast (None: at full speed again)."""
        self.reply_rate = bytes_per_s

    def slow_requests(self, bytes_per_s: float | None) -> None:
        """Forward what clients send at most ``bytes_per_s`` fast (None: at full speed again)."""
        self.request_rate = bytes_per_s

    def heal(self, resume: bool = False) -> None:
        """Forward again. ``resume=False`` (default): reset every connection that was open during
        the partition (or while replies were dropped), so clients reconnect clean; ``resume=True``:
        deliver the held bytes late."""
        self.dropping_replies.clear()
        for link in self._all_links():
            link.dropping.clear()
        if resume:
            with self.lock:
                held, self.held = self.held, []
                self.forwarding.set()  # from here on the accept loop holds nothing more
            for link in held:
                link.connect_upstream()
            return
        # every link closed before forwarding starts, so no held byte slips through
        for link in list(self._all_links()):
            link.close(reset=True)
        with self.lock:
            late, self.held = self.held, []  # accepted while the others were being closed
            self.forwarding.set()
        for link in late:
            link.close(reset=True)

    def reset(self) -> None:
        """Reset every connection now (RST to both sides); new connections are accepted as before."""
        with self.lock:
            held, self.held = self.held, []
        for link in held + list(self._all_links()):
            link.close(reset=True)

    @property
    def connections(self) -> int:
        """Connections open through the proxy now (held ones included)."""
        with self.lock:
            return len(self.links)

    # ---- internals -------------------------------------------------------------------------

    def _all_links(self, include_closed: bool = False) -> Iterator[_Link]:
        with self.lock:
            links = list(self.links) + (list(self._closed_links) if include_closed else [])
        return iter(links)

    def _forget(self, link: _Link) -> None:
        with self.lock:
            self.links.discard(link)
            if link in self.held:
                self.held.remove(link)
            self._closed_links.append(link)
            del self._closed_links[:-self.max_connections]  # bounded: the most recent ones

    def _accept_loop(self) -> None:
        assert self.listener is not None
        while not self.stopped.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                self._take(client)
            except OSError:
                # One connection's trouble (its peer reset it at once, or a heal closed its link
                # while it was being connected: "Bad file descriptor") must not end the accept
                # loop: every later connection of the queue manager would hang unanswered.
                _rst_close(client)

    def _take(self, client: socket.socket) -> None:
        """Start forwarding one accepted connection (or hold it, or refuse it when full)."""
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.lock:
            full = len(self.links) >= self.max_connections
            link = _Link(self, client)
            if not full:
                self.links.add(link)
                self.accepted += 1
                partitioned = not self.forwarding.is_set()
                if partitioned:
                    self.held.append(link)
        if full:
            _rst_close(client)
        elif not partitioned:  # (partitioned: accepted, connected to nothing; the peer's read times out)
            link.connect_upstream()
