"""The status of each day's analytics run: ``<output>/_status/<date>.json``.

Written by the job when it succeeds (OK) and by ``qsg analytics run`` / the scheduler when it
fails (FAILED, with the error and the attempts); ``/reports`` lists it, so a failed night shows.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def write_status(output: Path, date: str, status: str, **fields: Any) -> None:
    """Replace the status of ``date`` (atomically: readers see the old or the new file)."""
    folder = Path(output) / "_status"
    folder.mkdir(parents=True, exist_ok=True)
    body = {"date": date, "status": status,
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"), **fields}
    tmp = folder / f".{date}.json.tmp"
    tmp.write_text(json.dumps(body, indent=1))
    os.replace(tmp, folder / f"{date}.json")


def run_status(output: Path, date: str) -> str | None:
    """The status of the last run of ``date`` (OK, FAILED) or None when it never ran."""
    try:
        return json.loads((Path(output) / "_status" / f"{date}.json").read_text()).get("status")
    except (OSError, ValueError):
        return None
