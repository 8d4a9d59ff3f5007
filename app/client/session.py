"""The MQI verbs of one connection as I/O-free plans, driven by the synchronous client
(``app.client.sync``) and by the asyncio one (``app.client.aio``): each plan yields the HTTP
calls it needs (``Call``) and receives their responses, so the MQ logic is written once.

Retries (tenacity, in the drivers) are only for establishing the connection (MQCONN), and only
when the request never reached the queue manager. An MQPUT, MQGET or MQCMIT is never sent
twice: a retried destructive get could hand a message to nobody, a retried put could put it
twice.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import tenacity

import app.client.CMQC as CMQC
from app.client.core import (
    GMO,
    MD,
    PMO,
    MQMIError,
    error_of,
    get_request,
    get_result,
    inquire_value,
    md_from_api,
    open_request,
    put_request,
    queue_name,
    set_request,
    warning_of,
)

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


Plan = Generator[Call, httpx.Response, T]


@dataclass(frozen=True)
class RetryPolicy:
    """How MQCONN is retried when the queue manager cannot be reached (exponential back-off)."""

    attempts: int = 4
    initial_wait_s: float = 0.1
    max_wait_s: float = 2.0

    def tenacity_kwargs(self) -> dict[str, Any]:
        return {"stop": tenacity.stop_after_attempt(max(1, self.attempts)),
                "wait": tenacity.wait_exponential(multiplier=self.initial_wait_s, max=self.max_wait_s),
                "retry": tenacity.retry_if_exception_type(CONNECT_FAILURES), "reraise": True}


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


def _ok(response: httpx.Response) -> dict[str, Any]:
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

    def qmgr_info(self) -> Plan[dict[str, Any]]:
        return _ok((yield Call("GET", "/v1/qmgr")))

    def open(self, desc: Any, options: int) -> Plan[str]:
        body = _ok((yield Call("POST", self._path("/objects"), open_request(desc, options))))
        return str(body["hobj"])

    def close(self, hobj: str) -> Plan[None]:
        _ok((yield Call("DELETE", self._path(f"/objects/{hobj}"))))

    def put(self, hobj: str | None, msg: Any, md: MD, pmo: PMO, desc: Any = None) -> Plan[None]:
        """MQPUT on ``hobj``, or MQPUT1 of ``desc`` when ``hobj`` is None; updates ``md``."""
        body = put_request(msg, md, pmo)
        if hobj is None:
            body["object_name"], body["object_qmgr"] = queue_name(desc)
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
        result = _ok((yield Call("POST", self._path(f"/objects/{hobj}/get"), call.body, wait_ms=call.wait_ms)))
        return get_result(result, md, gmo)

    def inquire(self, hobj: str, selector: int) -> Plan[Any]:
        attrs = _ok((yield Call("GET", self._path(f"/objects/{hobj}/attributes"))))
        return inquire_value(attrs, selector)

    def set(self, hobj: str, selector: int, value: Any) -> Plan[None]:
        _ok((yield Call("PATCH", self._path(f"/objects/{hobj}/attributes"), set_request(selector, value))))
