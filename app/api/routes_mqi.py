"""MQI verbs over HTTP: connections, object handles, messages, attributes. Thin: parse, call, map."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Body, Query, Request
from fastapi.exceptions import RequestValidationError
from starlette.responses import Response

from app.api import wire
from app.api.body import TooManyValues, documented, parse_body, read_json, validate
from app.api.errors import json_response, validation_error
from app.api.routes_pubsub import open_topic
from app.api.schemas import (
    CloseRequest,
    ConnectRequest,
    GetBatchRequest,
    GetRequest,
    OpenRequest,
    Put1Request,
    PutBatchRequest,
    PutRequest,
    StatRequest,
)
from app.core.calls import MAX_BATCH, PutCall, PutOutcome, TruncatedMessageFailed, caller_gone
from app.core.errors import BatchError, MQError
from app.core.options import parse_object_type
from app.core.reasons import MQRC
from app.qmgr.connection import QmgrHandle

if TYPE_CHECKING:
    from app.qmgr.mqi import Mqi
    from app.qmgr.qmgr import QueueManager

router = APIRouter(prefix="/v1/connections", tags=["MQI"])

#: The most JSON values the body of one put, put1 or get may hold: an MQMD of a few dozen fields
#: and at most 100 properties need a few hundred; a body of millions (an md of a million keys)
#: is refused before it is parsed (as a malformed body).
MESSAGE_VALUES = 4096
#: The most JSON values a put-batch body may hold (read_json): 1000 messages of an MQMD with a
#: few dozen fields and some properties each. A body with more is refused before it is parsed.
PUT_BATCH_VALUES = 300_000


def _mqi(request: Request) -> Mqi:
    """The queue manager's MQI (``app.qm`` as the lifespan sets it; ``app.state.qm`` otherwise)."""
    app = request.scope["app"]
    qm: QueueManager = getattr(app, "qm", None) or app.state.qm
    return qm.mqi


@router.post("", status_code=201, summary="MQCONN")
async def connect(request: Request, body: ConnectRequest | None = None) -> Response:
    conn = await _mqi(request).connect(body.appl_name if body else None)
    return json_response({"hconn": conn.hconn, "qmgr": request.app.state.qm.name}, 201)


@router.delete("/{hconn}", summary="MQDISC: close handles, commit the unit of work")
async def disconnect(request: Request, hconn: str) -> Response:
    await _mqi(request).disconnect(hconn)
    return json_response({"completion_code": 0, "reason": 0})


@router.post("/{hconn}/commit", summary="MQCMIT")
async def commit(request: Request, hconn: str) -> Response:
    await _mqi(request).commit(hconn)
    return json_response({"completion_code": 0, "reason": 0})


@router.post("/{hconn}/backout", summary="MQBACK")
async def backout(request: Request, hconn: str) -> Response:
    await _mqi(request).backout(hconn)
    return json_response({"completion_code": 0, "reason": 0})


@router.post("/{hconn}/objects", status_code=201, summary="MQOPEN")
async def open_object(request: Request, hconn: str, body: OpenRequest) -> Response:
    kind = parse_object_type(body.object_type)
    if kind == "TOPIC":
        return await open_topic(request, hconn, body)  # app/api/routes_pubsub.py
    handle = await _mqi(request).open(hconn, body.object_name, body.object_qmgr, body.options,
                                      body.dynamic_q_name, body.alternate_user_id, kind)
    if isinstance(handle, QmgrHandle):  # MQOT_Q_MGR: the queue manager object; or MQOT_NAMELIST
        name = request.app.state.qm.name
        return json_response({"hobj": handle.hobj, "object_type": "NAMELIST" if handle.namelist else "Q_MGR",
                              "object_name": handle.namelist or name, "resolved_q_name": "",
                              "resolved_qmgr": name, "qsgdisp": "QMGR"}, 201)
    resolved = handle.resolved
    return json_response({"hobj": handle.hobj, "object_name": resolved.opened.name,
                          "resolved_q_name": resolved.base.name,
                          "resolved_qmgr": request.app.state.qm.qsg if resolved.base.qsgdisp == "SHARED"
                          else request.app.state.qm.name,
                          "qsgdisp": resolved.base.qsgdisp}, 201)


@router.delete("/{hconn}/objects/{hobj}", summary="MQCLOSE (optional body: close options)",
               openapi_extra=documented(CloseRequest, required=False))
async def close_object(request: Request, hconn: str, hobj: str) -> Response:
    body = await parse_body(request, CloseRequest)  # no body: MQCO_NONE
    await _mqi(request).close(hconn, hobj, body.options)
    return json_response({"completion_code": 0, "reason": 0})


def _put_response(outcome: PutOutcome) -> Response:
    """201 for a put that completed; a warning (completion code 1, e.g. MQRC 2049) is a 200
    whose body carries completion_code and reason (docs/api.md §2)."""
    return json_response(wire.put_response(outcome), 200 if outcome.warnings else 201)


@router.post("/{hconn}/objects/{hobj}/put", status_code=201, summary="MQPUT", openapi_extra=documented(PutRequest))
async def put(request: Request, hconn: str, hobj: str) -> Response:
    _mqi(request).connection(hconn)  # a made-up hconn is refused before its body is parsed
    body = await parse_body(request, PutRequest, budget=MESSAGE_VALUES)
    return _put_response(await _mqi(request).put(hconn, hobj, wire.put_call(body)))


