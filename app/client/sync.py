"""The synchronous client: ``QueueManager`` and ``Queue`` shaped like pymqi's.

    import app.client as pymqi
    from app.client import CMQC

    qmgr = pymqi.connect("QM1", "DEV.APP.SVRCONN", "127.0.0.1(9441)")
    queue = pymqi.Queue(qmgr, "APP.SHARED.Q", CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_OUTPUT)
    queue.put(b"hello")
    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT, WaitInterval=5000)
    print(queue.get(None, pymqi.MD(), gmo))

Each queue manager object carries its calls as frames of one WebSocket, the queue manager's
session (``app.client.session``): if the client ends without MQDISC, the queue manager backs out
its unit of work and closes its queues at once. ``transport="http"`` (or QSG_CLIENT_TRANSPORT=http)
uses one HTTP request per call instead, pooled by one ``httpx.Client`` per queue manager object
(pass ``http_client`` to share one between several; handing one over means HTTP).
"""

from __future__ import annotations

import os
import ssl
import threading
from typing import Any, TypeVar

import httpx
import tenacity
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.sync.client import ClientConnection
from websockets.sync.client import connect as ws_connect

import app.client.asyncconsume as asyncconsume
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
    queue_name,
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

T = TypeVar("T")
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)


class SessionSocket:
    """The session of one synchronous queue manager object: one WebSocket, one call at a time
    (a lock: threads sharing the object take turns, as calls on one hconn do on the server)."""

    def __init__(self, ws: ClientConnection) -> None:
        self._ws = ws
        self._lock = threading.Lock()
        self._next_id = 0
        self._broken = ""  # why the session ended under a call; every later call fails with 2009

    @classmethod
    def open(cls, base: str, headers: dict[str, str] | None, timeout: httpx.Timeout,
             retry: RetryPolicy, verify: ssl.SSLContext | bool = True) -> SessionSocket | None:
        """The session of the queue manager at ``base``, its upgrade carrying the credentials;
        None when the server offers none (then HTTP). Raises MQRC_NOT_AUTHORIZED when it refused
        the credentials, MQRC_HOST_NOT_AVAILABLE when it cannot be reached after the retries."""

        url = session_url(base)

        def once() -> ClientConnection:
            # no compression: frames are small and the CPU matters more on loopback and LAN
            return ws_connect(url, additional_headers=headers, compression=None, max_size=None,
                              **session_tls(url, verify),
                              open_timeout=timeout.connect, legacy=True)

        try:
            return cls(tenacity.Retrying(**retry.tenacity_kwargs(SOCKET_FAILURES))(once))
        except InvalidStatus as exc:
            refused = refusal(exc.response.status_code, exc.response.body or b"")
            if refused is not None:
                raise refused from None
            return None
        except InvalidHandshake:  # something answered that is no WebSocket server: HTTP it is
            return None
        except SOCKET_FAILURES as exc:
            raise host_not_available(exc) from None

    def request(self, call: Call, timeout: float | None) -> FrameReply:
        """Send ``call`` as a frame and wait for its answer. A transport failure or a timeout
        closes the socket (the queue manager then ends the connection) and is 2009."""
        with self._lock:
            if self._broken:
                raise session_broken(self._broken)
            self._next_id += 1
            frame_id = self._next_id
            try:
                self._ws.send(frame_of(frame_id, call))
                while True:
                    reply = reply_of(self._ws.recv(timeout=timeout))
                    if reply.id == frame_id:
                        return reply
                    # else: the answer to a call whose caller was interrupted - nobody waits for it
            except (ConnectionClosed, OSError, MQMIError) as exc:  # MQMIError: a frame that is no answer
                self._broken = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                self._ws.close()
                raise session_ended(exc, self._broken) from None

    def close(self) -> None:
        self._broken = self._broken or "closed by the client"
        self._ws.close()


