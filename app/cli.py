"""The ``qsg`` command line (docs/api.md §11). Every flag also reads ``QSG_<FLAG>``."""

from __future__ import annotations

import logging
import sys
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import httpx

from app.logsetup import configure_logging
from app.settings import Settings

if TYPE_CHECKING:
    from app.client.core import Credentials
    from app.repository.security import SecurityStore

DEFAULTS = Settings.model_fields


def _opt(name: str, help_text: str, **kwargs: Any):
    """An option whose environment variable is QSG_<NAME> (docs/api.md §11: each flag reads one)."""
    env = "QSG_" + name.upper().replace("-", "_")
    return click.option(f"--{name}", envvar=env, show_envvar=True, default=None, help=help_text, **kwargs)


def _settings(**given: Any) -> Settings:
    try:
        return Settings(**{k: v for k, v in given.items() if v is not None})
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """An IBM MQ for z/OS queue-sharing group, emulated as REST microservices."""


@main.command()
@_opt("qmgr", "Queue manager name, e.g. QM1")
@_opt("qsg", "Queue-sharing group name, e.g. QSG1")
@_opt("host", "Address to listen on")
@_opt("port", "Port to listen on", type=int)
@_opt("redis-url", "The coupling facility, e.g. redis://127.0.0.1:6379/0")
@_opt("database-url", "The shared repository, e.g. sqlite:///qsg.db or postgresql://...")
@_opt("activity-dir", "Folder for activity logs")
@_opt("idle-timeout-s", "Seconds before an idle connection ends (its unit of work is backed out)", type=float)
@_opt("log-level", "Log level (debug, info, warning)")
@_opt("auth", "Authentication and authorization: on (default) or off", type=click.Choice(["on", "off"]))
@_opt("tls-cert", "Serve HTTPS with this PEM certificate (chain); needs --tls-key")
@_opt("tls-key", "The PEM private key of --tls-cert")
@_opt("tls-ca", "CA bundle to verify the other queue managers with when forwarding to them over https "
                "[default: system trust, plus --tls-cert when self-signed]")
@_opt("advertise-url", "The URL the other queue managers reach this one at, e.g. http://qm1:9441 "
                       "[default: from --host and --port; this host's name when bound to 0.0.0.0]")
@_opt("log-format", "Log records as text or json lines", type=click.Choice(["text", "json"]))
def serve(**given: Any) -> None:
    """Run one queue manager (what each container runs).

    With --tls-cert and --tls-key it serves HTTPS and gives the group an https:// URL.
    """
    import uvicorn

    from app.api.app import create_app
    from app.api.keepalive import AnsweringHttpToolsProtocol
    from app.api.serverlimits import bounded_protocol
    from app.startup import StartupError, check_dependencies, check_tls

    settings = _settings(**given)
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
                            http=bounded_protocol(AnsweringHttpToolsProtocol, settings.header_timeout_s,
                                                  settings.max_connections, settings.body_timeout_s,
                                                  settings.body_min_rate),
                            ssl_certfile=settings.tls_cert or None, ssl_keyfile=settings.tls_key or None)
    QueueManagerServer(config).run()


@main.command()
@_opt("host", "Address to listen on")
@click.option("--port", envvar="QSG_GATEWAY_PORT", show_envvar=True, default=9440, show_default=True, type=int,
              help="Port of the entry point")
@click.option("--upstreams", envvar="QSG_UPSTREAMS", show_envvar=True, required=True,
              help="The queue managers: QM1=http://qm1:9441,QM2=http://qm2:9441 (or https://)")