@router.post("/{hconn}/put1", status_code=201, summary="MQPUT1", openapi_extra=documented(Put1Request))
async def put1(request: Request, hconn: str) -> Response:
    _mqi(request).connection(hconn)
    body = await parse_body(request, Put1Request, budget=MESSAGE_VALUES)
    if parse_object_type(body.object_type) == "TOPIC":
        return _put_response(await _mqi(request).put1_topic(hconn, body.object_name, body.object_string,
                                                             wire.put_call(body)))
    return _put_response(await _mqi(request).put1(hconn, body.object_name, body.object_qmgr, wire.put_call(body),
                                                  body.alternate_user_id))


@router.post("/{hconn}/objects/{hobj}/get", summary="MQGET (destructive or browse)",
             openapi_extra=documented(GetRequest, required=False))
async def get(request: Request, hconn: str, hobj: str) -> Response:
    _mqi(request).connection(hconn)
    body = await parse_body(request, GetRequest, budget=MESSAGE_VALUES)
    caller_gone.set(request.is_disconnected)  # (this request's own context)
    try:
        got = await _mqi(request).get(hconn, hobj, wire.get_call(body))
    except TruncatedMessageFailed as exc:  # a warning: 200, the message stays (docs/api.md §2)
        return json_response(wire.truncation_failed_response(exc))
    return json_response(wire.get_response(got))



async def _put_batch_calls(request: Request, hconn: str, hobj: str) -> list[PutCall]:
    """The put-batch's messages, every one checked before any is put: a failure here put
    nothing, so its error body carries count 0 (docs/api.md §12). Cheap checks first: the
    handles, then the size of the body (values counted without parsing it), then the number of
    messages, and only then each message (docs/howto/security.md, Limits: a huge batch to a
    made-up hconn must not hold the event loop)."""
    try:
        _mqi(request).check_handle(hconn, hobj)
        try:
            data = await read_json(request, budget=PUT_BATCH_VALUES)
        except TooManyValues as exc:
            raise MQError(MQRC.PMO_ERROR, f"a put-batch takes 1 to {MAX_BATCH} messages: {exc}") from None
        messages = data.get("messages") if isinstance(data, dict) else None
        if isinstance(messages, list) and not 1 <= len(messages) <= MAX_BATCH:
            raise MQError(MQRC.PMO_ERROR, f"a put-batch takes 1 to {MAX_BATCH} messages, not {len(messages)}")
        return wire.put_batch_calls(validate(data, PutBatchRequest))
    except RequestValidationError as exc:
        raise BatchError(validation_error(exc, request.url.path), 0) from None
    except MQError as exc:
        raise BatchError.of(exc, 0) from None


@router.post("/{hconn}/objects/{hobj}/put-batch", status_code=201, summary="put-batch: MQPUT of 1 to 1000 messages",
             openapi_extra=documented(PutBatchRequest))
async def put_batch(request: Request, hconn: str, hobj: str) -> Response:
    outcomes = await _mqi(request).put_batch(hconn, hobj, await _put_batch_calls(request, hconn, hobj))
    return json_response(wire.put_batch_response(outcomes), 200 if any(o.warnings for o in outcomes) else 201)


@router.post("/{hconn}/objects/{hobj}/get-batch", summary="get-batch: MQGET of up to max_messages messages",
             openapi_extra=documented(GetBatchRequest, required=False))
async def get_batch(request: Request, hconn: str, hobj: str) -> Response:
    _mqi(request).check_handle(hconn, hobj)  # cheap checks first: a made-up handle costs no parsing
    call, max_messages = wire.get_batch_call(await parse_body(request, GetBatchRequest))
    caller_gone.set(request.is_disconnected)
    try:
        got = await _mqi(request).get_batch(hconn, hobj, call, max_messages)
    except TruncatedMessageFailed as exc:  # the first message too big: MQGET's warning, no message got
        return json_response({"messages": [], **wire.truncation_failed_response(exc)})
    return json_response(wire.get_batch_response(got))


@router.get("/{hconn}/objects/{hobj}/attributes", summary="MQINQ (all attributes, or ?selectors=CURDEPTH,MAXDEPTH)")
async def inquire(request: Request, hconn: str, hobj: str, selectors: str | None = Query(
        None, description="Comma-separated selectors: MQSC names, MQIA_/MQCA_ names or their numbers",
        examples=["CURDEPTH,MQIA_MAX_Q_DEPTH,2016"])) -> Response:
    return json_response(await _mqi(request).inquire(hconn, hobj, selectors))


@router.patch("/{hconn}/objects/{hobj}/attributes", summary="MQSET")
async def set_attributes(request: Request, hconn: str, hobj: str, body: dict[str, Any] = Body(
        ..., examples=[{"PUT": "DISABLED"}, {"TRIGGER": True, "TRIGTYPE": "FIRST"}])) -> Response:
    return json_response(await _mqi(request).set(hconn, hobj, body))


@router.post("/{hconn}/stat", summary="MQSTAT: status of asynchronous puts (MQSTS)")
async def stat(request: Request, hconn: str, body: StatRequest) -> Response:
    return json_response(await _mqi(request).stat(hconn, body.type))


# Served by app.api.hotpath without FastAPI's router (the routes above still document them):
# the verbs on a handle (.../objects/{hobj}/<verb>) and on a connection (.../{hconn}/<verb>).
HOT_VERBS = {"put": put, "get": get, "put-batch": put_batch, "get-batch": get_batch}
HOT_CONNECTION_VERBS = {"put1": put1, "commit": commit, "backout": backout}
