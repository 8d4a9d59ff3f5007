"""The group's single entry point: any queue manager can serve any client, like a z/OS shared
inbound channel behind a generic port.

A new connection (MQCONN) and every call that does not name a connection go to the next
queue manager that answers (round robin); a call on an existing connection goes to the queue
manager that owns it (an hconn starts with its queue manager's name). If that queue manager is
gone the client gets MQRC_CONNECTION_BROKEN (2009), as a z/OS client whose queue manager ended.
"""

from __future__ import annotations

import itertools
import re
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.core.errors import MQError
from app.core.reasons import MQRC

_OWNED = re.compile(r"^/v1/connections/([A-Z][A-Z0-9@#$]{0,3})-")
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade"}
_FORWARDED = {"x-forwarded-host", "x-forwarded-proto", "x-forwarded-for"}


def parse_upstreams(text: str) -> dict[str, str]:
    """``QM1=http://qm1:9441,QM2=https://qm2:9441`` -> {"QM1": "http://qm1:9441", ...}."""
    out = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, sep, url = item.partition("=")
        if not sep or not url.strip().startswith(("http://", "https://")):
            raise ValueError(f"upstream '{item}' is not NAME=http://host:port or NAME=https://host:port")
        out[name.strip()] = url.strip().rstrip("/")
    if not out:
        raise ValueError("no upstream queue managers given")
    return out


def _error(reason: int, message: str, status: int = 503) -> Response:
    import orjson

    return Response(orjson.dumps(MQError(reason, message).to_body()), status_code=status,
                    media_type="application/json")


def create_gateway(upstreams: dict[str, str], verify: ssl.SSLContext | bool = True) -> Starlette:
    """The entry point's ASGI app; ``verify`` checks https upstreams (app.tls.peer_ssl_context)."""
    names = list(upstreams)
    turn = itertools.cycle(range(len(names)))
    state: dict[str, httpx.AsyncClient] = {}

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        # Waiting gets may take minutes: no read timeout, bounded connect.
        state["client"] = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=2.0), verify=verify)
        yield
        await state["client"].aclose()

    async def forward(request: Request, name: str) -> Response:
        url = upstreams[name] + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() not in _HOP_BY_HOP and k.lower() not in _FORWARDED}
        # The queue manager counts the entry point's own origin as its own (a page the entry point
        # served may open its calls); set here, never passed on from the client.
        headers["x-forwarded-host"] = request.headers.get("host", "")
        headers["x-forwarded-proto"] = request.url.scheme
        # The client's own address, for the queue manager's throttle and logs (it believes this
        # only from the entry points QSG_TRUSTED_PROXIES names); whatever the client sent is dropped.
        headers["x-forwarded-for"] = request.client.host if request.client else ""
        r = await state["client"].request(request.method, url, headers=headers, content=await request.body())
        out_headers = {k: v for k, v in r.headers.items() if k.lower() not in _HOP_BY_HOP}
        return Response(r.content, status_code=r.status_code, headers=out_headers)

    async def route(request: Request) -> Response:
        owned = _OWNED.match(request.url.path)
        if owned:
            name = owned.group(1)
            if name not in upstreams:
                return _error(MQRC.HCONN_ERROR, f"no queue manager {name} behind this entry point", 404)
            try:
                return await forward(request, name)
            except httpx.TransportError:
                return _error(MQRC.CONNECTION_BROKEN,
                              f"queue manager {name}, which owns this connection, is not available")
        for _ in names:
            name = names[next(turn)]
            try:
                return await forward(request, name)
            except httpx.TransportError:
                continue  # that queue manager is down: try the next one
        return _error(MQRC.Q_MGR_NOT_AVAILABLE, "no queue manager of the group is available")

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    return Starlette(routes=[Route("/{path:path}", route, methods=methods)], lifespan=lifespan)