@_opt("tls-cert", "Serve HTTPS with this PEM certificate (chain); needs --tls-key")
@_opt("tls-key", "The PEM private key of --tls-cert")
@_opt("tls-ca", "CA bundle to verify https upstreams with [default: system trust, plus --tls-cert when "
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
    limits = _settings()
    app = BodyLimit(create_gateway(targets, verify=verify), message_bytes=limits.max_message_body_bytes,
                    other_bytes=limits.max_body_bytes)
    uvicorn.run(app, host=host or "127.0.0.1", port=port, log_level="warning",
                http=bounded_protocol(AnsweringHttpToolsProtocol, limits.header_timeout_s, limits.max_connections,
                                      limits.body_timeout_s, limits.body_min_rate),
                timeout_keep_alive=limits.keep_alive_s, log_config=None, ssl_certfile=tls_cert or None,
                ssl_keyfile=tls_key or None)


def _credentials(user: str | None, password_stdin: bool, api_key: str | None) -> Credentials | None:
    """Credentials of a command that calls a queue manager: ``--user`` with the password from
    QSG_PASSWORD, standard input (``--password-stdin``) or a prompt - never the command line -
    or ``--api-key`` (QSG_API_KEY). None when neither is given."""
    import os

    from app.client.core import Credentials

    if user and api_key:
        raise click.UsageError("give --user or --api-key, not both")
    if api_key:
        return Credentials(api_key=api_key.strip())
    if not user:
        if password_stdin:
            raise click.UsageError("--password-stdin needs --user")
        return None
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    elif "QSG_PASSWORD" in os.environ:
        password = os.environ["QSG_PASSWORD"]
    elif sys.stdin.isatty():
        password = click.prompt(f"Password of {user}", hide_input=True)
    else:
        raise click.UsageError(f"no password for {user}: set QSG_PASSWORD or use --password-stdin")
    return Credentials(user=user, password=password)


@main.command()
@_opt("url", "The queue manager's REST URL")
@click.option("--initq", envvar="QSG_INITQ", show_envvar=True, required=True, help="The initiation queue to serve")
@click.option("--deadq", envvar="QSG_DEADQ", show_envvar=True, default=None,
              help="Dead-letter queue (default: the queue manager's DEADQ)")
@click.option("--timeout", "timeout_s", default=10.0, show_default=True, help="Seconds for an HTTP application")
@_opt("user", "User to authenticate as; the password comes from QSG_PASSWORD, --password-stdin or a prompt")
@click.option("--password-stdin", is_flag=True, help="Read the password of --user from standard input")
@click.option("--api-key", envvar="QSG_API_KEY", show_envvar=True, default=None,
              help="API key to authenticate with (qsg user key NAME), instead of --user")
@_opt("ca-file", "CA bundle to verify an https:// queue manager with")
def trigmon(url: str | None, initq: str, deadq: str | None, timeout_s: float, user: str | None,
            password_stdin: bool, api_key: str | None, ca_file: str | None) -> None:
    """A trigger monitor: start the applications that trigger messages name.

    With authentication on, its user needs CONNECT, GET on the initiation queue and PUT on the
    dead-letter queue.
    """

    from app.client.core import PYIFError
    from app.trigmon import TriggerMonitor

    credentials = _credentials(user, password_stdin, api_key)
    configure_logging()
    url = url or f"http://127.0.0.1:{DEFAULTS['port'].default}"
    try:
        monitor = TriggerMonitor(url, initq, deadq=deadq, timeout_s=timeout_s, credentials=credentials,
                                 ca_file=ca_file)
    except (RuntimeError, httpx.HTTPError, PYIFError) as exc:
        click.echo(f"qsg trigmon: cannot serve {initq} on {url}: {_why(exc)}", err=True)
        sys.exit(2)
    click.echo(f"trigger monitor serving {initq} on {url}; Ctrl-C stops it")
    try:
        monitor.run()
    except KeyboardInterrupt:
        pass
    finally:
        monitor.close()


@main.group()
def db() -> None:
    """The shared repository."""


@db.command("upgrade")
@_opt("database-url", "The shared repository URL")
def db_upgrade(database_url: str | None) -> None:
    """Bring the repository schema to the newest migration (a no-op when current)."""
    from app.repository.db import RepositoryError, upgrade

    url = _settings(database_url=database_url).database_url
    try:
        upgrade(url)
    except (RepositoryError, OSError) as exc:
        click.echo(f"qsg db upgrade: cannot upgrade {url}: {str(exc).splitlines()[0]}", err=True)
        sys.exit(2)
    click.echo(f"shared repository at {url} is current")


# ---- CF structure placement on a Redis Cluster (issue 19) -------------------------------------


@main.group("cf")
def cf_group() -> None:
    """The coupling facility (Redis)."""


@cf_group.command("place")
@click.argument("cfstruct")
@click.option("--node", required=True, help="host:port of the Redis Cluster master that should hold the structure")
@_opt("qsg", "Queue-sharing group name, e.g. QSG1")
def cf_place(cfstruct: str, node: str, qsg: str | None) -> None:
    """Print a HASHTAG that puts CF structure CFSTRUCT on master NODE, and the MQSC to use it.

    The slot map is read from NODE now (CLUSTER NODES): a later resharding or failover can move
    the slot elsewhere; DISPLAY CFSTATUS(name) shows the structure's node (CFNODE)."""
    import re

    from app.cf.placement import hashtag_on_node

    group = _settings(qsg=qsg).qsg
    if not re.fullmatch(r"[A-Z][A-Z0-9]{0,11}", cfstruct):
        raise click.UsageError(f"'{cfstruct}' is not a CF structure name (1-12 of A-Z 0-9, first A-Z)")
    host, _, port = node.rpartition(":")
    if not host or not port.isdigit():
        raise click.UsageError(f"--node {node}: give host:port")
    try:
        hashtag = hashtag_on_node(group, cfstruct, host, int(port))
    except LookupError as exc:
        click.echo(f"qsg cf place: {node}: {exc}", err=True)
        sys.exit(2)
    click.echo(hashtag)
    click.echo(f"  DEFINE CFSTRUCT({cfstruct}) ... HASHTAG('{hashtag}')   (or ALTER CFSTRUCT({cfstruct}) "
               f"HASHTAG('{hashtag}') while no queue is defined on it)", err=True)


# ---- users (issue 11) ---------------------------------------------------------------------


@main.group()
def user() -> None:
    """Users of the REST APIs, kept in the shared repository (works before any QM runs)."""


def _security_store(database_url: str | None) -> SecurityStore:
    from app.repository.db import make_engine, schema_status
    from app.repository.security import SecurityStore

    url = _settings(database_url=database_url).database_url
    engine = make_engine(url)
    try:
        current, head = schema_status(engine)
    except Exception as exc:  # unreachable database
        click.echo(f"qsg user: cannot reach {url}: {str(exc).splitlines()[0]}", err=True)
        sys.exit(2)
    if current != head:
        click.echo(f"qsg user: the repository at {url} is not current: run qsg db upgrade", err=True)
        sys.exit(2)
    return SecurityStore(engine)


def _read_password(stdin: bool) -> str:
    if stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    if not password:
        raise click.UsageError("the password must not be empty")
    return password


def _tell_queue_managers(store: SecurityStore, redis_url: str | None, change: str, *, required: bool) -> None:
    """After ``change`` to users or keys: every running queue manager of the repository's groups
    forgets its cached users and keys before this returns (the broadcast of REFRESH SECURITY).

    Without a Redis URL the queue managers are not told (they notice within QSG_AUTH_CACHE_S).
    When they cannot all be told, a ``required`` change (a revoked key, a deleted user, a
    replaced password) ends with exit status 3: it is in the repository, but not yet in force
    everywhere.
    """
    later = "they notice within QSG_AUTH_CACHE_S, or at once after the MQSC command REFRESH SECURITY"
    if redis_url is None:
        click.echo(f"note: {change}; the queue managers were not told (no --redis-url or QSG_REDIS_URL): {later}",
                   err=True)
        return
    import asyncio

    from app.cf.errors import MQ_OR_CF_FAILURES
    from app.cf.group import publish_from_outside
    from app.security.service import SECURITY_CHANGED

    timeout_s = _settings(redis_url=redis_url).broadcast_timeout_ms / 1000
    try:
        deliveries = asyncio.run(publish_from_outside(redis_url, store.qsgs(), SECURITY_CHANGED, timeout_s))
    except MQ_OR_CF_FAILURES as exc:
        click.echo(f"qsg user: {change} in the repository, but the queue managers could not be told "
                   f"(cannot reach {redis_url}: {exc}); {later}", err=True)
        if required:
            sys.exit(3)
        return
    missing = {qsg: d for qsg, d in deliveries.items() if not d.complete}
    for qsg, d in missing.items():
        click.echo(f"qsg user: {change}, but only {d.acknowledged} of {d.receivers} queue manager(s) of {qsg} "
                   f"confirmed it; {later}", err=True)
    if missing and required:
        sys.exit(3)
    told = sum(d.acknowledged for d in deliveries.values())
    click.echo(f"in force on the {told} running queue manager(s)")


_REDIS_HELP = "The coupling facility: running queue managers apply the change before the command returns"


@user.command("add")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the password from the first line of standard input")
@click.option("--no-password", is_flag=True, help="No password: the user authenticates with API keys only")
@click.option("--admin", is_flag=True, help="An administrator: every right on every object")
@click.option("--group", "groups", multiple=True, help="A group the user belongs to (repeatable)")
@click.option("--replace", is_flag=True, help="Replace an existing user's password, admin flag and groups")
@_opt("database-url", "The shared repository URL")
@_opt("redis-url", _REDIS_HELP)
def user_add(name: str, password_stdin: bool, no_password: bool, admin: bool, groups: tuple[str, ...],
             replace: bool, database_url: str | None, redis_url: str | None) -> None:
    """Create a user (case-sensitive NAME), or with --replace change its password and rights."""
    if not name or len(name) > 64 or any(c.isspace() or c == ":" for c in name):
        raise click.UsageError("NAME: 1-64 characters, no blanks or ':'")
    store = _security_store(database_url)
    password = None if no_password else _read_password(password_stdin)
    try:
        store.add_user(name, password, admin=admin, groups=list(groups), replace=replace)
    except ValueError as exc:
        click.echo(f"qsg user add: {exc} (use --replace)", err=True)
        sys.exit(1)
    click.echo(f"user {name} {'replaced' if replace else 'added'}" + (" (administrator)" if admin else "")
               + (f", groups {', '.join(sorted(set(groups)))}" if groups else ""))
    # a new user: a queue manager may remember that the name was unknown
    _tell_queue_managers(store, redis_url, f"user {name} {'replaced' if replace else 'added'}", required=replace)


@user.command("key")
@click.argument("name")
@_opt("database-url", "The shared repository URL")
def user_key(name: str, database_url: str | None) -> None:
    """Print a new API key for NAME (shown once: only its hash is kept)."""
    from app.repository.security import UserNotFound

    try:
        click.echo(_security_store(database_url).new_key(name))
    except UserNotFound:
        click.echo(f"qsg user key: no user {name}", err=True)
        sys.exit(1)


@user.command("revoke")
@click.argument("name")
@click.option("--key-id", default=None, help="Revoke only this key (the hex part after qsg_); default: all keys")
@_opt("database-url", "The shared repository URL")
@_opt("redis-url", _REDIS_HELP)
def user_revoke(name: str, key_id: str | None, database_url: str | None, redis_url: str | None) -> None:
    """Revoke API keys of NAME: with --redis-url (QSG_REDIS_URL) they stop working on every
    running queue manager before the command returns (exit status 3 when not every one
    confirmed it); without, within QSG_AUTH_CACHE_S or after REFRESH SECURITY."""
    store = _security_store(database_url)
    count = store.revoke_keys(name, key_id)
    click.echo(f"{count} key(s) of {name} revoked")
    if count:
        _tell_queue_managers(store, redis_url, f"{count} key(s) of {name} revoked", required=True)


@user.command("delete")
@click.argument("name")
@_opt("database-url", "The shared repository URL")
@_opt("redis-url", _REDIS_HELP)
def user_delete(name: str, database_url: str | None, redis_url: str | None) -> None:
    """Delete a user and its keys (in force at once with --redis-url, as for revoke)."""
    store = _security_store(database_url)
    if not store.delete_user(name):
        click.echo(f"qsg user delete: no user {name}", err=True)
        sys.exit(1)
    click.echo(f"user {name} deleted")
    _tell_queue_managers(store, redis_url, f"user {name} deleted", required=True)


@user.command("list")
@_opt("database-url", "The shared repository URL")
def user_list(database_url: str | None) -> None:
    """List the users."""
    for u in _security_store(database_url).users():
        groups = "  groups=" + ",".join(sorted(u.groups)) if u.groups else ""
        click.echo(f"{u.name}{'  ADMIN' if u.admin else ''}{groups}")


@main.command()
@_opt("url", "A queue manager's REST URL (http:// or https://)", )
@click.option("--json", "as_json", is_flag=True, help="Print the raw JSON responses")
@click.option("--api-key", envvar="QSG_API_KEY", show_envvar=True, default=None,
              help="API key of a user with the ADMIN right (qsg user key NAME)")
@_opt("ca-file", "CA bundle to verify an https:// queue manager with (qsg up --tls prints its own)")
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
        click.echo(f"qsg mqsc: cannot reach {url}: {_why(exc)}", err=True)
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


def _why(exc: BaseException) -> str:
    """Why a call failed, with what to do when the cause is an untrusted TLS certificate."""
    from app.tls import certificate_not_trusted

    cause = certificate_not_trusted(exc)
    if cause is not None:
        return (f"its TLS certificate is not trusted ({cause.verify_message}): give the CA that signed it "
                "with --ca-file or QSG_CA_FILE")
    return str(exc) or type(exc).__name__


@main.command()
@click.option("--qmgrs", default=3, show_default=True, help="How many queue managers")
@click.option("--qsg", default="QSG1", show_default=True, help="Queue-sharing group name")
@click.option("--base-port", default=9441, show_default=True, help="Port of QM1; the others follow")
@_opt("redis-url", "Use this Redis instead of starting one")
@click.option("--redis-cluster", "redis_cluster", type=click.IntRange(min=0), default=0, show_default=True,
              help="Start a local Redis Cluster of this many masters (at least 3; ports 7001...) as the "
                   "coupling facility instead of one redis-server")
@click.option("--redis-cluster-port", "redis_cluster_port", type=click.IntRange(1, 55535), default=7001,
              show_default=True, help="Port of the first node of --redis-cluster (the others follow; each "
                                      "node's cluster bus listens 10000 above)")
@click.option("--dir", "workdir", default=".qsg", show_default=True, help="Folder for the repository, logs and Redis")
@click.option("--sample/--no-sample", default=True, show_default=True,
              help="Define CFSTRUCT(APPL1) and shared queue APP.SHARED.Q on first start")
@click.option("--auth", type=click.Choice(["on", "off"]), default="off", show_default=True,
              help="Authentication of the local group (off: a loud warning is printed)")
@click.option("--tls", is_flag=True,
              help="Serve HTTPS with a development certificate made under --dir/tls (localhost, 127.0.0.1, ::1); "
                   "prints how to trust it")
def up(qmgrs: int, qsg: str, base_port: int, redis_url: str | None, redis_cluster: int, redis_cluster_port: int,
       workdir: str, sample: bool, auth: str, tls: bool) -> None:
    """Run a whole QSG on this machine; Ctrl-C stops everything."""
    from app.local_group import run_local_group

    if redis_cluster and redis_url:
        raise click.UsageError("--redis-cluster starts a cluster: give it or --redis-url, not both")
    sys.exit(run_local_group(qmgrs=qmgrs, qsg=qsg, base_port=base_port, redis_url=redis_url,
                             workdir=Path(workdir), sample=sample, auth=auth, tls=tls, redis_cluster=redis_cluster,
                             redis_cluster_port=redis_cluster_port))



@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to serve the site on")
@click.option("--port", default=8000, show_default=True, help="Port to serve the site on")
@click.option("--site-dir", default=".qsg/site", show_default=True, help="Folder the site is built into")
def docs(host: str, port: int, site_dir: str) -> None:
    """Build the documentation site (Get started, labs, how-to guides, reference) and serve it
    offline; Ctrl-C stops it."""
    from app.docsite import build_site, serve_site

    try:
        build_site(Path(site_dir))
    except RuntimeError as exc:
        click.echo(f"qsg docs: {exc}", err=True)
        sys.exit(2)
    serve_site(Path(site_dir), host, port)


# ---- analytics (issue 9) ------------------------------------------------------------------


@main.group()
def analytics() -> None:
    """Nightly PySpark analytics of the activity logs, and its schedule."""


def _yesterday() -> str:
    from datetime import datetime, timedelta

    return (datetime.now(UTC).date() - timedelta(days=1)).isoformat()


def _analytics_paths(activity_dir: str | None, output: str | None) -> tuple[str, str]:
    """The store to read (default: the queue managers' store) and the output folder (default:
    what the queue managers serve at /reports)."""
    settings = Settings.model_construct()  # defaults only: a job needs no queue manager name
    import os

    store = activity_dir or os.environ.get("QSG_ACTIVITY_STORE") or settings.activity_dir
    return store, output or os.environ.get("QSG_REPORTS_DIR") or settings.reports_dir


@analytics.command("run")
@_opt("date", "Day to analyse, YYYY-MM-DD (UTC) [default: yesterday]")
@_opt("activity-dir", "The activity store: a folder or a Hadoop URI (hdfs://, s3a://, ...)")
@_opt("output", "Folder for the day's Parquet tables, summary.json and report.html (served at /reports)")
@_opt("master", "Spark master, e.g. spark://host:7077 [default: local[*]]")
@click.option("--conf", "confs", multiple=True, metavar="KEY=VALUE", help="An extra Spark setting (repeatable)")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Show the job's steps and Spark's stage progress")
def analytics_run(date: str | None, activity_dir: str | None, output: str | None, master: str | None,
                  confs: tuple[str, ...], progress: bool) -> None:
    """Run the nightly analytics job for one day; re-running a day replaces its output.

    Exit status 0 when the report is published, 1 when the job failed (its status says why).
    """
    from datetime import date as Date

    from app.analytics.status import write_status

    date = date or _yesterday()
    try:
        Date.fromisoformat(date)
    except ValueError:
        raise click.UsageError(f"--date must be YYYY-MM-DD, not {date!r}") from None
    conf = {}
    for item in confs:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.UsageError(f"--conf takes KEY=VALUE, not {item!r}")
        conf[key.strip()] = value.strip()
    store, out = _analytics_paths(activity_dir, output)
    try:
        from pyspark.sql import SparkSession

        from spark_jobs.activity_daily import run_job, spark_session

        existing = SparkSession.getActiveSession()  # a caller's session is used as it is, not stopped
        spark = existing or spark_session(master or "local[*]", conf, progress=progress)
        try:
            summary = run_job(spark, date, store, out, progress=progress)
        finally:
            if existing is None:
                spark.stop()
    except Exception as exc:  # the night is reported, whatever failed
        message = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:500]
        if "://" not in out or out.startswith("file://"):  # /reports lists a local folder's runs
            write_status(Path(out.removeprefix("file://")), date, "FAILED", error=message)
        click.echo(f"qsg analytics run: {date}: {message}", err=True)
        sys.exit(1)
    t = summary["totals"]
    click.echo(f"{date}: {summary['records']} records, {t['puts']} puts, {t['gets']} gets, "
               f"{t['failures']} failed calls in {summary['duration_s']}s")
    _tell_unshipped(store, date)
    click.echo(f"report: {Path(out) / date / 'report.html'}")


