"""uvicorn's HTTP protocol, answering every request that reached the socket.

uvicorn closes a kept-alive connection once it has been idle for ``timeout_keep_alive`` seconds.
When the process was paused (SIGSTOP, a long GC or VM stall) a client may have sent its next
request on such a connection meanwhile: the request waits, unread, in the socket. On SIGCONT
uvloop runs due timers before it polls for input, so the keep-alive timer fires first and closes
the socket with the request unread - the kernel answers that with a reset, and the client sees
its call end without an answer, not knowing whether it ran (docs/explanation/reliability.md: a
queue manager paused while clients send calls to it).

Here the keep-alive timer first looks whether the socket has unread bytes (FIONREAD, no read):
when it has, the connection is not idle; the timer stands down and the request is read and
answered as usual (reading it arms a new keep-alive timer after the response). A connection
with nothing pending closes as before. The race between a client sending and a timer firing in
a running process remains as with any HTTP server (the client sees the close before it sent, or
an answer); a paused process no longer turns it into a certainty.
"""

from __future__ import annotations

import fcntl
import logging
import struct
import termios
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger(__name__)


def unread_bytes(transport: Any) -> int:
    """Bytes received on ``transport``'s socket and not read yet (0 when it cannot be told)."""
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None:
        return 0
    try:
        fd = sock.fileno()
        if fd < 0:
            return 0
        return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])
    except OSError:
        return 0


class AnsweringHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol whose keep-alive timeout never closes a connection that
    holds an unread request (see the module docstring)."""

    def timeout_keep_alive_handler(self) -> None:
        if unread_bytes(self.transport):
            self.timeout_keep_alive_task = None  # not idle: the pending request is read next
            log.debug("keep-alive timeout on a connection with a request waiting: answering it")
            return
        super().timeout_keep_alive_handler()
