"""The MQI verbs of one connection as I/O-free plans, driven by the synchronous client
(``app.client.sync``) and by the asyncio one (``app.client.aio``): each plan yields the HTTP
calls it needs (``Call``) and receives their responses, so the MQ logic is written once.

Retries (tenacity, in the drivers) are only for establishing the connection (MQCONN), and only
when the request never reached the queue manager. An MQPUT, MQGET or MQCMIT is never sent
twice: a retried destructive get could hand a message to nobody, a retried put could put it
twice.

Transports: by default a driver carries its calls as frames of one WebSocket per connection,
the queue manager's session transport (docs/api.md "Session transport": ``GET /v1/session``),
which spares each call an HTTP exchange and ends the connection - unit of work backed out - the
moment the client goes away. ``transport="http"`` (or QSG_CLIENT_TRANSPORT=http) makes one HTTP
request per call instead, and a server that refuses the upgrade (one without sessions, a proxy)
gets HTTP too. Only the opening of the socket is retried and only it may fall back: once a frame
is sent, a failure is MQRC_CONNECTION_BROKEN, never a second send. This module holds what both
drivers need of it without I/O: the frame of a call, the reply of an answer, the meaning of a
refused upgrade.
"""

from __future__ import annotations

import os
import ssl
import sys
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import orjson
import tenacity

import app.client.CMQC as CMQC
from app.client.core import (
    GMO,
    MD,
    OD,
    PMO,
    STS,
    MQMIError,
    PYIFError,
    Reply,
    close_request,
    error_of,
    get_request,
    get_result,
    inquire_value,
    md_from_api,
    open_request,
    put_request,
    queue_name,
    set_request,
    stat_type_name,
    sts_of,
    text,
    warning_of,
)
from app.client.properties import fill as fill_handle
from app.client.properties import get_handle_of, put_properties

T = TypeVar("T")
# Time the server may take beyond a get's own wait before the call counts as lost.
WAIT_MARGIN_S = 30.0


@dataclass(frozen=True)
class Call:
    """One HTTP request of a plan. ``timeout`` None keeps the client's default; ``wait_ms`` -1
    (an unlimited MQGET wait) lifts the read timeout."""

    method: str
    path: str
    json: Any = None
    wait_ms: int = 0
    establishes_connection: bool = False  # only such calls may be retried

    def timeout(self, default: httpx.Timeout) -> httpx.Timeout:
        if self.wait_ms == CMQC.MQWI_UNLIMITED:
            return httpx.Timeout(default.connect, read=None, write=default.write, pool=default.pool)
        if self.wait_ms:
            read = (default.read or 0) + self.wait_ms / 1000 + WAIT_MARGIN_S
            return httpx.Timeout(default.connect, read=read, write=default.write, pool=default.pool)
        return default

    def read_timeout(self, default: httpx.Timeout) -> float | None:
        """How long a session waits for this call's answer (None: as long as it takes)."""
        return self.timeout(default).read


Plan = Generator[Call, Reply, T]

# ---- the session transport (without I/O) ---------------------------------------------------

SESSION_PATH = "/v1/session"
TRANSPORTS = ("session", "http")


def choose_transport(transport: str | None, http_client_given: bool) -> str:
    """``transport`` if given, else QSG_CLIENT_TRANSPORT, else a session - unless the caller
    handed over an HTTP client of its own, which means HTTP."""
    chosen = (transport or os.environ.get("QSG_CLIENT_TRANSPORT") or ("http" if http_client_given else "session"))
    chosen = chosen.strip().lower()
    if chosen not in TRANSPORTS:
        raise PYIFError(f"transport '{chosen}' is not one of {', '.join(TRANSPORTS)}")
    return chosen


def session_url(base: str) -> str:
    """The WebSocket URL of the session of the queue manager at ``base`` (https -> wss)."""
    scheme, _, rest = base.partition("://")
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest.rstrip('/')}{SESSION_PATH}"


def session_tls(url: str, verify: ssl.SSLContext | bool) -> dict[str, Any]:
    """The ``ssl=`` argument of a WebSocket connect to ``url``: the context that verifies an
    https queue manager (``core.ssl_context``) for wss, nothing for ws (websockets refuses one)."""
    return {"ssl": verify} if url.startswith("wss:") and isinstance(verify, ssl.SSLContext) else {}


def frame_of(frame_id: int, call: Call) -> str:
    """The request frame of ``call``."""
    return orjson.dumps({"id": frame_id, "method": call.method, "path": call.path, "body": call.json}).decode()


