"""``/reports``: the days the nightly job has reported on, each day's HTML report and its JSON
summary, read from the analytics output folder (``reports_dir``, shared with the job).

* ``GET /reports`` - the days, newest first: an HTML page for a browser (``Accept: text/html``),
  else JSON ``{"reports": [{"date", "status", "records", "finished_at", "error", "report",
  "summary"}]}``. A night that failed is listed with status FAILED and its error.
* ``GET /reports/{date}`` - the day's self-contained HTML report.
* ``GET /reports/{date}/summary.json`` - the day's JSON summary.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response

from app.core.errors import MQError
from app.core.reasons import MQRC

router = APIRouter(prefix="/reports", tags=["Analytics reports"])

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _root(request: Request) -> Path:
    return Path(request.app.state.reports_dir)


def list_days(root: Path) -> list[dict[str, Any]]:
    """Every day with a report or a run status, newest first."""
    days: dict[str, dict[str, Any]] = {}
    if root.is_dir():
        for entry in root.iterdir():
            if _DATE.fullmatch(entry.name) and (entry / "report.html").is_file():
                days[entry.name] = {"date": entry.name, "status": "OK", "records": None, "finished_at": None,
                                    "error": None}
        status_dir = root / "_status"
        if status_dir.is_dir():
            for entry in status_dir.glob("*.json"):
                if not _DATE.fullmatch(entry.stem):
                    continue
                try:
                    status = json.loads(entry.read_text())
                except (OSError, ValueError):
                    continue
                day = days.setdefault(entry.stem, {"date": entry.stem})
                day.update({k: status.get(k) for k in ("status", "records", "finished_at", "error", "attempts")})
    out = []
    for date in sorted(days, reverse=True):
        day = days[date]
        has_report = (root / date / "report.html").is_file()
        day["report"] = f"/reports/{date}" if has_report else None
        day["summary"] = f"/reports/{date}/summary.json" if has_report else None
        out.append(day)
    return out


def _day(request: Request, date: str, name: str) -> Path:
    if not _DATE.fullmatch(date):
        raise MQError(MQRC.OBJECT_NAME_ERROR, f"'{date}' is not a date (YYYY-MM-DD)")
    path = _root(request) / date / name
    if not path.is_file():
        raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"there is no report for {date}")
    return path


@router.get("", summary="The days with an analytics report")
async def reports_index(request: Request) -> Response:
    days = list_days(_root(request))
    if "text/html" in request.headers.get("accept", ""):
        from app.reports.render import render_index

        return HTMLResponse(render_index(days))
    return JSONResponse({"reports": days})


@router.get("/{date}", summary="The HTML report of a day", response_class=HTMLResponse)
async def report(request: Request, date: str) -> Response:
    return FileResponse(_day(request, date, "report.html"), media_type="text/html; charset=utf-8")


@router.get("/{date}/summary.json", summary="The JSON summary of a day")
async def summary(request: Request, date: str) -> Response:
    return FileResponse(_day(request, date, "summary.json"), media_type="application/json")
