"""The labs of the documentation site (docs/labs/), run as a reader runs them: ``qsg up`` in a
folder, then each lab's commands in a second shell there, and what the lab says to look for
checked in what they print (tests/support/doclabs.py says how a page is read).

The labs that leave the group as it was share one ``qsg up``, as a reader doing them in a row
does; the ones that kill a queue manager or cut the coupling facility get their own
(tests/test_docs_labs_faults.py)."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.doclabs import QsgUp, run_page


@pytest.fixture(scope="module")
def group(tmp_path_factory):
    up = QsgUp(tmp_path_factory.mktemp("reader")).start()
    yield up
    up.stop()


def test_get_started_first_put_and_get(group):
    out = run_page("get-started.md", group)
    assert '"data":"hello from QM1"' in out


def test_labs_index_helpers(group):
    run_page("labs/index.md", group)


def test_lab_shared_queue(group):
    run_page("labs/shared-queue.md", group)


def test_lab_unit_of_work(group):
    run_page("labs/unit-of-work.md", group)


def test_lab_triggering(group):
    run_page("labs/triggering.md", group)


def test_lab_expiry_and_reports(group):
    out = run_page("labs/expiry-and-reports.md", group)
    # each report's CorrelId is the MsgId of the message it reports on (the lab says compare)
    msg_ids = re.findall(r'\{"msg_id":"([0-9a-f]{48})"\}', out)
    reports = {int(f): c for f, c in re.findall(r'"feedback":(\d+),"correl_id":"([0-9a-f]{48})"', out)}
    assert reports == {258: msg_ids[0], 259: msg_ids[1], 260: msg_ids[1]}, out


def test_lab_igq(group):
    run_page("labs/igq.md", group)


def test_lab_depth_events(group):
    run_page("labs/depth-events.md", group)


def test_lab_service_interval_events(group):
    run_page("labs/service-interval-events.md", group)


def test_lab_cf_structure_failure(group):
    run_page("labs/cf-structure-failure.md", group)


def test_guide_ibm_tools(group):
    """IBM's REST API put through QM1 and got through QM2 (after the shared-queue lab's MQDISC: the
    get opens APP.SHARED.Q as its DEFSOPT says, exclusively)."""
    run_page("howto/ibm-tools.md", group)


def test_guide_analytics_runs_the_job_on_the_group_store(group):
    """The nightly job by hand, as the guide gives it: with its defaults in qsg up's folder, and
    with the store as a file:// URI, another output folder, master and Spark setting."""
    out = run_page("howto/analytics.md", group, timeout_s=900)
    days = re.findall(r"^(\d{4}-\d\d-\d\d): \d+ records, \d+ puts", out, re.M)
    assert len(days) == 2 and days[0] == days[1], out
    for output in ("reports", "nightly"):
        summary = json.loads((group.folder / output / days[0] / "summary.json").read_text())
        assert summary["date"] == days[0]
