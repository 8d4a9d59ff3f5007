"""The nightly schedule: when it runs, for which day, retries, catching up, reporting failure.
Time is a fake clock that ``wait`` moves forward: nothing sleeps."""

from __future__ import annotations

import json
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import pytest

from app.analytics.schedule import NightlySchedule, RunOutcome, parse_at
from app.analytics.status import run_status, write_status
from app.reports.routes import list_days


class FakeTime:
    def __init__(self, start: datetime) -> None:
        self.now = start
        self.waits: list[float] = []

    def wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        self.now += timedelta(seconds=seconds)
        return False  # nobody asked to stop


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def schedule(tmp_path: Path, clock: FakeTime, outcomes: list[RunOutcome], runs: list[str], **kw) -> NightlySchedule:
    def run(day: str) -> RunOutcome:
        runs.append(day)
        outcome = outcomes.pop(0)
        if outcome.ok:  # what a successful job does
            write_status(tmp_path, day, "OK", records=1)
        return outcome

    return NightlySchedule(time(2, 0), tmp_path, run=run, now=lambda: clock.now, wait=clock.wait, **kw)


def test_next_run_and_the_day_it_reports_on(tmp_path):
    s = NightlySchedule(parse_at("02:00"), tmp_path, run=lambda d: RunOutcome(True))
    assert s.next_run(utc("2025-06-02T01:00")) == utc("2025-06-02T02:00")
    assert s.next_run(utc("2025-06-02T02:00")) == utc("2025-06-02T02:00")
    assert s.next_run(utc("2025-06-02T02:01")) == utc("2025-06-03T02:00")
    assert s.day_for(utc("2025-06-02T02:00")) == "2025-06-01"
    with pytest.raises(ValueError):
        parse_at("2am")


def test_a_failed_night_is_retried_then_succeeds(tmp_path):
    clock, runs = FakeTime(utc("2025-06-02T02:00")), []
    s = schedule(tmp_path, clock, [RunOutcome(False, "boom"), RunOutcome(False, "boom"), RunOutcome(True)], runs,
                 retries=3, retry_delay_s=300)
    assert s.run_night("2025-06-01") is True
    assert runs == ["2025-06-01"] * 3 and clock.waits == [300, 300]
    assert run_status(tmp_path, "2025-06-01") == "OK"


def test_a_night_that_keeps_failing_is_reported(tmp_path):
    clock, runs = FakeTime(utc("2025-06-02T02:00")), []
    s = schedule(tmp_path, clock, [RunOutcome(False, "Spark died")] * 3, runs, retries=2, retry_delay_s=60)
    assert s.run_night("2025-06-01") is False
    assert len(runs) == 3 and clock.waits == [60, 60]
    status = json.loads((tmp_path / "_status" / "2025-06-01.json").read_text())
    assert (status["status"], status["error"], status["attempts"]) == ("FAILED", "Spark died", 3)
    listed = list_days(tmp_path)  # what /reports shows
    assert [(d["date"], d["status"], d["error"], d["report"]) for d in listed] == \
        [("2025-06-01", "FAILED", "Spark died", None)]


def test_catches_up_a_missed_night_then_runs_every_night(tmp_path):
    clock, runs = FakeTime(utc("2025-06-02T09:30")), []
    s = schedule(tmp_path, clock, [RunOutcome(True)] * 3, runs)
    s.run_forever(max_nights=3)
    assert runs == ["2025-06-01", "2025-06-02", "2025-06-03"]
    assert clock.now == utc("2025-06-04T02:00")
    assert clock.waits[0] == (utc("2025-06-03T02:00") - utc("2025-06-02T09:30")).total_seconds()


def test_no_catch_up_when_the_night_already_ran_or_is_still_ahead(tmp_path):
    write_status(tmp_path, "2025-06-01", "OK")
    clock, runs = FakeTime(utc("2025-06-02T09:30")), []
    schedule(tmp_path, clock, [RunOutcome(True)], runs).run_forever(max_nights=1)
    assert runs == ["2025-06-02"]  # not 06-01 again: the next night's run
    clock, runs = FakeTime(utc("2025-06-02T01:00")), []
    schedule(tmp_path / "other", clock, [RunOutcome(True)], runs).run_forever(max_nights=1)
    assert runs == ["2025-06-01"] and clock.now == utc("2025-06-02T02:00")


def test_compose_runs_the_schedule_on_the_volumes_the_queue_managers_use():
    import yaml

    from tests.test_compose import ROOT, _resolve

    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    analytics = services["analytics"]
    assert _resolve(analytics["command"]).name == "schedule"
    env = analytics["environment"]
    parse_at(env["QSG_AT"])
    volumes = {v.split(":")[0]: v.split(":")[1] for v in analytics["volumes"]}
    assert volumes["activity"] == env["QSG_ACTIVITY_DIR"] and volumes["reports"] == env["QSG_OUTPUT"]
    for name in ("qm1", "qm2", "qm3"):
        qm_volumes = {v.split(":")[0]: v.split(":")[1] for v in services[name]["volumes"]}
        qm_env = services[name]["environment"]
        assert qm_volumes["activity"] == qm_env["QSG_ACTIVITY_DIR"]   # the logs the job reads
        assert qm_volumes["reports"] == qm_env["QSG_REPORTS_DIR"]     # the reports /reports serves


def test_a_night_runs_in_a_child_process_whose_last_error_line_is_reported(tmp_path):
    from app.analytics.schedule import job_in_subprocess

    outcome = job_in_subprocess("2025-02-30", str(tmp_path), str(tmp_path), "local[1]")  # no such day
    assert outcome.ok is False and "--date must be YYYY-MM-DD" in outcome.error
