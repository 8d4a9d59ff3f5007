"""qsg cf: the coupling facility; ``place`` puts a CF structure on a chosen master of a Redis Cluster."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from app.cli.options import opt, settings_of

if TYPE_CHECKING:
    pass


@click.group("cf")
def cf_group() -> None:
    """The coupling facility (Redis)."""


@cf_group.command("place")
@click.argument("cfstruct")
@click.option("--node", required=True, help="host:port of the Redis Cluster master that should hold the structure")
@opt("qsg", "Queue-sharing group name, e.g. QSG1")
def cf_place(cfstruct: str, node: str, qsg: str | None) -> None:
    """Print a HASHTAG that puts CF structure CFSTRUCT on master NODE, and the MQSC to use it.

    The slot map is read from NODE now (CLUSTER NODES): a later resharding or failover can move
    the slot elsewhere; DISPLAY CFSTATUS(name) shows the structure's node (CFNODE)."""
    import re

    from app.cf.placement import hashtag_on_node

    group = settings_of(qsg=qsg).qsg
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
