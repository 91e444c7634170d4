"""A real Redis Cluster on free ports: six redis-servers (:class:`RedisProcess` nodes),
three primaries with a replica each (tests, benchmarks and fault campaigns: never a mock).

``with redis_cluster() as cluster:`` starts the nodes in a temporary directory (no
persistence), joins them with ``redis-cli --cluster create … --cluster-replicas 1``,
waits until every node says ``cluster_state:ok``, and yields a :class:`RedisCluster`
handle: the store URL (``redis+cluster://``), the nodes' ports, pids and roles, and
the faults a test injects (SIGKILL of a primary until its replica takes over, a
node's restart).  Every node is killed on exit.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import redis

from loadtests.processes.ports import free_port
from loadtests.processes.redis import RedisProcess, binary

NODES = 6
#: milliseconds before a silent primary is failed over: short, for tests
NODE_TIMEOUT_MS = 1000


@dataclass
class RedisCluster:
    """A running cluster (see the module's docstring)."""

    workdir: Path
    nodes: list[RedisProcess] = field(default_factory=list)
    node_timeout_ms: int = NODE_TIMEOUT_MS

    def add_node(self, port: int, bus_port: int) -> RedisProcess:
        """A node of this cluster (not started) on ``port``, its cluster bus on ``bus_port``."""
        node = RedisProcess(
            self.workdir,
            port=port,
            options=[
                "--cluster-enabled", "yes", "--cluster-port", str(bus_port),
                "--cluster-config-file", f"nodes-{port}.conf",
                "--cluster-node-timeout", str(self.node_timeout_ms),
                # (the other primaries serve while one is down: docs/OPERATIONS.md)
                "--cluster-require-full-coverage", "no",
                "--dbfilename", f"dump-{port}.rdb",
            ],
        )  # fmt: skip
        self.nodes.append(node)
        return node

    @property
    def url(self) -> str:
        """The store URL: any node; the client learns the others from it."""
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}"

    @property
    def ports(self) -> list[int]:
        return [node.port for node in self.nodes]

    @property
    def pids(self) -> dict[int, int]:
        """Port → pid of the nodes running now."""
        return {node.port: node.pid for node in self.nodes if node.running}

    def client(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, socket_timeout=2, socket_connect_timeout=2)

    def roles(self) -> dict[int, str]:
        """Port → "master" or "slave" (Redis's words), of the nodes that answer."""
        found: dict[int, str] = {}
        for port in self.pids:
            with contextlib.suppress(redis.RedisError), self.client(port) as client:
                found[port] = client.execute_command("ROLE")[0].decode()
        return found

    def primaries(self) -> list[int]:
        return sorted(port for port, role in self.roles().items() if role == "master")

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Until every running node says the cluster is ok, each slot served by a
        primary that runs and every primary has a replica linked to it."""
        deadline = time.monotonic() + timeout
        while not self._ok():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster is not ok: {self.roles()}")
            time.sleep(0.1)

    def _ok(self) -> bool:
        running = set(self.pids)
        try:
            for port in running:
                with self.client(port) as client:
                    info = client.cluster("INFO")
                    if info.get("cluster_state") != "ok" or int(info["cluster_slots_ok"]) != 16384:
                        return False
                    role = client.execute_command("ROLE")
                    if role[0] == b"slave" and role[3] != b"connected":
                        return False
                    # every node sees the same primaries, and they all run
                    masters = {
                        int(address.split(":")[1].split("@")[0])
                        for address, node in client.cluster("NODES").items()
                        if "master" in node["flags"] and "fail" not in node["flags"]
                    }
                    if not masters <= running:
                        return False
        except redis.RedisError:
            return False
        return True

    def primary_of(self, key: str) -> int:
        """The port of the primary serving ``key``'s slot."""
        for port in self.pids:
            with contextlib.suppress(redis.RedisError), self.client(port) as client:
                slot = int(client.cluster("KEYSLOT", key))
                for start, end, primary, *_ in client.execute_command("CLUSTER SLOTS"):
                    if start <= slot <= end:
                        return int(primary[1])
        raise RuntimeError(f"no node serves the slot of {key!r}")

    def wait_replicated(self, timeout: float = 10.0) -> None:
        """Until every replica has every write its primary has (an acknowledged write
        survives the primary's loss only once its replica has it: Redis replicates
        after it answers)."""
        deadline = time.monotonic() + timeout
        while True:
            behind = []
            for port in self.primaries():
                with self.client(port) as client:
                    info = client.info("replication")
                    replicas = [info[k] for k in info if k.startswith("slave") and k[5:].isdigit()]
                    offset = int(info["master_repl_offset"])
                    if not replicas or any(int(r["offset"]) < offset for r in replicas):
                        behind.append(port)
            if not behind:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the replicas of {behind} are behind")
            time.sleep(0.02)

    def kill_primary(self, port: int | None = None, timeout: float = 30.0) -> int:
        """SIGKILL a primary (``port``, or the first one) and wait until its replica
        is promoted and the cluster is ok again; its port (down until restarted)."""
        victim = port if port is not None else self.primaries()[0]
        self.node(victim).kill()
        self.wait_ok(timeout)
        return victim

    def restart(self, port: int, timeout: float = 30.0) -> None:
        """Start a stopped (or killed) node again: it rejoins the cluster (as a replica,
        when its replica took over), and wait until the cluster is ok."""
        node = self.node(port)
        node.kill()
        node.start()
        self.wait_ok(timeout)

    def freeze(self, port: int) -> None:
        """SIGSTOP a node: it answers nothing (its peers fail it over once it has been
        silent ``node_timeout_ms``, if it is a primary) until :meth:`thaw`."""
        self._running(port).freeze()

    def thaw(self, port: int) -> None:
        """SIGCONT a frozen node (a primary failed over meanwhile rejoins as a replica
        of its promoted replica: :meth:`wait_ok` waits for that)."""
        self._running(port).thaw()

    def node(self, port: int) -> RedisProcess:
        return next(n for n in self.nodes if n.port == port)

    def _running(self, port: int) -> RedisProcess:
        node = self.node(port)
        if not node.running:
            raise RuntimeError(f"no redis-server runs on port {port}")
        return node

    def flush(self) -> None:
        """Empty every primary (a test's fresh start)."""
        for port in self.primaries():
            with self.client(port) as client:
                client.flushall()

    def stop(self) -> None:
        for node in self.nodes:
            node.kill()  # (frozen ones too: thawed first)


@contextlib.contextmanager
def redis_cluster(node_timeout_ms: int = NODE_TIMEOUT_MS) -> Iterator[RedisCluster]:
    """Start a six-node cluster (three primaries, one replica each) on free ports and
    yield its handle; every node is killed afterwards.  ``node_timeout_ms``: how long
    a primary may be silent before its replica takes over."""
    workdir = Path(tempfile.mkdtemp(prefix="glintwick-cluster-"))
    ports = {free_port() for _ in range(2 * NODES)}
    while len(ports) < 2 * NODES:
        ports.add(free_port())
    chosen = sorted(ports)
    cluster = RedisCluster(workdir, node_timeout_ms=node_timeout_ms)
    try:
        for i in range(NODES):
            cluster.add_node(chosen[i], chosen[NODES + i]).start()
        addresses = [f"127.0.0.1:{port}" for port in cluster.ports]
        subprocess.run(
            [binary("redis-cli"), "--cluster", "create", *addresses,
             "--cluster-replicas", "1", "--cluster-yes"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60,
        )  # fmt: skip
        cluster.wait_ok()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)