@dataclass(frozen=True, slots=True)
class FrameReply:
    """An answer frame: the status and body the HTTP call would have given (``Reply``)."""

    id: Any
    status_code: int
    body: Any

    def json(self) -> Any:
        return self.body


def reply_of(raw: str | bytes) -> FrameReply:
    """The answer a frame from the queue manager carries; a frame that is none means the
    session can no longer be trusted (MQRC_CONNECTION_BROKEN)."""
    try:
        data = orjson.loads(raw)
        return FrameReply(data.get("id"), int(data["status"]), data.get("body"))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_CONNECTION_BROKEN,
                        f"the queue manager sent a frame that is no answer: {str(raw)[:80]!r}") from None


def refusal(status: int, body: bytes | bytearray) -> MQMIError | None:
    """What a refused upgrade means: the MQ error when the queue manager refused the caller
    (its 2035 answer to missing or wrong credentials), None when it offers no session here -
    then the driver falls back to HTTP."""
    try:
        err = orjson.loads(body)["error"]
        reason = int(err["reason"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    if reason != CMQC.MQRC_NOT_AUTHORIZED:
        return None
    return MQMIError(int(err.get("completion_code", CMQC.MQCC_FAILED)), reason, str(err.get("message", "")))


# Failures to open a session's socket (refused, unreachable, timed out): no MQ call was in it,
# so opening it again is always safe.
SOCKET_FAILURES: tuple[type[BaseException], ...] = (OSError,)


def host_not_available(exc: BaseException) -> MQMIError:
    """The socket of a session could not be opened, even after the retries."""
    return MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_HOST_NOT_AVAILABLE, f"queue manager not reachable: {exc}")


def session_broken(detail: str) -> MQMIError:
    """A call whose session failed under it: it may or may not have run, and the queue manager
    ended the connection (backing out its unit of work) when the socket closed."""
    return MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_CONNECTION_BROKEN, f"the session ended: {detail}")


#: The WebSocket close code of a frame larger than the receiver takes ("message too big").
MESSAGE_TOO_BIG = 1009


def session_ended(exc: BaseException, detail: str) -> MQMIError:
    """The failure of a call whose session closed under it: MQRC_DATA_LENGTH_ERROR (2010) when the
    queue manager closed it because the call's frame was larger than it takes (QSG_MAX_FRAME_BYTES,
    WebSocket code 1009) - what a client channel answers for a message over its MAXMSGL - else
    MQRC_CONNECTION_BROKEN. Either way the session, and the connection on it, ended."""
    received = getattr(exc, "rcvd", None)
    if received is not None and getattr(received, "code", None) == MESSAGE_TOO_BIG:
        return MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_DATA_LENGTH_ERROR,
                         f"the call is larger than the queue manager takes on a session; the session ended: {detail}")
    return session_broken(detail)


@dataclass(frozen=True)
class RetryPolicy:
    """How MQCONN is retried when the queue manager cannot be reached (exponential back-off)."""

    attempts: int = 4
    initial_wait_s: float = 0.1
    max_wait_s: float = 2.0

    def tenacity_kwargs(self, failures: tuple[type[BaseException], ...] | None = None) -> dict[str, Any]:
        """``failures``: the exceptions that prove nothing reached the server (default: HTTP's)."""
        return {"stop": tenacity.stop_after_attempt(max(1, self.attempts)),
                "wait": tenacity.wait_exponential(multiplier=self.initial_wait_s, max=self.max_wait_s),
                "retry": tenacity.retry_if_exception_type(failures or CONNECT_FAILURES), "reraise": True}


# Failures that prove the request never reached the server: safe to send again.
CONNECT_FAILURES = (httpx.ConnectError, httpx.ConnectTimeout)


def transport_error(exc: httpx.HTTPError, call: Call) -> MQMIError:
    """A failed HTTP exchange as the MQ client would report it."""
    if call.establishes_connection and isinstance(exc, CONNECT_FAILURES):
        return MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_HOST_NOT_AVAILABLE, f"queue manager not reachable: {exc}")
    return MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_CONNECTION_BROKEN, f"{type(exc).__name__}: {exc}")


def default_appl_name() -> str:
    """PutApplName of this program, as MQ derives it from the program name (28 characters)."""
    return (os.path.basename(sys.argv[0] or "") or "python")[-28:]


def _ok(response: Reply) -> dict[str, Any]:
    err = error_of(response)
    if err is not None:
        raise err
    body = response.json()
    return body if isinstance(body, dict) else {}


