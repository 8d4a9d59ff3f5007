"""The code's guard rails run with the suite (so `pytest` alone is the whole check): ruff, and
mypy - strict on the domain core, the coupling facility, the queue manager, the HTTP API, MQSC
and the activity records (and on what they import), the default checks on the rest (where
pyproject.toml's [[tool.mypy.overrides]] keeps the strict packages strict for a plain `mypy`).
Each runs the tool as a developer would and fails with its report."""

from __future__ import annotations

import subprocess
import sys

from tests.support.import_graph import ROOT

LINTED = ["app", "tests", "bench", "spark_jobs", "migrations"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    done = run("ruff", "check", *LINTED)
    assert done.returncode == 0, done.stdout + done.stderr


#: The packages mypy checks with --strict (each also strict in pyproject.toml's overrides).
STRICT = ["app/core", "app/cf", "app/qmgr", "app/api", "app/mqsc", "app/activity"]


def test_mypy_strict_on_the_core_the_coupling_facility_and_the_queue_manager():
    done = run("mypy", "--strict", *STRICT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_on_the_rest():
    done = run("mypy")  # [tool.mypy] in pyproject.toml: the whole app
    assert done.returncode == 0, done.stdout + done.stderr
