"""A real queue-sharing group for tests: ``qsg serve`` processes sharing one real Redis and one
real repository (SQLite file or a fresh PostgreSQL database), talked to over real HTTP."""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from app.repository.db import upgrade
from tests.support.netproxy import NetProxy
from tests.support.redis_server import free_port

# Short leases: a QM that stops heartbeating is declared failed (and recovered) in seconds.
FAST = {"QSG_HEARTBEAT_INTERVAL_S": "0.2", "QSG_HEARTBEAT_TTL_S": "1.5"}

PG_ADMIN_URL = os.environ.get("QSG_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def create_pg_database() -> tuple[str, str]:
    """A fresh PostgreSQL database for one test run: (url, name)."""
    import psycopg

    name = f"qsg_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}", name


def drop_pg_database(name: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class QmProcess:
    """One queue manager server process."""

    name: str
    port: int
    env: dict[str, str]
    proc: subprocess.Popen | None = None
    log_path: Path | None = None
    paused: bool = False

    @property
    def url(self) -> str:
        """http, or https when the QM is started with a certificate (QSG_TLS_CERT)."""
        return f"{'https' if self.env.get('QSG_TLS_CERT') else 'http'}://127.0.0.1:{self.port}"

    @property
    def verify(self) -> ssl.SSLContext | bool:
        """What a test client trusts this QM with: the group's CA (QSG_TLS_CA), else its certificate
        itself (a self-signed one is its own CA)."""
        ca = self.env.get("QSG_TLS_CA") or self.env.get("QSG_TLS_CERT")
        return ssl.create_default_context(cafile=ca) if ca else True

    def start(self, wait: bool = True) -> None:
        assert self.log_path is not None
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve"], env=self.env,
                                     stdout=log, stderr=subprocess.STDOUT)
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.proc.returncode}):\n{self.log()}")
            try:
                r = httpx.get(f"{self.url}/v1/ready", timeout=1, verify=self.verify)
                if r.status_code == 200:
                    # this queue manager, not some other server that holds the port
                    expected = self.env.get("QSG_QMGR")
                    assert not expected or r.json().get("qmgr") == expected, f"{self.url} is {r.text}, not {expected}"
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} not ready in {timeout_s}s:\n{self.log()}")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def pause(self) -> None:
        """SIGSTOP: the process keeps its sockets but runs no code (a long GC pause, a stalled
        VM) - its heartbeat lease lapses while it still believes it is a member."""
        assert self.alive, f"{self.name} is not running"
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        """SIGCONT after ``pause``; a no-op when not paused or no longer running."""
        if self.paused and self.alive:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGCONT)
        self.paused = False

    def stop(self) -> None:
        self.resume()  # a stopped process cannot act on SIGTERM
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()  # SIGKILL ends a stopped process too
            self.proc.wait()
        self.paused = False

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path and self.log_path.exists() else ""


