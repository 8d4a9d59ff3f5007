"""Synchronous checks of the coupling facility made before a queue manager starts (``qsg serve``)."""

from __future__ import annotations

import time
from typing import Any

import redis as syncredis
from redis.cluster import ClusterNode as SyncClusterNode
from redis.cluster import RedisCluster as SyncRedisCluster

from app.cf.codec import text
from app.cf.keys import heartbeat_key
from app.cf.redisconn import cluster_seeds, is_cluster_url
from app.core.errors import MQError
from app.core.reasons import MQRC


class CFUnreachable(MQError):
    """MQRC_CF_NOT_AVAILABLE before start-up; ``cause`` is what went wrong, for the operator."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(MQRC.CF_NOT_AVAILABLE, str(cause))
        self.cause = cause


def _client(url: str) -> syncredis.Redis | SyncRedisCluster:
    """A short-lived synchronous client of ``url`` (a cluster's seeds tried in turn)."""
    if is_cluster_url(url):
        seeds, creds = cluster_seeds(url)
        nodes = [SyncClusterNode(h, p) for h, p in seeds]  # type: ignore[no-untyped-call]
        return SyncRedisCluster(startup_nodes=nodes, socket_connect_timeout=3, socket_timeout=3,
                                require_full_coverage=False, **creds)  # type: ignore[arg-type]
    return syncredis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)


def _live_holder(client: Any, key: str, ttl_s: float, interval_s: float) -> str | None:
    deadline = time.monotonic() + ttl_s + 2 * interval_s
    last = int(client.pttl(key))
    while last > 0 and time.monotonic() < deadline:
        time.sleep(min(0.1, interval_s / 4))
        now = int(client.pttl(key))
        if now > last:  # renewed: the holder is alive
            return _holder(client, key)
        last = now
    return None if last <= 0 else _holder(client, key)


def _holder(client: Any, key: str) -> str:
    value = client.get(key)
    return "?" if value is None else text(value)


def heartbeat_holder(url: str, qsg: str, qmgr: str, *, ttl_s: float, interval_s: float) -> str | None:
    """Who holds ``qmgr``'s heartbeat lease, if that holder is alive (None: the name is free).

    A lease left by a QM that died lapses within the heartbeat TTL; one held by a live process
    is renewed every heartbeat interval. So watch it: renewed means a live duplicate, gone
    means the name is free (a restart after a failure). Raises ``CFUnreachable`` when Redis
    does not answer (or the URL is not valid).
    """
    try:
        client = _client(url)
        if not is_cluster_url(url):  # a cluster's PING asks every master; the key's own answers below
            client.ping()
        holder = _live_holder(client, heartbeat_key(qsg, qmgr), ttl_s, interval_s)
        client.close()
    except (syncredis.RedisError, syncredis.exceptions.RedisClusterException, OSError, ValueError) as exc:
        raise CFUnreachable(exc) from None
    return holder
