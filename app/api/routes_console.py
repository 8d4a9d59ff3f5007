"""``/console`` routes: the page, its script and the charting library vendored with it
(``/console/vendor/...``), the state (``GET /console/state``, with the rates history), the same
state as server-sent events while it changes (``GET /console/events``, a rates point a second)
and MQSC with runmqsc's text (``POST /console/mqsc``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
from fastapi import APIRouter, Request
from starlette.datastructures import State
from starlette.responses import FileResponse, Response, StreamingResponse

from app.api.errors import json_response
from app.api.schemas import MqscRequest
from app.console.rates import RateHistory
from app.console.state import console_state, group_happenings, local_happenings
from app.core.errors import MQError
from app.core.reasons import MQRC
from app.mqsc.executor import CREDENTIAL_HEADERS, run_script
from app.mqsc.text import format_result

router = APIRouter(prefix="/console", tags=["console"])
STATIC = Path(__file__).parents[1] / "console" / "static"
#: How often the event stream reads the state again, and how often it says it is alive.
POLL_S = 1.0
KEEPALIVE_S = 15.0
#: The files of app/console/static/vendor/ the page loads (the charting library, uPlot; its
#: licence and where it came from are beside it).
VENDOR = {"uPlot.iife.min.js": "text/javascript; charset=utf-8", "uPlot.min.css": "text/css; charset=utf-8"}


def _rates(state: State) -> RateHistory:
    """The queue manager's rates history, shared by every console watching it."""
    rates = getattr(state, "console_rates", None)
    if rates is None:
        rates = state.console_rates = RateHistory()
    return rates


@router.get("", include_in_schema=False)
async def page() -> Response:
    return FileResponse(STATIC / "console.html", media_type="text/html; charset=utf-8")


@router.get("/console.js", include_in_schema=False)
async def script() -> Response:
    return FileResponse(STATIC / "console.js", media_type="text/javascript; charset=utf-8")


@router.get("/vendor/{name}", include_in_schema=False)
async def vendor(name: str) -> Response:
    if name not in VENDOR:
        raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"the console has no file {name!r}")
    return FileResponse(STATIC / "vendor" / name, media_type=VENDOR[name],
                        headers={"Cache-Control": "max-age=86400"})


@router.get("/state", summary="The console's snapshot: members, CF structures, queues, latest happenings, "
                              "message rates with their history")
async def state(request: Request) -> Response:
    return json_response(await console_state(request.app.state.qm, _rates(request.app.state), history=True))


@router.get("/happenings", summary="The latest happenings (events, trigger messages, expiries, reports, IGQ, "
                                   "peer recoveries), newest first: this queue manager's, or with scope=group "
                                   "every active one's")
async def happenings(request: Request, scope: str = "local") -> Response:
    qm = request.app.state.qm
    if scope == "local":
        return json_response({"happenings": local_happenings(qm), "unanswered": []})
    if scope != "group":
        raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"scope={scope!r} is not local or group")
    credentials = {k: v for k, v in request.headers.items() if k in CREDENTIAL_HEADERS}
    return json_response(await group_happenings(qm, credentials))


@router.get("/events", summary="The console's snapshot as server-sent events, sent again whenever it changes")
async def events(request: Request) -> Response:
    qm = request.app.state.qm
    rates = _rates(request.app.state)
    first = await console_state(qm, rates)  # refused (2035) before the stream starts
    # A security change ends the stream: the browser's EventSource connects again, and that
    # request is authenticated and authorized anew (a revoked or demoted user gets no more data).
    changed = asyncio.Event()

    async def stream() -> AsyncIterator[bytes]:
        qm.security.on_change(changed.set)
        try:
            async for chunk in _snapshots():
                yield chunk
        finally:
            qm.security.off_change(changed.set)

    async def _snapshots() -> AsyncIterator[bytes]:
        snapshot, sent, quiet = first, b"", 0.0
        while qm.status in ("RUNNING", "REJOINING", "STARTING") and not changed.is_set():
            body = orjson.dumps(snapshot)
            if body != sent:
                yield b"data: " + body + b"\n\n"
                sent, quiet = body, 0.0
            elif quiet >= KEEPALIVE_S:
                yield b": alive\n\n"
                quiet = 0.0
            await asyncio.sleep(POLL_S)
            quiet += POLL_S
            if await request.is_disconnected() or changed.is_set():
                return
            try:
                snapshot = await console_state(qm, rates)
            except MQError as exc:  # e.g. the coupling facility away: say so, keep trying
                yield b"event: problem\ndata: " + orjson.dumps(exc.to_body()) + b"\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})


@router.post("/mqsc", summary="Run MQSC; the responses as runmqsc prints them, and as JSON")
async def mqsc(request: Request, body: MqscRequest) -> Response:
    results = await run_script(request.app.state.qm, body.script)
    return json_response({"text": "\n".join(format_result(r) for r in results), "results": results})
