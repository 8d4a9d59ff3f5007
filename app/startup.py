"""Checks ``qsg serve`` makes before it starts: its TLS files load, Redis answers, the repository
answers and its schema is current. Each failure is one clear line for the operator."""

from __future__ import annotations

from app.cf.probe import CFUnreachable, heartbeat_holder
from app.repository.db import RepositoryError, make_engine, schema_status
from app.settings import Settings
from app.tls import TlsError, check_ca_file, check_server_files


class StartupError(Exception):
    """A dependency of the queue manager is missing; the message says which and what to do."""


def check_tls(settings: Settings) -> None:
    """Raise StartupError when the certificate, key or CA bundle given cannot be used (checked
    first: it needs nothing else, and uvicorn would otherwise fail with a traceback)."""
    try:
        check_server_files(settings.tls_cert, settings.tls_key)
        if settings.tls_ca:
            check_ca_file(settings.tls_ca)
    except TlsError as exc:
        raise StartupError(str(exc)) from None


def check_dependencies(settings: Settings) -> None:
    """Raise StartupError when the coupling facility or the repository is not usable."""
    try:
        holder = heartbeat_holder(settings.redis_url, settings.qsg, settings.qmgr,
                                  ttl_s=settings.heartbeat_ttl_s, interval_s=settings.heartbeat_interval_s)
    except CFUnreachable as exc:
        raise StartupError(f"cannot reach the coupling facility (Redis) at {settings.redis_url}: "
                           f"{exc.cause}") from None
    if holder is not None:
        raise StartupError(f"queue manager {settings.qmgr} is already active in {settings.qsg} "
                           f"({holder}): a QM name is unique in the group")
    try:
        engine = make_engine(settings.database_url)
        try:
            current, head = schema_status(engine)
        finally:
            engine.dispose()
    except (RepositoryError, OSError, ValueError) as exc:
        raise StartupError(f"cannot reach the shared repository at {settings.database_url}: "
                           f"{type(exc).__name__}: {str(exc).splitlines()[0]}") from None
    if current != head:
        raise StartupError(f"the shared repository schema is at {current or 'nothing'}, not {head}: "
                           f"run 'qsg db upgrade --database-url {settings.database_url}'")
