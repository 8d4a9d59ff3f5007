"""The benchmark's yardstick: a bare FastAPI app whose put/get endpoints each run one Lua script
doing the same essential Redis work as an MQPUT/MQGET (store, index, depth; pop, fetch, delete)."""

from __future__ import annotations

import os

import orjson
from fastapi import FastAPI, Request
from starlette.responses import Response

from app.cf.redisconn import make_redis

PUT = """
local seq = redis.call('INCR', KEYS[1] .. ':seq')
redis.call('HSET', KEYS[1] .. ':md', seq, ARGV[1])
redis.call('HSET', KEYS[1] .. ':body', seq, ARGV[2])
redis.call('ZADD', KEYS[1] .. ':idx', seq, seq)
return redis.call('HINCRBY', KEYS[1] .. ':ctl', 'depth', 1)
"""
GET = """
local top = redis.call('ZPOPMIN', KEYS[1] .. ':idx')
if #top == 0 then return {2033} end
local id = top[1]
local md = redis.call('HGET', KEYS[1] .. ':md', id)
local body = redis.call('HGET', KEYS[1] .. ':body', id)
redis.call('HDEL', KEYS[1] .. ':md', id)
redis.call('HDEL', KEYS[1] .. ':body', id)
redis.call('HINCRBY', KEYS[1] .. ':ctl', 'depth', -1)
return {0, md, body}
"""

app = FastAPI()
redis = make_redis(os.environ["BARE_REDIS_URL"])  # the same client as the queue managers'
put_script = redis.register_script(PUT)
get_script = redis.register_script(GET)
KEY = "{bare}:q:BENCH"


@app.post("/put")
async def put(request: Request) -> Response:
    body = await request.json()
    depth = await put_script(keys=[KEY], args=[orjson.dumps(body.get("md") or {}), body["data"].encode()])
    return Response(orjson.dumps({"depth": depth}), status_code=201, media_type="application/json")


@app.post("/get")
async def get(request: Request) -> Response:
    await request.body()
    reply = await get_script(keys=[KEY], args=[])
    if reply[0] != 0:
        return Response(b'{"error":{"reason":2033}}', status_code=404, media_type="application/json")
    return Response(orjson.dumps({"md": orjson.loads(reply[1]), "data": reply[2].decode()}),
                    media_type="application/json")
