"""One logging set-up for every ``qsg`` command: plain text or JSON lines on stderr, the level
by setting, and no access-log line for the probes an orchestrator sends every few seconds.

``QSG_LOG_FORMAT`` (``text`` or ``json``) and ``QSG_LOG_LEVEL`` (``debug``, ``info``, ...)
choose; each command calls ``configure_logging`` once at start. Group happenings that IBM MQ
for z/OS reports with a console message carry its message id at the start of the text (e.g.
``CSQE011I`` when peer recovery starts), so an operator can search for the same ids.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from datetime import UTC, datetime

#: Paths polled by health checks and scrapers: logged by uvicorn only when they fail.
PROBE_PATHS = ("/v1/ready", "/v1/health", "/metrics")


class JsonLines(logging.Formatter):
    """One JSON object per record: time (UTC, ISO-8601), level, logger, message, and the
    exception text when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        out = {"time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
               "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


class QuietProbes(logging.Filter):
    """Drops uvicorn's access line of a successful probe (``GET /v1/ready`` every 5 s per QM
    would drown everything else); a failing probe is still logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 5:  # uvicorn: client, method, path, http, status
            path, status = str(args[2]).split("?", 1)[0], args[4]
            if path in PROBE_PATHS and isinstance(status, int) and status < 400:
                return False
        return True


def configure_logging(level: str | None = None, fmt: str | None = None) -> None:
    """Set up the root logger (stderr) for a ``qsg`` command. ``level`` and ``fmt`` default to
    ``QSG_LOG_LEVEL`` (info) and ``QSG_LOG_FORMAT`` (text). uvicorn's loggers are routed
    through the same handler, its access log without probe lines."""
    level = (level or os.environ.get("QSG_LOG_LEVEL") or "info").upper()
    fmt = (fmt or os.environ.get("QSG_LOG_FORMAT") or "text").lower()
    if fmt not in ("text", "json"):
        raise ValueError(f"log format must be 'text' or 'json', not {fmt!r}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines() if fmt == "json"
                         else logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not one line per HTTP call a client makes
    # not Alembic's two lines at every start (the schema check); its warnings and errors still show
    logging.getLogger("alembic").setLevel(logging.WARNING)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, QuietProbes) for f in access.filters):
        access.addFilter(QuietProbes())

