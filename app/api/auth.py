"""Authentication of every request (issue 11), as a pure ASGI middleware so that the caller is
known (``app.security.rights.current_principal``) inside every endpoint, the MQI and MQSC.

Open without credentials: ``/v1/health``, ``/v1/ready`` (probes), the API docs (``/docs`` and its
assets, ``/openapi.json``) and IBM's ``POST /ibmmq/rest/v*/login``. A request without valid credentials gets 401 with
``WWW-Authenticate: Basic``: the error body of docs/api.md §2 with MQRC_NOT_AUTHORIZED (2035), or IBM's error
body on ``/ibmmq/`` paths.

A WebSocket upgrade (the session transport, ``GET /v1/session``) is authenticated the same way,
once, and refused with that same 401 answer; each frame of the session then runs as the principal
of the upgrade (the session dispatches it through the app with ``SESSION_FRAME`` in its scope,
in the context where ``current_principal`` is already set). A cross-site upgrade (an ``Origin``
that is not the ``Host``) is not authenticated by cookie: a browser sends cookies with any page's
WebSocket, so that would let another site act as the logged-in user.
"""

from __future__ import annotations

import logging
import re
from http.cookies import CookieError, SimpleCookie

from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.errors import json_response
from app.core.errors import MQError
from app.core.reasons import MQRC
from app.ibmrest import errors as ibm_errors
from app.security.rights import current_principal
from app.security.service import AuthenticationFailed

log = logging.getLogger(__name__)

OPEN_PATHS = frozenset({"/v1/health", "/v1/ready", "/docs", "/docs/oauth2-redirect", "/openapi.json"})
DOCS_ASSETS = "/docs/assets/"  # Swagger UI's files, served from the package (app/api/docs.py)
LOGIN_PATH = re.compile(r"^/ibmmq/rest/v\d+/login$")
CHALLENGE = {"WWW-Authenticate": 'Basic realm="qsg", charset="UTF-8"'}
#: Scope key of a request that is a frame of an authenticated session (set by the server-side
#: session only: a client cannot put keys into an ASGI scope).
SESSION_FRAME = "qsg.session"


def cookies_of(headers: dict[str, str]) -> dict[str, str]:
    jar = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except CookieError:
        return {}
    return {k: m.value for k, m in jar.items()}


def same_origin(headers: dict[str, str]) -> bool:
    """Whether a request comes from no web page (no ``Origin``) or from a page of this server."""
    origin = headers.get("origin")
    if not origin:
        return True
    return origin.split("://", 1)[-1].rstrip("/").lower() == headers.get("host", "").lower()


def unauthenticated_response(path: str, detail: str):
    if path.startswith("/ibmmq/"):
        err = ibm_errors.not_authenticated(detail)
        response = json_response(err.to_body(), err.status)
    else:
        response = json_response(MQError(MQRC.NOT_AUTHORIZED, f"not authenticated: {detail}").to_body(), 401)
    response.headers.update(CHALLENGE)
    return response


class AuthenticationMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or SESSION_FRAME in scope:
            # lifespan; or a session's frame, which runs as the principal its upgrade set
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        qm = getattr(scope["app"].state, "qm", None) if "app" in scope else None
        if qm is None or not qm.security.enabled or path in OPEN_PATHS or path.startswith(DOCS_ASSETS) or (
                LOGIN_PATH.match(path) and scope.get("method") == "POST"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        cookies = cookies_of(headers)
        if scope["type"] == "websocket" and not same_origin(headers):
            cookies = {}
        try:
            principal = await qm.security.authenticate(headers, cookies)
        except AuthenticationFailed as exc:
            log.info("%s %s: authentication failed: %s", scope.get("method", "WEBSOCKET"), path, exc)
            await unauthenticated_response(path, str(exc))(scope, receive, send)
            return
        token = current_principal.set(principal)
        try:
            await self.app(scope, receive, send)
        finally:
            current_principal.reset(token)
