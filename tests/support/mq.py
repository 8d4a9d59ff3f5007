"""The one test client of the MQI REST API (docs/api.md): ``MQ`` over real HTTP, ``AsyncMQ``
for in-process apps; both send the same requests and raise ``MQFailed`` with the error body."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Iterator
from typing import Any

import httpx


class MQFailed(Exception):
    """A call answered with the error body of docs/api.md §2."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body
        err = body.get("error", {})
        self.reason = err.get("reason")
        self.comp = err.get("completion_code")
        super().__init__(f"HTTP {status}: {err}")


@contextlib.contextmanager
def mq_reason(reason: int, status: int | None = None) -> Iterator[list[MQFailed]]:
    """Assert the block fails with this reason (and HTTP status, when given)."""
    caught: list[MQFailed] = []
    try:
        yield caught
    except MQFailed as exc:
        assert exc.reason == reason, f"expected reason {reason}, got {exc.reason}: {exc.body}"
        if status is not None:
            assert exc.status == status, f"expected HTTP {status}, got {exc.status}"
        assert set(exc.body["error"]) >= {"completion_code", "reason", "reason_name", "message"}
        caught.append(exc)
        return
    raise AssertionError(f"expected MQ reason {reason}, but the call succeeded")


class Requests:
    """The MQI verbs of docs/api.md as (method, path, body) requests: written once, sent by ``MQ``
    (real HTTP) and ``AsyncMQ`` (an in-process app through ``httpx.ASGITransport``)."""

    hconn: str = ""

    def _open(self, name: str, options: list[str], qmgr: str = "") -> tuple[str, str, Any]:
        return "POST", f"/v1/connections/{self.hconn}/objects", {"object_name": name, "object_qmgr": qmgr,
                                                                 "options": options}

    def _close(self, hobj: str) -> tuple[str, str, Any]:
        return "DELETE", f"/v1/connections/{self.hconn}/objects/{hobj}", None

    def _put(self, hobj: str, data: str, md: dict | None, options: list[str] | None,
             encoding: str) -> tuple[str, str, Any]:
        body: dict[str, Any] = {"data": data, "data_encoding": encoding, "options": options or ["NO_SYNCPOINT"]}
        if md is not None:
            body["md"] = md
        return "POST", f"/v1/connections/{self.hconn}/objects/{hobj}/put", body

    def _put1(self, name: str, data: str, md: dict | None, options: list[str] | None,
              qmgr: str) -> tuple[str, str, Any]:
        body: dict[str, Any] = {"object_name": name, "object_qmgr": qmgr, "data": data,
                                "options": options or ["NO_SYNCPOINT"]}
        if md is not None:
            body["md"] = md
        return "POST", f"/v1/connections/{self.hconn}/put1", body

    def _get(self, hobj: str, options: list[str] | None, wait_ms: int, match: dict | None,
             buffer_length: int | None) -> tuple[str, str, Any]:
        body: dict[str, Any] = {"options": options if options is not None else ["NO_SYNCPOINT"], "wait_ms": wait_ms}
        if match is not None:
            body["match"] = match
        if buffer_length is not None:
            body["buffer_length"] = buffer_length
        return "POST", f"/v1/connections/{self.hconn}/objects/{hobj}/get", body

    def _verb(self, verb: str) -> tuple[str, str, Any]:
        return "POST", f"/v1/connections/{self.hconn}/{verb}", None

    def _inquire(self, hobj: str) -> tuple[str, str, Any]:
        return "GET", f"/v1/connections/{self.hconn}/objects/{hobj}/attributes", None

    def _set(self, hobj: str, attrs: dict[str, Any]) -> tuple[str, str, Any]:
        return "PATCH", f"/v1/connections/{self.hconn}/objects/{hobj}/attributes", attrs

    def _disconnect(self) -> tuple[str, str, Any]:
        return "DELETE", f"/v1/connections/{self.hconn}", None

    @staticmethod
    def _answer(r: httpx.Response) -> dict[str, Any]:
        data = r.json()
        if r.status_code >= 300 or (isinstance(data, dict) and "error" in data):
            raise MQFailed(r.status_code, data)
        return data


