"""The Redis the campaign's servers use, and what its store faults do to it."""

from __future__ import annotations

import collections
import contextlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from loadtests.faults.steps import FreezeStore, KillStore, Step
from loadtests.processes.cluster import RedisCluster, redis_cluster
from loadtests.processes.redis import RedisProcess
from services.store.redis import SHARDS, index_key


class Topology(Protocol):
    """The Redis the servers use, and what the campaign does to it."""

    name: str
    #: what ``glintwick serve`` is given besides the store URL
    server_options: Sequence[str]

    @property
    def url(self) -> str:
        """The store URL the servers and the final checks use (a node that runs)."""
        ...

    def start(self) -> None: ...
    def stop(self) -> None: ...

    # the faults (each blocks until done; the answer: what it did, for the figures)
    def kill(self) -> str:
        """SIGKILL the store (its primary)."""
        ...

    def restart(self) -> str:
        """Start what :meth:`kill` killed, from its data directory."""
        ...

    def freeze(self) -> str: ...
    def thaw(self) -> str: ...
    def store_steps(self, seconds: float) -> list[Step]:
        """The topology's store faults, in order (``seconds``: how long a freeze lasts)."""
        ...


class Standalone:
    """One redis-server, AOF ``always`` by default: a SIGKILL loses no acknowledged write."""

    name = "standalone"
    server_options: Sequence[str] = ()

    def __init__(self, workdir: Path, persistence: str = "always") -> None:
        self.redis = RedisProcess(workdir, persistence)

    @property
    def url(self) -> str:
        return self.redis.url

    def start(self) -> None:
        self.redis.start()

    def stop(self) -> None:
        self.redis.stop()

    def kill(self) -> str:
        self.redis.kill()
        return ""

    def restart(self) -> str:
        self.redis.start(timeout=60)  # (an AOF to load first)
        return ""

    def freeze(self) -> str:
        self.redis.freeze()
        return ""

    def thaw(self) -> str:
        self.redis.thaw()
        return ""

    def store_steps(self, seconds: float) -> list[Step]:
        return [KillStore(), FreezeStore(seconds)]


class Cluster:
    """A Redis Cluster (loadtests/processes/cluster.py: three primaries with a replica each,
    no persistence: the replica is a primary's copy), the servers on ``--ack replica``
    (a write is answered once the replica of its slot's primary has it, so a failover
    loses no acknowledged move).  Its faults strike the primary with the most games in
    play (the ``active`` index of the shards it serves) at that moment."""

    name = "cluster"
    server_options: Sequence[str] = ("--ack", "replica")
    #: the cluster's node timeout: longer than the harness's 1 s for tests, so that a
    #: loaded machine's pauses fail nothing over unasked
    NODE_TIMEOUT_MS = 2000

    def __init__(self, workdir: Path) -> None:
        self._nodes = contextlib.ExitStack()
        self._cluster: RedisCluster | None = None
        self._down: int | None = None  # the port killed or frozen now
        self._since = 0.0  # when (monotonic)

    @property
    def cluster(self) -> RedisCluster:
        assert self._cluster is not None, "the cluster is not started"
        return self._cluster

    @property
    def url(self) -> str:
        up = [port for port in self.cluster.pids if port != self._down]
        return f"redis+cluster://127.0.0.1:{up[0]}"

    def start(self) -> None:
        self._cluster = self._nodes.enter_context(redis_cluster(self.NODE_TIMEOUT_MS))

    def stop(self) -> None:
        self._nodes.close()

    def busiest_primary(self) -> tuple[int, int]:
        """The primary serving the most games in play, and how many it serves."""
        games: collections.Counter[int] = collections.Counter()
        for shard in range(SHARDS):
            key = index_key(shard, "active")
            port = self.cluster.primary_of(key)
            with self.cluster.client(port) as client:
                games[port] += int(client.scard(key))
        return games.most_common(1)[0]

    def kill(self) -> str:
        port, games = self.busiest_primary()
        before = set(self.cluster.primaries())
        start = time.monotonic()
        self.cluster.kill_primary(port, timeout=90)  # (until its replica is promoted)
        self._down = port
        promoted = sorted(set(self.cluster.primaries()) - before)
        return (
            f"primary :{port} ({games} games in play) SIGKILLed; replica"
            f" :{','.join(map(str, promoted))} promoted in {time.monotonic() - start:.1f} s"
        )

    def restart(self) -> str:
        port, self._down = self._down, None
        assert port is not None, "nothing was killed"
        self.cluster.restart(port, timeout=90)  # (until it is a replica, linked)
        return f":{port} restarted, rejoined as a {self._role(port)}"

    def freeze(self) -> str:
        port, games = self.busiest_primary()
        self.cluster.freeze(port)
        self._down, self._since = port, time.monotonic()
        return f"primary :{port} ({games} games in play) SIGSTOPped"

    def thaw(self) -> str:
        port, self._down = self._down, None
        assert port is not None, "nothing was frozen"
        frozen = time.monotonic() - self._since
        self.cluster.thaw(port)
        self.cluster.wait_ok(90)  # (a primary failed over meanwhile: until it is a replica)
        return f"SIGCONT after {frozen:.1f} s: a {self._role(port)} now"

    def _role(self, port: int) -> str:
        role = self.cluster.roles().get(port, "unknown")
        return {"master": "primary", "slave": "replica"}.get(role, role)

    def store_steps(self, seconds: float) -> list[Step]:
        timeout = self.NODE_TIMEOUT_MS / 1000
        return [
            KillStore(name="primary-failover"),
            FreezeStore(timeout / 2, name="freeze-primary-short"),
            FreezeStore(max(seconds, timeout * 2.5), name="freeze-primary"),
        ]


TOPOLOGIES: dict[str, Callable[[Path], Topology]] = {"standalone": Standalone, "cluster": Cluster}
