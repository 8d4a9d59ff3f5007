"""The asyncio client: the same verbs as ``app.client.sync``, as coroutines.

    from app.client import CMQC, GMO, MD, aio

    async with await aio.connect("QM1", conn_info="127.0.0.1(9441)") as qmgr:
        queue = await aio.Queue.opened(qmgr, "APP.SHARED.Q", CMQC.MQOO_INPUT_SHARED)
        body = await queue.get(None, MD(), GMO(Options=CMQC.MQGMO_WAIT, WaitInterval=5000))

Each queue manager object carries its calls as frames of one WebSocket, the queue manager's
session; calls made concurrently on it (``asyncio.gather`` of puts) are pipelined on that socket
and answered as they complete. ``transport="http"`` (or QSG_CLIENT_TRANSPORT=http) uses HTTP,
pooled by one ``httpx.AsyncClient`` per queue manager object (pass ``http_client`` to share one;
handing one over means HTTP).
"""

from __future__ import annotations

import asyncio
import os
import ssl
from typing import Any, TypeVar

import httpx
import tenacity
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

import app.client.CMQC as CMQC
from app.client.core import (
    CD,
    CSP,
    GMO,
    MD,
    OD,
    PMO,
    SHARE_OPTIONS,
    STS,
    MQMIError,
    PYIFError,
    already_connected,
    connect_arguments,
    credentials_of,
    qmgr_inquire_value,
    selectors_of,
    ssl_context,
    string_message,
    text,
    url_of,
)
from app.client.session import (
    SOCKET_FAILURES,
    Call,
    Connection,
    FrameReply,
    Plan,
    RetryPolicy,
    choose_transport,
    default_appl_name,
    frame_of,
    host_not_available,
    refusal,
    reply_of,
    session_broken,
    session_ended,
    session_tls,
    session_url,
    transport_error,
)
from app.client.sync import DEFAULT_TIMEOUT

T = TypeVar("T")


