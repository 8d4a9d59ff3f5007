"""The session transport (docs/api.md "Session transport"): ``GET /v1/session`` upgrades to a
WebSocket that carries the REST calls as frames, the way a client channel carries MQI calls.

A frame ``{"id": 7, "method": "POST", "path": "/v1/connections/{hconn}/objects/{hobj}/put",
"body": {...}}`` is answered by ``{"id": 7, "status": 201, "body": {...}}``: the status and body
the HTTP call gives, because each frame *is* that HTTP call - it is dispatched in-process through
this application (routing, validation, error handlers: every REST path works on a session, with
no second copy of any endpoint). What the socket saves is the HTTP exchange per call: the client
pipelines frames without waiting for answers. The hot verbs (``app.api.hotpath``: MQPUT, MQGET,
their batches, MQPUT1, MQCMIT, MQBACK) skip the middleware and the router, as over HTTP: their
frames call the same endpoint functions directly, with the same error mapping - about a third of
a frame's cost less.

Order: frames naming the same hconn run one after another in arrival order (their answers come
back in that order); frames of different hconns, and calls that name none (MQCONN, MQSC, ...),
run concurrently - a get that waits blocks only its own connection.

Ownership: connections made on a session are the session's (``Connection.owner``). When the
socket closes without MQDISC - the client ended, crashed or lost the network - they end at once:
units of work backed out, handles closed (``Mqi.end_owned``), as a z/OS queue manager does when a
client channel ends abnormally; the idle timeout does not apply to them meanwhile. The handles
are not bound to the socket otherwise: as IBM's hconn is per connection, a plain HTTP call that
names a session's hconn (same user) works too.

Authentication is the upgrade's (``app.api.auth``), and it stays live: after every security
change applied on this queue manager (REFRESH SECURITY, SET/DELETE AUTHREC, ``qsg user``
add/--replace/revoke/delete, which broadcast it) the session checks its upgrade's credentials
again before it runs another frame. A demoted user's frames run with the new rights from then
on; a session whose credentials no longer hold (a revoked key, a deleted user, a replaced
password, a logged-out token) answers the frames it has not started with MQRC_NOT_AUTHORIZED
(2035) and is closed with WebSocket code 1008 (policy violation), which ends its connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import APIRouter, WebSocket
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message

from app.api.auth import CREDENTIALS, SESSION_FRAME
from app.api.body import values_within
from app.api.errors import error_response, json_response
from app.api.hotpath import call_hot, hot_route
from app.api.routes_mqi import PUT_BATCH_VALUES
from app.core.errors import MQError
from app.core.reasons import MQRC
from app.core.rights import current_credentials, current_principal
from app.qmgr.connection import connection_owner
from app.security.service import AuthenticationFailed

log = logging.getLogger(__name__)

router = APIRouter(tags=["Session"])

#: How long the end of a session waits for the calls still running (a waiting get is woken by the
#: end of its connection; anything else is one coupling facility call) before it goes on.
END_WAIT_S = 30.0
#: The most JSON values a frame may hold (a put-batch body's budget and the frame around it):
#: a frame of millions of tiny values would hold the event loop for seconds while it is parsed.
FRAME_VALUES = PUT_BATCH_VALUES + 64
#: The WebSocket close code of a session whose credentials were revoked (RFC 6455: policy violation).
CLOSE_REVOKED = 1008
_CONNECTIONS = "/v1/connections/"
_JSON = b"application/json"


@dataclass(slots=True)
class Frame:
    """One request frame, parsed: ``id_json`` is the client's id as it goes back, in JSON."""

    id_json: bytes
    method: str
    path: str
    query: bytes
    body: bytes
    size: int = 0  # of the frame as read: what it holds of the session's backlog until answered


class MalformedFrame(Exception):
    """A frame that is no request: answered with ``id`` (JSON, ``null`` when unknown) and the
    error the HTTP API gives a malformed request body (MQRC_OPTIONS_ERROR, status 400)."""

    def __init__(self, id_json: bytes, message: str) -> None:
        super().__init__(message)
        self.id_json = id_json


