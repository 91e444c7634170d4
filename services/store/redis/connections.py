"""The store's connections to Redis: commands packed by hiredis, a transport closed
under a command as unreachable, and redis-py's cluster client made to go on serving
the healthy primaries while one is down."""

from __future__ import annotations

import asyncio
from functools import cache
from typing import Any, cast

import hiredis
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection, Connection, parse_url
from redis.backoff import NoBackoff
from redis.event import AsyncAfterConnectionReleasedEvent
from redis.exceptions import ClusterDownError, DataError, SlotNotCoveredError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry
from redis.typing import EncodableT

#: store URL schemes of a Redis Cluster, and the redis-py scheme each stands for
CLUSTER_SCHEMES = {"redis+cluster://": "redis://", "rediss+cluster://": "rediss://"}


def cluster_url(url: str) -> str | None:
    """The redis-py URL of a cluster store URL (None: not a cluster's)."""
    for scheme, plain in CLUSTER_SCHEMES.items():
        if url.startswith(scheme):
            return plain + url[len(scheme) :]
    return None


class HiredisPacking(AbstractConnection):
    """Commands packed by hiredis's C packer, as redis-py's sync client packs them
    when hiredis is installed; its asyncio connections pack in Python.  A move's
    compare-and-set (20 arguments) took 18 µs to pack that way and takes 2 µs here,
    in the same bytes (tests/integration/test_redis_store.py)."""

    def pack_command(self, *args: EncodableT) -> list[bytes]:
        # (as redis-py does: a command name may carry its subcommand, "CONFIG GET")
        first = args[0]
        if isinstance(first, str):
            args = (*first.encode().split(), *args[1:])
        elif isinstance(first, bytes) and b" " in first:
            args = (*first.split(), *args[1:])
        try:
            # (hiredis's stub types the argument as a 1-tuple; any length is packed)
            return [hiredis.pack_command(cast(Any, args))]
        except TypeError as exc:  # a value Redis cannot take (None, a bool, a list)
            raise DataError(str(exc)) from exc


# What a transport closed under a command raises out of redis-py's asyncio I/O: an
# AttributeError or TypeError (redis-py issues 3546 and 4287), or on uvloop (the
# server's loop) a RuntimeError, "unable to perform operation on <TCPTransport
# closed=True …>; the handler is closed" (the fault campaign met it as INTERNAL
# while a cluster primary was frozen: tests/e2e/test_cluster.py)
_TORN_DOWN = (AttributeError, TypeError, RuntimeError)


class TornDownIsUnreachable(AbstractConnection):
    """A connection whose transport closed under a command (``_TORN_DOWN``) raises a
    ConnectionError, which the client retries and this store answers as unreachable.
    redis-py's cluster client closes every connection after one meets a connection
    error (to learn the slots again), so another task's command may find its
    connection closed under it; on one Redis, a log reader's connection meets it when
    Redis is killed under its handshake."""

    async def send_packed_command(self, *args: Any, **kwargs: Any) -> None:
        try:
            if len(args) == 1 and not kwargs and self._writes_at_once(args[0]):
                await self._write(args[0])
            else:
                await super().send_packed_command(*args, **kwargs)
        except _TORN_DOWN as exc:
            raise RedisConnectionError(f"connection closed under the command: {exc}") from exc

    def _writes_at_once(self, command: object) -> bool:
        """Whether ``command`` (packed: a list of bytes) is written without a wait: the
        connection open, no health check due, its transport taking writes (not paused
        by a full buffer, not closing) and its reader healthy.  redis-py's send runs
        the write and a drain under ``asyncio.wait_for``, a task and a timer each
        command, for a drain that then returns at once."""
        writer = self._writer
        if writer is None or not isinstance(command, list) or self.health_check_interval:
            return False
        reader = self._reader
        protocol = getattr(writer, "_protocol", None)
        return (
            getattr(protocol, "_paused", None) is False
            and not writer.transport.is_closing()
            and reader is not None
            and reader.exception() is None
        )

    async def _write(self, command: list[bytes]) -> None:
        """redis-py's send of ``command``, its errors the same, the drain waited for
        (under the connection's timeout) only when the write filled the buffer."""
        writer = self._writer
        assert writer is not None
        try:
            writer.writelines(command)
            # (a full buffer pauses the writer: asyncio's own field, checked above)
            if writer._protocol._paused:  # type: ignore[attr-defined]
                await asyncio.wait_for(writer.drain(), self.socket_timeout)
        except TimeoutError:
            await self.disconnect(nowait=True)
            raise RedisTimeoutError("Timeout writing to socket") from None
        except OSError as exc:
            await self.disconnect(nowait=True)
            raise RedisConnectionError(f"Error while writing to socket. {exc.args}.") from exc
        except BaseException:
            await self.disconnect(nowait=True)
            raise

    async def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().read_response(*args, **kwargs)
        except _TORN_DOWN as exc:
            raise RedisConnectionError(f"connection closed under the command: {exc}") from exc


class CheckedWithoutWaiting(AbstractConnection):
    """A connection taken from the pool checked for what waits on it (a reply a
    cancelled command left, the server's close) without a trip round the event loop.

    redis-py checks by reading under ``asyncio.timeout(0)``: the command waits an
    iteration of the loop and its read is cancelled, before every command.  What has
    arrived is in the stream's buffer already (the loop's reads put it there), so this
    looks there, and only when something is there (or its end) runs redis-py's check."""

    async def can_read_destructive(self) -> bool:
        stream = self._reader
        replies = getattr(self._parser, "_reader", None)
        if stream is not None and isinstance(replies, hiredis.Reader):
            # (StreamReader keeps what arrived in ``_buffer``, a bytearray)
            arrived = replies.has_data() or cast(Any, stream)._buffer
            if not arrived and not stream.at_eof() and stream.exception() is None:
                return False
        # (something there, or not connected, or redis-py's packer: its own check)
        return bool(await super().can_read_destructive())  # type: ignore[no-untyped-call]


