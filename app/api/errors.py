"""The one place MQ reason codes become HTTP responses (docs/api.md §2)."""

from __future__ import annotations

import logging

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from app.cf.errors import CFClientError
from app.core.errors import MQError
from app.core.reasons import MQRC
from app.repository.db import RepositoryError

log = logging.getLogger(__name__)

STATUS_BY_REASON: dict[int, int] = {
    MQRC.NOT_AUTHORIZED: 403,
    MQRC.HCONN_ERROR: 404,
    MQRC.HOBJ_ERROR: 404,
    MQRC.UNKNOWN_OBJECT_NAME: 404,
    MQRC.UNKNOWN_ALIAS_BASE_Q: 404,
    MQRC.UNKNOWN_OBJECT_Q_MGR: 404,
    MQRC.Q_DELETED: 404,
    MQRC.NO_MSG_AVAILABLE: 404,
    MQRC.NO_MSG_UNDER_CURSOR: 404,
    MQRC.OBJECT_CHANGED: 409,
    MQRC.OBJECT_IN_USE: 409,
    MQRC.OBJECT_ALREADY_EXISTS: 409,
    MQRC.OBJECT_NOT_UNIQUE: 409,
    MQRC.Q_NOT_EMPTY: 409,
    MQRC.Q_FULL: 409,
    MQRC.PUT_INHIBITED: 409,
    MQRC.GET_INHIBITED: 409,
    MQRC.CF_STRUC_IN_USE: 409,
    MQRC.MQRCCF_OBJECT_OPEN: 409,
    MQRC.MQRCCF_OBJECT_WRONG_TYPE: 409,
    MQRC.CONNECTION_BROKEN: 503,
    MQRC.CF_STRUC_FAILED: 503,
    MQRC.CF_NOT_AVAILABLE: 503,
    MQRC.DB2_NOT_AVAILABLE: 503,
    MQRC.Q_MGR_QUIESCING: 503,
    MQRC.Q_MGR_STOPPING: 503,
    MQRC.Q_MGR_NOT_AVAILABLE: 503,
    MQRC.UNEXPECTED_ERROR: 500,
}

# Which reason a malformed request field maps to, by field name (nearest MQRC, docs/api.md).
REASON_BY_FIELD: dict[str, int] = {
    "md": MQRC.MD_ERROR,
    "match": MQRC.MD_ERROR,
    "data": MQRC.BUFFER_ERROR,
    "data_encoding": MQRC.BUFFER_ERROR,
    "buffer_length": MQRC.BUFFER_LENGTH_ERROR,
    "wait_ms": MQRC.WAIT_INTERVAL_ERROR,
    "object_name": MQRC.OBJECT_NAME_ERROR,
    "object_qmgr": MQRC.Q_MGR_NAME_ERROR,
    "script": MQRC.MQRCCF_PARM_SYNTAX_ERROR,
    "messages": MQRC.PMO_ERROR,
    "max_messages": MQRC.GMO_ERROR,
}


def http_status(reason: int) -> int:
    """HTTP status for a failed call with this reason (400 unless the table says otherwise)."""
    return STATUS_BY_REASON.get(reason, 400)


def json_response(content: object, status_code: int = 200) -> Response:
    """A JSON response encoded with orjson (the hot path skips FastAPI's generic encoder)."""
    return Response(orjson.dumps(content), status_code=status_code, media_type="application/json")


def error_response(exc: MQError) -> Response:
    return json_response(exc.to_body(), http_status(exc.reason))


def _validation_reason(exc: RequestValidationError, request: Request) -> MQError:
    errors = exc.errors()
    loc = errors[0].get("loc", ()) if errors else ()
    field = next((str(p) for p in loc[1:2]), "")
    reason = REASON_BY_FIELD.get(field)
    if reason is None:
        reason = MQRC.MQRCCF_PARM_SYNTAX_ERROR if request.url.path.endswith("/mqsc") else MQRC.OPTIONS_ERROR
    detail = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())[1:]) or 'body'}: {e.get('msg')}"
                       for e in errors[:3])
    return MQError(reason, f"malformed request: {detail}")


def validation_error(exc: RequestValidationError, request: Request) -> MQError:
    """The ``MQError`` a malformed request body answers with (what the handler below sends)."""
    return _validation_reason(exc, request)


def register_error_handlers(app: FastAPI) -> None:
    """Every failure leaves as the error body of docs/api.md §2, never as a framework page."""

    @app.exception_handler(MQError)
    async def _mq(_request: Request, exc: MQError) -> Response:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> Response:
        return error_response(_validation_reason(exc, request))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        reason = MQRC.UNKNOWN_OBJECT_NAME if exc.status_code == 404 else MQRC.OPTIONS_ERROR
        message = f"{request.method} {request.url.path}: {exc.detail}"
        return json_response(MQError(reason, message).to_body(), exc.status_code)

    @app.exception_handler(CFClientError)
    async def _cf(_request: Request, exc: CFClientError) -> Response:
        return error_response(MQError(MQRC.CF_NOT_AVAILABLE, f"the coupling facility did not answer: {exc}"))

    @app.exception_handler(RepositoryError)
    async def _sql(_request: Request, exc: RepositoryError) -> Response:
        log.warning("repository error: %s", exc)
        return error_response(MQError(MQRC.DB2_NOT_AVAILABLE,
                                      f"the shared repository did not answer: {type(exc).__name__}"))

    @app.exception_handler(Exception)
    async def _unexpected(_request: Request, exc: Exception) -> Response:
        log.exception("unexpected error")
        return error_response(MQError(MQRC.UNEXPECTED_ERROR, f"unexpected error: {type(exc).__name__}"))
