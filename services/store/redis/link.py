"""A store's way to Redis: its clients (one Redis or one Redis Cluster), their
deadlines and replica acks, the log readers' own connections, and the cluster's map
of slots learnt again after a failure."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

from services.store.base import StoreUnavailableError

from .connections import cluster_client, cluster_url, connection_address, connection_pool
from .errors import UNREACHABLE


class RedisLink:
    """The clients of one store and what its log readers share with it.

    ``redis`` runs the store's commands: a blocking pool of ``max_connections`` on one
    Redis, redis-py's cluster client (:class:`.connections.ClusterClient`) on a
    cluster, then also ``cluster``.  ``probe`` is the health probe's own client (a busy
    pool must not look like an outage).  Every call has a deadline,
    ``command_timeout``: a Lua compare-and-set takes well under a millisecond, so it
    only bounds what a frozen Redis (or a lost connection) would make wait, and a
    write's WAIT for its ``ack_replicas`` replicas (``ack_timeout`` more)."""

    def __init__(
        self,
        url: str,
        max_connections: int,
        command_timeout: float,
        ack_replicas: int,
        ack_timeout: float,
    ) -> None:
        self.url = url
        self.command_timeout = command_timeout
        self.ack_replicas = ack_replicas
        self.ack_timeout_ms = max(1, round(ack_timeout * 1000))
        timeouts: dict[str, Any] = {
            "socket_timeout": command_timeout + (ack_timeout if ack_replicas else 0.0),
            "socket_connect_timeout": command_timeout,
        }
        self.redis: aioredis.Redis | RedisCluster
        self.probe: aioredis.Redis | RedisCluster
        self.cluster: RedisCluster | None = None
        plain = cluster_url(url)
        if plain is not None:
            # (a node's connections are made as needed, not pooled up to a bound:
            # redis-py's cluster client refuses a command past its bound, never waits)
            self.redis = self.cluster = cluster_client(plain, **timeouts)
            self.probe = cluster_client(plain, **timeouts)
        else:
            self.redis = aioredis.Redis(
                connection_pool=connection_pool(
                    url, max_connections=max_connections, timeout=10, **timeouts
                )
            )
            self.probe = aioredis.Redis(
                connection_pool=connection_pool(url, max_connections=1, timeout=1, **timeouts)
            )
        self._relearned = 0.0  # when the cluster's slots were last asked again (monotonic)
        self._relearning: set[asyncio.Task[None]] = set()  # (relearn_later's tasks)

    async def reader_connection(
        self, key: str, connection: AbstractConnection | None, block_ms: int
    ) -> AbstractConnection:
        """A log reader's connection, connected, to the node serving ``key``'s slot:
        ``connection`` when it is to that node.  Its XREAD blocks ``block_ms``, so a
        read unanswered by then and ``command_timeout`` more is a frozen Redis or a
        lost connection.  (A connection of its own, outside any pool: the read is its
        only command.)"""
        timeouts: dict[str, Any] = {
            "socket_timeout": block_ms / 1000 + self.command_timeout,
            "socket_connect_timeout": self.command_timeout,
        }
        if self.cluster is None:
            if connection is None:
                pool = connection_pool(self.url, max_connections=1, **timeouts)
                connection = pool.make_connection()  # type: ignore[no-untyped-call]
        else:
            await self.cluster.initialize()
            node = self.cluster.get_node_from_key(key)
            if node is None:
                raise StoreUnavailableError(f"no node serves the slot of {key}")
            address = (node.host, int(node.port))
            if connection is not None and connection_address(connection) != address:
                await connection.disconnect(nowait=True)
                connection = None
            if connection is None:
                # (as the cluster client makes its own: no retry below its own)
                options = {**node.connection_kwargs, **timeouts}
                options["retry"] = Retry(NoBackoff(), 0)
                connection = node.connection_class(**options)
        await connection.connect()
        return connection

    def relearn_later(self) -> None:
        """:meth:`relearn_slots` in a task of its own: the failed call is answered
        now, not after the slots are read again (a frozen node delays that read)."""
        if self.cluster is None or time.monotonic() - self._relearned < 1.0:
            return
        task = asyncio.create_task(self.relearn_slots())
        self._relearning.add(task)
        task.add_done_callback(self._relearning.discard)

    async def relearn_slots(self) -> None:
        """After a reader's failure on a cluster: ask which node serves each slot again
        (once a second at most, whichever reader asks), as the cluster client does
        after its own commands' failures."""
        if self.cluster is None or time.monotonic() - self._relearned < 1.0:
            return
        self._relearned = time.monotonic()
        with contextlib.suppress(*UNREACHABLE, RedisError):
            async with asyncio.timeout(self.command_timeout * 2):
                await self.cluster.nodes_manager.initialize()

    async def aclose(self) -> None:
        for task in list(self._relearning):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.redis.aclose()
        await self.probe.aclose()
