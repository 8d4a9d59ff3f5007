"""The hot MQI verbs (``routes_mqi.HOT_VERBS``: MQPUT, MQGET and their batches on an open handle;
MQPUT1, MQCMIT, MQBACK on a connection) sent straight to their endpoint functions, through the
body limit and authentication but without FastAPI's middleware stack, router, dependency solving
and exception middleware: for a one-script call those cost about as much as the queue manager's
own work (bench/bench_wrk.py). The endpoints are the same functions FastAPI routes and documents,
and their failures take the same mapping to error bodies (``errors.response_for``). Used by the
HTTP server (``QueueManagerApp``, ``HotPath``) and by the session transport for its frames
(``app.api.session``)."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.errors import response_for
from app.api.routes_mqi import HOT_CONNECTION_VERBS, HOT_VERBS

Endpoint = Callable[..., Awaitable[Response]]
#: Scope key of a hot request's route, found once by ``QueueManagerApp`` for ``HotPath``.
HOT_ROUTE = "qsg.hot_route"


def hot_route(method: str, path: str) -> tuple[Endpoint, tuple[str, ...]] | None:
    """The hot endpoint serving ``method path`` and its path arguments (hconn[, hobj]), or None."""
    if method != "POST":
        return None
    parts = path.split("/")  # "", "v1", "connections", hconn, verb | "objects", hobj, verb
    if len(parts) < 5 or parts[2] != "connections" or parts[1] != "v1" or not parts[3]:
        return None
    endpoint: Endpoint | None = None
    args: tuple[str, ...] = ()
    if len(parts) == 5:
        endpoint, args = HOT_CONNECTION_VERBS.get(parts[4]), (parts[3],)
    elif len(parts) == 7 and parts[4] == "objects" and parts[5]:
        endpoint, args = HOT_VERBS.get(parts[6]), (parts[3], parts[5])
    return None if endpoint is None else (endpoint, args)


async def call_hot(route: tuple[Endpoint, tuple[str, ...]], request: Request) -> Response:
    """Run a hot endpoint; any failure becomes its error response."""
    endpoint, args = route
    try:
        return await endpoint(request, *args)
    except Exception as exc:  # noqa: BLE001 - every failure becomes an MQ error body
        return response_for(exc, request.method, request.url.path)


class HotPath:
    """ASGI middleware: the hot verbs go to their endpoints, every other request on to the app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            route = scope.get(HOT_ROUTE) or hot_route(scope["method"], scope["path"])
            if route is not None:
                response = await call_hot(route, Request(scope, receive))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class QueueManagerApp(FastAPI):
    """A queue manager's FastAPI application whose hot verbs do not go through FastAPI's own
    middleware stack (its server-error, telemetry, body-size and exception layers and the router):
    a hot verb's request is served by ``hot_stack`` (the body limit, authentication and
    ``HotPath``, as ``create_app`` builds it), every other request as FastAPI serves it."""

    hot_stack: ASGIApp | None = None
    #: The queue manager (also ``state.qm``), set by the lifespan: read on every hot call, where
    #: Starlette's ``State`` attribute look-up is not free.
    qm: Any = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.hot_stack is not None:
            route = hot_route(scope["method"], scope["path"])
            if route is not None:
                scope["app"] = self
                scope[HOT_ROUTE] = route
                try:
                    await self.hot_stack(scope, receive, send)
                except Exception as exc:
                    # What Starlette's ServerErrorMiddleware does for the other requests: the
                    # error body when nothing was answered yet, and the error raised on for the
                    # server to log.
                    with contextlib.suppress(Exception):
                        await response_for(exc, scope["method"], scope["path"])(scope, receive, send)
                    raise
                return
        await super().__call__(scope, receive, send)
