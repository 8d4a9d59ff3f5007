"""Connection limits of the HTTP server (docs/howto/security.md, Limits), below the application.

uvicorn closes an idle keep-alive connection (``timeout_keep_alive``) but gives a connection
that never completes its request headers all the time it wants: a thousand slow sockets that
send a byte now and then stay open. ``bounded_protocol`` wraps uvicorn's HTTP protocol so that

* the headers of a request must be complete ``header_timeout_s`` after the connection opened, or
  after the previous response when the next request starts; else the connection is answered
  408 with the error body of docs/api.md §2 (MQRC_CONNECTION_BROKEN) and closed;
* its body must then be complete within ``body_timeout_s`` plus one second for each
  ``body_min_rate`` bytes received (a large body on a slow link gets the time its size needs; a
  body sent a byte now and then does not hold the request, and its connection, for ever);
  else the same 408 answer (when the application has not answered yet) and the close;
* at most ``max_connections`` connections (HTTP and WebSocket sessions) are open: one more is
  answered 503 with MQRC_MAX_CONNS_LIMIT_REACHED (2025, IBM's answer when a queue manager's
  connection limit is reached) and closed. (uvicorn's own ``limit_concurrency`` answers a plain
  text page, and counts requests rather than sockets.)
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from app.api.keepalive import unread_bytes
from app.core.errors import MQError
from app.core.reasons import MQRC


def _raw_response(status: str, reason: int, message: str) -> bytes:
    body = orjson.dumps(MQError(reason, message).to_body())
    return (f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            f"connection: close\r\n\r\n").encode("latin-1") + body


def bounded_protocol(base: type[asyncio.Protocol], header_timeout_s: float, max_connections: int,
                     body_timeout_s: float = 20.0, body_min_rate: int = 65536) -> type[asyncio.Protocol]:
    """A subclass of uvicorn's HTTP protocol class ``base`` with the limits above."""

    class BoundedProtocol(base):  # type: ignore[valid-type, misc]
        _header_timer: asyncio.TimerHandle | None = None
        _timed_cycle: Any = None
        _deferred = 0
        _body_timer: asyncio.TimerHandle | None = None
        _body_cycle: Any = None  # the request whose body is timed
        _body_since = 0.0
        _body_received = 0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                transport.write(_raw_response("503 Service Unavailable", MQRC.MAX_CONNS_LIMIT_REACHED,
                                              f"this queue manager has {max_connections} connections open, the most "
                                              "it takes: try again later"))
                transport.close()
                return
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._header_timer is None and (self.cycle is None or self.cycle.response_complete):
                self._arm()  # the next request on a kept-alive connection starts: its headers are timed
            if self._body_timer is not None:
                self._body_received += len(data)
            super().data_received(data)
            if self.cycle is not self._timed_cycle or self.transport.get_protocol() is not self:
                self._disarm()  # a new request's headers are complete, or it became a WebSocket session
            # (the common request - headers and body in one read - costs these attribute tests only)
            cycle = self.cycle
            if cycle is not None and cycle.more_body and cycle is not self._body_cycle:
                self._arm_body()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            if self._body_cycle is self.cycle:
                self._disarm_body()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            cycle = self.cycle  # a pipelined request started now: its body is read from here on
            if cycle is not None and cycle.more_body and cycle is not self._body_cycle:
                self._arm_body()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._disarm_body()
            super().connection_lost(exc)

        def _arm_body(self) -> None:
            cycle = self.cycle
            if cycle.response_complete or self.pipeline or self.transport.get_protocol() is not self:
                return  # answered already, or waiting behind another request (its body is not read yet)
            self._disarm_body()
            self._body_cycle = cycle
            self._body_since = self.loop.time()
            self._body_received = 0
            self._deferred = 0
            self._body_timer = self.loop.call_later(body_timeout_s, self._body_too_slow)

        def _disarm_body(self) -> None:
            self._body_cycle = None
            if self._body_timer is not None:
                self._body_timer.cancel()
                self._body_timer = None

        def _body_too_slow(self) -> None:
            self._body_timer = None
            cycle, transport = self._body_cycle, self.transport
            if cycle is not self.cycle or not cycle.more_body or transport.is_closing():
                self._body_cycle = None
                return
            allowed = body_timeout_s + self._body_received / body_min_rate  # time for what came
            late = self.loop.time() - self._body_since - allowed
            if late < 0:
                self._body_timer = self.loop.call_later(-late, self._body_too_slow)
                return
            if unread_bytes(transport) and self._deferred < 20:  # a paused process: read first (as above)
                self._deferred += 1
                self._body_timer = self.loop.call_later(0.05, self._body_too_slow)
                return
            self._body_cycle = None
            if not cycle.response_started:
                transport.write(_raw_response("408 Request Timeout", MQRC.CONNECTION_BROKEN,
                                              f"the request body did not arrive within {allowed:.3g}s of its headers"))
            transport.close()  # the application's receive() answers http.disconnect

        def _arm(self) -> None:
            self._timed_cycle = self.cycle
            self._deferred = 0
            self._header_timer = self.loop.call_later(header_timeout_s, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            transport = self.transport
            if transport.is_closing() or transport.get_protocol() is not self:
                return  # closed, or upgraded to a WebSocket session
            if self.cycle is not self._timed_cycle and self.cycle is not None and not self.cycle.response_complete:
                return  # the request's headers arrived: it runs
            if unread_bytes(transport) and self._deferred < 20:  # bounded: a trickle cannot keep it up
                # Bytes wait unread: the process was paused (SIGSTOP, a VM stall) and its timers
                # run before its reads on resuming. Read them first, then judge the headers.
                self._deferred += 1
                self._header_timer = self.loop.call_later(0.05, self._headers_too_slow)
                return
            transport.write(_raw_response("408 Request Timeout", MQRC.CONNECTION_BROKEN,
                                          f"the request headers did not arrive within {header_timeout_s:g}s"))
            transport.close()

    BoundedProtocol.__name__ = BoundedProtocol.__qualname__ = f"Bounded{base.__name__}"
    return BoundedProtocol
