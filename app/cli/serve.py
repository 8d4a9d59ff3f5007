"""qsg serve: one queue manager (what each container runs)."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

import click

from app.cli.options import opt, settings_of
from app.logsetup import configure_logging

if TYPE_CHECKING:
    pass


@click.command()
@opt("qmgr", "Queue manager name, e.g. QM1")
@opt("qsg", "Queue-sharing group name, e.g. QSG1")
@opt("host", "Address to listen on")
@opt("port", "Port to listen on", type=int)
@opt("redis-url", "The coupling facility, e.g. redis://127.0.0.1:6379/0")
@opt("database-url", "The shared repository, e.g. sqlite:///qsg.db or postgresql://...")
@opt("activity-dir", "Folder for activity logs")
@opt("idle-timeout-s", "Seconds before an idle connection ends (its unit of work is backed out)", type=float)
@opt("log-level", "Log level (debug, info, warning)")
@opt("auth", "Authentication and authorization: on (default) or off", type=click.Choice(["on", "off"]))
@opt("tls-cert", "Serve HTTPS with this PEM certificate (chain); needs --tls-key")
@opt("tls-key", "The PEM private key of --tls-cert")
@opt("tls-ca", "CA bundle to verify the other queue managers with when forwarding to them over https "
                "[default: system trust, plus --tls-cert when self-signed]")
@opt("advertise-url", "The URL the other queue managers reach this one at, e.g. http://qm1:9441 "
                       "[default: from --host and --port; this host's name when bound to 0.0.0.0]")
@opt("log-format", "Log records as text or json lines", type=click.Choice(["text", "json"]))
def serve(**given: Any) -> None:
    """Run one queue manager (what each container runs).

    With --tls-cert and --tls-key it serves HTTPS and gives the group an https:// URL.
    """
    import uvicorn

    from app.api.app import create_app
    from app.api.keepalive import AnsweringHttpToolsProtocol
    from app.api.serverlimits import bounded_protocol
    from app.startup import StartupError, check_dependencies, check_tls

    settings = settings_of(**given)
    configure_logging(settings.log_level, settings.log_format)
    try:
        check_tls(settings)
        check_dependencies(settings)
    except StartupError as exc:
        click.echo(f"qsg serve: {settings.qmgr}: {exc}", err=True)
        sys.exit(2)
    if settings.auth == "off":
        # stderr is the QM's log in a container too: one banner, not also a log record
        banner = (f"WARNING: {settings.qmgr}: AUTHENTICATION IS OFF (QSG_AUTH=off): every caller may connect, "
                  "put, get and run MQSC without credentials. Use only on a trusted machine.")
        if settings.log_format == "json":  # every line of a JSON log is a record
            logging.getLogger("app.cli").warning(banner)
        else:
            click.echo("!" * 100 + "\n" + banner + "\n" + "!" * 100, err=True)
    app = create_app(settings)

    class QueueManagerServer(uvicorn.Server):
        """Quiesce the queue manager the moment SIGTERM/SIGINT arrives, before uvicorn lets the
        in-flight calls finish: waiting gets and FAIL_IF_QUIESCING calls end with 2161."""

        def handle_exit(self, sig: int, frame: Any) -> None:
            qm = getattr(app.state, "qm", None)
            if qm is not None:
                qm.begin_quiesce()
            super().handle_exit(sig, frame)

    # log_config=None: uvicorn keeps the one set-up (app/logsetup.py) instead of its own
    # http: uvicorn's httptools protocol that answers a request sent while the process was paused
    # (app/api/keepalive.py) instead of closing the kept-alive connection under it
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level=settings.log_level,
                            log_config=None, timeout_graceful_shutdown=10, ws_max_size=settings.max_frame_bytes,
                            timeout_keep_alive=settings.keep_alive_s,
                            # X-Forwarded-For only from the entry points named (uvicorn's default
                            # trusts any local process, which could then pose as any address)
                            proxy_headers=bool(settings.trusted_proxies.strip()),
                            forwarded_allow_ips=settings.trusted_proxies.strip() or None,
                            http=bounded_protocol(AnsweringHttpToolsProtocol, settings.header_timeout_s,
                                                  settings.max_connections, settings.body_timeout_s,
                                                  settings.body_min_rate),
                            ssl_certfile=settings.tls_cert or None, ssl_keyfile=settings.tls_key or None)
    QueueManagerServer(config).run()
