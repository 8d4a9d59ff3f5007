"""Shared test fixtures.

Redis fixtures (this block is self-contained; add other fixtures below it):
``redis_server`` - one real redis-server per test session (tests.support.redis_server.RedisServer);
``redis_url`` - its URL, with the server FLUSHALLed before each test.
Fault tests that stop, kill or restart Redis start their own ``RedisServer`` instead.

The ``fast`` marker (``pytest -m fast``: the edit-test loop, no server) is given here to every
test that starts nothing: see ``pytest_collection_modifyitems``.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:  # import app/ and tests/ without an installed package
    sys.path.insert(0, str(_ROOT))

from tests.support.redis_server import RedisServer  # noqa: E402


def _flushall(port: int) -> None:
    """FLUSHALL over a raw socket (no client library state shared between tests)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5.0) as s:
        s.sendall(b"*1\r\n$8\r\nFLUSHALL\r\n")
        reply = s.recv(64)
    if not reply.startswith(b"+OK"):
        raise RuntimeError(f"FLUSHALL failed: {reply!r}")


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A real redis-server for the whole session (no persistence)."""
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """URL of the session's redis-server, emptied before the test."""
    if redis_server.proc is None or redis_server.proc.poll() is not None:
        redis_server.start()  # a test stopped it: bring it back for the next ones
    _flushall(redis_server.port)
    return redis_server.url


# ---- queue-sharing groups of real `qsg serve` processes ------------------------------------

from tests.support.cluster import Cluster, create_pg_database, drop_pg_database  # noqa: E402
from tests.support.redis_cluster import RedisClusterServer, cluster_wanted  # noqa: E402


class _ClusterMaker:
    """Starts groups (each with its own redis-server and repository) and tears all of them down:
    paused QMs are resumed, partitions healed, QMs and proxies stopped, Redis and PostgreSQL
    databases removed - even when a test failed half-way through a fault."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory, on_cluster: bool = False) -> None:
        self.tmp_path_factory = tmp_path_factory
        self.on_cluster = on_cluster
        self.made: list[tuple[Cluster, RedisServer | RedisClusterServer, str | None]] = []

    def __call__(self, names: list[str], database: str = "sqlite", env: dict[str, str] | None = None,
                 aof: bool = False, proxied: tuple[str, ...] | list[str] = (),
                 qm_env: dict[str, dict[str, str]] | None = None) -> Cluster:
        workdir = self.tmp_path_factory.mktemp("qsg")
        server: RedisServer | RedisClusterServer
        if self.on_cluster and not proxied:  # a 3-master Redis Cluster
            server = RedisClusterServer(aof=aof)
        else:
            server = RedisServer(aof=aof)
        server.start()
        pg_name = None
        if database == "postgresql":
            url, pg_name = create_pg_database()
        else:
            url = f"sqlite:///{workdir / 'qsg.db'}"
        cluster = Cluster(server.url, url, workdir, extra_env=env or {}, qm_env=qm_env or {})
        cluster.redis_server = server
        self.made.append((cluster, server, pg_name))
        cluster.start(names, proxied=proxied)
        return cluster

    def teardown(self) -> None:
        errors: list[BaseException] = []
        for cluster, server, pg_name in self.made:
            for step in (cluster.stop, server.cleanup, (lambda n=pg_name: drop_pg_database(n)) if pg_name else None):
                if step is None:
                    continue
                try:
                    step()
                except Exception as exc:  # noqa: BLE001 - clean up the rest, report the first
                    errors.append(exc)
        self.made.clear()
        if errors:
            raise errors[0]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Modules marked ``group_suite`` run twice: on one redis-server and on a 3-master Redis
    Cluster (the group's behaviour must not depend on which coupling facility it has)."""
    if "cf_backend" in metafunc.fixturenames and metafunc.definition.get_closest_marker("group_suite"):
        metafunc.parametrize("cf_backend", ["redis", "cluster"], scope="module", indirect=True)


@pytest.fixture(scope="module")
def cf_backend(request: pytest.FixtureRequest) -> str:
    """``redis`` or ``cluster``: the coupling facility ``make_cluster`` starts its groups on (both,
    in turn, for a ``group_suite`` module; otherwise ``cluster`` with ``QSG_TEST_REDIS=cluster``)."""
    return getattr(request, "param", "cluster" if cluster_wanted() else "redis")


