"""qsg analytics: the nightly PySpark analytics of the activity logs, and its schedule."""

from __future__ import annotations

import sys
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

import click

from app.cli.options import opt
from app.logsetup import configure_logging
from app.settings import Settings

if TYPE_CHECKING:
    pass


@click.group()
def analytics() -> None:
    """Nightly PySpark analytics of the activity logs, and its schedule."""


def _yesterday() -> str:
    from datetime import datetime, timedelta

    return (datetime.now(UTC).date() - timedelta(days=1)).isoformat()


def _analytics_paths(activity_dir: str | None, output: str | None) -> tuple[str, str]:
    """The store to read (default: the queue managers' store) and the output folder (default:
    what the queue managers serve at /reports)."""
    settings = Settings.model_construct()  # defaults only: a job needs no queue manager name
    import os

    store = activity_dir or os.environ.get("QSG_ACTIVITY_STORE") or settings.activity_dir
    return store, output or os.environ.get("QSG_REPORTS_DIR") or settings.reports_dir


@analytics.command("run")
@opt("date", "Day to analyse, YYYY-MM-DD (UTC) [default: yesterday]")
@opt("activity-dir", "The activity store: a folder or a Hadoop URI (hdfs://, s3a://, ...)")
@opt("output", "Folder for the day's Parquet tables, summary.json and report.html (served at /reports)")
@opt("master", "Spark master, e.g. spark://host:7077 [default: local[*]]")
@click.option("--conf", "confs", multiple=True, metavar="KEY=VALUE", help="An extra Spark setting (repeatable)")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Show the job's steps and Spark's stage progress")
def analytics_run(date: str | None, activity_dir: str | None, output: str | None, master: str | None,
                  confs: tuple[str, ...], progress: bool) -> None:
    """Run the nightly analytics job for one day; re-running a day replaces its output.

    Exit status 0 when the report is published, 1 when the job failed (its status says why).
    """
    from datetime import date as Date

    from app.analytics.status import write_status

    date = date or _yesterday()
    try:
        Date.fromisoformat(date)
    except ValueError:
        raise click.UsageError(f"--date must be YYYY-MM-DD, not {date!r}") from None
    conf = {}
    for item in confs:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.UsageError(f"--conf takes KEY=VALUE, not {item!r}")
        conf[key.strip()] = value.strip()
    store, out = _analytics_paths(activity_dir, output)
    try:
        from pyspark.sql import SparkSession

        from spark_jobs.activity_daily import run_job, spark_session

        existing = SparkSession.getActiveSession()  # a caller's session is used as it is, not stopped
        spark = existing or spark_session(master or "local[*]", conf, progress=progress)
        try:
            summary = run_job(spark, date, store, out, progress=progress)
        finally:
            if existing is None:
                spark.stop()
    except Exception as exc:  # the night is reported, whatever failed
        message = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:500]
        if "://" not in out or out.startswith("file://"):  # /reports lists a local folder's runs
            write_status(Path(out.removeprefix("file://")), date, "FAILED", error=message)
        click.echo(f"qsg analytics run: {date}: {message}", err=True)
        sys.exit(1)
    t = summary["totals"]
    click.echo(f"{date}: {summary['records']} records, {t['puts']} puts, {t['gets']} gets, "
               f"{t['failures']} failed calls in {summary['duration_s']}s")
    _tell_unshipped(store, date)
    click.echo(f"report: {Path(out) / date / 'report.html'}")


def _tell_unshipped(store: str, date: str) -> None:
    """Say what the queue managers' spools still hold of ``date``: a run for today (or right
    after traffic) cannot see the records of files that have not rotated into the store yet."""
    from app.activity.writer import unshipped

    if "://" in store and not store.startswith("file://"):
        return  # the spools are on the queue managers' disks, not readable from here
    files, records = unshipped(store.removeprefix("file://"), date)
    if records:
        click.echo(f"note: {records} record(s) of {date} in {files} file(s) are still in the queue managers' "
                   f"spools and are not in this report: they reach the store when their file rotates "
                   f"(QSG_ACTIVITY_ROTATE_S, 600 s by default, or at a queue manager's stop); run again then",
                   err=True)


@analytics.command("schedule")
@opt("at", "Time of the nightly run, HH:MM UTC [default: 02:00]")
@opt("activity-dir", "The activity store: a folder or a Hadoop URI")
@opt("output", "Folder for the reports (served at /reports)")
@opt("master", "Spark master [default: local[*]]")
@opt("retries", "Retries of a failed night [default: 3]", type=int)
@opt("retry-delay-s", "Seconds between retries [default: 600]", type=float)
def analytics_schedule(at: str | None, activity_dir: str | None, output: str | None, master: str | None,
                       retries: int | None, retry_delay_s: float | None) -> None:
    """Run the job every night at --at for the previous day (catching up a missed night at
    start); a failed night is retried and then reported in its status (listed at /reports)."""
    import signal
    import threading

    from app.analytics.schedule import NightlySchedule, job_in_subprocess, parse_at

    configure_logging()
    try:
        run_at = parse_at(at or "02:00")
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    store, out = _analytics_paths(activity_dir, output)
    spark_master = master or "local[*]"
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    schedule = NightlySchedule(
        run_at, Path(out), run=lambda day: job_in_subprocess(day, store, out, spark_master),
        retries=3 if retries is None else retries, retry_delay_s=600.0 if retry_delay_s is None else retry_delay_s,
        wait=stop.wait)
    schedule.run_forever()
