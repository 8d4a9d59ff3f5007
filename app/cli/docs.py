"""qsg docs: the documentation site, built and served offline."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    pass


@click.command()
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
