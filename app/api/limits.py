"""Request body limits (docs/howto/security.md, Limits): a body over its limit is refused before it is
read, with the error body of docs/api.md §2 - HTTP 413 and MQRC_DATA_LENGTH_ERROR (2010), what a
client channel answers for a message longer than its MAXMSGL (the transport's limit, not a
queue's: 2030/2031 stay the queue manager's answers to a message it has read).

Two limits: the message-carrying calls (put, put1, put-batch and IBM's message POST) may carry the
largest message a queue manager allows, every other call a few MiB. A ``Content-Length`` over the
limit is answered at once; a chunked body is read here up to the limit (and refused the moment it
passes it) before the application sees it. Session frames are bounded by the session
(``app.api.session``), not here.
"""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.auth import SESSION_FRAME
from app.api.errors import response_for
from app.core.errors import MQError
from app.core.reasons import MQRC

#: Paths whose bodies carry messages (the hot verbs of app/api/hotpath.py and IBM's messaging POST).
_MESSAGE_PATH = re.compile(r"^/v1/connections/[^/]+/(?:objects/[^/]+/(?:put|put-batch)|put1)$"
                           r"|^/ibmmq/rest/v\d+/messaging/qmgr/[^/]+/(?:queue|topic)/[^/]+/message$")


def body_limit(path: str, message_bytes: int, other_bytes: int) -> int:
    """The largest body a request to ``path`` may carry."""
    return message_bytes if _MESSAGE_PATH.match(path) else other_bytes


def too_large(limit: int) -> MQError:
    return MQError(MQRC.DATA_LENGTH_ERROR, f"request body longer than this queue manager takes ({limit} bytes)")


class BodyLimit:
    """ASGI middleware: refuse a request body over its limit without reading it."""

    def __init__(self, app: ASGIApp, message_bytes: int, other_bytes: int) -> None:
        self.app = app
        self.message_bytes = message_bytes
        self.other_bytes = other_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or SESSION_FRAME in scope:
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        limit = body_limit(path, self.message_bytes, self.other_bytes)
        length: int | None = None
        chunked = False
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    length = None  # the HTTP server has refused such a request already
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        if length is not None and length > limit:
            await self._refuse(scope, receive, send, limit)
            return
        if length is None and chunked:
            # No length given: read the body here, up to the limit, before the app sees any of it.
            chunks: list[bytes] = []
            size = 0
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return  # the client went away
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    await self._refuse(scope, receive, send, limit)
                    return
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
            receive = _replay(b"".join(chunks), receive)
        await self.app(scope, receive, send)

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        response = response_for(too_large(limit), scope.get("method", ""), scope.get("path", ""))
        # The unread body stays unread: the server closes the connection after this answer.
        response.headers["connection"] = "close"
        await response(scope, receive, send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the app the body read already, then what the client sends next."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
