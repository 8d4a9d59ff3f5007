"""``qsg up``: a whole queue-sharing group on this machine with embedded defaults.

Starts a Redis (the installed ``redis-server``) unless one is given, migrates a SQLite
repository, runs one ``qsg serve`` process per queue manager, prints their URLs, and stops
everything cleanly on Ctrl-C (SIGTERM to each queue manager, so they quiesce). With ``--tls``
every queue manager and the entry point serve HTTPS with a development certificate made (once)
under the group's folder, and how to trust it is printed.
"""

from __future__ import annotations

import os
import shutil
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx

from app.cf.pageset import free_port, redis_answers

SAMPLE_MQSC = """\
DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES) DESCR('Application structure of qsg up')
DEFINE QLOCAL(APP.SHARED.Q) QSGDISP(SHARED) CFSTRUCT(APPL1) DESCR('Sample shared queue')
DEFINE QLOCAL(SYSTEM.DEAD.LETTER.QUEUE) QSGDISP(GROUP) MAXDEPTH(999999999) DESCR('Dead-letter queue')
"""

# DEADQ is an attribute of each queue manager (ALTER QMGR acts on the QM it is sent to): sent to
# every QM of the group, naming the dead-letter queue that the GROUP definition gives each a COPY of.
SAMPLE_QMGR_MQSC = "ALTER QMGR DEADQ(SYSTEM.DEAD.LETTER.QUEUE)\n"


#: How long a queue manager may take to be ready. Three start at once, each with its page set;
#: on a busy machine (a test suite beside it) that took over a minute.
QM_START_S = 180


def _wait_for(check, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not come up within {timeout_s:.0f}s")


def _start_redis(workdir: Path) -> tuple[subprocess.Popen, str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("no redis-server is installed: install Redis (e.g. apt-get install redis-server) "
                           "or pass --redis-url redis://host:port/0")
    port = free_port()
    data = workdir / "redis"
    data.mkdir(parents=True, exist_ok=True)
    # AOF with fsync always: persistent messages on shared queues survive a restart (docs/explanation/reliability.md).
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data.resolve()),
                             "--appendonly", "yes", "--appendfsync", "always", "--save", ""],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"redis://127.0.0.1:{port}/0"

    _wait_for(lambda: redis_answers(port), 10, "redis-server")
    return proc, url


def _tls_env(workdir: Path) -> tuple[dict[str, str], ssl.SSLContext, Path]:
    """The development certificate of the group under ``workdir/tls``: the QSG_TLS_* variables
    every queue manager and the entry point get, the context to check them with, the CA file."""
    from app.tls import TlsError, dev_certificate

    try:
        files = dev_certificate(workdir / "tls")
    except (OSError, TlsError) as exc:
        raise RuntimeError(f"cannot make the development certificate under {workdir / 'tls'}: {exc}") from None
    env = {"QSG_TLS_CERT": str(files.cert.resolve()), "QSG_TLS_KEY": str(files.key.resolve()),
           "QSG_TLS_CA": str(files.ca.resolve())}
    return env, ssl.create_default_context(cafile=str(files.ca)), files.ca.resolve()


def _print_trust(ca: Path, url: str) -> None:
    """How each kind of client trusts the development CA (printed by ``qsg up --tls``)."""
    print(f"TLS: development certificate for localhost, 127.0.0.1 and ::1, signed by the CA {ca}")
    print("  trust it (nothing is added to the system's trust store):")
    print(f"    curl --cacert {ca} {url}/v1/qmgr")
    print(f"    qsg mqsc --url {url} --ca-file {ca}          (or export QSG_CA_FILE={ca})")
    print(f"    pymqi-shaped client: QueueManager(..., ca_file='{ca}')   (or export QSG_CA_FILE={ca})")
    print(f"    Python httpx / urllib: export SSL_CERT_FILE={ca}")
    print(f"    Python requests: export REQUESTS_CA_BUNDLE={ca}")
    print(f"    Node.js: export NODE_EXTRA_CA_CERTS={ca}")


