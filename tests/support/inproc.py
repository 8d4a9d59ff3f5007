"""Queue managers in this process: ``inprocess_group``, a queue-sharing group of real apps sharing
one injected clock, talked to through ``AsyncMQ``; and ``App``, an application driving one
``QueueManager``'s MQI object directly (the ``qm`` fixture of conftest.py).

The group:

Each QM is the real FastAPI app (``create_app``) with its real lifespan, on one real Redis and
one real SQLite repository; requests go through ``httpx.ASGITransport``. Because all of them
read the same ``ManualClock``, every timestamp (put times, activity records) is exactly what the
test set, so figures such as message residency can be computed by hand.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI

from app.api import wire
from app.api.app import create_app
from app.api.schemas import GetRequest, PutRequest
from app.core.clock import ManualClock
from app.core.errors import MQError
from app.mqsc.executor import run_script
from app.qmgr.qmgr import QueueManager
from app.repository.db import upgrade
from app.settings import Settings
from tests.support.mq import AsyncMQ


@dataclass
class InProcessQM:
    name: str
    app: FastAPI
    http: httpx.AsyncClient

    @property
    def qm(self) -> Any:
        return self.app.state.qm

    async def connect(self, appl: str) -> AsyncMQ:
        return await AsyncMQ.connect(self.http, appl)

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
                         activity_dir=str(workdir / "activity"), mqlog_dir=str(workdir / "mqlog"),
                         **{"auth": "off", **settings})
            app = create_app(s, clock)
            await stack.enter_async_context(app.router.lifespan_context(app))
            http = await stack.enter_async_context(
                httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=f"http://{name.lower()}"))
            qms[name] = InProcessQM(name, app, http)
        yield qms


async def mqsc(qm: QueueManager, script: str) -> list[dict]:
    results = await run_script(qm, script)
    assert all(r["completion_code"] == 0 for r in results), results
    return results


class App:
    """An application's connection, in-process."""

    def __init__(self, qm: QueueManager, hconn: str) -> None:
        self.qm, self.hconn = qm, hconn

    @classmethod
    async def connect(cls, qm: QueueManager) -> App:
        return cls(qm, (await qm.mqi.connect("EXPTEST")).hconn)

    async def open(self, name: str, options: list[str]) -> str:
        return (await self.qm.mqi.open(self.hconn, name, "", options)).hobj

    async def put(self, hobj: str, data: str, **md) -> dict:
        call = wire.put_call(PutRequest(md=md, options=["NO_SYNCPOINT"], data=data))
        return wire.put_response(await self.qm.mqi.put(self.hconn, hobj, call))["md"]

    async def get(self, hobj: str, options: list[str] | None = None, **body) -> dict:
        call = wire.get_call(GetRequest(options=options or ["NO_SYNCPOINT"], **body))
        return wire.get_response(await self.qm.mqi.get(self.hconn, hobj, call))

    async def drain(self, hobj: str) -> list[str]:
        out = []
        while True:
            try:
                out.append((await self.get(hobj))["data"])
            except MQError as exc:
                assert exc.reason == 2033
                return out


async def depth(qm: QueueManager, name: str) -> int:
    (res,) = await run_script(qm, f"DISPLAY QLOCAL({name})")
    return res["objects"][0]["CURDEPTH"]
