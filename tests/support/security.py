"""Helpers of the tests that run queue managers with authentication on (QSG_AUTH=on): the
users they make, the ``qsg`` CLI on a group's repository, MQSC as the administrator."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx

from tests.support.mqsc import shared_q

ADMIN = ("admin", "admin-secret")
ALICE = ("alice", "alice-secret")
CSRF = {"ibm-mq-rest-csrf-token": ""}


def qsg_cli(group, *args: str, stdin: str = "", tell: bool = True, status: int = 0) -> subprocess.CompletedProcess:
    """Run ``qsg`` on the group's repository; ``tell``: with the group's Redis (QSG_REDIS_URL), so
    that user and key changes are in force on every running QM when it returns."""
    env = {k: v for k, v in os.environ.items() if k != "QSG_REDIS_URL"}
    env["QSG_DATABASE_URL"] = group.database_url
    if tell:
        env["QSG_REDIS_URL"] = group.redis_url
    out = subprocess.run([sys.executable, "-m", "app.cli", *args], input=stdin, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == status, out.stderr
    return out


def mqsc(group, qm: str, script: str, auth=ADMIN) -> list[dict]:
    r = httpx.post(f"{group.url(qm)}/v1/admin/mqsc", json={"script": script}, auth=auth, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()["results"]


def mqsc_ok(group, qm: str, script: str) -> list[dict]:
    results = mqsc(group, qm, script)
    assert all(r["completion_code"] == 0 for r in results), results
    return results


def assert_2035(r: httpx.Response, status: int = 403) -> None:
    assert r.status_code == status, r.text
    assert r.json()["error"]["reason"] == 2035 and r.json()["error"]["reason_name"] == "MQRC_NOT_AUTHORIZED"


def admin_shared_q(group, prefix: str = "SQ") -> str:
    """``tests.support.mqsc.shared_q`` defined by the administrator (authentication on)."""
    return shared_q(group, prefix=prefix, run=lambda qm, script: mqsc_ok(group, qm, script))
