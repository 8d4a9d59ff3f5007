"""MQSC administration endpoint."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from app.api.errors import json_response
from app.api.schemas import MqscRequest
from app.mqsc.executor import CREDENTIAL_HEADERS, run_script

router = APIRouter(prefix="/v1/admin", tags=["administration"])


@router.post("/mqsc", summary="Run MQSC commands; one result per command")
async def mqsc(request: Request, body: MqscRequest) -> Response:
    # the caller's credentials go with commands that CMDSCOPE runs on other queue managers
    credentials = {k: v for k, v in request.headers.items() if k.lower() in CREDENTIAL_HEADERS}
    return json_response({"results": await run_script(request.app.state.qm, body.script, credentials)})
