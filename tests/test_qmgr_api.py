"""Queue manager endpoints, error shapes, OpenAPI docs, and what `qsg serve` refuses."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from tests.support.redis_server import free_port


@pytest.fixture(scope="module")
def one(make_cluster):
    return make_cluster(["QM1"], database="sqlite")


def test_qmgr_health_ready_docs(one):
    url = one.url("QM1")
    info = httpx.get(f"{url}/v1/qmgr").json()
    assert info["name"] == "QM1" and info["qsg"] == "QSG1" and info["status"] == "RUNNING"
    for attr in ("PERFMEV", "TRIGINT", "EXPRYINT", "DEADQ", "IGQ"):
        assert attr in info
    assert httpx.get(f"{url}/v1/health").status_code == 200
    assert httpx.get(f"{url}/v1/ready").json()["status"] == "READY"
    assert httpx.get(f"{url}/docs").status_code == 200
    schema = httpx.get(f"{url}/openapi.json").json()
    assert "/v1/connections/{hconn}/objects/{hobj}/get" in schema["paths"]


def test_errors_are_mq_bodies_never_framework_pages(one):
    url = one.url("QM1")
    cases = [
        ("GET", "/v1/nowhere", None, 404, 2085),
        ("POST", "/v1/admin/mqsc", {"script": 42}, 400, 3097),
        ("POST", "/v1/admin/mqsc", {"nothing": ""}, 400, 3097),
        ("POST", "/v1/connections/NOPE/objects", {"object_name": "Q", "options": ["OUTPUT"]}, 404, 2018),
        ("POST", "/v1/connections", {"appl_name": 7}, 400, 2046),
    ]
    for method, path, body, status, reason in cases:
        r = httpx.request(method, f"{url}{path}", json=body)
        err = r.json()["error"]
        assert (r.status_code, err["reason"]) == (status, reason), (path, r.text)
        assert err["completion_code"] == 2 and err["reason_name"].startswith("MQRC") and err["message"]
    r = httpx.post(f"{url}/v1/admin/mqsc", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["reason"] == 3097


def _serve(env_extra: dict[str, str], tmp_path) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "QSG_PORT": str(free_port()), "QSG_QMGR": "QM9", "QSG_AUTH": "off", **env_extra}
    return subprocess.run([sys.executable, "-m", "app.cli", "serve"], env=env, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)


def test_serve_refuses_without_redis(tmp_path, redis_server):
    db = f"sqlite:///{tmp_path / 'r.db'}"
    from app.repository.db import upgrade
    upgrade(db)
    out = _serve({"QSG_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "QSG_DATABASE_URL": db}, tmp_path)
    assert out.returncode == 2
    assert "cannot reach the coupling facility" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_serve_refuses_when_schema_behind_or_database_unreachable(tmp_path, redis_server):
    redis_url = redis_server.url
    out = _serve({"QSG_REDIS_URL": redis_url, "QSG_DATABASE_URL": f"sqlite:///{tmp_path / 'empty.db'}"}, tmp_path)
    assert out.returncode == 2 and "qsg db upgrade" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    out = _serve({"QSG_REDIS_URL": redis_url,
                  "QSG_DATABASE_URL": f"postgresql://postgres@127.0.0.1:{free_port()}/none"}, tmp_path)
    assert out.returncode == 2 and "cannot reach the shared repository" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_db_upgrade_is_idempotent(tmp_path):
    url = f"sqlite:///{tmp_path / 'u.db'}"
    for _ in range(2):
        out = subprocess.run([sys.executable, "-m", "app.cli", "db", "upgrade", "--database-url", url],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "current" in out.stdout, out.stderr


def test_settings_reject_bad_names():
    out = subprocess.run([sys.executable, "-m", "app.cli", "serve", "--qmgr", "qm-one"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "z/OS queue manager" in out.stderr
