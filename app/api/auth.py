"""Authentication of every request (docs/howto/security.md), as a pure ASGI middleware so that the caller is
known (``app.core.rights.current_principal``) inside every endpoint, the MQI and MQSC.

Open without credentials: ``/v1/health``, ``/v1/ready`` (probes), the API docs (``/docs`` and its
assets, ``/openapi.json``), the console's page and script (its data needs credentials) and IBM's
``POST /ibmmq/rest/v*/login``. A request without valid credentials gets 401 with
``WWW-Authenticate: Basic``: the error body of docs/api.md §2 with MQRC_NOT_AUTHORIZED (2035), or IBM's error
body on ``/ibmmq/`` paths.

A WebSocket upgrade (the session transport, ``GET /v1/session``) is authenticated the same way
and refused with that same 401 answer (an HTTP response instead of the handshake); each frame of
the session then runs as the principal of the upgrade, checked again after every security
change (``app.api.session``; the upgrade's credentials travel in the scope as ``CREDENTIALS``).

Web origins: a browser attaches the credentials it holds for this queue manager - its login
cookie, and HTTP basic credentials it cached - to any page's WebSocket and form posts, so a page
served from elsewhere (another site, or another port of this host) could act as the user. A
WebSocket upgrade or a state-changing request (any method but GET, HEAD, OPTIONS) whose
``Origin`` is not allowed is refused (403, 2035) before any credential is looked at, whatever
they are, and with authentication off too. Allowed: no ``Origin`` (a program, not a web page),
this queue manager's own origin (the ``Host`` it was called by, and its advertised URL), the entry
point's (``X-Forwarded-Host``, which the entry point sets) and the origins of
``QSG_ALLOWED_ORIGINS`` (a proxy's). A state-changing request that
authenticates with the login cookie must also carry IBM's ``ibm-mq-rest-csrf-token`` header
(any value), which no cross-site form can send.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from http.cookies import CookieError, SimpleCookie
from typing import TYPE_CHECKING

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.errors import json_response
from app.core.errors import MQError
from app.core.reasons import MQRC
from app.core.rights import Principal, current_credentials, current_principal
from app.ibmrest import errors as ibm_errors
from app.security.service import AuthenticationFailed

if TYPE_CHECKING:
    from app.settings import Settings

log = logging.getLogger(__name__)

OPEN_PATHS = frozenset({"/v1/health", "/v1/ready", "/docs", "/docs/oauth2-redirect", "/openapi.json",
                        # the console's page, its script and the charting library it loads: no data
                        "/console", "/console/console.js", "/console/vendor/uPlot.iife.min.js",
                        "/console/vendor/uPlot.min.css"})
#: The console's data calls: a 401 there carries no ``WWW-Authenticate: Basic`` challenge, so the
#: browser does not ask for basic credentials (and keep them for any page to ride): the page
#: shows its login form, which gets the HttpOnly, SameSite=Strict login cookie.
CONSOLE_PREFIX = "/console/"
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


#: Scope key of the upgrade's credentials (headers, cookies, client address), which a session
#: checks again after every security change.
CREDENTIALS = "qsg.credentials"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_DEFAULT_PORTS = {"http": "80", "https": "443"}


def normalize_origin(origin: str) -> str:
    """``scheme://host[:port]`` lower-cased, without a default port or a trailing slash; "" for
    what is no origin (``null``, no scheme)."""
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in _DEFAULT_PORTS:
        return ""
    host = rest.split("/", 1)[0]
    if host.endswith(f":{_DEFAULT_PORTS[scheme]}"):
        host = host.rsplit(":", 1)[0]
    return f"{scheme}://{host}" if host else ""


def _unbindable(origin: str) -> str:
    """``origin`` when its host is an IP address or ``localhost`` (no DNS name an attacker could
    rebind), else ""."""
    hostport = origin.partition("://")[2]
    host = hostport[1:hostport.find("]")] if hostport.startswith("[") else hostport.rsplit(":", 1)[0]
    if host == "localhost":
        return origin
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return ""
    return origin


def origin_allowed(scope: Scope, headers: dict[str, str], settings: Settings | None) -> bool:
    """Whether the request comes from no web page (no ``Origin``) or from an allowed one: this
    queue manager's own origin (as the ``Host`` header and the advertised URL name it, and the
    entry point's as it says in ``X-Forwarded-Host``) or one of ``settings.allowed_origins``."""
    origin = headers.get("origin")
    if origin is None:
        return True
    origin = normalize_origin(origin)
    if not origin:
        return False
    scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
    # The origin the Host header names is this QM's own only where it is an address or localhost:
    # a name can be rebound by its owner to 127.0.0.1 (DNS rebinding), making a hostile page
    # "same-origin" by its own Host header. Names go in the advertised URL or QSG_ALLOWED_ORIGINS.
    allowed = {_unbindable(normalize_origin(f"{scheme}://{headers.get('host', '')}"))}
    forwarded = headers.get("x-forwarded-host")
    if forwarded:
        # The entry point's origin, which it names (app/gateway.py). A web page cannot make a
        # browser send this header to another origin: not on a WebSocket, not in a form, and a
        # script's fetch would need a CORS preflight, which no queue manager approves.
        allowed.add(_unbindable(normalize_origin(f"{headers.get('x-forwarded-proto', 'http')}://{forwarded}")))
    if settings is not None:
        allowed.add(normalize_origin(settings.advertised_url))
        allowed.update(normalize_origin(o) for o in settings.allowed_origins.split(",") if o.strip())
    allowed.discard("")
    return origin in allowed


