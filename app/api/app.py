"""``create_app()``: one FastAPI application per queue manager, with a lifespan that owns the
Redis client, the repository engine and the queue manager - the composition root, which also
gives the queue manager its command server (app/cmdserver sits above app/qmgr)."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from app.api import routes_admin, routes_console, routes_ibm, routes_mqi, routes_pubsub, routes_qmgr, session
from app.api.auth import AuthenticationMiddleware
from app.api.docs import add_docs
from app.api.errors import register_error_handlers
from app.api.hotpath import HotPath, QueueManagerApp
from app.api.limits import BodyLimit
from app.cf.pageset import EmbeddedPageSet, pageset_folder
from app.cf.redisconn import make_redis
from app.cmdserver.server import CommandServer
from app.core.clock import Clock
from app.qmgr.qmgr import QueueManager
from app.reports import routes as routes_reports
from app.repository.db import make_engine
from app.repository.store import Repository
from app.settings import Settings


def create_app(settings: Settings, clock: Clock | None = None) -> FastAPI:
    """The REST API of one queue manager. Start-up checks happen before the app is built
    (``app.startup.check_dependencies``) so that ``qsg serve`` can refuse with one clear line."""

    @asynccontextmanager
    async def lifespan(app: QueueManagerApp) -> AsyncIterator[None]:
        # The page set first: its own server, started here (in this thread, which it ends with).
        embedded = None
        pageset_url = settings.pageset_url
        if not pageset_url:
            embedded = EmbeddedPageSet(pageset_folder(settings.mqlog_dir, settings.qsg, settings.qmgr),
                                       fsync=settings.pageset_fsync)
            pageset_url = await embedded.start()
        engine = make_engine(settings.database_url)
        redis = make_redis(settings.redis_url, socket_timeout_s=settings.cf_timeout_s)
        pageset = make_redis(pageset_url, socket_timeout_s=settings.cf_timeout_s)
        qm = QueueManager(settings, Repository(engine, settings.qsg), redis, clock, pageset=pageset,
                          command_server=CommandServer)
        try:
            await qm.start()
        except BaseException:
            await redis.aclose()
            await pageset.aclose()
            if embedded is not None:
                embedded.stop()
            raise
        # What start-up made lives as long as the process: out of the collector's full passes,
        # which would otherwise walk it all whenever a large request allocates (a pause of the loop).
        gc.freeze()
        app.state.qm = app.qm = qm
        try:
            yield
        finally:
            await qm.stop()
            await redis.aclose()
            await pageset.aclose()
            engine.dispose()
            if embedded is not None:
                embedded.stop()

    app = QueueManagerApp(
        title=f"IBM MQ for z/OS QSG emulator - queue manager {settings.qmgr}",
        version="1",
        description="MQI verbs, MQSC administration and queue manager status of one queue manager "
                    "of a queue-sharing group. Errors carry IBM MQ completion and reason codes.",
        lifespan=lifespan,
        docs_url=None, redoc_url=None,  # /docs is served offline (app/api/docs.py)
        # No OpenTelemetry here: FastAPI would look for a provider on every request.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    register_error_handlers(app)
    add_docs(app)
    app.add_middleware(AuthenticationMiddleware)  # QSG_AUTH (on unless the operator says off)
    # outermost: a body over its limit is refused before anything (authentication included) runs
    app.add_middleware(BodyLimit, message_bytes=settings.max_message_body_bytes, other_bytes=settings.max_body_bytes)
    # the hot verbs: the same limit and authentication, then straight to their endpoints
    app.hot_stack = BodyLimit(AuthenticationMiddleware(HotPath(app.router)),
                              message_bytes=settings.max_message_body_bytes, other_bytes=settings.max_body_bytes)
    app.state.reports_dir = settings.reports_dir  # what /reports serves (the analytics output)
    app.include_router(routes_qmgr.router)
    app.include_router(routes_qmgr.operations)  # GET /metrics
    app.include_router(routes_mqi.router)
    app.include_router(routes_pubsub.router)
    app.include_router(routes_admin.router)
    app.include_router(routes_reports.router)
    app.include_router(routes_console.router)  # /console: the live console
    app.include_router(routes_ibm.router)
    app.include_router(session.router)  # GET /v1/session: the REST calls as frames of one WebSocket
    return app