#: Port of the first node of ``qsg up --redis-cluster N`` (the others follow; bus ports +10000).
CLUSTER_BASE_PORT = 7001


def _start_redis_cluster(workdir: Path, masters: int, first_port: int = CLUSTER_BASE_PORT):
    """A local Redis Cluster of ``masters`` masters on ports ``first_port``.. with AOF
    (app.cf.local_cluster); a second ``qsg up`` in the same folder restarts the same cluster with
    its data (the nodes find each other again through their nodes.conf)."""
    from app.cf.local_cluster import LocalRedisCluster

    cluster = LocalRedisCluster(ports=[first_port + i for i in range(masters)],
                                workdir=(workdir / "redis-cluster").resolve(), masters=masters, aof=True)
    if all((node.dir / "nodes.conf").exists() for node in cluster.nodes):
        for node in cluster.nodes:
            cluster.start_node(node)
        cluster.wait_ok()
    else:
        cluster.start()
    return cluster


def run_local_qsg(*, qmgrs: int, qsg: str, base_port: int, redis_url: str | None, workdir: Path,
                    sample: bool, auth: str = "off", tls: bool = False, redis_cluster: int = 0,
                    redis_cluster_port: int = CLUSTER_BASE_PORT) -> int:
    """Run the group until Ctrl-C; returns the exit status. ``redis_cluster``: start a local
    Redis Cluster of that many masters as the coupling facility (0: one redis-server)."""
    from app.repository.db import upgrade

    workdir.mkdir(parents=True, exist_ok=True)
    procs: list[subprocess.Popen] = []
    redis_proc = None
    local_cluster = None
    try:
        # Empty values without --tls: a QSG_TLS_* of the caller's shell must not turn the group's
        # printed http:// URLs into lies.
        tls_env = {"QSG_TLS_CERT": "", "QSG_TLS_KEY": "", "QSG_TLS_CA": ""}
        verify: ssl.SSLContext | bool = True
        ca_file = None
        if tls:
            tls_env, verify, ca_file = _tls_env(workdir)
        scheme = "https" if tls else "http"
        if redis_url is None and redis_cluster:
            local_cluster = _start_redis_cluster(workdir, redis_cluster, redis_cluster_port)
            redis_url = local_cluster.url
            print(f"coupling facility: Redis Cluster of {redis_cluster} masters at {redis_url} "
                  f"(data in {workdir / 'redis-cluster'})")
        elif redis_url is None:
            redis_proc, redis_url = _start_redis(workdir)
            print(f"coupling facility: redis-server at {redis_url} (data in {workdir / 'redis'})")
        database_url = f"sqlite:///{(workdir / 'qsg.db').resolve()}"
        upgrade(database_url)
        print(f"shared repository: {database_url}")
        urls = []
        for i in range(1, qmgrs + 1):
            name, port = f"QM{i}", base_port + i - 1
            env = {**os.environ, "QSG_QMGR": name, "QSG_QSG": qsg, "QSG_PORT": str(port),
                   "QSG_REDIS_URL": redis_url, "QSG_DATABASE_URL": database_url,
                   "QSG_ACTIVITY_DIR": str((workdir / "activity").resolve()), "QSG_LOG_LEVEL": "warning",
                   "QSG_MQLOG_DIR": str((workdir / "mqlog").resolve()),
                   "QSG_AUTH": auth, **tls_env}
            procs.append(subprocess.Popen([sys.executable, "-m", "app.cli", "serve"], env=env))
            urls.append((name, f"{scheme}://127.0.0.1:{port}"))
        for (name, url), proc in zip(urls, procs, strict=True):
            _wait_for(lambda url=url, proc=proc: _ready(url, verify) or proc.poll() is not None, QM_START_S, name)
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with status {proc.returncode}")
        if auth == "off":
            print("WARNING: authentication is OFF for this local group (qsg up --auth off, the default): "
                  "anyone who can reach these ports may use every queue and run MQSC")
        else:
            print(f"authentication is on: create users with qsg user add NAME --admin "
                  f"--database-url {database_url} --redis-url {redis_url}")
        if sample:
            _define_samples(urls, verify, database_url if auth == "on" else None, redis_url)
        gateway_url = f"{scheme}://127.0.0.1:{base_port - 1}"
        upstreams = ",".join(f"{name}={url}" for name, url in urls)
        procs.append(subprocess.Popen([sys.executable, "-m", "app.cli", "gateway", "--port", str(base_port - 1),
                                       "--upstreams", upstreams], env={**os.environ, **tls_env}))
        _wait_for(lambda: _ready(gateway_url, verify), 30, "the entry point")
        print(f"queue-sharing group {qsg} is up:")
        print(f"  any QM  {gateway_url}   (entry point: connections spread over the queue managers)")
        for name, url in urls:
            print(f"  {name}     {url}   (API docs: {url}/docs)")
        if ca_file is not None:
            _print_trust(ca_file, urls[0][1])
        if sample:
            print("sample shared queue APP.SHARED.Q on CFSTRUCT(APPL1) and dead-letter queue "
                  "SYSTEM.DEAD.LETTER.QUEUE (each QM's DEADQ) are defined; Ctrl-C stops the group")
        _wait_for_interrupt(procs)
        return 0
    except (RuntimeError, TimeoutError, ValueError) as exc:
        print(f"qsg up: {exc}", file=sys.stderr)
        return 2
    finally:
        _stop(procs)
        if local_cluster is not None:
            local_cluster.stop()
        if redis_proc is not None:
            redis_proc.terminate()
            redis_proc.wait(timeout=10)