@pytest.fixture(scope="module")
def make_cluster(tmp_path_factory, cf_backend):
    """Factory: ``make_cluster(["QM1", "QM2"], database="sqlite"|"postgresql", env={...}, aof=False,
    proxied=(), qm_env={"QM2": {...}})`` starts a group with its own redis-server (with ``QSG_TEST_REDIS=cluster``: its
    own 3-master Redis Cluster, tests.support.redis_cluster) (``cluster.redis_server``; AOF with
    fsync always when ``aof``) and a fresh repository; the QMs named in ``proxied`` reach Redis
    through a ``NetProxy`` (``cluster.proxies[name]``); ``qm_env`` adds environment variables to one
    QM only (e.g. libfaketime's, to skew its clock). All are stopped at module end (paused
    QMs resumed first, partitions healed)."""
    maker = _ClusterMaker(tmp_path_factory, on_cluster=cf_backend == "cluster")
    yield maker
    maker.teardown()


@pytest.fixture
def make_fresh_cluster(tmp_path_factory, cf_backend):
    """``make_cluster`` whose groups are stopped at the end of the test, not of the module: for
    fault tests that leave a group in a state no other test should inherit."""
    maker = _ClusterMaker(tmp_path_factory, on_cluster=cf_backend == "cluster")
    yield maker
    maker.teardown()


# ---- one queue manager in this process, on an injected clock --------------------------------


@pytest.fixture
async def qm(redis_url, tmp_path):
    """A started ``QueueManager`` QM1 (real Redis, SQLite), its clock a ``ManualClock``, with
    CFSTRUCT APPL1, REPLY.Q and DEADQ DLQ defined; drive it with ``tests.support.inproc.App``."""
    from app.cf.redisconn import make_redis
    from app.cmdserver.server import CommandServer
    from app.core.clock import ManualClock
    from app.qmgr.qmgr import QueueManager
    from app.repository.db import make_engine, upgrade
    from app.repository.store import Repository
    from app.settings import Settings
    from tests.support.inproc import mqsc

    url = f"sqlite:///{tmp_path / 'q.db'}"
    upgrade(url)
    clock = ManualClock(1_800_000_000_000)
    manager = QueueManager(Settings(qmgr="QM1", redis_url=redis_url, database_url=url, auth="off"),
                           Repository(make_engine(url), "QSG1"), make_redis(redis_url), clock,
                           command_server=CommandServer)
    await manager.start()
    await mqsc(manager, "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\nDEFINE QLOCAL(REPLY.Q)\nDEFINE QLOCAL(DLQ)\n"
                        "ALTER QMGR DEADQ(DLQ)")
    yield manager
    await manager.stop()
    await manager.redis.aclose()


# ---- Spark (analytics job tests) -----------------------------------------------------------


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for the whole run (a session takes 6-9 s to start here)."""
    import os

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from spark_jobs.activity_daily import spark_session

    # A short-lived JVM on frames of a few rows: the C1 compiler and a serial GC start faster;
    # no web UI; query planning and code generation cost more than they save on such frames
    # (adaptive execution, whole-stage codegen off), and two shuffle partitions are plenty.
    # The results do not depend on these; the job itself keeps Spark's defaults.
    session = spark_session("local[2]", {
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.codegen.wholeStage": "false",
    })
    yield session
    session.stop()


# ---- the fast tests: no server -------------------------------------------------------------

#: Fixtures that start a server (Redis, a queue manager, a group, Spark), directly or not.
_SERVER_FIXTURES = frozenset({"redis_server", "redis_url", "qm", "make_cluster", "make_fresh_cluster",
                              "cf_backend", "spark"})
#: Words of a test module that starts something itself (a server, a process, a network proxy):
#: none of its tests is fast.
_STARTS_SOMETHING = ("RedisServer", "redis_server", "subprocess", "uvicorn", "make_redis", "spark", "docker",
                     "tests.support.cluster", "tests.support.inproc", "tests.support.redis_cluster",
                     "tests.support.pymqi_group", "tests.support.netproxy", "local_cluster", "pageset")


#: Modules that take minutes each (a Spark cluster, the labs' own groups, fault soaks): collected
#: first, so that the xdist workers run them alongside the rest instead of one alone at the end.
_LONG_MODULES = ("test_docs_spark.py", "test_analytics_cluster.py", "test_docs_labs_faults.py", "test_docs_labs.py",
                 "test_soak_faults.py", "test_redis_cluster_failover.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``fast`` each test that uses no server fixture, in a module that starts nothing (a
    module the words mislead can say ``pytestmark = pytest.mark.fast`` itself); long modules first."""
    items.sort(key=lambda item: item.path.name not in _LONG_MODULES)  # stable: the rest keep their order
    quiet: dict[Path, bool] = {}
    for item in items:
        if item.get_closest_marker("fast") is not None:
            continue
        path = item.path
        if path not in quiet:
            text = path.read_text(errors="replace")
            quiet[path] = not any(word in text for word in _STARTS_SOMETHING)
        if quiet[path] and not _SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.fast)
