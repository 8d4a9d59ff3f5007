"""The code's guard rails run with the suite (so `pytest` alone is the whole check): ruff, and
mypy - strict on the domain core, the coupling facility, the MQI verbs, the definition workflow
and the activity hooks (``STRICT``), the default checks on the rest.
Each runs the tool as a developer would and fails with its report."""

from __future__ import annotations

import subprocess
import sys

from tests.support.import_graph import ROOT

LINTED = ["app", "tests", "bench", "spark_jobs", "migrations"]
STRICT = ["app/core", "app/cf", "app/qmgr/mqi", "app/qmgr/workflow.py", "app/qmgr/defsteps.py", "app/activity/hooks.py"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    done = run("ruff", "check", *LINTED)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_on_the_core_and_the_coupling_facility():
    done = run("mypy", "--strict", *STRICT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_on_the_rest():
    done = run("mypy")  # [tool.mypy] in pyproject.toml: the whole app
    assert done.returncode == 0, done.stdout + done.stderr
