"""Queue manager, health and readiness endpoints."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from app.api.errors import error_response, json_response
from app.core.errors import MQError
from app.core.reasons import MQRC
from app.core.rights import current_principal
from app.qmgr.metrics import CONTENT_TYPE

router = APIRouter(prefix="/v1", tags=["queue manager"])


@router.get("/qmgr", summary="This queue manager: name, QSG, status, QMGR attributes and the emulator's own "
                              "state (IGQ agent, connection to the coupling facility)")
async def get_qmgr(request: Request) -> Response:
    qm = request.app.state.qm
    try:
        members = await qm.group_info()
    except MQError:
        # the coupling facility holds the member list: while it cannot be reached this QM's own
        # state still answers from memory (CFCONN LOST, the IGQ agent in RETRY)
        members = []
    return json_response({**qm.info(), "members": members})


@router.get("/health", summary="200 while the process runs")
async def health(request: Request) -> Response:
    return json_response({"status": "UP", "qmgr": request.app.state.qm.name})


@router.get("/ready", summary="200 while the coupling facility and the repository answer, else 503")
async def ready(request: Request) -> Response:
    qm = request.app.state.qm
    try:
        await qm.cf.ping()
    except Exception as exc:  # any failure to reach the coupling facility means not ready
        return error_response(MQError(MQRC.CF_NOT_AVAILABLE, f"the coupling facility does not answer: {exc}"))
    try:
        await qm.db(qm.repo.qmgr_names)
    except Exception as exc:
        return error_response(MQError(MQRC.DB2_NOT_AVAILABLE,
                                      f"the shared repository does not answer: {type(exc).__name__}"))
    if qm.status != "RUNNING":
        return error_response(MQError(MQRC.Q_MGR_NOT_AVAILABLE, f"queue manager is {qm.status.lower()}"))
    return json_response({"status": "READY", "qmgr": qm.name})


operations = APIRouter(tags=["operations"])


@operations.get("/metrics", summary="Prometheus metrics of this queue manager (text exposition format)")
async def metrics(request: Request) -> Response:
    """QSG_METRICS_ACCESS says who sees what (with authentication on): ``user`` every
    authenticated caller everything, ``summary`` per-queue series (queue names and depths) only
    for MQSC administrators, ``admin`` nothing for the others (403, 2035)."""
    qm = request.app.state.qm
    access = qm.settings.metrics_access
    principal = current_principal.get()
    per_queue = True
    if access != "user" and principal is not None:
        may = "ADMIN" in qm.security.rights(principal, "QMGR", qm.name) or principal.admin
        if not may and access == "admin":
            return error_response(MQError(MQRC.NOT_AUTHORIZED, f"user '{principal.name}' may not read /metrics "
                                                               f"(QSG_METRICS_ACCESS=admin)"))
        per_queue = may
    return Response(await qm.metrics.render(per_queue=per_queue), media_type=CONTENT_TYPE)