class QuickPool(aioredis.BlockingConnectionPool):
    """redis-py's blocking pool, a connection taken and given back without its
    condition (a lock, a timer for its timeout, a deprecation check of the arguments)
    while one is free and no one waits for one: the common case, and no await
    between looking and taking, so atomic on the event loop.  The rest, waiting for
    a connection among them, is redis-py's own."""

    def _quick(self) -> bool:
        condition = self._condition
        return not condition.locked() and not getattr(condition, "_waiters", None)

    async def get_connection(self, *args: Any, **options: Any) -> AbstractConnection:
        if not (self._available_connections and self._quick()):
            return cast(AbstractConnection, await super().get_connection())  # type: ignore[no-untyped-call]
        connection = self.get_available_connection()  # type: ignore[no-untyped-call]
        try:
            await self.ensure_connection(connection)
        except BaseException:
            await self.release(connection)
            raise
        return cast(AbstractConnection, connection)

    async def release(self, connection: AbstractConnection) -> None:
        if not self._quick():
            await super().release(connection)
            return
        self._in_use_connections.remove(connection)
        self._available_connections.append(connection)
        released = AsyncAfterConnectionReleasedEvent(connection)  # type: ignore[no-untyped-call]
        await cast(Any, self._event_dispatcher).dispatch_async(released)


@cache
def hiredis_packing(base: type[AbstractConnection]) -> type[AbstractConnection]:
    """``base`` (TCP, TLS or a Unix socket, as the URL says) with hiredis packing."""
    return type(f"Hiredis{base.__name__}", (HiredisPacking, base), {})


def connection_pool(
    url: str, pool: type[aioredis.ConnectionPool] = QuickPool, **options: Any
) -> aioredis.ConnectionPool:
    """``pool.from_url``, with connections that pack by hiredis (from_url itself
    would put the URL's connection class back over ours)."""
    settings: dict[str, Any] = dict(parse_url(url))
    # hiredis writes text as UTF-8, strictly: a URL asking for another encoding
    # keeps redis-py's packer
    utf8 = str(settings.get("encoding", "utf-8")).lower() in ("utf-8", "utf8")
    base = settings.get("connection_class", aioredis.Connection)
    if utf8 and settings.get("encoding_errors", "strict") == "strict":
        base = hiredis_packing(base)
    settings["connection_class"] = _torn_down_is_unreachable(base)
    return pool(**settings, **options)


@cache
def _torn_down_is_unreachable(base: type[AbstractConnection]) -> type[AbstractConnection]:
    """``base`` with a transport closed under a command as unreachable."""
    return type(
        f"Unreachable{base.__name__}", (TornDownIsUnreachable, CheckedWithoutWaiting, base), {}
    )


@cache
def _cluster_connection(base: type[AbstractConnection]) -> type[AbstractConnection]:
    """``base`` (TCP or TLS) with hiredis packing, closed-under-a-command as unreachable."""
    name = f"Cluster{base.__name__}"
    return type(name, (TornDownIsUnreachable, CheckedWithoutWaiting, HiredisPacking, base), {})


class ClusterClient(RedisCluster):
    """redis-py's cluster client, made to go on serving the healthy primaries while
    one is down (killed or frozen, until its replica is promoted):

    * a command is sent again (once, at once, after learning the slots again) only
      after a connection error, never after a timeout: redis-py's default (three
      more, each waiting its timeout again) would hold a call to a frozen primary past
      its caller's deadline; the store answers it unreachable within
      ``command_timeout`` instead;
    * learning the slots again (after any node's failure) does not ask the first
      primary for its ``COMMAND`` table each time, as redis-py does (learnt once, at
      first use): while that primary was down, the slots could not be learnt again
      and every call failed, those of the healthy primaries too;
    * the nodes judged down (:attr:`down`, the store's health probe's) are asked for
      the slots last (a frozen one would hold the asking for its timeout).
    """

    ERRORS_ALLOW_RETRY = (RedisConnectionError, ClusterDownError, SlotNotCoveredError)  # type: ignore[assignment]

    down: frozenset[str] = frozenset()

    async def initialize(self) -> ClusterClient:
        if not self._initialize or not self.commands_parser.commands:
            await super().initialize()  # (first use: the commands table too)
            return self
        if not self._lock:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._initialize:
                startup = self.nodes_manager.startup_nodes
                for name in [n for n in startup if n in self.down]:
                    startup[name] = startup.pop(name)  # (asked last)
                try:
                    await self.nodes_manager.initialize()
                    self._initialize = False
                except BaseException:
                    await self.nodes_manager.aclose()
                    await self.nodes_manager.aclose("startup_nodes")
                    raise
        return self


def cluster_client(url: str, **options: Any) -> RedisCluster:
    """redis-py's cluster client for a redis:// or rediss:// ``url`` (any node), its
    connections made by :func:`_cluster_connection` (redis-py's constructor takes no
    connection class: it is set in the options its nodes are made from)."""
    options.setdefault("retry", Retry(NoBackoff(), 1))
    client: RedisCluster = ClusterClient.from_url(url, **options)
    made = cast(type[Connection], _cluster_connection(client.connection_kwargs["connection_class"]))
    client.connection_kwargs["connection_class"] = made
    for node in client.nodes_manager.startup_nodes.values():
        node.connection_class = made
    return client


def connection_address(connection: AbstractConnection) -> tuple[str, int]:
    return (str(getattr(connection, "host", "")), int(getattr(connection, "port", 0)))