@dataclass
class Cluster:
    """Several queue managers of one QSG on one Redis and one repository."""

    redis_url: str
    database_url: str
    workdir: Path
    qsg: str = "QSG1"
    qms: dict[str, QmProcess] = field(default_factory=dict)
    extra_env: dict[str, str] = field(default_factory=dict)
    qm_env: dict[str, dict[str, str]] = field(default_factory=dict)  # QM name -> its own extra env
    redis_server: Any = None  # the tests' RedisServer, for fault tests
    proxies: dict[str, NetProxy] = field(default_factory=dict)  # QM name -> its proxy to Redis

    def add(self, name: str, start: bool = True, redis_via_proxy: bool = False) -> QmProcess:
        """Define (and by default start) queue manager ``name``. With ``redis_via_proxy`` its
        Redis traffic goes through a ``NetProxy`` of its own, ``self.proxies[name]``, so a test
        can partition that one QM from the coupling facility (restarts keep the proxy)."""
        port = free_port()
        redis_url = self.redis_url
        if redis_via_proxy:
            if name not in self.proxies:
                host, _, rest = self.redis_url.removeprefix("redis://").partition(":")
                target_port = int(rest.split("/", 1)[0])
                self.proxies[name] = NetProxy(host, target_port).start()
            redis_url = self.proxies[name].redis_url(int(self.redis_url.rsplit("/", 1)[1] or 0))
        env = {**os.environ, "QSG_QMGR": name, "QSG_QSG": self.qsg, "QSG_PORT": str(port),
               "QSG_REDIS_URL": redis_url, "QSG_DATABASE_URL": self.database_url,
               "QSG_ACTIVITY_DIR": str(self.workdir / "activity"), "QSG_MQLOG_DIR": str(self.workdir / "mqlog"),
               "QSG_LOG_LEVEL": os.environ.get("QSG_TEST_LOG_LEVEL", "warning"),
               # authentication is on by default: tests that are not about security say off explicitly
               "QSG_AUTH": "off", **self.extra_env, **self.qm_env.get(name, {})}
        qm = QmProcess(name, port, env, log_path=self.workdir / f"{name}.log")
        self.qms[name] = qm
        if start:
            qm.start()
        return qm

    def start(self, names: list[str], proxied: tuple[str, ...] | list[str] = ()) -> None:
        """Start ``names`` together; those in ``proxied`` reach Redis through a NetProxy."""
        upgrade(self.database_url)
        for name in names:
            self.add(name, start=False, redis_via_proxy=name in proxied).start(wait=False)
        for name in names:
            self.qms[name].wait_ready()

    def stop(self) -> None:
        """Stop every QM (resuming paused ones first, healing partitions so they can leave the
        group cleanly), then every proxy. Safe to call twice."""
        for proxy in self.proxies.values():
            if proxy.partitioned:
                proxy.heal()
        for qm in self.qms.values():
            qm.resume()
        for qm in self.qms.values():
            try:
                qm.stop()
            except Exception:  # noqa: BLE001 - one QM's trouble must not leave the others running
                qm.kill()
        for proxy in self.proxies.values():
            proxy.stop()

    def url(self, name: str) -> str:
        return self.qms[name].url

    def mqsc(self, name: str, script: str) -> list[dict[str, Any]]:
        """Run MQSC on a QM; returns the per-command results."""
        r = httpx.post(f"{self.url(name)}/v1/admin/mqsc", json={"script": script}, timeout=60,
                       verify=self.qms[name].verify)
        assert r.status_code == 200, r.text
        return r.json()["results"]

    def wait_for_waiter(self, queue: str, struct: str = "APPL1", private_of: str | None = None) -> None:
        """Return once a getter waits on ``queue`` - a shared queue of ``struct``, or the
        private queue of queue manager ``private_of``: a waiting get registers in the coupling
        facility (the queue's waiters key), which is the event to await."""
        from app.cf.keys import QueueKeys, QueueLocation, private_tag, shared_tag
        from tests.support.redis_cluster import sync_client

        tag = private_tag(self.qsg, private_of) if private_of else shared_tag(self.qsg, struct)
        key = QueueKeys(QueueLocation(tag, queue)).waiters
        client = sync_client(self.pageset_url(private_of) if private_of else self.redis_url)
        deadline = time.monotonic() + 20
        try:
            while not client.exists(key):
                assert time.monotonic() < deadline, f"no getter started waiting on {queue}"
                time.sleep(0.01)
        finally:
            client.close()

    def pageset_url(self, name: str) -> str:
        """The URL of queue manager ``name``'s page set (its own redis-server, started by it)."""
        from app.cf.pageset import pageset_folder

        return (pageset_folder(self.workdir / "mqlog", self.qsg, name) / "url").read_text().strip()

    def mqsc_failed(self, name: str, script: str) -> dict[str, Any]:
        """The one result of a one-command ``script``, which must have failed."""
        (res,) = self.mqsc(name, script)
        assert res["completion_code"] == 2, res
        return res

    def mqsc_ok(self, name: str, script: str) -> list[dict[str, Any]]:
        """Run MQSC and insist every command completed."""
        results = self.mqsc(name, script)
        failed = [r for r in results if r["completion_code"] != 0]
        assert not failed, failed
        return results
