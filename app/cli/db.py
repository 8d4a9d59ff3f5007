"""qsg db: the shared repository's schema."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from app.cli.options import opt, settings_of

if TYPE_CHECKING:
    pass


@click.group()
def db() -> None:
    """The shared repository."""


@db.command("upgrade")
@opt("database-url", "The shared repository URL")
def db_upgrade(database_url: str | None) -> None:
    """Bring the repository schema to the newest migration (a no-op when current)."""
    from app.repository.db import RepositoryError, upgrade

    url = settings_of(database_url=database_url).database_url
    try:
        upgrade(url)
    except (RepositoryError, OSError) as exc:
        click.echo(f"qsg db upgrade: cannot upgrade {url}: {str(exc).splitlines()[0]}", err=True)
        sys.exit(2)
    click.echo(f"shared repository at {url} is current")