def unauthenticated_response(path: str, detail: str) -> Response:
    if path.startswith("/ibmmq/"):
        err = ibm_errors.not_authenticated(detail)
        response = json_response(err.to_body(), err.status)
    else:
        response = json_response(MQError(MQRC.NOT_AUTHORIZED, f"not authenticated: {detail}").to_body(), 401)
    if not path.startswith(CONSOLE_PREFIX):
        response.headers.update(CHALLENGE)
    return response


class _DeniedUpgrades(logging.Filter):
    """uvicorn's default WebSocket protocol (websockets-sansio) sends a denial response (the ASGI
    "websocket.http.response" extension: our 401/403 answer to an upgrade) correctly but then
    logs "ASGI callable returned without completing handshake." at ERROR, as if the application
    had failed. Each denial this middleware sends is counted, and that one record per denial is
    dropped; the same message with no denial behind it (a real fault) still shows."""

    def __init__(self) -> None:
        super().__init__()
        self.pending = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if self.pending and record.getMessage().startswith("ASGI callable returned without completing handshake"):
            self.pending -= 1
            return False
        return True


DENIED_UPGRADES = _DeniedUpgrades()


async def deny(response: Response, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer ``scope`` with ``response``: for a WebSocket upgrade an HTTP response instead of the
    handshake (the client sees the status and the MQ error body)."""
    await response(scope, receive, send)
    if scope["type"] == "websocket":
        # bounded: under a server that logs nothing after a denial, few real records could go
        DENIED_UPGRADES.pending = min(DENIED_UPGRADES.pending + 1, 16)


def origin_refused(path: str) -> Response:
    detail = "this page's origin may not call this queue manager (see QSG_ALLOWED_ORIGINS)"
    if path.startswith("/ibmmq/"):
        err = ibm_errors.from_mq_error(MQError(MQRC.NOT_AUTHORIZED, detail), action="call", target=path)
        return json_response(err.to_body(), err.status)
    return json_response(MQError(MQRC.NOT_AUTHORIZED, detail).to_body(), 403)


class AuthenticationMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        logging.getLogger("uvicorn.error").addFilter(DENIED_UPGRADES)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or SESSION_FRAME in scope:
            # lifespan; or a session's frame, which runs as the principal its upgrade set
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        app = scope.get("app")
        qm = (getattr(app, "qm", None) or getattr(app.state, "qm", None)) if app is not None else None
        method = scope.get("method", "WEBSOCKET") if scope["type"] == "http" else "WEBSOCKET"
        headers: dict[str, str] | None = None
        # The hot path: one plain scan of the raw headers for an Origin (which programs do not
        # send) and for credentials other than HTTP basic.
        origin = other_credentials = False
        authorization: bytes | None = None
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                authorization = value
            elif name == b"origin":
                origin = True
            elif name in (b"cookie", b"x-api-key"):
                other_credentials = True
        if origin and method not in SAFE_METHODS:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            if not origin_allowed(scope, headers, qm.settings if qm is not None else None):
                log.info("%s %s: refused: Origin %r is not allowed", method, path, headers.get("origin"))
                await deny(origin_refused(path), scope, receive, send)
                return
        if qm is None or not qm.security.enabled or path in OPEN_PATHS or path.startswith(DOCS_ASSETS) or (
                LOGIN_PATH.match(path) and method == "POST"):
            await self.app(scope, receive, send)
            return
        security = qm.security
        # HTTP basic credentials authenticated before and still valid (no security change since)
        basic = authorization if authorization is not None and not other_credentials \
            and scope["type"] == "http" and authorization[:6].lower() == b"basic " else None
        principal = security.remembered(basic) if basic is not None else None
        if basic is not None and principal is not None:
            client = scope["client"][0] if scope.get("client") else ""
            # basic credentials only (no cookie, no key): all a waiting get needs to check them again
            credentials: tuple[dict[str, str], dict[str, str], str, int] = (
                {"authorization": basic.decode("latin-1")}, {}, client, security.generation)
            await self._as(principal, credentials, scope, receive, send)
            return
        if headers is None:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        cookies = cookies_of(headers)
        client = scope["client"][0] if scope.get("client") else ""
        generation = security.generation  # what the credentials are checked against (read first)
        try:
            principal = await security.authenticate(headers, cookies, client)
        except AuthenticationFailed as exc:
            log.info("%s %s: authentication failed: %s", method, path, exc)
            await deny(unauthenticated_response(path, str(exc)), scope, receive, send)
            return
        if basic is not None:
            security.remember(basic, principal, generation)
        if principal.method == "token" and scope["type"] == "http" and method not in SAFE_METHODS \
                and not path.startswith("/ibmmq/") and ibm_errors.CSRF_HEADER not in headers:
            # the login cookie rides along with any page's form post: a custom header does not
            # (an upgrade cannot carry one: the Origin rule guards those)
            await deny(unauthenticated_response(path, f"a call authenticated by the login cookie needs the "
                                                      f"{ibm_errors.CSRF_HEADER} header"), scope, receive, send)
            return
        if scope["type"] == "websocket":
            scope[CREDENTIALS] = (headers, cookies, client)
        await self._as(principal, (headers, cookies, client, generation), scope, receive, send)

    async def _as(self, principal: Principal, credentials: tuple[dict[str, str], dict[str, str], str, int],
                  scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request as ``principal``; ``credentials`` are what a get that waits checks
        again after a security change."""
        token = current_principal.set(principal)
        checked = current_credentials.set(credentials)
        try:
            await self.app(scope, receive, send)
        finally:
            current_credentials.reset(checked)
            current_principal.reset(token)
