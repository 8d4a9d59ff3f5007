"""qsg mqsc: MQSC commands from a file or standard input against a queue manager, like runmqsc."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click
import httpx

from app.cli.options import DEFAULTS, opt, why

if TYPE_CHECKING:
    pass


@click.command()
@opt("url", "A queue manager's REST URL (http:// or https://)", )
@click.option("--json", "as_json", is_flag=True, help="Print the raw JSON responses")
@click.option("--api-key", envvar="QSG_API_KEY", show_envvar=True, default=None,
              help="API key of a user with the ADMIN right (qsg user key NAME)")
@opt("ca-file", "CA bundle to verify an https:// queue manager with (qsg up --tls prints its own)")
@click.argument("script_file", required=False, type=click.File("r"))
def mqsc(url: str | None, as_json: bool, api_key: str | None, ca_file: str | None, script_file) -> None:
    """Run MQSC commands from a file or standard input against a queue manager, like runmqsc.

    Exit status: 0 when every command completed, 10 when some failed, 20 when the queue
    manager could not be reached.
    """
    from app.client.core import PYIFError, ssl_context
    from app.mqsc.text import format_result

    url = url or f"http://127.0.0.1:{DEFAULTS['port'].default}"
    try:
        verify = ssl_context(ca_file)
    except PYIFError as exc:
        raise click.UsageError(str(exc)) from None
    script = (script_file or sys.stdin).read()
    try:
        response = httpx.post(f"{url.rstrip('/')}/v1/admin/mqsc", json={"script": script}, timeout=120,
                              headers={"X-API-Key": api_key} if api_key else None, verify=verify)
    except httpx.HTTPError as exc:
        click.echo(f"qsg mqsc: cannot reach {url}: {why(exc)}", err=True)
        sys.exit(20)
    body = response.json()
    if "error" in body:
        click.echo(f"qsg mqsc: {body['error'].get('reason_name')}: {body['error'].get('message')}", err=True)
        sys.exit(20)
    if as_json:
        import json
        click.echo(json.dumps(body, indent=2))
    else:
        for result in body["results"]:
            click.echo(format_result(result))
    sys.exit(10 if any(r["completion_code"] == 2 for r in body["results"]) else 0)
