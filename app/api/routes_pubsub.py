"""Publish/subscribe over HTTP: MQSUB and MQCLOSE of a subscription, and MQOPEN of a topic
(``object_type`` TOPIC on ``POST .../objects``, routed here by app/api/routes_mqi.py). Thin:
parse, call, map; the rules are in app/qmgr/pubsub.py and app/core/topics.py."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from app.api.body import documented, parse_body
from app.api.errors import json_response
from app.api.schemas import OpenRequest, SubCloseRequest, SubscribeRequest

router = APIRouter(prefix="/v1/connections", tags=["Publish/subscribe"])

async def open_topic(request: Request, hconn: str, body: OpenRequest) -> Response:
    """MQOPEN of a topic for output: 201 with the hobj to publish on and the full topic string."""
    handle = await request.app.state.qm.mqi.open_topic(hconn, body.object_name, body.object_string, body.options)
    return json_response({"hobj": handle.hobj, "object_type": "TOPIC", "object_name": handle.topic_object,
                          "object_string": handle.topic_string,
                          "resolved_qmgr": request.app.state.qm.name}, 201)


@router.post("/{hconn}/subscriptions", status_code=201, summary="MQSUB",
             openapi_extra=documented(SubscribeRequest))
async def subscribe(request: Request, hconn: str) -> Response:
    body = await parse_body(request, SubscribeRequest)
    qm = request.app.state.qm
    conn = qm.mqi.connection(hconn)
    with qm.mqi._in_call(conn):
        done = await qm.pubsub.subscribe(conn, object_name=body.object_name, object_string=body.object_string,
                                         sub_name=body.sub_name, options=body.options, hobj=body.hobj,
                                         sub_correl_id=body.sub_correl_id)
    sub = done.sub
    out = {"hsub": done.hsub, "sub_name": sub.sub_name, "subid": sub.subid, "object_string": sub.topic_string,
           "durable": sub.durable, "managed": sub.managed, "resumed": done.resumed,
           "sub_correl_id": sub.correl_id, "dest": sub.dest, "dest_qmgr": sub.dest_qmgr or qm.name}
    if done.managed is not None:
        out["hobj"] = done.managed.hobj
        out["object_name"] = done.managed.resolved.base.name
    return json_response(out, 201)


@router.delete("/{hconn}/subscriptions/{hsub}", summary="MQCLOSE of a subscription (KEEP_SUB / REMOVE_SUB)",
               openapi_extra=documented(SubCloseRequest, required=False))
async def close_subscription(request: Request, hconn: str, hsub: str) -> Response:
    body = await parse_body(request, SubCloseRequest)
    qm = request.app.state.qm
    conn = qm.mqi.connection(hconn)
    with qm.mqi._in_call(conn):
        await qm.pubsub.close_subscription(conn, hsub, body.options)
    return json_response({"completion_code": 0, "reason": 0})
