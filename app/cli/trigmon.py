"""qsg trigmon: a trigger monitor serving one initiation queue."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click
import httpx

from app.cli.options import DEFAULTS, credentials_from_flags, opt, why
from app.logsetup import configure_logging

if TYPE_CHECKING:
    pass


@click.command()
@opt("url", "The queue manager's REST URL")
@click.option("--initq", envvar="QSG_INITQ", show_envvar=True, required=True, help="The initiation queue to serve")
@click.option("--deadq", envvar="QSG_DEADQ", show_envvar=True, default=None,
              help="Dead-letter queue (default: the queue manager's DEADQ)")
@click.option("--timeout", "timeout_s", default=10.0, show_default=True, help="Seconds for an HTTP application")
@opt("user", "User to authenticate as; the password comes from QSG_PASSWORD, --password-stdin or a prompt")
@click.option("--password-stdin", is_flag=True, help="Read the password of --user from standard input")
@click.option("--api-key", envvar="QSG_API_KEY", show_envvar=True, default=None,
              help="API key to authenticate with (qsg user key NAME), instead of --user")
@opt("ca-file", "CA bundle to verify an https:// queue manager with")
def trigmon(url: str | None, initq: str, deadq: str | None, timeout_s: float, user: str | None,
            password_stdin: bool, api_key: str | None, ca_file: str | None) -> None:
    """A trigger monitor: start the applications that trigger messages name.

    With authentication on, its user needs CONNECT, GET on the initiation queue and PUT on the
    dead-letter queue.
    """

    from app.client.core import PYIFError
    from app.trigmon import TriggerMonitor

    credentials = credentials_from_flags(user, password_stdin, api_key)
    configure_logging()
    url = url or f"http://127.0.0.1:{DEFAULTS['port'].default}"
    try:
        monitor = TriggerMonitor(url, initq, deadq=deadq, timeout_s=timeout_s, credentials=credentials,
                                 ca_file=ca_file)
    except (RuntimeError, httpx.HTTPError, PYIFError) as exc:
        click.echo(f"qsg trigmon: cannot serve {initq} on {url}: {why(exc)}", err=True)
        sys.exit(2)
    click.echo(f"trigger monitor serving {initq} on {url}; Ctrl-C stops it")
    try:
        monitor.run()
    except KeyboardInterrupt:
        pass
    finally:
        monitor.close()
