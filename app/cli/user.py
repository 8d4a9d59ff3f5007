"""qsg user: the users and API keys of the REST APIs, kept in the shared repository (works before any
queue manager runs); a change reaches the running queue managers through the coupling facility."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from app.cli.options import opt, settings_of

if TYPE_CHECKING:
    from app.repository.security import SecurityStore


@click.group()
def user() -> None:
    """Users of the REST APIs, kept in the shared repository (works before any QM runs)."""


def _security_store(database_url: str | None) -> SecurityStore:
    from app.repository.db import make_engine, schema_status
    from app.repository.security import SecurityStore

    url = settings_of(database_url=database_url).database_url
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

    timeout_s = settings_of(redis_url=redis_url).broadcast_timeout_ms / 1000
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
@opt("database-url", "The shared repository URL")
@opt("redis-url", _REDIS_HELP)
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
@opt("database-url", "The shared repository URL")
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
@opt("database-url", "The shared repository URL")
@opt("redis-url", _REDIS_HELP)
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
@opt("database-url", "The shared repository URL")
@opt("redis-url", _REDIS_HELP)
def user_delete(name: str, database_url: str | None, redis_url: str | None) -> None:
    """Delete a user and its keys (in force at once with --redis-url, as for revoke)."""
    store = _security_store(database_url)
    if not store.delete_user(name):
        click.echo(f"qsg user delete: no user {name}", err=True)
        sys.exit(1)
    click.echo(f"user {name} deleted")
    _tell_queue_managers(store, redis_url, f"user {name} deleted", required=True)


@user.command("list")
@opt("database-url", "The shared repository URL")
def user_list(database_url: str | None) -> None:
    """List the users."""
    for u in _security_store(database_url).users():
        groups = "  groups=" + ",".join(sorted(u.groups)) if u.groups else ""
        click.echo(f"{u.name}{'  ADMIN' if u.admin else ''}{groups}")
