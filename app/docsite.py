"""``qsg docs``: build the documentation site (docs/, mkdocs.yml) and serve it offline.

The site is built from the clone the package runs from (an editable install, as the set-up
makes); its pages load nothing from the Internet (mkdocs.yml turns off the theme's web fonts).
"""

from __future__ import annotations

import functools
import subprocess
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build_site(site_dir: Path) -> None:
    """Build the site into ``site_dir`` with mkdocs (a test extra); raises RuntimeError saying why not."""
    config = ROOT / "mkdocs.yml"
    if not config.exists():
        raise RuntimeError(f"no mkdocs.yml at {ROOT}: qsg docs builds the site of a clone (pip install -e .)")
    try:
        import mkdocs  # noqa: F401 - only to say what is missing
    except ImportError:
        raise RuntimeError("mkdocs is not installed: pip install -e '.[test]'") from None
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "--config-file", str(config),
                           "--site-dir", str(site_dir.resolve())], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"mkdocs build failed:\n{done.stdout}{done.stderr}")


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


def serve_site(site_dir: Path, host: str, port: int) -> None:
    """Serve ``site_dir`` at http://host:port until interrupted."""
    handler = functools.partial(_QuietHandler, directory=str(site_dir.resolve()))
    with ThreadingHTTPServer((host, port), handler) as server:
        print(f"documentation site at http://{host}:{server.server_address[1]}/ (Ctrl-C stops it)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
