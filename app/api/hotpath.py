"""The hot MQI verbs on an open handle (``POST /v1/connections/{hconn}/objects/{hobj}/<verb>``,
e.g. MQPUT and MQGET) sent straight to their endpoint functions, below authentication but
without FastAPI's router, dependency solving and exception middleware: for a one-script call
those cost about as much as the queue manager's own work (bench/bench_wrk.py). The endpoints
are the same functions FastAPI routes and documents (``routes_mqi.HOT_VERBS``), and their
failures take the same mapping to error bodies (``errors.response_for``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.errors import response_for

Endpoint = Callable[[Request, str, str], Awaitable[Response]]


class HotPath:
    """ASGI middleware: ``verbs`` maps the last path segment to the endpoint serving it; every
    other request goes on to the application."""

    def __init__(self, app: ASGIApp, verbs: Mapping[str, Endpoint]) -> None:
        self.app = app
        self.verbs = verbs

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            # "", "v1", "connections", hconn, "objects", hobj, verb
            parts = scope["path"].split("/")
            if len(parts) == 7 and parts[2] == "connections" and parts[4] == "objects" and parts[1] == "v1":
                endpoint = self.verbs.get(parts[6])
                if endpoint is not None and parts[3] and parts[5]:
                    request = Request(scope, receive)
                    try:
                        response = await endpoint(request, parts[3], parts[5])
                    except Exception as exc:  # noqa: BLE001 - every failure becomes an MQ error body
                        response = response_for(exc, "POST", scope["path"])
                    await response(scope, receive, send)
                    return
        await self.app(scope, receive, send)
