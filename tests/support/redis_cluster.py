"""A real 3-master Redis Cluster for tests, on free ports (``app.cf.local_cluster.LocalRedisCluster``).

``QSG_TEST_REDIS=cluster`` makes the standard ``make_cluster`` fixture start its groups on such a
cluster instead of one redis-server, so any group test file runs against a cluster:
    QSG_TEST_REDIS=cluster python -m pytest tests/test_group.py
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import redis

from app.cf.local_cluster import LocalRedisCluster
from tests.support.redis_server import free_port


def cluster_wanted() -> bool:
    """True when the group tests should run on a Redis Cluster (``QSG_TEST_REDIS=cluster``)."""
    return os.environ.get("QSG_TEST_REDIS", "").lower() == "cluster"


class RedisClusterServer(LocalRedisCluster):
    """A ``LocalRedisCluster`` of ``masters`` masters (``replicas`` each) on free ports, in a
    temporary directory; no persistence unless ``aof``. ``url`` names every node as a seed."""

    def __init__(self, masters: int = 3, *, replicas: int = 0, aof: bool = False) -> None:
        n = masters * (1 + replicas)
        super().__init__(ports=[free_port() for _ in range(n)], bus_ports=[free_port() for _ in range(n)],
                         workdir=Path(tempfile.mkdtemp(prefix="qsg-rcluster-")), masters=masters,
                         replicas=replicas, aof=aof)

    def client(self) -> redis.RedisCluster:
        """A synchronous cluster client (tests look at keys with it)."""
        return redis.RedisCluster(startup_nodes=[redis.cluster.ClusterNode("127.0.0.1", n.port) for n in self.nodes
                                                 if n.running], require_full_coverage=False)

    def __enter__(self) -> RedisClusterServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


def sync_client(url: str) -> redis.Redis | redis.RedisCluster:
    """A synchronous client of a ``redis://`` or ``redis+cluster://`` URL (test helpers)."""
    if url.startswith("redis+cluster://"):
        from app.cf.redisconn import cluster_seeds

        seeds, _ = cluster_seeds(url)
        return redis.RedisCluster(startup_nodes=[redis.cluster.ClusterNode(h, p) for h, p in seeds],
                                  require_full_coverage=False)
    return redis.Redis.from_url(url)


def node_client_of(group: Any, key: str) -> redis.Redis:
    """A plain client of the Redis node that holds ``key`` in ``group``'s coupling facility: the
    one redis-server, or the cluster master of the key's slot (MONITOR, like any per-node
    command, sees only that node's traffic)."""
    server = group.redis_server
    if isinstance(server, RedisClusterServer):
        return redis.Redis(port=server.node_of_key(key).port)
    return redis.Redis.from_url(group.redis_url)
