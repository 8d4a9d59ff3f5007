"""Redis clients for the coupling facility, with the pitfalls of redis-py 8 (docs/design.md §5) handled.

* RESP2 (``protocol=2``): redis-py 8 defaults to RESP3, whose reply shapes differ (maps, sets,
  doubles); the scripts' replies are parsed assuming RESP2.
* No automatic retry: redis-py 8 re-sends a failed command up to 10 times by default. A retried
  destructive MQGET script could remove a message whose first reply was lost, handing it to
  nobody. A connection error must surface once, as an MQRC (the engine maps it).
* Short connect timeout, a bounded socket timeout, periodic health checks; bytes in and out
  (message bodies are bytes).
* Blocking waits (pub/sub, BLPOP-style calls) need a socket timeout longer than any wait they
  make: ``blocking_timeout_s``.

Redis Cluster (``redis+cluster://host:port[,host:port...]``): the seeds are tried in turn, so one
dead seed does not stop a start; the client learns the slot map from the first that answers and
routes each command by its key's slot. Every key of one CF structure shares a hash tag, so each
structure is one slot on one master. The rules above hold: no retry of anything that may have
run (a MOVED/ASK redirection means the command did not run, so following it is safe).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast
from urllib.parse import unquote, urlsplit

import hiredis
from redis._parsers import AsyncCommandsParser
from redis.asyncio import Redis, RedisCluster
from redis.asyncio.cluster import ClusterNode
from redis.asyncio.connection import Connection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

#: The client type the coupling facility is built on (for annotations outside app.cf). A cluster
#: client (``RedisCluster``) offers the same commands and is used through the same annotations.
RedisClient = Redis

#: URL scheme of a Redis Cluster: ``redis+cluster://host:port[,host:port...]`` (seed nodes).
CLUSTER_SCHEME = "redis+cluster"

#: Seconds to wait for a TCP connection to Redis: an unreachable CF must fail fast.
CONNECT_TIMEOUT_S = 2.0
#: Socket timeout of ordinary commands (every script is short).
SOCKET_TIMEOUT_S = 5.0
#: Margin added to a blocking client's longest wait.
BLOCKING_MARGIN_S = 5.0
#: An idle pooled connection is PINGed before reuse after this many seconds.
HEALTH_CHECK_INTERVAL_S = 30


class HiredisPackingConnection(Connection):
    """A connection that packs commands with hiredis's C packer.

    redis-py's asyncio connection always packs in Python, one encode per argument: about a
    tenth of an MQPUT's cost, whose script takes some twenty arguments. hiredis packs
    str/bytes/int/float arguments identically, and is installed with redis[hiredis].
    """

    def pack_command(self, *args: Any) -> list[bytes]:
        if isinstance(args[0], str) and " " in args[0]:  # "CONFIG RESETSTAT" style names
            args = (*args[0].split(), *args[1:])
        try:
            return [hiredis.pack_command(cast(Any, args))]  # str, bytes, int, float: the usual case
        except TypeError:
            pass
        try:  # bytearray / memoryview arguments: as bytes (a put-batch's arguments are many)
            packed: bytes = hiredis.pack_command(cast(Any, tuple(
                bytes(a) if isinstance(a, (bytearray, memoryview)) else a for a in args)))
            return [packed]
        except TypeError:
            return super().pack_command(*args)  # a type hiredis does not pack: redis-py's own rules


def no_retry() -> Retry:
    """A retry policy that never retries (redis.asyncio's Retry with 0 retries)."""
    return Retry(NoBackoff(), 0)


def is_cluster_url(url: str) -> bool:
    """True for a ``redis+cluster://`` URL."""
    return url.split("://", 1)[0].lower() == CLUSTER_SCHEME


def cluster_seeds(url: str) -> tuple[list[tuple[str, int]], dict[str, str]]:
    """The seed nodes ``[(host, port)]`` of a ``redis+cluster://[user:password@]h:p,h:p/`` URL
    and its credentials (``username``/``password`` when given). Raises ValueError when the URL
    names no node or a port is not a number."""
    scheme, _, rest = url.partition("://")
    if scheme.lower() != CLUSTER_SCHEME:
        raise ValueError(f"not a {CLUSTER_SCHEME}:// URL: {url}")
    netloc = rest.split("/", 1)[0].split("?", 1)[0]
    creds: dict[str, str] = {}
    if "@" in netloc:
        userinfo, netloc = netloc.rsplit("@", 1)
        user, _, password = userinfo.partition(":")
        if user:
            creds["username"] = unquote(user)
        if password:
            creds["password"] = unquote(password)
    seeds: list[tuple[str, int]] = []
    for item in netloc.split(","):
        item = item.strip()
        if not item:
            continue
        parts = urlsplit("//" + item)
        if parts.hostname is None:
            raise ValueError(f"bad seed node {item!r} in {url}")
        seeds.append((parts.hostname, parts.port or 6379))
    if not seeds:
        raise ValueError(f"no seed node in {url}")
    return seeds, creds


def _client_options(socket_timeout: float) -> dict[str, Any]:
    return {
        "protocol": 2,
        "retry": no_retry(),
        "socket_connect_timeout": CONNECT_TIMEOUT_S,
        "socket_timeout": socket_timeout,
        "socket_keepalive": True,
        "health_check_interval": HEALTH_CHECK_INTERVAL_S,
        "decode_responses": False,
    }


def make_redis(url: str, *, blocking_timeout_s: float | None = None,
               socket_timeout_s: float = SOCKET_TIMEOUT_S) -> Redis:
    """An asyncio Redis client for ``url`` (``redis://host:port/db``, or a cluster's
    ``redis+cluster://host:port[,host:port...]``: then a ``RedisCluster``, typed as ``Redis``
    because the engine uses the commands both offer).

    ``blocking_timeout_s``: None for an ordinary client (socket timeout ``socket_timeout_s``,
    ``QSG_CF_TIMEOUT_S``: how long a call waits for its reply; state-changing scripts carry a
    deadline just short of it, app/cf/deadline.py); for a client whose commands block, the
    longest time one call may block - the socket timeout becomes that plus
    ``BLOCKING_MARGIN_S`` so a legitimate wait is never cut short.
    """
    socket_timeout = socket_timeout_s
    if blocking_timeout_s is not None:
        socket_timeout = max(socket_timeout_s, blocking_timeout_s + BLOCKING_MARGIN_S)
    if is_cluster_url(url):
        return cast(Redis, make_cluster(url, socket_timeout=socket_timeout))
    return Redis.from_url(url, retry_on_error=[], connection_class=HiredisPackingConnection,
                          **_client_options(socket_timeout))


def make_cluster(url: str, *, socket_timeout: float = SOCKET_TIMEOUT_S) -> RedisCluster:
    """A ``RedisCluster`` client of the seeds of ``url`` with the rules of ``make_redis``: RESP2,
    no retry at either level (the cluster client's own retry re-sends a command after a
    connection error, which could run a destructive script twice), the hiredis packer.
    Redirections (MOVED/ASK) are still followed: a redirected command did not run."""
    seeds, creds = cluster_seeds(url)
    options = {**_client_options(socket_timeout), **creds}
    nodes = [ClusterNode(host, port) for host, port in seeds]  # rebuilt by RedisCluster with its options
    client = RedisCluster(startup_nodes=nodes, require_full_coverage=False,
                          dynamic_startup_nodes=True, **options)
    # RedisCluster takes no connection class: put the packer into the options it shares with the
    # nodes it makes later (one dict), and into the seed nodes made already.
    client.connection_kwargs["connection_class"] = HiredisPackingConnection
    for node in client.startup_nodes:
        node.connection_class = HiredisPackingConnection
    client.commands_parser = _CommandTableOnce()
    return client


class _CommandTableOnce(AsyncCommandsParser):
    """redis-py's cluster client loads the server's COMMAND table on every re-initialisation
    (after any node failed), from the first master of its map - which may be the failed one, so
    the client could not re-learn the map, and structures on the live masters would stop too.
    The table does not change: load it once, and after that only follow the new default node."""

    async def initialize(self, node: Any = None) -> None:
        if self.commands:
            if node is not None:
                self.node = node
            return
        await super().initialize(node)


def is_cluster(redis: Any) -> bool:
    """True when ``redis`` is a cluster client (``make_redis`` of a ``redis+cluster://`` URL)."""
    return isinstance(redis, RedisCluster)


def node_client(cluster: RedisCluster, host: str, port: int) -> Redis:
    """A plain client of one node of ``cluster`` with its options (a subscription lives on one
    node's connection; classic pub/sub reaches every node of a cluster)."""
    kw = cluster.connection_kwargs
    options = _client_options(float(kw.get("socket_timeout") or SOCKET_TIMEOUT_S))
    for name in ("username", "password"):
        if kw.get(name):
            options[name] = kw[name]
    return Redis(host=host, port=port, **options)  # pub/sub: few commands, the default packer


async def cluster_nodes(cluster: RedisCluster) -> list[tuple[str, int]]:
    """Every node ``cluster`` knows of, masters first, re-learning the map when it went stale
    (the seeds when none answers now: a subscriber tries them in turn)."""
    if cluster._initialize:  # first use, or a node failed since: ask the seeds again
        try:
            await cluster.initialize()
        except Exception:  # noqa: BLE001 - no node answers now: try the seeds one after another
            return [(n.host, int(n.port)) for n in cluster.startup_nodes]
    nodes = sorted(cluster.get_nodes(), key=lambda n: n.server_type != "primary")
    return [(n.host, int(n.port)) for n in nodes]


async def scan_tagged(redis: Any, match: str, *, count: int | None = None) -> AsyncIterator[bytes]:
    """SCAN for ``match``, a pattern whose keys share one hash tag (``{tag}:...*``): on a Redis
    Cluster only the master of that tag's slot is scanned, so a scan does not fail because some
    other master is down; on a single Redis, the usual SCAN."""
    if not is_cluster(redis):
        async for key in redis.scan_iter(match=match, count=count):
            yield key
        return
    if redis._initialize:
        await redis.initialize()
    node = redis.get_node_from_key(match)
    async for key in redis.scan_iter(match=match, count=count, target_nodes=node):
        yield key


def socket_timeout_of(redis: Any) -> float:
    """The socket timeout of ``redis`` (a single Redis's or a cluster's client), in seconds:
    how long a call waits for its reply before it gives up."""
    kwargs = getattr(redis, "connection_kwargs", None)  # a cluster client
    if kwargs is None:
        kwargs = redis.connection_pool.connection_kwargs
    return float(kwargs.get("socket_timeout") or SOCKET_TIMEOUT_S)
