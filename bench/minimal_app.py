"""The benchmark's minimal endpoint (docs/explanation/performance.md): a FastAPI app whose put
stores a 1 KB message with a three-command Lua script and whose get takes one back, neither
reading the request body (a fixed 1 KB message is stored). What a queue manager would cost if an
MQPUT/MQGET were no more than FastAPI plus one small script: the floor the benchmark measures
the queue manager against, next to the same-script yardstick (bench/bare_app.py)."""

from __future__ import annotations

import os

from fastapi import FastAPI
from starlette.responses import Response

from app.cf.redisconn import make_redis

redis = make_redis(os.environ["BARE_REDIS_URL"])  # the same client as the queue managers'
KEYS = ["{MINIMAL}:seq", "{MINIMAL}:list", "{MINIMAL}:depth"]
# KEYS: the id counter, the message list, the depth. ARGV[1]: the message. Returns the new depth.
PUT = redis.register_script("""
local id = redis.call('INCR', KEYS[1])
redis.call('RPUSH', KEYS[2], id .. ':' .. ARGV[1])
return redis.call('INCR', KEYS[3])
""")
# KEYS as PUT's. Returns the message, or nil when the list is empty.
GET = redis.register_script("""
local m = redis.call('LPOP', KEYS[2])
if not m then return false end
redis.call('DECR', KEYS[3])
return m
""")
MESSAGE = b"x" * 1024

# configured as the queue managers' app is: no OpenTelemetry look-up per request
app = FastAPI(telemetry={"tracing": False, "metrics": False, "logs": False})


@app.post("/put")
async def put() -> Response:
    depth = await PUT(keys=KEYS, args=[MESSAGE])
    return Response(b'{"depth":%d}' % depth, status_code=201, media_type="application/json")


@app.post("/get")
async def get() -> Response:
    message = await GET(keys=KEYS)
    if message is None:
        return Response(b'{"error":{"reason":2033}}', status_code=404, media_type="application/json")
    return Response(b'{"data":"%s"}' % message.split(b":", 1)[1], media_type="application/json")
