"""A queue-sharing group of in-process queue managers sharing one injected clock.

Each QM is the real FastAPI app (``create_app``) with its real lifespan, on one real Redis and
one real SQLite repository; requests go through ``httpx.ASGITransport``. Because all of them
read the same ``ManualClock``, every timestamp (put times, activity records) is exactly what the
test set, so figures such as message residency can be computed by hand.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI

from app.api.app import create_app
from app.core.clock import ManualClock
from app.repository.db import upgrade
from app.settings import Settings


class MQCallFailed(Exception):
    """A call answered with API.md's error body."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.reason = body.get("error", {}).get("reason")
        super().__init__(f"HTTP {status}: {body}")


@dataclass
class Client:
    """One connection (hconn) to one in-process QM."""

    http: httpx.AsyncClient
    hconn: str = ""
    hobjs: dict[str, str] = field(default_factory=dict)

    async def call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        r = await self.http.request(method, path, json=body)
        data = r.json()
        if r.status_code >= 300 or (isinstance(data, dict) and "error" in data):
            raise MQCallFailed(r.status_code, data)
        return data

    async def open(self, queue: str, options: list[str]) -> str:
        return (await self.call("POST", f"/v1/connections/{self.hconn}/objects",
                                {"object_name": queue, "options": options}))["hobj"]

    async def put(self, hobj: str, data: str, options: list[str] | None = None,
                  md: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"data": data, "options": options or ["NO_SYNCPOINT"]}
        if md:
            body["md"] = md
        return await self.call("POST", f"/v1/connections/{self.hconn}/objects/{hobj}/put", body)

    async def put1(self, queue: str, data: str) -> dict[str, Any]:
        return await self.call("POST", f"/v1/connections/{self.hconn}/put1",
                               {"object_name": queue, "data": data, "options": ["NO_SYNCPOINT"]})

    async def get(self, hobj: str, options: list[str] | None = None) -> dict[str, Any]:
        return await self.call("POST", f"/v1/connections/{self.hconn}/objects/{hobj}/get",
                               {"options": options or ["NO_SYNCPOINT"]})

    async def close(self, hobj: str) -> None:
        await self.call("DELETE", f"/v1/connections/{self.hconn}/objects/{hobj}")

    async def commit(self) -> None:
        await self.call("POST", f"/v1/connections/{self.hconn}/commit")

    async def backout(self) -> None:
        await self.call("POST", f"/v1/connections/{self.hconn}/backout")

    async def disconnect(self) -> None:
        await self.call("DELETE", f"/v1/connections/{self.hconn}")


@dataclass
class InProcessQM:
    name: str
    app: FastAPI
    http: httpx.AsyncClient

    @property
    def qm(self) -> Any:
        return self.app.state.qm

    async def connect(self, appl: str) -> Client:
        client = Client(self.http)
        client.hconn = (await client.call("POST", "/v1/connections", {"appl_name": appl}))["hconn"]
        return client

    async def mqsc(self, script: str) -> list[dict[str, Any]]:
        r = await self.http.post("/v1/admin/mqsc", json={"script": script})
        results = r.json()["results"]
        assert all(x["completion_code"] == 0 for x in results), results
        return results


@asynccontextmanager
async def inprocess_group(names: list[str], redis_url: str, workdir: Path, clock: ManualClock,
                          **settings: Any) -> AsyncIterator[dict[str, InProcessQM]]:
    """Start the QMs (in order), yield them by name, stop them cleanly (in reverse order)."""
    database_url = f"sqlite:///{workdir / 'qsg.db'}"
    upgrade(database_url)
    settings.setdefault("auth", "off")  # these tests are not about security
    qms: dict[str, InProcessQM] = {}
    async with AsyncExitStack() as stack:
        for i, name in enumerate(names):
            s = Settings(qmgr=name, qsg="QSG1", port=19441 + i, redis_url=redis_url, database_url=database_url,
                         activity_dir=str(workdir / "activity"), mqlog_dir=str(workdir / "mqlog"), **{"auth": "off", **settings})
            app = create_app(s, clock)
            await stack.enter_async_context(app.router.lifespan_context(app))
            http = await stack.enter_async_context(
                httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=f"http://{name.lower()}"))
            qms[name] = InProcessQM(name, app, http)
        yield qms