def parse_frame(text: str | bytes) -> Frame:
    """The request a text frame carries; MalformedFrame when it carries none."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise MalformedFrame(b"null", f"malformed frame: invalid JSON: {exc}") from None
    if not isinstance(data, dict) or "id" not in data:
        raise MalformedFrame(b"null", "malformed frame: a request is an object with id, method, path and body")
    id_json = orjson.dumps(data["id"])
    method, path, body = data.get("method"), data.get("path"), data.get("body")
    if not isinstance(method, str) or not method.isalpha():
        raise MalformedFrame(id_json, "malformed frame: method must be an HTTP method such as POST")
    if not isinstance(path, str) or not path.startswith("/"):
        raise MalformedFrame(id_json, "malformed frame: path must be an absolute path such as /v1/qmgr")
    path, _, query = path.partition("?")
    return Frame(id_json, method.upper(), path, query.encode("latin-1", "replace"),
                 b"" if body is None else orjson.dumps(body))


def answer(id_json: bytes, status: int, body: bytes) -> str:
    """An answer frame; ``body`` is JSON already (spliced in, not decoded and encoded again)."""
    return f'{{"id":{id_json.decode()},"status":{status},"body":{body.decode()}}}'


def hconn_of(path: str) -> str | None:
    """The connection a path names (its calls are ordered), None for a call that names none."""
    if not path.startswith(_CONNECTIONS):
        return None
    hconn = path[len(_CONNECTIONS):].split("/", 1)[0]
    return hconn or None


class Session:
    """One session: reads frames, runs them (ordered per hconn), writes answers, and ends the
    connections it made when the socket closes."""

    def __init__(self, websocket: WebSocket) -> None:
        self.ws = websocket
        self.app = websocket.scope["app"]
        self.mqi = self.app.state.qm.mqi
        self.lanes: dict[str, deque[Frame]] = {}  # hconn -> its frames not yet started
        self.tasks: set[asyncio.Task[None]] = set()
        # Bounded backlog (docs/howto/security.md, Limits): frames read but not yet answered, by
        # count and by bytes; past either the socket is not read (TCP pushes back on the client).
        # The largest frame itself is uvicorn's ws_max_size (QSG_MAX_FRAME_BYTES): a larger one
        # closes the session with WebSocket code 1009, before any of it is held here.
        settings = self.app.state.qm.settings
        self.slots = asyncio.Semaphore(settings.session_max_in_flight)
        self.max_backlog = settings.session_max_backlog_bytes
        self.backlog = 0
        self.room = asyncio.Event()
        self.room.set()
        self.gone = asyncio.Event()  # the socket closed: drop queued frames, answer nothing more
        ws = websocket.scope
        # What every frame's HTTP scope shares with the upgrade request.
        host = next((v for k, v in ws.get("headers", []) if k == b"host"), b"")
        self.template: dict[str, Any] = {
            "type": "http", "asgi": ws.get("asgi", {"version": "3.0"}), "http_version": "1.1",
            "scheme": "https" if ws.get("scheme") in ("wss", "https") else "http",
            "server": ws.get("server"), "client": ws.get("client"), "root_path": ws.get("root_path", ""),
            "extensions": {}, "app": self.app, SESSION_FRAME: self,
        }
        if "state" in ws:
            self.template["state"] = ws["state"]
        self.host_header = (b"host", host)
        # The principal every frame runs as: the upgrade's, resolved again after each security change.
        self.principal = current_principal.get()
        self.security = self.app.state.qm.security
        self.credentials: tuple[dict[str, str], dict[str, str], str] | None = ws.get(CREDENTIALS)
        self.revoked = ""  # why the credentials no longer hold
        self.resolving: asyncio.Task[None] | None = None
        self.stale = False

    def _security_changed(self) -> None:
        """A security change was applied here (``Security.on_change``): no frame starts before the
        session's credentials were checked again."""
        self.stale = True
        if self.resolving is None or self.resolving.done():
            self.resolving = asyncio.get_running_loop().create_task(self._resolve())

    async def _resolve(self) -> None:
        while self.stale and not self.revoked and self.credentials is not None:
            self.stale = False
            headers, cookies, client = self.credentials
            try:
                self.principal = await self.security.authenticate(headers, cookies, client)
            except AuthenticationFailed as exc:
                self.revoked = f"the session's credentials no longer hold: {exc}"
            except Exception:  # noqa: BLE001 - cannot tell (the repository away): refuse rather than trust
                log.exception("checking a session's credentials again failed")
                self.revoked = "the session's credentials could not be checked again"
        if self.revoked:
            log.info("session of %s closed: %s", self.principal.name if self.principal else "?", self.revoked)
            with contextlib.suppress(Exception):
                # a close reason has at most 123 bytes of UTF-8
                await self.ws.close(CLOSE_REVOKED, self.revoked.encode()[:120].decode(errors="ignore"))
            self.gone.set()

    async def run(self) -> None:
        """Serve the socket until it closes, then end what the client left."""
        owner = connection_owner.set(self)  # MQCONNs of this session's frames are its connections
        if self.principal is not None and self.credentials is not None:
            self.security.on_change(self._security_changed)
        try:
            await self._read()
        finally:
            self.security.off_change(self._security_changed)
            await self._end()
            connection_owner.reset(owner)

    async def _read(self) -> None:
        while True:
            while self.backlog > self.max_backlog:
                self.room.clear()
                await self.room.wait()  # read on once answered frames made room
            message = await self.ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            raw = message.get("text")
            if raw is None:
                raw = message.get("bytes") or b""
            await self.slots.acquire()
            try:
                if not await values_within(raw, FRAME_VALUES):  # before parsing, as an HTTP body
                    raise MalformedFrame(b"null", f"malformed frame: more than {FRAME_VALUES} JSON values")
                frame = parse_frame(raw)
            except MalformedFrame as exc:
                await self._send(answer(exc.id_json, 400, error_body(MQRC.OPTIONS_ERROR, str(exc))))
                self.slots.release()
                continue
            frame.size = len(raw)
            self.backlog += frame.size
            hconn = hconn_of(frame.path)
            if hconn is None:
                self._spawn(self._execute(frame))
                continue
            lane = self.lanes.get(hconn)
            if lane is not None:
                lane.append(frame)  # its lane is busy: runs when the frames before it are done
            else:
                lane = self.lanes[hconn] = deque((frame,))
                self._spawn(self._drain(hconn, lane))

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _drain(self, hconn: str, lane: deque[Frame]) -> None:
        """Run one connection's frames in order; the lane goes when it is empty (no await between
        the test and the removal, so a frame that arrives later starts a new lane)."""
        try:
            while lane:
                await self._execute(lane.popleft())
        finally:
            if self.lanes.get(hconn) is lane:
                del self.lanes[hconn]

    async def _execute(self, frame: Frame) -> None:
        try:
            if self.resolving is not None and not self.resolving.done():
                await asyncio.shield(self.resolving)  # a security change: the credentials first
            if self.revoked:
                await self._send(answer(frame.id_json, 403, error_body(MQRC.NOT_AUTHORIZED, self.revoked)))
                return
            current_principal.set(self.principal)  # this frame's task: the principal as it is now
            if self.credentials is not None:  # checked again by a get that waits past a security change
                current_credentials.set((*self.credentials, self.security.generation))
            try:
                status, body = await self.call(frame)
            except Exception:  # noqa: BLE001 - a frame is always answered, whatever happened
                log.exception("session call %s %s failed", frame.method, frame.path)
                status, body = 500, error_body(MQRC.UNEXPECTED_ERROR, "unexpected error")
            await self._send(answer(frame.id_json, status, body))
        finally:
            self._answered(frame)

    def _answered(self, frame: Frame) -> None:
        """A frame is answered (or dropped): its slot and its bytes are free again."""
        self.slots.release()
        self.backlog -= frame.size
        if self.backlog <= self.max_backlog:
            self.room.set()

    async def call(self, frame: Frame) -> tuple[int, bytes]:
        """The frame as an HTTP request through this application: (status, JSON body)."""
        route = hot_route(frame.method, frame.path)
        if route is not None:
            response = await call_hot(route, Request(self._scope(frame), self._receive(frame.body)))
            return response.status_code, bytes(response.body)
        return await self._call_app(frame)

    def _scope(self, frame: Frame) -> dict[str, Any]:
        body = frame.body
        scope = dict(self.template)
        scope["method"] = frame.method
        scope["path"] = scope["root_path"] + frame.path
        scope["raw_path"] = scope["path"].encode()
        scope["query_string"] = frame.query
        scope["headers"] = [self.host_header, (b"content-type", _JSON), (b"content-length", b"%d" % len(body))]
        return scope

    def _receive(self, body: bytes) -> Callable[[], Awaitable[Message]]:
        """The ASGI ``receive`` of a frame's request: its body, then (only a streaming endpoint
        asks again) the disconnect when the client went."""
        request: Message | None = {"type": "http.request", "body": body, "more_body": False}

        async def receive() -> Message:
            nonlocal request
            if request is not None:
                sent, request = request, None
                return sent
            await self.gone.wait()
            return {"type": "http.disconnect"}

        return receive

    async def _call_app(self, frame: Frame) -> tuple[int, bytes]:
        """Any other call: through the whole application, as an HTTP request would go."""
        scope = self._scope(frame)
        receive = self._receive(frame.body)
        status = 0
        media = _JSON
        chunks: list[bytes] = []

        async def send(message: Message) -> None:
            nonlocal status, media
            if message["type"] == "http.response.start":
                status = message["status"]
                media = next((v for k, v in message.get("headers", ()) if k == b"content-type"), b"")
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        try:
            await self.app(scope, receive, send)
        except Exception:  # noqa: BLE001 - the app's handler already answered and logged it
            if not status:
                log.exception("session call %s %s failed", frame.method, frame.path)
                response = error_response(MQError(MQRC.UNEXPECTED_ERROR, "unexpected error"))
                return response.status_code, bytes(response.body)
        content = b"".join(chunks)
        if not media.startswith(_JSON):
            # /metrics, /console, a report page: the body travels as a JSON string
            content = orjson.dumps(content.decode("utf-8", "replace"))
        elif not content:
            content = b"null"
        return status, content

    async def _send(self, text: str) -> None:
        if self.gone.is_set():
            return
        try:
            await self.ws.send({"type": "websocket.send", "text": text})
        except Exception:  # noqa: BLE001 - the socket closed under us: the reader sees it too
            self.gone.set()

    async def _end(self) -> None:
        """The socket closed: frames not started are dropped; the connections the client made
        and did not MQDISC end now (backed out, handles closed). Calls that were running finish
        first - ending the connections wakes a waiting get - and a connection that an MQCONN
        still running made meanwhile is ended after them."""
        self.gone.set()
        for lane in self.lanes.values():
            lane.clear()
        try:
            await self.mqi.end_owned(self)
            if self.tasks:
                _, late = await asyncio.wait(set(self.tasks), timeout=END_WAIT_S)
                if late:
                    log.warning("%d call(s) of a closed session still running after %.0fs", len(late), END_WAIT_S)
            await self.mqi.end_owned(self)
        except Exception:  # noqa: BLE001 - whatever failed, the socket's end must not crash the server
            log.exception("ending the connections of a closed session failed")


def error_body(reason: int, message: str) -> bytes:
    """The error body of docs/api.md §2 as JSON bytes."""
    return orjson.dumps(MQError(reason, message).to_body())


@router.get("/v1/session", status_code=426, summary="Session transport: upgrade to a WebSocket",
            responses={426: {"description": "A plain GET: the session needs the WebSocket upgrade "
                                            "(Connection: Upgrade, Upgrade: websocket)"}})
async def session_needs_upgrade() -> Response:
    """``GET /v1/session`` with ``Upgrade: websocket`` opens a session (docs/api.md "Session
    transport"): each text frame is a REST call ``{"id", "method", "path", "body"}``, answered by
    ``{"id", "status", "body"}``. Without the upgrade there is no session."""
    err = MQError(MQRC.OPTIONS_ERROR, "GET /v1/session opens a session: send it as a WebSocket upgrade")
    return json_response(err.to_body(), 426)


@router.websocket("/v1/session")
async def session(websocket: WebSocket) -> None:
    await websocket.accept()
    await Session(websocket).run()

