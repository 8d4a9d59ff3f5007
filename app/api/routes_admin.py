"""MQSC administration endpoint."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from app.api.errors import json_response
from app.api.schemas import MqscRequest
from app.mqsc.executor import run_script

router = APIRouter(prefix="/v1/admin", tags=["administration"])


@router.post("/mqsc", summary="Run MQSC commands; one result per command")
async def mqsc(request: Request, body: MqscRequest) -> Response:
    return json_response({"results": await run_script(request.app.state.qm, body.script)})
