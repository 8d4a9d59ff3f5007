"""The nightly schedule of the analytics job (``qsg analytics schedule``).

Every night at ``at`` (UTC) the job runs for the day before. A run that fails is retried
(``retries`` more times, ``retry_delay_s`` apart); a night that still fails is reported: its
status file says FAILED with the error and the number of attempts (``/reports`` lists it), and
the scheduler logs it. When the scheduler starts after the time of the night and the previous
day has no successful report, it catches up at once. Each run is a separate process (a fresh
JVM): a crashing job never takes the scheduler with it.

Time and waiting are injected (``now``, ``wait``), so the logic is tested without sleeping.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

from app.analytics.status import run_status, write_status

log = logging.getLogger(__name__)


def parse_at(text: str) -> time:
    """``HH:MM`` (24 h, UTC)."""
    try:
        hours, minutes = text.split(":")
        return time(int(hours), int(minutes))
    except ValueError:
        raise ValueError(f"--at must be HH:MM (24-hour, UTC), not {text!r}") from None


@dataclass
class RunOutcome:
    ok: bool
    error: str = ""


def job_in_subprocess(date: str, activity_dir: str, output: str, master: str) -> RunOutcome:
    """Run ``qsg analytics run`` for ``date`` as a child process. Its progress is passed on to
    the scheduler's own output as it comes; the last line of a failure is its error."""
    cmd = [sys.executable, "-m", "app.cli", "analytics", "run", "--date", date, "--activity-dir", activity_dir,
           "--output", output, "--master", master]
    tail: deque[str] = deque(maxlen=20)
    with subprocess.Popen(cmd, stdout=sys.stdout, stderr=subprocess.PIPE, text=True) as child:
        assert child.stderr is not None
        for line in child.stderr:
            sys.stderr.write(line)
            if line.strip():
                tail.append(line.strip())
    if child.returncode == 0:
        return RunOutcome(True)
    return RunOutcome(False, tail[-1] if tail else f"exit status {child.returncode}")


@dataclass
class NightlySchedule:
    """When to run, and running one night with its retries."""

    at: time
    output: Path
    run: Callable[[str], RunOutcome]
    retries: int = 3
    retry_delay_s: float = 600.0
    now: Callable[[], datetime] = lambda: datetime.now(UTC)
    wait: Callable[[float], bool] = lambda seconds: False  # True: stop was asked
    history: list[tuple[str, bool, int]] = field(default_factory=list)  # (date, ok, attempts)

    def next_run(self, now: datetime) -> datetime:
        """The next time of the night at or after ``now``."""
        today = datetime.combine(now.date(), self.at, tzinfo=UTC)
        return today if today >= now else today + timedelta(days=1)

    @staticmethod
    def day_for(run_at: datetime) -> str:
        """A night's run reports on the day before."""
        return (run_at.date() - timedelta(days=1)).isoformat()

    def missed(self, now: datetime) -> str | None:
        """The day to catch up at start: yesterday, when tonight's time has passed and that day
        has no successful report."""
        tonight = datetime.combine(now.date(), self.at, tzinfo=UTC)
        if now < tonight:
            return None
        day = self.day_for(tonight)
        return None if run_status(self.output, day) == "OK" else day

    def run_night(self, date: str) -> bool:
        """Run ``date`` with retries; a final failure is written to its status file."""
        outcome = RunOutcome(False, "not run")
        attempts = 0
        for attempt in range(1, self.retries + 2):
            attempts = attempt
            log.info("analytics of %s: attempt %d", date, attempt)
            outcome = self.run(date)
            if outcome.ok:
                break
            log.error("analytics of %s failed (attempt %d of %d): %s", date, attempt, self.retries + 1,
                      outcome.error)
            if attempt <= self.retries and self.wait(self.retry_delay_s):
                break
        self.history.append((date, outcome.ok, attempts))
        if outcome.ok:
            log.info("analytics of %s done", date)
        else:
            write_status(self.output, date, "FAILED", error=outcome.error, attempts=attempts)
            log.error("analytics of %s FAILED after %d attempt(s): %s", date, attempts, outcome.error)
        return outcome.ok

    def run_forever(self, max_nights: int | None = None) -> None:
        """Catch up, then run every night until ``wait`` says stop (or ``max_nights`` ran)."""
        nights = 0
        last_run_at: datetime | None = None
        missed = self.missed(self.now())
        if missed:
            log.info("catching up: no report for %s yet", missed)
            self.run_night(missed)
            nights += 1
            last_run_at = datetime.combine(self.now().date(), self.at, tzinfo=UTC)
        while max_nights is None or nights < max_nights:
            now = self.now()
            run_at = self.next_run(now)
            if last_run_at is not None and run_at <= last_run_at:
                run_at += timedelta(days=1)  # a night that ended within its own minute is done
            log.info("next analytics run at %s for %s", run_at.isoformat(timespec="minutes"), self.day_for(run_at))
            if self.wait((run_at - now).total_seconds()):
                return
            self.run_night(self.day_for(run_at))
            nights += 1
            last_run_at = run_at
