"""What the ``qsg`` commands share: options that also read ``QSG_<FLAG>`` (docs/api.md §11), the
settings they build, the credentials of a command that calls a queue manager, and why a call
failed."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from app.settings import Settings

if TYPE_CHECKING:
    from app.client.core import Credentials

DEFAULTS = Settings.model_fields


def opt(name: str, help_text: str, **kwargs: Any):
    """An option whose environment variable is QSG_<NAME> (docs/api.md §11: each flag reads one)."""
    env = "QSG_" + name.upper().replace("-", "_")
    return click.option(f"--{name}", envvar=env, show_envvar=True, default=None, help=help_text, **kwargs)


def settings_of(**given: Any) -> Settings:
    """The settings of the flags given (the others from QSG_* and the defaults); a bad value is a usage error."""
    try:
        return Settings(**{k: v for k, v in given.items() if v is not None})
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


def credentials_from_flags(user: str | None, password_stdin: bool, api_key: str | None) -> Credentials | None:
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


def why(exc: BaseException) -> str:
    """Why a call failed, with what to do when the cause is an untrusted TLS certificate."""
    from app.tls import certificate_not_trusted

    cause = certificate_not_trusted(exc)
    if cause is not None:
        return (f"its TLS certificate is not trusted ({cause.verify_message}): give the CA that signed it "
                "with --ca-file or QSG_CA_FILE")
    return str(exc) or type(exc).__name__
