"""The benchmark's yardstick: a bare FastAPI app whose put/get endpoints each run the very same
Lua script as an MQPUT/MQGET (app/cf/lua/put.lua, get.lua) with arguments built inline, through
the queue managers' own script client (ScriptRegistry.evalsha: a turn's calls written together) -
no queue manager, no MQI rules, no handles, no MQMD. What the queue manager adds on top of this is
what the benchmark's percentage measures."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import orjson
from fastapi import FastAPI, Request
from starlette.responses import Response

from app.cf import keys
from app.cf.engine import CouplingFacility
from app.cf.keys import QueueKeys, QueueLocation
from app.cf.redisconn import make_redis
from app.cf.scripts import ScriptRegistry
from app.core.clock import SystemClock

redis = make_redis(os.environ["BARE_REDIS_URL"])  # the same client as the queue managers'
scripts = ScriptRegistry(redis)
LOC = QueueLocation("BARE.CF.APPL1", "BENCH")
QK = QueueKeys(LOC)
FENCE = keys.structure_fence(LOC.tag)
KEYS = [QK.ctl, keys.uow_key(LOC.tag, "BARE", "h"), keys.uow_registry(LOC.tag), keys.held_key(LOC.tag, "BARE"), FENCE]
PUT_KEYS = [QK.ctl, keys.uow_key(LOC.tag, "BARE", "h"), keys.uow_registry(LOC.tag), keys.expiry_queues(LOC.tag), FENCE]
CHANNEL = keys.availability_channel(LOC.tag)
TOKENS = itertools.count(1)
TRIGGERS = keys.trigger_channel(LOC.tag)


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    await CouplingFacility(redis, "BARE", SystemClock()).define_queue(LOC, {
        "put": "ENABLED", "get": "ENABLED", "maxdepth": 999999999, "maxmsgl": 4194304,
        "msgdlvsq": "PRIORITY", "defprty": 0, "usage": "NORMAL", "offload": "1"})
    yield


# configured as the queue managers' app is: no OpenTelemetry look-up per request
app = FastAPI(lifespan=lifespan, telemetry={"tracing": False, "metrics": False, "logs": False})


@app.post("/put")
async def put(request: Request) -> Response:
    body = orjson.loads(await request.body())
    now = str(time.time_ns() // 1_000_000)
    # put.lua's ARGV in order (see its header): no syncpoint, priority 0, not persistent, no ids,
    # no expiry or report, shared-queue events, nothing logged, in no group; the caller (fence
    # check and deadline, app/cf/deadline.py) last.
    reply = await scripts.evalsha(scripts.put, PUT_KEYS, [
        QK.queue_prefix, LOC.name, "BARE", "h", "", "0", "0", "0", "", "",
        orjson.dumps(body.get("md") or {}), body["data"].encode(), now, CHANNEL, "", "0", "0", "BARE",
        "S", TRIGGERS, "0", "", "BARE", "1", str(int(now) + 4500)])
    return Response(orjson.dumps({"depth": reply[1]}), status_code=201, media_type="application/json")


@app.post("/get")
async def get(request: Request) -> Response:
    await request.body()
    now = str(time.time_ns() // 1_000_000)
    # a call token as an MQGET outside syncpoint carries (its message is held under it; the
    # queue manager's release behind the reply is its own cost, not the script's)
    token = f"1:{next(TOKENS)}"
    reply = await scripts.evalsha(scripts.get, KEYS, [
        QK.queue_prefix, LOC.name, "BARE", "h", "", "GET", "NO", "", "", "", "-1", "0", now, "0",
        keys.structure_prefix(LOC.tag), "S", "", token, "BARE", "1", str(int(now) + 4500)])
    if reply[0] != 0:
        return Response(b'{"error":{"reason":2033}}', status_code=404, media_type="application/json")
    return Response(orjson.dumps({"md": orjson.loads(reply[1]), "data": reply[2].decode()}),
                    media_type="application/json")