class QueueManager:
    """A connection to one queue manager (pymqi's ``QueueManager``).

    ``QueueManager(None)`` makes an unconnected object (then ``connect_tcp_client``);
    ``QueueManager("QM1", url=...)`` connects at once. ``url`` (or a pymqi connection name
    ``host(port)``) is the queue manager's REST address; for an ``https://`` one, ``ca_file`` is the
    CA bundle to verify it with (default: QSG_CA_FILE, else httpx's trust: SSL_CERT_FILE or certifi).
    ``transport``: ``"session"`` (the default: one WebSocket) or ``"http"``; default from
    QSG_CLIENT_TRANSPORT, and HTTP when ``http_client`` is given.
    """

    def __init__(self, name: str | None = None, disconnect_on_exit: bool = True, *, url: str | None = None,
                 appl_name: str | None = None, timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
                 retry: RetryPolicy | None = None, http_client: httpx.Client | None = None,
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
        self._consume: Any = None  # asynchronous consume (app.client.asyncconsume), made by cb/ctl
        self.disconnect_on_exit = disconnect_on_exit
        if name is not None or url is not None:
            self.connect(name, url=url)

    # ---- connection ---------------------------------------------------------------------

    def connect(self, name: str | None, user: str | bytes | None = None, password: str | bytes | None = None,
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
            self._session = SessionSocket.open(base, self._auth_headers, self._timeout, self._retry,
                                                  self._verify)
        if self._session is None and self._http is None:
            self._http = httpx.Client(base_url=base, timeout=self._timeout, verify=self._verify,
                                      limits=httpx.Limits(max_connections=20, max_keepalive_connections=10))
        self._name = name
        try:
            self._run(self._conn.connect(name, self._appl_name))
        except Exception:
            self._release()  # no connection: close the socket or the pool
            raise

    def connect_tcp_client(self, name: str | None, cd: CD | None, channel: Any = None, conn_name: Any = None,
                           user: str | bytes | None = None, password: str | bytes | None = None, *,
                           api_key: str | None = None, csp: CSP | None = None) -> None:
        """pymqi's client connection: ``conn_name`` (or ``cd.ConnectionName``) is ``host(port)``;
        the channel is recorded in ``cd`` as pymqi does, and otherwise unused."""
        if cd is not None:
            if channel:
                cd.ChannelName = channel
            if conn_name:
                cd.ConnectionName = conn_name
        target = conn_name or (cd.ConnectionName if cd is not None else None)
        self.connect(name, user, password, url=url_of(target) if target else None, api_key=api_key, csp=csp)

    def connect_with_options(self, name: str | None, *args: Any, **kwargs: Any) -> None:
        """pymqi's ``connect_with_options(name, cd, sco)`` or ``(name, opts=, cd=, sco=, user=,
        password=)``: the CD gives the address; ``user``/``password`` (pymqi), ``csp`` (an MQCSP,
        as IBM's ibmmq) or ``api_key`` the credentials; ``sco`` is accepted (TLS comes from the
        address and ``ca_file``). Connecting a connected object raises MQMIError with MQCC_WARNING
        and MQRC_ALREADY_CONNECTED (2002), as MQCONNX does, and the connection stays; with
        MQCNO_HANDLE_SHARE_BLOCK or _NO_BLOCK in ``opts`` it returns quietly - real MQ would hand
        out a second, shareable handle; this object keeps its one."""
        cd, _sco, opts = connect_arguments(args, kwargs)
        if self._conn.connected and opts & SHARE_OPTIONS:
            return
        self.connect_tcp_client(name, cd, conn_name=cd.ConnectionName if cd is not None else None,
                                user=kwargs.get("user"), password=kwargs.get("password"),
                                api_key=kwargs.get("api_key"), csp=kwargs.get("csp"))

    connectWithOptions = connect_with_options  # noqa: N815 - pymqi's older names
    connectTCPClient = connect_tcp_client  # noqa: N815

    def disconnect(self) -> None:
        """MQDISC: the unit of work is committed, open queues are closed."""
        if not self._conn.connected:
            raise PYIFError("not connected")
        if self._consume is not None:  # MQDISC stops asynchronous consume first
            self._consume.shutdown()
        try:
            self._run(self._conn.disconnect())
        finally:
            self._release()

    def _release(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
        if self._own_client and self._http is not None:
            self._http.close()
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
        """The connection handle (hconn)."""
        return self._conn.hconn

    def get_name(self) -> str:
        """The name of the queue manager connected to (ibmmq's ``get_name``)."""
        if not self._conn.connected:
            raise PYIFError("not connected")
        return self._conn.qmgr_name

    def cb(self, **kwargs: Any) -> None:
        """MQCB for the connection's event handler (ibmmq: ``cb(operation=, cbd=)``)."""
        asyncconsume.of(self).cb(None, kwargs)

    def ctl(self, operation: int, ctlo: Any = None) -> None:
        """MQCTL: start, stop, suspend or resume asynchronous consume (app.client.asyncconsume)."""
        asyncconsume.of(self).ctl(operation, ctlo)

    @property
    def qmgr_name(self) -> str:
        """The name of the queue manager this connection reached."""
        return self._conn.qmgr_name

    def __enter__(self) -> QueueManager:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.disconnect_on_exit and self._conn.connected:
            self.disconnect()

    # ---- unit of work and MQPUT1 ------------------------------------------------------

    def begin(self) -> None:
        """MQBEGIN: nothing to do. As on z/OS, the first put or get in syncpoint starts the unit
        of work; there is no global (XA) unit of work to begin. Fails only when not connected."""
        if not self._conn.connected:
            raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_HCONN_ERROR, "not connected")

    def commit(self) -> None:
        """MQCMIT."""
        self._run(self._conn.commit())

    def backout(self) -> None:
        """MQBACK."""
        self._run(self._conn.backout())

    def stat(self, stat_type: int) -> STS:
        """MQSTAT (e.g. CMQC.MQSTAT_TYPE_ASYNC_ERROR): an STS with the outcome of the
        MQPMO_ASYNC_RESPONSE puts since the last call (PutSuccessCount, PutFailureCount ...)."""
        return self._run(self._conn.stat(stat_type))

    def put1(self, q_desc: OD | str, msg: bytes | str, md: MD | None = None, opts: PMO | None = None) -> None:
        """MQPUT1 (open, put, close as one call); ``md`` receives the MsgId and put time. A
        ``str`` message is put as MQFMT_STRING in UTF-8, as pymqi does."""
        md = md if md is not None else MD()
        string_message(msg, md)
        self._run(self._conn.put(None, msg, md, opts or PMO(), q_desc))

    def inquire(self, selector: int | list[int]) -> Any:
        """MQINQ of the queue manager: name, QSG name, version, command level, platform, CCSID,
        dead-letter queue and the like. A list of selectors gives a dict (as IBM's ibmmq does)."""
        info = self._run(self._conn.qmgr_info())
        selectors, many = selectors_of(selector)
        values = {s: qmgr_inquire_value(info, s) for s in selectors}
        return values if many else values[selectors[0]]

    # ---- driver -------------------------------------------------------------------------

    def _run(self, plan: Plan[T]) -> T:
        if self._http is None and self._session is None:
            raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_HCONN_ERROR, "not connected")
        if self._consume is not None:
            self._consume.check_call()  # 2500 while started, but for the callbacks' thread
        while self._orphans:
            hobj = self._orphans.pop()
            try:
                self._drive(self._conn.close(hobj))
            except MQMIError:
                pass  # already gone (the queue deleted, the handle ended): nothing left to close
        return self._drive(plan)

    def _drive(self, plan: Plan[T]) -> T:
        try:
            call = next(plan)
            while True:
                call = plan.send(self._send(call))
        except StopIteration as done:
            return done.value

    def _send(self, call: Call) -> httpx.Response | FrameReply:
        if self._session is not None:
            return self._session.request(call, call.read_timeout(self._timeout))
        assert self._http is not None
        timeout = call.timeout(self._timeout)

        http = self._http
        headers = self._auth_headers

        def once() -> httpx.Response:
            return http.request(call.method, call.path, json=call.json, timeout=timeout, headers=headers)

        try:
            if call.establishes_connection:
                return tenacity.Retrying(**self._retry.tenacity_kwargs())(once)
            return once()
        except httpx.HTTPError as exc:
            raise transport_error(exc, call) from None



class Queue:
    """An object handle on a queue (pymqi's ``Queue``). As in pymqi, it opens at once only when
    given a queue and options; given only the queue it opens on first use - MQOO_OUTPUT for a
    put, MQOO_INPUT_AS_Q_DEF for a get, MQOO_INQUIRE for an inquire, MQOO_SET for a set -
    and stays open with those options until ``close``."""

    def __init__(self, qmgr: QueueManager, q_desc: OD | str | None = None, open_opts: int | None = None) -> None:
        self._qmgr = qmgr
        self._hobj: str | None = None
        self._desc = q_desc
        if q_desc is not None and open_opts is not None:
            self.open(q_desc, open_opts)

    def open(self, q_desc: OD | str, open_opts: int | None = None) -> None:
        """MQOPEN with ``open_opts``; without them only the queue is noted and the open is left
        to the first put, get, inquire or set (pymqi's deferred open)."""
        if self._hobj is not None:
            raise PYIFError(f"the queue {text(self._desc)} is already open")
        self._desc = q_desc
        if open_opts is not None:
            self._hobj = self._qmgr._run(self._qmgr._conn.open(q_desc, open_opts))

    def close(self, options: int | None = None) -> None:
        """MQCLOSE. As in pymqi the object forgets its queue: open it again to use it."""
        if self._hobj is None:
            raise PYIFError("not open")
        self._qmgr._run(self._qmgr._conn.close(self._hobj, options or CMQC.MQCO_NONE))
        if self._qmgr._consume is not None:
            self._qmgr._consume.closed(self._hobj)  # closing deregisters the queue's consumer
        self._hobj = None
        self._desc = None

    def put(self, msg: bytes | str, md: MD | None = None, opts: PMO | None = None) -> None:
        """MQPUT; ``md`` receives the MsgId, CorrelId and put date/time the queue manager set.
        A ``str`` message is put as MQFMT_STRING in UTF-8, as pymqi does."""
        md = md if md is not None else MD()
        string_message(msg, md)
        self._qmgr._run(self._qmgr._conn.put(self._opened(CMQC.MQOO_OUTPUT), msg, md, opts or PMO()))

    def get(self, max_length: int | None = None, md: MD | None = None, opts: GMO | None = None) -> bytes:
        """MQGET: the message body (whole when ``max_length`` is None); ``md`` and
        ``opts.ReturnedLength`` are updated. Raises MQMIError 2033 when no message is available."""
        hobj = self._opened(CMQC.MQOO_INPUT_AS_Q_DEF)
        return self._qmgr._run(self._qmgr._conn.get(hobj, max_length, md if md is not None else MD(),
                                                    opts if opts is not None else GMO()))

    def get_no_jms(self, max_length: int | None = None, md: MD | None = None, opts: GMO | None = None) -> bytes:
        """pymqi's get without JMS properties (MQGMO_NO_PROPERTIES): messages here carry none."""
        gmo = opts if opts is not None else GMO()
        gmo.Options |= CMQC.MQGMO_NO_PROPERTIES | CMQC.MQGMO_FAIL_IF_QUIESCING
        return self.get(max_length, md, gmo)

    get_no_rfh2 = get_no_jms
    get_no_jmsprops = get_no_jms

    def inquire(self, selector: int | list[int]) -> Any:
        """MQINQ by MQIA_* / MQCA_* selector (needs MQOO_INQUIRE; opens with it if not open). A
        list of selectors gives a dict (as IBM's ibmmq does)."""
        hobj = self._opened(CMQC.MQOO_INQUIRE)
        selectors, many = selectors_of(selector)
        values = {s: self._qmgr._run(self._qmgr._conn.inquire(hobj, s)) for s in selectors}
        return values if many else values[selectors[0]]

    def set(self, selector: int | dict[int, Any], value: Any = None) -> None:
        """MQSET of an attribute (inhibit get/put, trigger settings; needs MQOO_SET, opens with
        it if not open); a dict sets several (as IBM's ibmmq does)."""
        hobj = self._opened(CMQC.MQOO_SET)
        pairs = selector.items() if isinstance(selector, dict) else [(selector, value)]
        for sel, val in pairs:
            self._qmgr._run(self._qmgr._conn.set(hobj, sel, val))

    def get_handle(self) -> str:
        return self._handle()

    def get_name(self) -> str:
        """The queue's name (ibmmq's ``get_name``)."""
        return queue_name(self._desc)[0] if self._desc is not None else ""

    def get_queue_manager(self) -> QueueManager:
        return self._qmgr

    def cb(self, **kwargs: Any) -> None:
        """MQCB for this queue's message consumer (ibmmq: ``cb(operation=, cbd=, md=, gmo=)``)."""
        asyncconsume.of(self._qmgr).cb(self, kwargs)

    def __del__(self) -> None:
        # pymqi closes a Queue object that is collected while open, and programs rely on it (a
        # Queue(qmgr, name).get() per message). Closing here could block inside a call of the same
        # thread, so the handle is handed to the connection, which closes it before its next call.
        hobj = getattr(self, "_hobj", None)
        if hobj is not None and self._qmgr.is_connected:
            self._qmgr._orphans.append(hobj)

    def _opened(self, options: int) -> str:
        """The object handle, opening the queue with ``options`` first when the open was deferred."""
        if self._hobj is None:
            if self._desc is None:
                raise PYIFError("The Queue Descriptor has not been set.")
            self._hobj = self._qmgr._run(self._qmgr._conn.open(self._desc, options))
        return self._hobj

    def _handle(self) -> str:
        if self._hobj is None:
            raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_HOBJ_ERROR, "the queue is not open")
        return self._hobj

    def __enter__(self) -> Queue:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._hobj is not None and self._qmgr.is_connected:
            self.close()


def connect(queue_manager: str | None, channel: Any = None, conn_info: Any = None,
            user: str | bytes | None = None, password: str | bytes | None = None, disconnect_on_exit: bool = True,
            *, api_key: str | None = None, csp: CSP | None = None, cd: CD | None = None,
            sco: Any = None, cno: Any = None, **kwargs: Any) -> QueueManager:
    """pymqi's ``connect``: a connected QueueManager. ``conn_info`` is ``host(port)`` or a URL;
    without it (pymqi's bindings mode) the address comes from MQSERVER, else the local QM1. The
    channel is not used. ``bytes_encoding`` and ``default_ccsid`` are accepted: text is UTF-8."""
    kwargs.pop("bytes_encoding", None)
    kwargs.pop("default_ccsid", None)
    qmgr = QueueManager(None, disconnect_on_exit, **kwargs)
    # IBM's ibmmq: connect(name, cd=, csp=, cno=, sco=); the CD carries channel and address
    qmgr.connect_tcp_client(queue_manager, cd if cd is not None else CD(), channel, conn_info, user, password,
                            api_key=api_key, csp=csp)
    return qmgr