def _tell_unshipped(store: str, date: str) -> None:
    """Say what the queue managers' spools still hold of ``date``: a run for today (or right
    after traffic) cannot see the records of files that have not rotated into the store yet."""
    from app.activity.writer import unshipped

    if "://" in store and not store.startswith("file://"):
        return  # the spools are on the queue managers' disks, not readable from here
    files, records = unshipped(store.removeprefix("file://"), date)
    if records:
        click.echo(f"note: {records} record(s) of {date} in {files} file(s) are still in the queue managers' "
                   f"spools and are not in this report: they reach the store when their file rotates "
                   f"(QSG_ACTIVITY_ROTATE_S, 600 s by default, or at a queue manager's stop); run again then",
                   err=True)


@analytics.command("schedule")
@_opt("at", "Time of the nightly run, HH:MM UTC [default: 02:00]")
@_opt("activity-dir", "The activity store: a folder or a Hadoop URI")
@_opt("output", "Folder for the reports (served at /reports)")
@_opt("master", "Spark master [default: local[*]]")
@_opt("retries", "Retries of a failed night [default: 3]", type=int)
@_opt("retry-delay-s", "Seconds between retries [default: 600]", type=float)
def analytics_schedule(at: str | None, activity_dir: str | None, output: str | None, master: str | None,
                       retries: int | None, retry_delay_s: float | None) -> None:
    """Run the job every night at --at for the previous day (catching up a missed night at
    start); a failed night is retried and then reported in its status (listed at /reports)."""
    import signal
    import threading

    from app.analytics.schedule import NightlySchedule, job_in_subprocess, parse_at

    configure_logging()
    try:
        run_at = parse_at(at or "02:00")
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    store, out = _analytics_paths(activity_dir, output)
    spark_master = master or "local[*]"
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    schedule = NightlySchedule(
        run_at, Path(out), run=lambda day: job_in_subprocess(day, store, out, spark_master),
        retries=3 if retries is None else retries, retry_delay_s=600.0 if retry_delay_s is None else retry_delay_s,
        wait=stop.wait)
    schedule.run_forever()

if __name__ == "__main__":  # pragma: no cover
    main()
