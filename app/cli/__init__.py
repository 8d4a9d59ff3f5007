"""The ``qsg`` command line (docs/api.md §11; docs/reference/cli.md). Every flag also reads
``QSG_<FLAG>``.

One module per command or command group; this one only gathers them under ``main``, the
``qsg`` entry point (pyproject.toml) and what ``python -m app.cli`` runs (``__main__.py``). A
command imports what it runs inside its function, so ``qsg serve`` never loads PySpark and
``qsg --help`` loads no server.
"""

from __future__ import annotations

import click

from app.cli.analytics import analytics
from app.cli.cf import cf_group
from app.cli.db import db
from app.cli.docs import docs
from app.cli.gateway import gateway
from app.cli.mqsc import mqsc
from app.cli.serve import serve
from app.cli.trigmon import trigmon
from app.cli.up import up
from app.cli.user import user


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """An IBM MQ for z/OS queue-sharing group, emulated as REST microservices."""


for _command in (serve, gateway, trigmon, db, cf_group, user, mqsc, up, docs, analytics):
    main.add_command(_command)