class SessionSocket:
    """The session of one asyncio queue manager object: one WebSocket; calls made concurrently
    are pipelined (each frame has its id, a reader task hands each answer to its caller)."""

    def __init__(self, ws: ClientConnection) -> None:
        self._ws = ws
        self._next_id = 0
        self._waiting: dict[int, asyncio.Future[FrameReply]] = {}
        self._sizes: dict[int, int] = {}  # the length of each frame in flight
        self._broken = ""  # why the session ended; every later call fails with 2009
        self._reader = asyncio.get_running_loop().create_task(self._read(), name="qsg-session-reader")

    @classmethod
    async def open(cls, base: str, headers: dict[str, str] | None, timeout: httpx.Timeout,
                   retry: RetryPolicy, verify: ssl.SSLContext | bool = True) -> SessionSocket | None:
        """As the synchronous ``SessionSocket.open``: None when the server offers no session."""

        url = session_url(base)

        async def once() -> ClientConnection:
            return await ws_connect(url, additional_headers=headers, compression=None, max_size=None,
                                    **session_tls(url, verify),
                                    open_timeout=timeout.connect)

        try:
            return cls(await tenacity.AsyncRetrying(**retry.tenacity_kwargs(SOCKET_FAILURES))(once))
        except InvalidStatus as exc:
            refused = refusal(exc.response.status_code, exc.response.body or b"")
            if refused is not None:
                raise refused from None
            return None
        except InvalidHandshake:
            return None
        except SOCKET_FAILURES as exc:
            raise host_not_available(exc) from None

    async def request(self, call: Call, timeout: float | None) -> FrameReply:
        """Send ``call`` as a frame and await its answer. A transport failure or a timeout closes
        the socket (the queue manager then ends the connection) and is 2009; a caller cancelled
        meanwhile leaves the socket as it is (the answer, when it comes, is dropped)."""
        if self._broken:
            raise session_broken(self._broken)
        self._next_id += 1
        frame_id = self._next_id
        answer: asyncio.Future[FrameReply] = asyncio.get_running_loop().create_future()
        self._waiting[frame_id] = answer
        frame = frame_of(frame_id, call)
        self._sizes[frame_id] = len(frame)
        try:
            await self._ws.send(frame)
            return await asyncio.wait_for(answer, timeout)
        except (ConnectionClosed, OSError) as exc:  # TimeoutError is an OSError
            self._broken = self._broken or (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
            await self._ws.close()
            raise session_ended(exc, self._broken) from None
        finally:
            self._waiting.pop(frame_id, None)
            self._sizes.pop(frame_id, None)

    async def _read(self) -> None:
        reason = "the queue manager closed the session"
        closed: BaseException | None = None
        try:
            async for raw in self._ws:
                reply = reply_of(raw)
                waiter = self._waiting.pop(reply.id, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(reply)
        except (ConnectionClosed, MQMIError) as exc:
            reason = str(exc) or type(exc).__name__
            closed = exc
        finally:
            self._broken = self._broken or reason
            # The queue manager's reason goes to the call it is about: a close for a frame over its
            # limit (1009, MQRC_DATA_LENGTH_ERROR) to the largest frame in flight - if any frame
            # was over the limit, that one was - and MQRC_CONNECTION_BROKEN to every other call.
            largest = max(self._waiting, key=lambda i: self._sizes.get(i, 0), default=None)
            for frame_id, waiter in self._waiting.items():
                if not waiter.done():
                    waiter.set_exception(session_ended(closed, self._broken) if frame_id == largest and closed
                                         else session_broken(self._broken))
            self._waiting.clear()

    async def close(self) -> None:
        self._broken = self._broken or "closed by the client"
        await self._ws.close()
        await asyncio.gather(self._reader, return_exceptions=True)


class QueueManager:
    """An asyncio connection to one queue manager; see ``app.client.sync.QueueManager``."""

    def __init__(self, name: str | None = None, disconnect_on_exit: bool = True, *, url: str | None = None,
                 appl_name: str | None = None, timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
                 retry: RetryPolicy | None = None, http_client: httpx.AsyncClient | None = None,
                 transport: str | None = None, ca_file: str | os.PathLike[str] | None = None) -> None:
        self._conn = Connection()
        self._transport = choose_transport(transport, http_client is not None)
        self._session: SessionSocket | None = None
        self._name = name
        self._url = url
        self._appl_name = appl_name or default_appl_name()
        self._timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self._retry = retry or RetryPolicy()
        self._own_client = http_client is None
        self._http = http_client
        self._verify = ssl_context(ca_file)  # https: the CA file, else QSG_CA_FILE, else httpx's default
        self._auth_headers: dict[str, str] | None = None  # the connection's credentials
        # Handles of Queue objects collected while open, closed before the next call (see Queue.__del__)
        self._orphans: list[str] = []
        self.disconnect_on_exit = disconnect_on_exit

    async def connect(self, name: str | None, user: str | bytes | None = None, password: str | bytes | None = None,
                      *, url: str | None = None, api_key: str | None = None, csp: CSP | None = None) -> None:
        """MQCONN to the queue manager at ``url`` (default: MQSERVER, else the local QM1).

        Credentials, for queue managers with authentication on: ``user`` and ``password`` (or an
        MQCSP ``csp``), or ``api_key``; every call of the connection carries them. Wrong ones
        fail with MQRC_NOT_AUTHORIZED (2035), as MQCONN does.
        """
        if self._conn.connected:
            raise already_connected(self._conn.qmgr_name)
        credentials = credentials_of(user, password, api_key, csp)
        self._auth_headers = credentials.headers() if credentials is not None else None
        base = url_of(url or self._url)
        if self._transport == "session" and self._session is None:
            self._session = await SessionSocket.open(base, self._auth_headers, self._timeout, self._retry,
                                                        self._verify)
        if self._session is None and self._http is None:
            self._http = httpx.AsyncClient(base_url=base, timeout=self._timeout, verify=self._verify,
                                           limits=httpx.Limits(max_connections=20, max_keepalive_connections=10))
        self._name = name
        try:
            await self._run(self._conn.connect(name, self._appl_name))
        except Exception:
            await self.aclose()  # no connection: release the pool
            raise

    async def connect_tcp_client(self, name: str | None, cd: CD | None, channel: Any = None, conn_name: Any = None,
                                 user: str | bytes | None = None, password: str | bytes | None = None, *,
                                 api_key: str | None = None, csp: CSP | None = None) -> None:
        target = conn_name or (cd.ConnectionName if cd is not None else None)
        await self.connect(name, user, password, url=url_of(target) if target else None, api_key=api_key, csp=csp)

    async def connect_with_options(self, name: str | None, *args: Any, **kwargs: Any) -> None:
        """As the synchronous ``connect_with_options``: ``cd=``, ``user=``/``password=``, ``csp=``, ``api_key=``."""
        cd, _sco, opts = connect_arguments(args, kwargs)
        if self._conn.connected and opts & SHARE_OPTIONS:
            return  # as the synchronous client: the connection stays, no 2002
        await self.connect_tcp_client(name, cd, conn_name=cd.ConnectionName if cd is not None else None,
                                      user=kwargs.get("user"), password=kwargs.get("password"),
                                      api_key=kwargs.get("api_key"), csp=kwargs.get("csp"))

    async def disconnect(self) -> None:
        """MQDISC: the unit of work is committed, open queues are closed."""
        if not self._conn.connected:
            raise PYIFError("not connected")
        try:
            await self._run(self._conn.disconnect())
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Close the session (or release the HTTP connections). Without MQDISC the connection
        ends and its unit of work is backed out: at once on a session, after the idle timeout
        over HTTP."""
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()
        if self._own_client and self._http is not None:
            await self._http.aclose()
            self._http = None

    @property
    def transport(self) -> str:
        """How the calls travel: ``"session"`` (one WebSocket) or ``"http"``."""
        if self._session is None and self._http is None:
            return self._transport  # not connected: what the next connect tries first
        return "session" if self._session is not None else "http"

    @property
    def is_connected(self) -> bool:
        return self._conn.connected

    def get_handle(self) -> str:
        return self._conn.hconn

    @property
    def qmgr_name(self) -> str:
        return self._conn.qmgr_name

    async def __aenter__(self) -> QueueManager:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self.disconnect_on_exit and self._conn.connected:
            await self.disconnect()
        else:
            await self.aclose()

    async def commit(self) -> None:
        """MQCMIT."""
        await self._run(self._conn.commit())

    async def backout(self) -> None:
        """MQBACK."""
        await self._run(self._conn.backout())

    async def stat(self, stat_type: int) -> STS:
        """MQSTAT (e.g. CMQC.MQSTAT_TYPE_ASYNC_ERROR): an STS of the asynchronous puts."""
        return await self._run(self._conn.stat(stat_type))

    async def put1(self, q_desc: OD | str, msg: bytes | str, md: MD | None = None, opts: PMO | None = None) -> None:
        """MQPUT1; ``md`` receives the MsgId and put time (a ``str`` message goes as MQFMT_STRING)."""
        md = md if md is not None else MD()
        string_message(msg, md)
        await self._run(self._conn.put(None, msg, md, opts or PMO(), q_desc))

    async def inquire(self, selector: int | list[int]) -> Any:
        """MQINQ of the queue manager (see ``app.client.sync.QueueManager.inquire``)."""
        info = await self._run(self._conn.qmgr_info())
        selectors, many = selectors_of(selector)
        values = {s: qmgr_inquire_value(info, s) for s in selectors}
        return values if many else values[selectors[0]]

    async def _run(self, plan: Plan[T]) -> T:
        if self._http is None and self._session is None:
            raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_HCONN_ERROR, "not connected")
        while self._orphans:
            hobj = self._orphans.pop()
            try:
                await self._drive(self._conn.close(hobj))
            except MQMIError:
                pass  # already gone (the queue deleted, the handle ended): nothing left to close
        return await self._drive(plan)

    async def _drive(self, plan: Plan[T]) -> T:
        try:
            call = next(plan)
            while True:
                call = plan.send(await self._send(call))
        except StopIteration as done:
            return done.value

    async def _send(self, call: Call) -> httpx.Response | FrameReply:
        if self._session is not None:
            return await self._session.request(call, call.read_timeout(self._timeout))
        assert self._http is not None
        timeout = call.timeout(self._timeout)

        http = self._http
        headers = self._auth_headers

        async def once() -> httpx.Response:
            return await http.request(call.method, call.path, json=call.json, timeout=timeout, headers=headers)

        try:
            if call.establishes_connection:
                return await tenacity.AsyncRetrying(**self._retry.tenacity_kwargs())(once)
            return await once()
        except httpx.HTTPError as exc:
            raise transport_error(exc, call) from None


class Queue:
    """An asyncio object handle on a queue; ``await Queue.opened(qmgr, name, options)``."""

    def __init__(self, qmgr: QueueManager, q_desc: OD | str | None = None) -> None:
        self._qmgr = qmgr
        self._hobj: str | None = None
        self._desc = q_desc

    @classmethod
    async def opened(cls, qmgr: QueueManager, q_desc: OD | str, open_opts: int | None = None) -> Queue:
        queue = cls(qmgr, q_desc)
        # opened means opened: without options, pymqi's explicit default (input as defined, output)
        await queue.open(q_desc, open_opts if open_opts is not None else CMQC.MQOO_INPUT_AS_Q_DEF | CMQC.MQOO_OUTPUT)
        return queue

    async def open(self, q_desc: OD | str, open_opts: int | None = None) -> None:
        """MQOPEN with ``open_opts``; without them the open waits for the first put, get, inquire
        or set, as in pymqi (see ``app.client.sync.Queue``)."""
        if self._hobj is not None:
            raise PYIFError(f"the queue {text(self._desc)} is already open")
        self._desc = q_desc
        if open_opts is not None:
            self._hobj = await self._qmgr._run(self._qmgr._conn.open(q_desc, open_opts))

    async def close(self, options: int | None = None) -> None:
        """MQCLOSE; the object forgets its queue, as in pymqi."""
        if self._hobj is None:
            raise PYIFError("not open")
        await self._qmgr._run(self._qmgr._conn.close(self._hobj, options or CMQC.MQCO_NONE))
        self._hobj = None
        self._desc = None

    async def put(self, msg: bytes | str, md: MD | None = None, opts: PMO | None = None) -> None:
        """MQPUT (opens with MQOO_OUTPUT first if the open was deferred)."""
        md = md if md is not None else MD()
        string_message(msg, md)
        hobj = await self._opened(CMQC.MQOO_OUTPUT)
        await self._qmgr._run(self._qmgr._conn.put(hobj, msg, md, opts or PMO()))

    async def get(self, max_length: int | None = None, md: MD | None = None, opts: GMO | None = None) -> bytes:
        """MQGET (opens with MQOO_INPUT_AS_Q_DEF first if the open was deferred)."""
        hobj = await self._opened(CMQC.MQOO_INPUT_AS_Q_DEF)
        return await self._qmgr._run(self._qmgr._conn.get(hobj, max_length, md if md is not None else MD(),
                                                          opts if opts is not None else GMO()))

    async def inquire(self, selector: int) -> Any:
        """MQINQ of one attribute (opens with MQOO_INQUIRE first if the open was deferred)."""
        hobj = await self._opened(CMQC.MQOO_INQUIRE)
        return await self._qmgr._run(self._qmgr._conn.inquire(hobj, selector))

    async def set(self, selector: int, value: Any) -> None:
        """MQSET of one attribute (opens with MQOO_SET first if the open was deferred)."""
        hobj = await self._opened(CMQC.MQOO_SET)
        await self._qmgr._run(self._qmgr._conn.set(hobj, selector, value))

    async def _opened(self, options: int) -> str:
        if self._hobj is None:
            if self._desc is None:
                raise PYIFError("The Queue Descriptor has not been set.")
            self._hobj = await self._qmgr._run(self._qmgr._conn.open(self._desc, options))
        return self._hobj

    def get_handle(self) -> str:
        return self._handle()

    def __del__(self) -> None:
        # pymqi closes a Queue object that is collected while open, and programs rely on it (a
        # Queue(qmgr, name).get() per message). Closing here could block inside a call of the same
        # thread, so the handle is handed to the connection, which closes it before its next call.
        hobj = getattr(self, "_hobj", None)
        if hobj is not None and self._qmgr.is_connected:
            self._qmgr._orphans.append(hobj)

    def _handle(self) -> str:
        if self._hobj is None:
            raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_HOBJ_ERROR, "the queue is not open")
        return self._hobj

    async def __aenter__(self) -> Queue:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._hobj is not None and self._qmgr.is_connected:
            await self.close()


async def connect(queue_manager: str | None, channel: Any = None, conn_info: Any = None,
                  user: str | bytes | None = None, password: str | bytes | None = None, disconnect_on_exit: bool = True,
                  *, api_key: str | None = None, csp: CSP | None = None, cd: CD | None = None,
                  sco: Any = None, cno: Any = None, **kwargs: Any) -> QueueManager:
    """A connected asyncio QueueManager (``conn_info``: ``host(port)`` or a URL)."""
    kwargs.pop("bytes_encoding", None)
    kwargs.pop("default_ccsid", None)
    qmgr = QueueManager(None, disconnect_on_exit, **kwargs)
    # IBM's ibmmq: connect(name, cd=, csp=, cno=, sco=); the CD carries channel and address
    await qmgr.connect_tcp_client(queue_manager, cd if cd is not None else CD(), channel, conn_info, user,
                                  password, api_key=api_key, csp=csp)
    return qmgr


# Publish/subscribe (app/client/pubsub.py): ``aio.Topic``, ``aio.Subscription``, ``aio.SD``
from app.client.pubsub import SD, AsyncSubscription  # noqa: E402, F401 - aio.SD, as pymqi's
from app.client.pubsub import AsyncTopic as Topic  # noqa: E402, F401 - aio.Topic


class Subscription(AsyncSubscription):
    """pymqi's ``Subscription`` for this asyncio client (app/client/pubsub.py)."""

    queue_class = Queue