class Connection:
    """The state of one MQ connection (hconn) and the plans of its verbs."""

    def __init__(self) -> None:
        self.hconn = ""
        self.qmgr_name = ""

    @property
    def connected(self) -> bool:
        return bool(self.hconn)

    def _path(self, suffix: str = "") -> str:
        if not self.hconn:
            raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_HCONN_ERROR, "not connected")
        return f"/v1/connections/{self.hconn}{suffix}"

    def connect(self, name: str | None, appl_name: str) -> Plan[None]:
        """MQCONN; naming a queue manager that is not the one reached (nor its QSG) fails with
        MQRC_Q_MGR_NAME_ERROR, as MQCONN does."""
        body = _ok((yield Call("POST", "/v1/connections", {"appl_name": appl_name[:28]},
                               establishes_connection=True)))
        self.hconn, self.qmgr_name = body["hconn"], body.get("qmgr", "")
        wanted = (name or "").strip()
        if wanted and wanted != self.qmgr_name:
            info = _ok((yield Call("GET", "/v1/qmgr")))
            if wanted != info.get("qsg"):
                yield from self.disconnect()
                raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_Q_MGR_NAME_ERROR,
                                f"reached {self.qmgr_name} of {info.get('qsg')}, not {wanted}")

    def disconnect(self) -> Plan[None]:
        """MQDISC (commits the unit of work)."""
        path = self._path()
        self.hconn = ""
        _ok((yield Call("DELETE", path)))

    def commit(self) -> Plan[None]:
        _ok((yield Call("POST", self._path("/commit"))))

    def backout(self) -> Plan[None]:
        _ok((yield Call("POST", self._path("/backout"))))

    def stat(self, stat_type: int) -> Plan[STS]:
        """MQSTAT."""
        return sts_of(_ok((yield Call("POST", self._path("/stat"), {"type": stat_type_name(stat_type)}))))

    def qmgr_info(self) -> Plan[dict[str, Any]]:
        return _ok((yield Call("GET", "/v1/qmgr")))

    def open(self, desc: Any, options: int) -> Plan[str]:
        body = _ok((yield Call("POST", self._path("/objects"), open_request(desc, options))))
        if isinstance(desc, OD):  # as MQOPEN fills the OD in: a model queue's open names the queue it made
            name = str(body.get("object_name", ""))
            desc.ObjectName = name.encode() if isinstance(desc.ObjectName, bytes) else name
        return str(body["hobj"])

    def close(self, hobj: str, options: int = CMQC.MQCO_NONE) -> Plan[None]:
        _ok((yield Call("DELETE", self._path(f"/objects/{hobj}"), close_request(options))))

    def put(self, hobj: str | None, msg: Any, md: MD, pmo: PMO, desc: Any = None) -> Plan[None]:
        """MQPUT on ``hobj``, or MQPUT1 of ``desc`` when ``hobj`` is None; updates ``md``."""
        body = put_request(msg, md, pmo)
        properties = put_properties(pmo, self.hconn)  # the PMO's message handles, if any
        if properties:
            body["md"]["properties"] = properties
        if hobj is None:
            body["object_name"], body["object_qmgr"] = queue_name(desc)
            if isinstance(desc, OD) and pmo.Options & CMQC.MQPMO_ALTERNATE_USER_AUTHORITY:
                body["alternate_user_id"] = text(desc.AlternateUserId).strip()
            path = self._path("/put1")
        else:
            path = self._path(f"/objects/{hobj}/put")
        result = _ok((yield Call("POST", path, body)))
        md_from_api(md, result["md"])
        warning = warning_of(result)
        if warning is not None:
            raise warning

    def get(self, hobj: str, max_length: int | None, md: MD, gmo: GMO) -> Plan[bytes]:
        """MQGET; updates ``md`` and ``gmo.ReturnedLength``."""
        call = get_request(max_length, md, gmo)
        handle = get_handle_of(gmo, self.hconn)  # checked before the message is taken
        result = _ok((yield Call("POST", self._path(f"/objects/{hobj}/get"), call.body, wait_ms=call.wait_ms)))
        if handle is not None:
            fill_handle(handle, result["md"])
        return get_result(result, md, gmo)

    def inquire(self, hobj: str, selector: int) -> Plan[Any]:
        attrs = _ok((yield Call("GET", self._path(f"/objects/{hobj}/attributes"))))
        return inquire_value(attrs, selector)

    def set(self, hobj: str, selector: int, value: Any) -> Plan[None]:
        _ok((yield Call("PATCH", self._path(f"/objects/{hobj}/attributes"), set_request(selector, value))))
