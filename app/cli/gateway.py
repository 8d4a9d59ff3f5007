"""qsg gateway: one entry point for the group, spreading connections over its queue managers."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from app.cli.options import opt, settings_of
from app.logsetup import configure_logging

if TYPE_CHECKING:
    pass


@click.command()
@opt("host", "Address to listen on")
@click.option("--port", envvar="QSG_GATEWAY_PORT", show_envvar=True, default=9440, show_default=True, type=int,
              help="Port of the entry point")
@click.option("--upstreams", envvar="QSG_UPSTREAMS", show_envvar=True, required=True,
              help="The queue managers: QM1=http://qm1:9441,QM2=http://qm2:9441 (or https://)")
@opt("tls-cert", "Serve HTTPS with this PEM certificate (chain); needs --tls-key")
@opt("tls-key", "The PEM private key of --tls-cert")
@opt("tls-ca", "CA bundle to verify https upstreams with [default: system trust, plus --tls-cert when "
                "self-signed]")
def gateway(host: str | None, port: int, upstreams: str, tls_cert: str | None, tls_key: str | None,
            tls_ca: str | None) -> None:
    """One entry point for the group: connections spread over the QMs, calls follow their hconn."""
    import uvicorn

    from app.api.keepalive import AnsweringHttpToolsProtocol
    from app.api.limits import BodyLimit
    from app.api.serverlimits import bounded_protocol
    from app.gateway import create_gateway, parse_upstreams
    from app.tls import TlsError, check_ca_file, check_server_files, peer_ssl_context

    try:
        targets = parse_upstreams(upstreams)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        check_server_files(tls_cert or "", tls_key or "")
        if tls_ca:
            check_ca_file(tls_ca)
        verify = peer_ssl_context(tls_ca or "", tls_cert or "")
    except TlsError as exc:
        click.echo(f"qsg gateway: {exc}", err=True)
        sys.exit(2)
    configure_logging()
    # the queue managers' limits (docs/howto/security.md, Limits) hold at the entry point too
    limits = settings_of()
    app = BodyLimit(create_gateway(targets, verify=verify), message_bytes=limits.max_message_body_bytes,
                    other_bytes=limits.max_body_bytes)
    uvicorn.run(app, host=host or "127.0.0.1", port=port, log_level="warning",
                http=bounded_protocol(AnsweringHttpToolsProtocol, limits.header_timeout_s, limits.max_connections,
                                      limits.body_timeout_s, limits.body_min_rate),
                timeout_keep_alive=limits.keep_alive_s, log_config=None, proxy_headers=False,
                ssl_certfile=tls_cert or None,
                ssl_keyfile=tls_key or None)
