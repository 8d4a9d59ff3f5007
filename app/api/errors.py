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
from app.ibmrest import errors as ibm_errors
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
    MQRC.NO_SUBSCRIPTION: 404,
    MQRC.SUBSCRIPTION_IN_USE: 409,
    MQRC.SUB_ALREADY_EXISTS: 409,
    MQRC.SUB_INHIBITED: 409,
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
    # a request body over the server's limit (app/api/limits.py), as a client channel's MAXMSGL answers
    MQRC.DATA_LENGTH_ERROR: 413,
    MQRC.MAX_CONNS_LIMIT_REACHED: 503,
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
    # longer than MQ_TOPIC_STR_LENGTH / MQ_SUB_NAME_LENGTH (10240)
    "object_string": MQRC.TOPIC_STRING_ERROR,
    "sub_name": MQRC.SUB_NAME_ERROR,
    "object_qmgr": MQRC.Q_MGR_NAME_ERROR,
    "script": MQRC.MQRCCF_PARM_SYNTAX_ERROR,
    "messages": MQRC.PMO_ERROR,
    "max_messages": MQRC.GMO_ERROR,
    "alternate_user_id": MQRC.OD_ERROR,
    "context": MQRC.CONTEXT_HANDLE_ERROR,
}


def http_status(reason: int) -> int:
    """HTTP status for a failed call with this reason (400 unless the table says otherwise)."""
    return STATUS_BY_REASON.get(reason, 400)


def json_response(content: object, status_code: int = 200) -> Response:
    """A JSON response encoded with orjson (the hot path skips FastAPI's generic encoder)."""
    return Response(orjson.dumps(content), status_code=status_code, media_type="application/json")


def error_response(exc: MQError) -> Response:
    return json_response(exc.to_body(), http_status(exc.reason))


def validation_error(exc: RequestValidationError, path: str) -> MQError:
    """The ``MQError`` a malformed request answers with: the reason its first field maps to."""
    errors = exc.errors()
    loc = errors[0].get("loc", ()) if errors else ()
    field = next((str(p) for p in loc[1:2]), "")
    reason = REASON_BY_FIELD.get(field)
    if reason is None:
        reason = MQRC.MQRCCF_PARM_SYNTAX_ERROR if path.endswith("/mqsc") else MQRC.OPTIONS_ERROR
    detail = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())[1:]) or 'body'}: {e.get('msg')}"
                       for e in errors[:3])
    return MQError(reason, f"malformed request: {detail}")


IBM_PREFIX = "/ibmmq/"


def ibm_response_for(exc: BaseException, method: str, path: str, qmgr: str | None = None) -> Response:
    """The error response of a failure on an ``/ibmmq/`` path, in IBM's error body
    (``app.ibmrest.errors``): unknown paths, methods a resource does not take and malformed
    requests included. ``qmgr``: the queue manager the administrative API reports."""
    headers: dict[str, str] = {}
    if isinstance(exc, StarletteHTTPException):
        headers = dict(exc.headers or {})  # e.g. Allow on a 405
        if exc.status_code == 404:
            err = ibm_errors.unknown_resource(path)
        elif exc.status_code == 405:
            err = ibm_errors.method_not_allowed(method, path)
        else:
            err = ibm_errors.IbmRestError(exc.status_code, "MQWB0000E", (str(exc.detail),), qmgr_name=qmgr)
    elif isinstance(exc, RequestValidationError):
        errors = exc.errors()
        loc = [str(p) for p in (errors[0].get("loc", ()) if errors else ())]
        detail = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in errors[:3])
        if loc[:1] == ["query"] and len(loc) > 1:
            err = ibm_errors.bad_query(loc[1], "the value given", detail)
        else:
            err = ibm_errors.bad_body(detail)
        err = ibm_errors.from_exception(err, qmgr=qmgr)
    else:
        if not isinstance(exc, (ibm_errors.IbmRestError, MQError, CFClientError, RepositoryError)):
            log.error("IBM REST call %s %s failed", method, path, exc_info=exc)
        err = ibm_errors.from_exception(exc, qmgr=qmgr)
    response = json_response(err.to_body(), err.status)
    response.headers.update(headers)
    return response


def response_for(exc: Exception, method: str, path: str) -> Response:
    """The error response of any exception a request raised: the one mapping from failures to
    the error body of docs/api.md §2, used by FastAPI's handlers and by the hot path. On IBM's
    ``/ibmmq/`` paths every failure answers in IBM's error body instead."""
    if path.startswith(IBM_PREFIX):
        return ibm_response_for(exc, method, path)
    if isinstance(exc, MQError):
        return error_response(exc)
    if isinstance(exc, RequestValidationError):
        return error_response(validation_error(exc, path))
    if isinstance(exc, StarletteHTTPException):
        reason = MQRC.UNKNOWN_OBJECT_NAME if exc.status_code == 404 else MQRC.OPTIONS_ERROR
        return json_response(MQError(reason, f"{method} {path}: {exc.detail}").to_body(), exc.status_code)
    if isinstance(exc, CFClientError):
        return error_response(MQError(MQRC.CF_NOT_AVAILABLE, f"the coupling facility did not answer: {exc}"))
    if isinstance(exc, RepositoryError):
        log.warning("repository error: %s", exc)
        return error_response(MQError(MQRC.DB2_NOT_AVAILABLE,
                                      f"the shared repository did not answer: {type(exc).__name__}"))
    log.error("unexpected error", exc_info=exc)
    return error_response(MQError(MQRC.UNEXPECTED_ERROR, f"unexpected error: {type(exc).__name__}"))


def register_error_handlers(app: FastAPI) -> None:
    """Every failure leaves as the error body of docs/api.md §2, never as a framework page."""

    async def handler(request: Request, exc: Exception) -> Response:
        return response_for(exc, request.method, request.url.path)

    for kind in (MQError, RequestValidationError, StarletteHTTPException, CFClientError, RepositoryError, Exception):
        app.add_exception_handler(kind, handler)
