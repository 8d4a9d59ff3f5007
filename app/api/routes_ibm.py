"""IBM MQ REST API compatibility (docs/api.md §10): the messaging resources, the login resource
and, of the administrative API, the MQSC resource and the installation, qmgr and queue read
resources, under ``/ibmmq/rest/v1|v2|v3``.

Thin: check the CSRF header, hand a call that names another queue manager to the forwarder,
parse, call ``app.ibmrest``, answer. Every failure on these paths leaves as IBM's error body
(``app.ibmrest.errors``), never as the ``/v1`` one: ``IbmRoute`` converts exceptions here.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi import APIRouter, Request
from fastapi.routing import APIRoute
from starlette.responses import Response

from app.api.errors import ibm_response_for, json_response
from app.ibmrest import errors as ibm_errors
from app.ibmrest.admin import Admin
from app.ibmrest.headers import RESPONSE_CONTENT_TYPE, VERSIONS
from app.ibmrest.messaging import Messaging
from app.ibmrest.mqsc import run_command
from app.ibmrest.routing import Forwarder
from app.mqsc.executor import CREDENTIAL_HEADERS

# IBM: "When you use HTTP POST, PATCH, or DELETE methods, you must provide extra authentication"
# - the ibm-mq-rest-csrf-token header, whose value can be anything, including blank.
CSRF_METHODS = frozenset({"POST", "PATCH", "DELETE"})
TAG = "IBM MQ REST API"


class IbmRoute(APIRoute):
    """A route whose failures all answer with IBM's error body (the /v1 handlers would give
    docs/api.md's body instead)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        admin = "/admin/" in self.path

        async def run(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:  # every failure of an IBM call becomes IBM's error body
                qmgr = request.app.state.qm.name if admin else None
                return ibm_response_for(exc, request.method, request.url.path, qmgr)

        return run


router = APIRouter(route_class=IbmRoute, tags=[TAG])


def _require_csrf(request: Request) -> None:
    if request.method in CSRF_METHODS and ibm_errors.CSRF_HEADER not in request.headers:
        raise ibm_errors.csrf_missing()


async def _forward(request: Request, qmgr: str, body: bytes, *, admin: bool = False) -> Response:
    """Answer with what queue manager ``qmgr`` answers (until IGQ: see app.ibmrest.routing)."""
    wait = request.query_params.get("wait", "")
    raw_path = request.scope.get("raw_path") or request.url.path.encode()
    answer = await Forwarder(request.app.state.qm).forward(
        qmgr, method=request.method, path=raw_path.decode("latin-1"), query=request.url.query,
        headers=dict(request.headers), body=body, wait_ms=int(wait) if wait.isdigit() else 0, admin=admin)
    response = Response(content=answer.body, status_code=answer.status)
    for key, value in answer.headers:
        response.headers.append(key, value)
    return response


def _message_routes(version: str) -> None:
    """The messaging resources of one API version."""
    base = f"/ibmmq/rest/{version}/messaging/qmgr/{{qmgr}}/queue/{{queue:path}}"

    async def post_message(request: Request, qmgr: str, queue: str) -> Response:
        _require_csrf(request)
        body = await request.body()
        qm = request.app.state.qm
        remote = not Forwarder(qm).is_local(qmgr)
        if remote and qm.attrs.get("IGQ") != "ENABLED":
            return await _forward(request, qmgr, body)  # without IGQ the named QM takes the put itself
        # a put for another QM of the group travels by intra-group queuing, as IBM's remote queues do
        headers = await Messaging(qm).post(version, queue, dict(request.headers), request.headers.get("content-type"),
                                           body, qmgr if remote else "")
        return Response(status_code=201, headers=headers)

    async def receive(request: Request, qmgr: str, queue: str, *, destructive: bool) -> Response:
        _require_csrf(request)
        if not Forwarder(request.app.state.qm).is_local(qmgr):
            return await _forward(request, qmgr, await request.body())
        message = await Messaging(request.app.state.qm).receive(
            version, queue, dict(request.query_params), destructive=destructive, abandoned=request.is_disconnected)
        if message is None:
            return Response(status_code=204)  # IBM: no message available
        return Response(message.text.encode("utf-8"), 200, headers=message.headers,
                        media_type=RESPONSE_CONTENT_TYPE)

    async def delete_message(request: Request, qmgr: str, queue: str) -> Response:
        return await receive(request, qmgr, queue, destructive=True)

    async def browse_message(request: Request, qmgr: str, queue: str) -> Response:
        return await receive(request, qmgr, queue, destructive=False)

    async def message_list(request: Request, qmgr: str, queue: str) -> Response:
        if not Forwarder(request.app.state.qm).is_local(qmgr):
            return await _forward(request, qmgr, b"")
        messages = await Messaging(request.app.state.qm).message_list(version, queue, dict(request.query_params))
        return json_response({"messages": messages})

    text_body = {"requestBody": {"required": True, "content": {"text/plain": {"schema": {"type": "string"}}}}}
    router.add_api_route(f"{base}/message", post_message, methods=["POST"], status_code=201,
                         summary=f"{version}: put the body as an MQSTR message (ibm-mq-md-* headers)",
                         openapi_extra=text_body)
    router.add_api_route(f"{base}/message", delete_message, methods=["DELETE"],
                         summary=f"{version}: destructive get of the next message (204 when none)")
    router.add_api_route(f"{base}/message", browse_message, methods=["GET"],
                         summary=f"{version}: browse the first message (204 when none)")
    router.add_api_route(f"{base}/messagelist", message_list, methods=["GET"],
                         summary=f"{version}: descriptors of the messages on the queue")


def _admin_routes(version: str) -> None:
    async def mqsc(request: Request, qmgr: str) -> Response:
        _require_csrf(request)
        body = await request.body()
        if not Forwarder(request.app.state.qm).is_local(qmgr):
            return await _forward(request, qmgr, body, admin=True)
        media = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
        if media != "application/json":
            raise ibm_errors.unsupported_media_type("the mqsc resource takes Content-Type application/json")
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise ibm_errors.bad_body(f"invalid JSON: {exc}") from None
        credentials = {k: v for k, v in request.headers.items() if k.lower() in CREDENTIAL_HEADERS}
        return json_response(await run_command(request.app.state.qm, data, credentials))

    json_body = {"requestBody": {"required": True, "content": {"application/json": {"schema": {
        "type": "object", "example": {"type": "runCommand", "parameters": {"command": "DISPLAY QLOCAL(*)"}}}}}}}
    router.add_api_route(f"/ibmmq/rest/{version}/admin/action/qmgr/{{qmgr}}/mqsc", mqsc, methods=["POST"],
                         summary=f"{version}: run an MQSC command (runCommand / runCommandJSON)",
                         openapi_extra=json_body)


def _admin_read_routes(version: str) -> None:
    """The read resources of the administrative API (``app.ibmrest.admin``): installation and
    qmgr on every version, queue on v1 and v2 only (IBM's v3 has no queue resource; its clients
    use the MQSC resource)."""
    base = f"/ibmmq/rest/{version}/admin"

    async def installation(request: Request) -> Response:
        return json_response(Admin(request.app.state.qm).installation(request.query_params))

    async def one_installation(request: Request, installation: str) -> Response:
        return json_response(Admin(request.app.state.qm).installation(request.query_params, installation))

    async def qmgrs(request: Request) -> Response:
        return json_response(await Admin(request.app.state.qm).qmgrs(version, request.query_params,
                                                                     dict(request.headers)))

    async def one_qmgr(request: Request, qmgr: str) -> Response:
        return json_response(await Admin(request.app.state.qm).qmgrs(version, request.query_params,
                                                                     dict(request.headers), qmgr))

    async def queues(request: Request, qmgr: str) -> Response:
        if not Forwarder(request.app.state.qm).is_local(qmgr):
            return await _forward(request, qmgr, b"", admin=True)  # that QM shows its own queues
        return json_response(await Admin(request.app.state.qm).queues(request.query_params))

    async def one_queue(request: Request, qmgr: str, queue: str) -> Response:
        if not Forwarder(request.app.state.qm).is_local(qmgr):
            return await _forward(request, qmgr, b"", admin=True)
        return json_response(await Admin(request.app.state.qm).queues(request.query_params, queue))

    router.add_api_route(f"{base}/installation", installation, methods=["GET"],
                         summary=f"{version}: the installation the REST API runs in (platform, version)")
    router.add_api_route(f"{base}/installation/{{installation}}", one_installation, methods=["GET"],
                         summary=f"{version}: the installation, named")
    router.add_api_route(f"{base}/qmgr", qmgrs, methods=["GET"],
                         summary=f"{version}: the queue managers of the group and their state (status=*)")
    router.add_api_route(f"{base}/qmgr/{{qmgr}}", one_qmgr, methods=["GET"],
                         summary=f"{version}: one queue manager of the group and its state")
    if version in ("v1", "v2"):
        router.add_api_route(f"{base}/qmgr/{{qmgr}}/queue", queues, methods=["GET"],
                             summary=f"{version}: queues (name, type, attributes, status, "
                                     "queueSharingGroupDisposition, filter)")
        router.add_api_route(f"{base}/qmgr/{{qmgr}}/queue/{{queue:path}}", one_queue, methods=["GET"],
                             summary=f"{version}: one queue (attributes, status)")


def _login_routes(version: str) -> None:
    """IBM's token login: POST sets the LtpaToken2 cookie (valid on every QM of the group, until
    QSG_LTPA_EXPIRY_S or logout), DELETE logs out, GET tells who is logged in."""
    from app.core.rights import current_principal
    from app.security.service import LTPA_COOKIE, AuthenticationFailed

    async def login(request: Request) -> Response:
        # No CSRF header here: IBM's login resource does not ask for one on POST (a client has
        # no session to protect yet), and clients written for mqweb send none.
        media = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
        if media != "application/json":
            raise ibm_errors.unsupported_media_type("the login resource takes Content-Type application/json")
        try:
            data = orjson.loads(await request.body())
        except orjson.JSONDecodeError as exc:
            raise ibm_errors.bad_body(f"invalid JSON: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("username"), str) \
                or not isinstance(data.get("password"), str):
            raise ibm_errors.bad_body("give username and password as strings")
        try:
            client = request.client.host if request.client else ""
            token = await request.app.state.qm.security.login(data["username"], data["password"], client)
        except AuthenticationFailed as exc:
            raise ibm_errors.not_authenticated(str(exc)) from None
        response = Response(status_code=204)
        response.set_cookie(LTPA_COOKIE, token, httponly=True, samesite="strict", path="/",
                            max_age=int(request.app.state.qm.settings.ltpa_expiry_s))
        return response

    async def logout(request: Request) -> Response:
        _require_csrf(request)
        from app.api.auth import cookies_of

        await request.app.state.qm.security.logout(cookies_of({"cookie": request.headers.get("cookie", "")}))
        response = Response(status_code=204)
        response.delete_cookie(LTPA_COOKIE, path="/")
        return response

    async def who(request: Request) -> Response:
        principal = current_principal.get()
        if principal is None:
            return json_response({"user": [{"name": "", "role": ["MQWebAdmin"], "authenticationMechanism": "NONE"}]})
        mechanism = {"basic": "BASIC", "apikey": "APIKEY", "token": "LTPA"}[principal.method]
        role = "MQWebAdmin" if principal.admin else "MQWebUser"
        return json_response({"user": [{"name": principal.name, "role": [role], "authenticationMechanism": mechanism}]})

    path = f"/ibmmq/rest/{version}/login"
    json_body = {"requestBody": {"required": True, "content": {"application/json": {"schema": {
        "type": "object", "example": {"username": "alice", "password": "secret"}}}}}}
    router.add_api_route(path, login, methods=["POST"], status_code=204, openapi_extra=json_body,
                         summary=f"{version}: log in; the LtpaToken2 cookie authenticates further requests")
    router.add_api_route(path, logout, methods=["DELETE"], status_code=204, summary=f"{version}: log out")
    router.add_api_route(path, who, methods=["GET"], summary=f"{version}: the authenticated user")


for _version in VERSIONS:
    _message_routes(_version)
    _admin_routes(_version)
    _admin_read_routes(_version)
    _login_routes(_version)