class MQ(Requests):
    """One connection (hconn) to one queue manager, over real HTTP."""

    def __init__(self, base_url: str, appl_name: str = "PYTEST", connect: bool = True,
                 auth: tuple[str, str] | None = None, verify: ssl.SSLContext | bool = True) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=60, auth=auth, verify=verify)
        self.hconn = ""
        if connect:
            self.hconn = self.call("POST", "/v1/connections", {"appl_name": appl_name})["hconn"]

    def call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        return self._answer(self.http.request(method, path, json=body))

    def open(self, name: str, options: list[str], qmgr: str = "") -> str:
        return self.call(*self._open(name, options, qmgr))["hobj"]

    def close(self, hobj: str) -> None:
        self.call(*self._close(hobj))

    def put(self, hobj: str, data: str = "hello", md: dict | None = None, options: list[str] | None = None,
            encoding: str = "utf-8") -> dict[str, Any]:
        return self.call(*self._put(hobj, data, md, options, encoding))

    def put1(self, name: str, data: str = "hello", md: dict | None = None, options: list[str] | None = None,
             qmgr: str = "") -> dict[str, Any]:
        return self.call(*self._put1(name, data, md, options, qmgr))

    def get(self, hobj: str, options: list[str] | None = None, wait_ms: int = 0, match: dict | None = None,
            buffer_length: int | None = None) -> dict[str, Any]:
        return self.call(*self._get(hobj, options, wait_ms, match, buffer_length))

    def commit(self) -> None:
        self.call(*self._verb("commit"))

    def backout(self) -> None:
        self.call(*self._verb("backout"))

    def inquire(self, hobj: str) -> dict[str, Any]:
        return self.call(*self._inquire(hobj))

    def set(self, hobj: str, attrs: dict[str, Any]) -> dict[str, Any]:
        return self.call(*self._set(hobj, attrs))

    def disconnect(self) -> None:
        self.call(*self._disconnect())

    def drain(self, hobj: str) -> list[str]:
        """Get every message now on the queue (no syncpoint); their data in order."""
        out = []
        while True:
            try:
                out.append(self.get(hobj)["data"])
            except MQFailed as exc:
                if exc.reason == 2033:
                    return out
                raise


class AsyncMQ(Requests):
    """One connection (hconn) to one queue manager through an ``httpx.AsyncClient`` (for an
    in-process app: ``httpx.ASGITransport``). The same requests as ``MQ``."""

    def __init__(self, http: httpx.AsyncClient, hconn: str = "") -> None:
        self.http = http
        self.hconn = hconn

    @classmethod
    async def connect(cls, http: httpx.AsyncClient, appl_name: str = "PYTEST") -> AsyncMQ:
        client = cls(http)
        client.hconn = (await client.call("POST", "/v1/connections", {"appl_name": appl_name}))["hconn"]
        return client

    async def call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        return self._answer(await self.http.request(method, path, json=body))

    async def open(self, name: str, options: list[str], qmgr: str = "") -> str:
        return (await self.call(*self._open(name, options, qmgr)))["hobj"]

    async def close(self, hobj: str) -> None:
        await self.call(*self._close(hobj))

    async def put(self, hobj: str, data: str = "hello", md: dict | None = None, options: list[str] | None = None,
                  encoding: str = "utf-8") -> dict[str, Any]:
        return await self.call(*self._put(hobj, data, md, options, encoding))

    async def put1(self, name: str, data: str = "hello", md: dict | None = None, options: list[str] | None = None,
                   qmgr: str = "") -> dict[str, Any]:
        return await self.call(*self._put1(name, data, md, options, qmgr))

    async def get(self, hobj: str, options: list[str] | None = None, wait_ms: int = 0, match: dict | None = None,
                  buffer_length: int | None = None) -> dict[str, Any]:
        return await self.call(*self._get(hobj, options, wait_ms, match, buffer_length))

    async def commit(self) -> None:
        await self.call(*self._verb("commit"))

    async def backout(self) -> None:
        await self.call(*self._verb("backout"))

    async def disconnect(self) -> None:
        await self.call(*self._disconnect())


def connections(group, appl_name: str = "PYTEST") -> Iterator[Any]:
    """Body of a ``connect`` fixture: yields ``connect(qm="QM1", appl_name=...)``, an ``MQ``
    connected to that queue manager of ``group``, and disconnects every one when the test ends."""
    made: list[MQ] = []

    def connect(qm: str = "QM1", appl_name: str = appl_name) -> MQ:
        m = MQ(group.url(qm), appl_name)
        made.append(m)
        return m

    yield connect
    for m in made:
        try:
            m.disconnect()
        except MQFailed:
            pass
        m.http.close()