def _define_samples(urls: list[tuple[str, str]], verify: ssl.SSLContext | bool, secured_db: str | None,
                    redis_url: str) -> None:
    """The sample definitions (made on first start; later starts find them defined). With
    authentication on (``secured_db``: the repository) they are made as a temporary
    administrator - a user with an API key only, deleted when they are done, the running
    queue managers told at once - so the README's promise holds whatever ``--auth`` says."""
    headers: dict[str, str] = {}
    store, setup_user = None, f"qsg-up-setup-{os.urandom(4).hex()}"
    if secured_db is not None:
        from app.repository.db import make_engine
        from app.repository.security import SecurityStore

        store = SecurityStore(make_engine(secured_db))
        store.add_user(setup_user, None, admin=True)
        headers = {"X-API-Key": store.new_key(setup_user)}
    try:
        httpx.post(f"{urls[0][1]}/v1/admin/mqsc", json={"script": SAMPLE_MQSC}, headers=headers, timeout=30,
                   verify=verify)
        for _, url in urls:
            httpx.post(f"{url}/v1/admin/mqsc", json={"script": SAMPLE_QMGR_MQSC}, headers=headers, timeout=30,
                       verify=verify)
    finally:
        if store is not None:
            import asyncio

            from app.cf.group import publish_from_outside
            from app.security.service import SECURITY_CHANGED

            store.delete_user(setup_user)
            # the queue managers forget the cached key now, not within QSG_AUTH_CACHE_S
            asyncio.run(publish_from_outside(redis_url, store.qsgs(), SECURITY_CHANGED, 10))


def _ready(url: str, verify: ssl.SSLContext | bool = True) -> bool:
    try:
        return httpx.get(f"{url}/v1/ready", timeout=1, verify=verify).status_code == 200
    except httpx.HTTPError:
        return False


def _wait_for_interrupt(procs: list[subprocess.Popen]) -> None:
    stop = False

    def _handler(_signum, _frame) -> None:
        nonlocal stop
        stop = True

    # Installed explicitly: a process started in the background inherits SIGINT ignored.
    signal.signal(signal.SIGTERM, _handler)
    signal.signal(signal.SIGINT, _handler)
    reported: set[int] = set()
    while not stop:
        for p in procs:
            if p.poll() is not None and p.pid not in reported:
                reported.add(p.pid)
                print(f"a queue manager process exited with status {p.returncode}", file=sys.stderr)
        time.sleep(0.5)
    print("stopping the queue-sharing group ...")


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
