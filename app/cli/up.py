"""qsg up: a whole queue-sharing group on this machine (app/launcher.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from app.cli.options import opt

if TYPE_CHECKING:
    pass


@click.command()
@click.option("--qmgrs", default=3, show_default=True, help="How many queue managers")
@click.option("--qsg", default="QSG1", show_default=True, help="Queue-sharing group name")
@click.option("--base-port", default=9441, show_default=True, help="Port of QM1; the others follow")
@opt("redis-url", "Use this Redis instead of starting one")
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
    from app.launcher import run_local_qsg

    if redis_cluster and redis_url:
        raise click.UsageError("--redis-cluster starts a cluster: give it or --redis-url, not both")
    sys.exit(run_local_qsg(qmgrs=qmgrs, qsg=qsg, base_port=base_port, redis_url=redis_url,
                             workdir=Path(workdir), sample=sample, auth=auth, tls=tls, redis_cluster=redis_cluster,
                             redis_cluster_port=redis_cluster_port))

