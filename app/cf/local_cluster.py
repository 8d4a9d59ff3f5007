"""A local Redis Cluster started from the installed ``redis-server`` (``qsg up --redis-cluster N``
and the tests): N masters on 127.0.0.1, slots shared out by ``redis-cli --cluster create``.

The settings that matter for a coupling facility (docs/howto/redis-cluster.md):

* ``cluster-node-timeout`` well below the queue managers' heartbeat lease, so a failed master
  is replaced (or declared failed) before the group declares its queue managers failed;
* ``cluster-require-full-coverage no``: while one master fails over, the structures of the
  other masters keep serving (z/OS: one failed structure does not stop the others);
* AOF on every master (``aof=True``): a restarted master comes back with its structures.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

#: Milliseconds before the cluster declares a silent node failed (below the default 10 s lease).
NODE_TIMEOUT_MS = 1000


def _command(port: int, *args: str, timeout_s: float = 2.0) -> bytes:
    """One RESP command over a raw socket (no client library state), its raw reply."""
    payload = f"*{len(args)}\r\n".encode() + b"".join(
        f"${len(a.encode())}\r\n".encode() + a.encode() + b"\r\n" for a in args)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as s:
        s.sendall(payload)
        data = b""
        s.settimeout(timeout_s)
        while True:
            chunk = s.recv(65536)
            data += chunk
            if not chunk or data.endswith(b"\r\n") and _complete(data):
                return data


def _complete(data: bytes) -> bool:
    if data[:1] != b"$":
        return True
    size, _, rest = data[1:].partition(b"\r\n")
    return int(size) < 0 or len(rest) >= int(size) + 2


@dataclass
class ClusterNodeProcess:
    """One redis-server of the cluster."""

    port: int
    dir: Path
    bus_port: int = 0
    proc: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


@dataclass
class LocalRedisCluster:
    """``masters`` redis-server processes in cluster mode on ``ports`` (one per node), data under
    ``workdir``; ``replicas`` replicas per master (extra ports after the masters'). The cluster
    bus of a node listens on ``bus_ports`` (default: its port + 10000, Redis's own rule, which
    needs ports up to 55535)."""

    ports: list[int]
    workdir: Path
    bus_ports: list[int] = field(default_factory=list)
    masters: int = 3
    replicas: int = 0
    aof: bool = True
    binary: str = ""
    nodes: list[ClusterNodeProcess] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.ports) != self.masters * (1 + self.replicas):
            raise ValueError(f"{self.masters * (1 + self.replicas)} ports needed, {len(self.ports)} given")
        if self.masters < 3:
            raise ValueError("a Redis Cluster needs at least 3 masters")
        self.binary = self.binary or shutil.which("redis-server") or ""
        if not self.binary:
            raise RuntimeError("no redis-server is installed: install Redis (e.g. apt-get install redis-server)")
        bus = self.bus_ports or [p + 10000 for p in self.ports]
        self.nodes = [ClusterNodeProcess(p, self.workdir / f"node-{p}", b)
                      for p, b in zip(self.ports, bus, strict=True)]

    @property
    def url(self) -> str:
        """The ``redis+cluster://`` URL naming every node as a seed."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def _args(self, node: ClusterNodeProcess) -> list[str]:
        args = [self.binary, "--port", str(node.port), "--bind", "127.0.0.1", "--dir", str(node.dir),
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-port", str(node.bus_port),
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
                "--cluster-require-full-coverage", "no",
                "--save", "", "--daemonize", "no", "--protected-mode", "no",
                "--logfile", str(node.dir / "redis.log")]
        if self.aof:
            args += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            args += ["--appendonly", "no"]
        return args

    def start_node(self, node: ClusterNodeProcess, timeout_s: float = 10.0) -> None:
        """Start one node (again: it rejoins with its nodes.conf) and wait for PING."""
        node.dir.mkdir(parents=True, exist_ok=True)
        node.proc = subprocess.Popen(self._args(node), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while True:
            if node.proc.poll() is not None:
                raise RuntimeError(f"redis-server on port {node.port} exited: see {node.dir / 'redis.log'}")
            try:
                if _command(node.port, "PING").startswith(b"+PONG"):
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"redis-server on port {node.port} did not answer PING")
            time.sleep(0.02)  # start-up poll of an external process

    def start(self, timeout_s: float = 30.0) -> None:
        """Start every node, create the cluster, and return once every node sees it whole."""
        for node in self.nodes:
            self.start_node(node)
        cli = shutil.which("redis-cli") or str(Path(self.binary).with_name("redis-cli"))
        created = subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in self.nodes),
             "--cluster-replicas", str(self.replicas), "--cluster-yes"],
            capture_output=True, timeout=timeout_s, check=False)
        if created.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed: {created.stdout.decode(errors='replace')[-2000:]}"
                               f"{created.stderr.decode(errors='replace')[-2000:]}")
        self.wait_ok(timeout_s)

    def wait_ok(self, timeout_s: float = 30.0) -> None:
        """Return once every running node reports ``cluster_state:ok`` and knows all nodes."""
        deadline = time.monotonic() + timeout_s
        while True:
            states = []
            for node in self.nodes:
                if not node.running:
                    continue
                try:
                    info = _command(node.port, "CLUSTER", "INFO")
                except OSError:
                    info = b""
                states.append(b"cluster_state:ok" in info and b"cluster_slots_assigned:16384" in info)
            if states and all(states):
                return
            if time.monotonic() > deadline:
                raise TimeoutError("the Redis Cluster did not reach cluster_state:ok")
            time.sleep(0.05)  # an external process's state: poll

    def node_of_key(self, key: str) -> ClusterNodeProcess:
        """The master node that holds ``key``'s slot now (asked of the first running node)."""
        import redis as syncredis

        for node in self.nodes:
            if not node.running:
                continue
            client = syncredis.Redis(port=node.port, socket_timeout=2.0)
            try:
                slot = int(client.execute_command("CLUSTER", "KEYSLOT", key))  # type: ignore[no-untyped-call]
                slots = client.execute_command("CLUSTER", "SLOTS")  # type: ignore[no-untyped-call]
                for start, end, master, *_replicas in slots:
                    if int(start) <= slot <= int(end):
                        return next(n for n in self.nodes if n.port == int(master[1]))
            finally:
                client.close()
        raise LookupError(f"no node holds the slot of {key}")

    def kill(self, node: ClusterNodeProcess) -> None:
        """Crash one node (SIGKILL)."""
        if node.running:
            assert node.proc is not None
            os.kill(node.proc.pid, signal.SIGKILL)
            node.proc.wait(timeout=10)

    def stop(self) -> None:
        """Stop every node (SIGTERM, then SIGKILL after 10 s)."""
        for node in self.nodes:
            if node.running:
                assert node.proc is not None
                node.proc.send_signal(signal.SIGTERM)
        for node in self.nodes:
            if node.proc is not None:
                try:
                    node.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    node.proc.kill()
                    node.proc.wait(timeout=10)

    def cleanup(self) -> None:
        """Stop every node and remove the data."""
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

