"""The code's guard rails run with the suite (so `pytest` alone is the whole check): ruff, and
mypy - strict on the domain core and the coupling facility, the default checks on the rest (the
strict checks also on the modules pyproject.toml's [[tool.mypy.overrides]] name: the MQI verbs,
the definition workflow, the activity hooks).
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


def test_mypy_strict_on_the_core_and_the_coupling_facility():
    done = run("mypy", "--strict", "app/core", "app/cf")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_on_the_rest():
    done = run("mypy")  # [tool.mypy] in pyproject.toml: the whole app
    assert done.returncode == 0, done.stdout + done.stderr
