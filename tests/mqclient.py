"""A small MQI client over the REST API for tests (real HTTP)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import httpx


class MQFailed(Exception):
    """A call answered with API.md's error body."""

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


class MQ:
    """One connection (hconn) to one queue manager."""

    def __init__(self, base_url: str, appl_name: str = "PYTEST", connect: bool = True,
                 auth: tuple[str, str] | None = None) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=60, auth=auth)
        self.hconn = ""
        if connect:
            self.hconn = self.call("POST", "/v1/connections", {"appl_name": appl_name})["hconn"]

    def call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        r = self.http.request(method, path, json=body)
        data = r.json()
        if r.status_code >= 300 or (isinstance(data, dict) and "error" in data):
            raise MQFailed(r.status_code, data)
        return data

    def open(self, name: str, options: list[str], qmgr: str = "") -> str:
        return self.call("POST", f"/v1/connections/{self.hconn}/objects",
                         {"object_name": name, "object_qmgr": qmgr, "options": options})["hobj"]

    def close(self, hobj: str) -> None:
        self.call("DELETE", f"/v1/connections/{self.hconn}/objects/{hobj}")

    def put(self, hobj: str, data: str = "hello", md: dict | None = None, options: list[str] | None = None,
            encoding: str = "utf-8") -> dict[str, Any]:
        body: dict[str, Any] = {"data": data, "data_encoding": encoding, "options": options or ["NO_SYNCPOINT"]}
        if md is not None:
            body["md"] = md
        return self.call("POST", f"/v1/connections/{self.hconn}/objects/{hobj}/put", body)

    def put1(self, name: str, data: str = "hello", md: dict | None = None, options: list[str] | None = None,
             qmgr: str = "") -> dict[str, Any]:
        body: dict[str, Any] = {"object_name": name, "object_qmgr": qmgr, "data": data,
                                "options": options or ["NO_SYNCPOINT"]}
        if md is not None:
            body["md"] = md
        return self.call("POST", f"/v1/connections/{self.hconn}/put1", body)

    def get(self, hobj: str, options: list[str] | None = None, wait_ms: int = 0, match: dict | None = None,
            buffer_length: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"options": options if options is not None else ["NO_SYNCPOINT"], "wait_ms": wait_ms}
        if match is not None:
            body["match"] = match
        if buffer_length is not None:
            body["buffer_length"] = buffer_length
        return self.call("POST", f"/v1/connections/{self.hconn}/objects/{hobj}/get", body)

    def commit(self) -> None:
        self.call("POST", f"/v1/connections/{self.hconn}/commit")

    def backout(self) -> None:
        self.call("POST", f"/v1/connections/{self.hconn}/backout")

    def inquire(self, hobj: str) -> dict[str, Any]:
        return self.call("GET", f"/v1/connections/{self.hconn}/objects/{hobj}/attributes")

    def set(self, hobj: str, attrs: dict[str, Any]) -> dict[str, Any]:
        return self.call("PATCH", f"/v1/connections/{self.hconn}/objects/{hobj}/attributes", attrs)

    def disconnect(self) -> None:
        self.call("DELETE", f"/v1/connections/{self.hconn}")

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
