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


def test_lab_shared_queue(group):
    run_page("labs/shared-queue.md", group)
