"""The Redis store: one Lua compare-and-set per write, each in one Redis Cluster slot.

It runs on one Redis (``redis://``, ``rediss://``, ``unix://``) or on a Redis Cluster
(``redis+cluster://host:port``, ``rediss+cluster://`` with TLS: any node, the client
learns the others), with the same keys and scripts.

Keys.  The games are spread over ``SHARDS`` (16) index shards: a game's shard is
``crc32(id) % SHARDS`` (UTF-8), and every key of the shard carries its hash tag
``{sNN}`` (``{s00}`` … ``{s15}``), so a game's keys and its shard's share of every
cross-game index sit in one slot, and one script may update them all atomically.
(``SHARDS`` is part of the layout: changing it moves every game; never for a live
deployment.)

* ``g:{sNN}:<id>:rec`` — hash: ``rev`` (the compare-and-set token) and ``rec`` (the record)
* ``g:{sNN}:<id>:log`` — stream: one entry per accepted action, id ``<version>-1``
* ``g:{sNN}:<id>:req`` — hash: idempotency key → the stored response
* ``glintwick:{sNN}:deadlines`` — sorted set: the shard's game ids by when their
  deadline passes (the sweeper re-checks every due game against its record);
* ``glintwick:{sNN}:active`` — set of the shard's unfinished game ids;
* ``glintwick:{sNN}:botturns`` — sorted set: game id by when it is listed from (when
  a house-bot seat started waiting, or when a worker's lease on the turn ends; times
  from Redis's clock, so replicas' clocks do not matter);
* ``glintwick:{sNN}:lobby`` — sorted set: the shard's games with a free seat, by
  position: when listed (at creation), microseconds of Redis's clock rounded up to
  the next one that is ``NN`` modulo ``SHARDS`` (a shard's positions never meet
  another's), made unique within the shard by ``glintwick:{sNN}:lobbyclock`` (the
  last position given: ``SHARDS`` more when two games share one), so a position is
  an exact cursor for the lobby's pages;
* ``glintwick:{sNN}:lobby:<rule-set hash>`` — the same, for one rule set: a filtered
  lobby page is one range read per shard, never a scan past other rule sets' games;
* ``glintwick:{sNN}:rate:<id>:<name>`` — string: a rate-limit cell of one game (as
  ``glintwick:rate:`` below: a seat's act limit), in the game's slot, so that a move's
  commit script takes it itself (``Write.take``: no round trip of its own).

The limits every replica shares (:mod:`services.usecases.quotas`), each in one key
of its own, changed by a script that touches that key alone (whose hash tag is the
whole name: one Redis Cluster slot each, wherever the indexes go):

* ``glintwick:rate:{<name>}`` — string: a rate-limit cell (GCRA), the theoretical
  arrival time of the next request in microseconds of Redis's clock (``TIME``),
  expiring when the cell is full again: a client gone leaves nothing behind;
* ``glintwick:hold:{<name>}`` — sorted set: a bounded set of leases (a client's
  open games, a game's or a client's streams), members by when their lease ends
  (Redis's clock), trimmed on every hold, expiring with its last lease.

The indexes are written *inside* the create and commit scripts, atomically
with the record: an index entry lost between two round trips would stall its game
for good (a bot turn never listed, a deadline that never fires, a table no one can
find).  Needs Redis >= 5 (``TIME`` in a writing script).  A read across games (due
deadlines, bot turns, a lobby page, the games in play) reads every shard in one
pipeline (one round trip; on a cluster, one per node) and merges: by deadline, by
waiting time, by position (a lobby page takes the ``limit`` lowest positions after
its cursor of all shards: exact, as one index would be).  A leased bot-turn claim
claims in each shard's script as many as the merge chose there.  Positions of
different shards follow their nodes' clocks: a game listed while someone pages may
land before that reader's cursor when two nodes' clocks differ (the next listing
shows it).

Finished games expire after a configurable time.

Waiting for a log (:meth:`RedisStore.wait_log`): **one reader per shard** with a
waiter (per server process), not a connection per waiter.  A shard's reader holds
one dedicated connection (to the node that serves the shard's slot) and loops on
``XREAD BLOCK 5000 COUNT 1000 STREAMS`` over the log of every game of its shard that
has a waiter, plus its own wake stream, in the same slot:

* ``glintwick:{sNN}:wake:<random hex>`` — stream, this store's own (a fresh name per
  RedisStore), at most one entry (``MAXLEN 1``), expiring ``WAKE_TTL_MS`` after its
  last entry (``PEXPIRE`` with each ``XADD``): a dead process leaves nothing behind.

A waiter registers its future (game, version) *first*, then reads the log without
blocking; entries found there are its answer, otherwise it awaits the future (up to
its timeout), which the reader resolves with the entries after its version.
(A waiter whose game the read in flight names at its version or before skips that
read: the ``XREAD`` in flight answers any entry after it, whenever committed.)  A
waiter whose game is not in its shard's read in flight (or is there at a later
version) adds an entry to the shard's wake stream (one per read in flight, whoever
asks), so that the read returns at once and is issued again with the game in it.
Every read names explicit ids (a game's last version delivered, ``<v>-1``; the last
wake entry), never ``$``, so nothing committed between a waiter's read and the
reader's next ``XREAD`` is missed.  A game stays in the read set ``LINGER`` seconds
after its last waiter left (at its last version delivered): a session that comes
back after each move finds its game there and needs no wake.  A commit through any
replica lands in the game's log stream, so it reaches every replica's reader at
once.  When a reader's connection fails, its waiters get
:class:`StoreUnavailableError`, and it reconnects with a backoff (on a cluster, to
the node that serves the slot by then: after a failover, the promoted replica).

Every call has a deadline (``command_timeout``, and a blocking read its wait plus
that): a Redis that is down, or frozen, answers :class:`StoreUnavailableError`
within it instead of an error of the client library, or a hang.  On a cluster the
client follows ``MOVED`` and ``ASK`` and, after a failover, learns the new primary
(redis-py's cluster client); what it cannot serve (a slot whose primary is down and
not yet replaced) is :class:`StoreUnavailableError` too.

Acknowledged by replicas (``ack_replicas`` > 0, ``serve --ack replica``;
docs/OPERATIONS.md, "Durability"): each game write (create, commit) is sent with
``WAIT ack_replicas ack_timeout`` in one pipeline, on one connection (WAIT counts the
replicas that have every write of its own connection so far), and answered only
once that many replicas confirmed it.  Fewer in time: the write stays applied on the
primary, and the call raises :class:`StoreUnavailableError` with the reason
``REPLICA_ACK_TIMEOUT`` (``write``: a retry with the same idempotency key is safe).
A retry meets its stored idempotent response: that answer is given only after a
WAIT too, behind a rewrite of the same response (``_CONFIRM``: a read alone would
leave nothing for WAIT to wait for), so a move is never answered with success before
a replica has it, however it was retried.  The log reader delivers what it read only
once a replica has it too (a write of its connection, then WAIT: ``_confirm_read``),
so no session or watch gets a move that a failover could still take back (a primary
frozen past the node timeout runs the writes queued on it when resumed, until it
learns its replica was promoted).  The house-bot lease (``bot_turns``) and the log
reader's wake are not game data: they never wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import secrets
import time
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypeVar, cast

import hiredis
import redis.asyncio as aioredis
import structlog
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection, Connection, parse_url
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import (
    AskError,
    ClusterDownError,
    ClusterError,
    DataError,
    MovedError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry
from redis.typing import EncodableT

from services.store.base import (
    WHOLE,
    Admission,
    GameExistsError,
    GameStore,
    LogItem,
    OpenGame,
    RateRefusedError,
    Snapshot,
    StoreUnavailableError,
    Write,
)

T = TypeVar("T")

log = structlog.get_logger("glintwick.store")

#: the index shards (see the module's docstring): part of the key layout
SHARDS = 16

#: store URL schemes of a Redis Cluster, and the redis-py scheme each stands for
CLUSTER_SCHEMES = {"redis+cluster://": "redis://", "rediss+cluster://": "rediss://"}

#: how long a log reader's XREAD blocks before it is issued again (milliseconds)
READ_BLOCK_MS = 5000
#: entries read per game and XREAD (as read_log's default limit)
READ_COUNT = 1000
#: seconds a game stays in the reader's XREAD after its last waiter left
LINGER = 10.0
#: milliseconds the wake stream outlives its last entry
WAKE_TTL_MS = 60_000
#: rounds of a leased bot_turns claim (another worker may take what this one saw)
CLAIM_ROUNDS = 8


def shard_of(game_id: str) -> int:
    """The index shard of a game (its keys' hash tag)."""
    return zlib.crc32(game_id.encode("utf-8", "surrogatepass")) % SHARDS


def _tag(shard: int) -> str:
    return f"{{s{shard:02d}}}"


def index_key(shard: int, name: str) -> str:
    """An index of one shard: ``deadlines``, ``active``, ``botturns``, ``lobby``,
    ``lobby:<rule-set hash>``, ``lobbyclock``, ``wake:<hex>``."""
    return f"glintwick:{_tag(shard)}:{name}"


def lobby_key(shard: int, rule_set_hash: str) -> str:
    """A shard's lobby index of one rule set ("": of every rule set)."""
    return index_key(shard, f"lobby:{rule_set_hash}" if rule_set_hash else "lobby")


def cluster_url(url: str) -> str | None:
    """The redis-py URL of a cluster store URL (None: not a cluster's)."""
    for scheme, plain in CLUSTER_SCHEMES.items():
        if url.startswith(scheme):
            return plain + url[len(scheme) :]
    return None


# A write's index entries, one function for both writing scripts: ``bot_turn`` 'set'
# (list the game from now, Redis's clock) or 'del' or ''; ``deadline`` a Unix time
# or 'del' or ''; ``finished`` '1' or ''; ``open`` 'add' (list the game in the
# lobby, unless it is listed) or 'del' or '' ('' everywhere: leave that index alone);
# ``shard`` and ``shards``: the lobby position's residue (see the module's docstring).
# (Positions are formatted with %d: Lua's own number-to-string keeps 14 digits.)
_INDEXES = """
local function indexes(keys, game, bot_turn, deadline, finished, open, shard, shards)
  local bot_turns, deadlines, active, lobby, lobby_rules, lobby_clock = unpack(keys)
  if bot_turn == 'del' then
    redis.call('ZREM', bot_turns, game)
  elseif bot_turn == 'set' then
    local now = redis.call('TIME')
    redis.call('ZADD', bot_turns, tonumber(now[1]) + tonumber(now[2]) / 1000000, game)
  end
  if deadline == 'del' then
    redis.call('ZREM', deadlines, game)
  elseif deadline ~= '' then
    redis.call('ZADD', deadlines, deadline, game)
  end
  if finished == '1' then redis.call('SREM', active, game) end
  if open == 'del' then
    redis.call('ZREM', lobby, game)
    redis.call('ZREM', lobby_rules, game)
  elseif open == 'add' and not redis.call('ZSCORE', lobby, game) then
    local t = redis.call('TIME')
    local at = tonumber(t[1]) * 1000000 + tonumber(t[2])
    local last = tonumber(redis.call('GET', lobby_clock) or 0)
    if at <= last then at = last + 1 end
    shard, shards = tonumber(shard), tonumber(shards)
    at = at + (shard - at) % shards
    at = string.format('%d', at)
    redis.call('SET', lobby_clock, at)
    redis.call('ZADD', lobby, at, game)
    redis.call('ZADD', lobby_rules, at, game)
  end
end
"""

# KEYS: record, the index keys; ARGV: record, game id, the index args
_CREATE = (
    _INDEXES
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'rev', 1, 'rec', ARGV[1])
redis.call('SADD', KEYS[4], ARGV[2])
indexes({unpack(KEYS, 2, 7)}, ARGV[2], unpack(ARGV, 3, 8))
return 1
"""
)

# GCRA on one cell: ``interval`` microseconds per request, ``burst``, ``cost``.  Takes
# it and answers 0, or answers the microseconds to wait (> 0: nothing changed).
_GCRA = """
local function gcra(key, interval, burst, cost)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local arrival = tonumber(redis.call('GET', key) or now)
  if arrival < now then arrival = now end
  arrival = arrival + cost * interval
  local allowed_at = arrival - burst * interval
  if allowed_at > now then return allowed_at - now end
  redis.call('SET', key, string.format('%.0f', arrival),
             'PX', math.floor((arrival - now) / 1000) + 1)
  return 0
end
"""

# KEYS: record, log, requests, the index keys, the game's rate cell (``Write.take``);
# ARGV: expected revision, record, entry version, entry, idempotency key, response,
# ttl, game id, the index args, and with the cell: its microseconds per request and
# burst.  1: written; 0: refused by the compare-and-set or the idempotency key; below
# 0: refused by the cell, -1 - the microseconds to wait (nothing changed either way).
_COMMIT = (
    _INDEXES
    + _GCRA
    + """
local rev = redis.call('HGET', KEYS[1], 'rev')
if (not rev) or tonumber(rev) ~= tonumber(ARGV[1]) then return 0 end
if ARGV[5] ~= '' and redis.call('HEXISTS', KEYS[3], ARGV[5]) == 1 then return 0 end
if KEYS[10] then
  local wait = gcra(KEYS[10], tonumber(ARGV[15]), tonumber(ARGV[16]), 1)
  if wait > 0 then return -1 - math.ceil(wait) end
end
redis.call('HSET', KEYS[1], 'rev', tonumber(rev) + 1, 'rec', ARGV[2])
if ARGV[3] ~= '' then redis.call('XADD', KEYS[2], ARGV[3] .. '-1', 'e', ARGV[4]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], ARGV[5], ARGV[6]) end
local ttl = tonumber(ARGV[7])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
  redis.call('EXPIRE', KEYS[3], ttl)
end
indexes({unpack(KEYS, 4, 9)}, ARGV[8], unpack(ARGV, 9, 14))
return 1
"""
)

# One shard's due bot turns (up to ARGV[1]), each with when it was listed from (as
# text: a float keeps its digits), claimed for ARGV[2] seconds when that is above 0.
_BOT_TURNS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0,
  tonumber(ARGV[1]))
local lease = tonumber(ARGV[2])
if lease > 0 then
  for i = 1, #due, 2 do redis.call('ZADD', KEYS[1], 'XX', now + lease, due[i]) end
end
return due
"""


# KEYS: requests; ARGV: idempotency key.  The stored response, written again (the same
# bytes) so that the WAIT after it covers the write that stored it (replica acks only).
_CONFIRM = """
local response = redis.call('HGET', KEYS[1], ARGV[1])
if response then redis.call('HSET', KEYS[1], ARGV[1], response) end
return response
"""


# GCRA: KEYS: the cell; ARGV: microseconds per request, burst, cost.  Returns
# {1, 0} (allowed: the cell moved on) or {0, microseconds to wait} (nothing changed).
_TAKE = (
    _GCRA
    + """
local wait = gcra(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
if wait > 0 then return {0, string.format('%.0f', wait)} end
return {1, '0'}
"""
)

# KEYS: the set; ARGV: member, limit, lease (microseconds).  1: held; 0: full.
_HOLD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1])
   and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], string.format('%.0f', now + tonumber(ARGV[3])), ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], math.floor((tonumber(last[2]) - now) / 1000) + 1)
return 1
"""

# KEYS: the set.  Its unexpired members.
_HELD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. string.format('%.0f', now), '+inf')
"""


def rate_key(name: str) -> str:
    """A rate-limit cell's key: its own hash tag (one slot, whatever else shares it)."""
    return f"glintwick:rate:{{{name}}}"


def game_rate_key(game_id: str, name: str) -> str:
    """A game's rate-limit cell: in its shard's slot, which its commit script may take."""
    return index_key(shard_of(game_id), f"rate:{game_id}:{name}")


def hold_key(name: str) -> str:
    """A bounded set's key: its own hash tag."""
    return f"glintwick:hold:{{{name}}}"


def _awaited(value: Awaitable[T] | T) -> Awaitable[T]:
    """redis-py types its commands for both clients; the asyncio client's are awaitables."""
    return cast(Awaitable[T], value)


def game_keys(game_id: str) -> list[str]:
    """A game's record, log and idempotency keys (its shard's hash tag: one slot)."""
    tag = _tag(shard_of(game_id))
    return [f"g:{tag}:{game_id}:rec", f"g:{tag}:{game_id}:log", f"g:{tag}:{game_id}:req"]


def _index_args(game_id: str, write: Write) -> list[str]:
    """The scripts' index arguments for ``write`` (see _INDEXES); '' where the index
    already says the same, the common case: no index write on most moves."""
    bot_turn = "set" if write.bot_turn else ("del" if write.bot_turn_changed else "")
    deadline = ""
    if write.deadline_changed:
        deadline = "del" if write.deadline is None else repr(write.deadline)
    lobby = "add" if write.open_seats else ("del" if write.open_seats_changed else "")
    finished = "1" if write.finished else ""
    return [bot_turn, deadline, finished, lobby, str(shard_of(game_id)), str(SHARDS)]


def _index_keys(game_id: str, write: Write) -> list[str]:
    """The keys of the indexes ``write`` may touch (see _INDEXES), in its order: those
    of the game's shard."""
    shard = shard_of(game_id)
    return [
        index_key(shard, "botturns"),
        index_key(shard, "deadlines"),
        index_key(shard, "active"),
        lobby_key(shard, ""),
        lobby_key(shard, write.rule_set_hash),
        index_key(shard, "lobbyclock"),
    ]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _version_of(stream_id: bytes | str) -> int:
    text = stream_id.decode() if isinstance(stream_id, bytes) else stream_id
    return int(text.split("-", 1)[0])


class _HiredisPacking(AbstractConnection):
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


class _TornDownIsUnreachable(AbstractConnection):
    """A connection whose transport closed under a command (``_TORN_DOWN``) raises a
    ConnectionError, which the client retries and this store answers as unreachable.
    redis-py's cluster client closes every connection after one meets a connection
    error (to learn the slots again), so another task's command may find its
    connection closed under it; on one Redis, a log reader's connection meets it when
    Redis is killed under its handshake."""

    async def send_packed_command(self, *args: Any, **kwargs: Any) -> None:
        try:
            await super().send_packed_command(*args, **kwargs)
        except _TORN_DOWN as exc:
            raise RedisConnectionError(f"connection closed under the command: {exc}") from exc

    async def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().read_response(*args, **kwargs)
        except _TORN_DOWN as exc:
            raise RedisConnectionError(f"connection closed under the command: {exc}") from exc


@cache
def _packing(base: type[AbstractConnection]) -> type[AbstractConnection]:
    """``base`` (TCP, TLS or a Unix socket, as the URL says) with hiredis packing."""
    return type(f"Hiredis{base.__name__}", (_HiredisPacking, base), {})


def connection_pool(
    url: str, pool: type[aioredis.ConnectionPool] = aioredis.BlockingConnectionPool, **options: Any
) -> aioredis.ConnectionPool:
    """``pool.from_url``, with connections that pack by hiredis (from_url itself
    would put the URL's connection class back over ours)."""
    settings: dict[str, Any] = dict(parse_url(url))
    # hiredis writes text as UTF-8, strictly: a URL asking for another encoding
    # keeps redis-py's packer
    utf8 = str(settings.get("encoding", "utf-8")).lower() in ("utf-8", "utf8")
    base = settings.get("connection_class", aioredis.Connection)
    if utf8 and settings.get("encoding_errors", "strict") == "strict":
        base = _packing(base)
    settings["connection_class"] = _torn_down_is_unreachable(base)
    return pool(**settings, **options)


@cache
def _torn_down_is_unreachable(base: type[AbstractConnection]) -> type[AbstractConnection]:
    """``base`` with a transport closed under a command as unreachable."""
    return type(f"Unreachable{base.__name__}", (_TornDownIsUnreachable, base), {})


@cache
def _cluster_connection(base: type[AbstractConnection]) -> type[AbstractConnection]:
    """``base`` (TCP or TLS) with hiredis packing, closed-under-a-command as unreachable."""
    name = f"Cluster{base.__name__}"
    return type(name, (_TornDownIsUnreachable, _HiredisPacking, base), {})


class _Cluster(RedisCluster):
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

    async def initialize(self) -> _Cluster:
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
    client: RedisCluster = _Cluster.from_url(url, **options)
    made = cast(type[Connection], _cluster_connection(client.connection_kwargs["connection_class"]))
    client.connection_kwargs["connection_class"] = made
    for node in client.nodes_manager.startup_nodes.values():
        node.connection_class = made
    return client


# What Redis being down, restarting, frozen or read-only (a replica after a
# failover) looks like to redis-py (its ConnectionError covers a refused or dropped
# connection, a Redis still loading its data, a refused password)
# (and, on a cluster: a slot whose primary is down and not yet replaced, a slot
# moving, redirections past redis-py's limit)
_UNREACHABLE = (
    RedisConnectionError,
    RedisTimeoutError,
    ReadOnlyError,
    SlotNotCoveredError,
    OSError,
    TimeoutError,
    ClusterError,
    RedisClusterException,
    TryAgainError,
)


# What a Redis that refuses every write by its own state answers (the store cannot
# take a write now, as when down): at its maxmemory with noeviction (OOM, redis-py's
# OutOfMemoryError), short of its min-replicas-to-write (NOREPLICAS, a plain
# ResponseError).  (Every call's rate-limit cell is a write: INTERNAL for every call
# otherwise, reads too.)
_WRITES_REFUSED = (OutOfMemoryError,)
_WRITES_REFUSED_CODES = ("NOREPLICAS ",)


@contextlib.contextmanager
def _reachable(*, write: bool = False) -> Iterator[None]:
    """Redis's unreachability (or refusal of writes) as the store's
    :class:`StoreUnavailableError`."""
    try:
        yield
    except _UNREACHABLE as exc:
        raise StoreUnavailableError(str(exc) or type(exc).__name__, write=write) from exc
    except ResponseError as exc:
        if not isinstance(exc, _WRITES_REFUSED) and not str(exc).startswith(_WRITES_REFUSED_CODES):
            raise
        raise StoreUnavailableError(f"Redis refuses writes: {exc}", write=write) from exc


@dataclass(eq=False)
class _Waiter:
    """One wait_log call: the entries after ``after`` resolve its future."""

    after: int
    future: asyncio.Future[list[LogItem]]
    # registered while the read in flight named its game at ``after`` or before
    covered: bool = False


@dataclass(eq=False)
class _Followed:
    """A game in the reader's XREAD: its waiters, and the version it is read after
    (the lowest waiter's, or the last delivered once none waits)."""

    key: str
    cursor: int
    waiters: set[_Waiter] = field(default_factory=set)
    idle_since: float | None = None  # when its last waiter left (monotonic clock)


def _rows(rows: list[Any]) -> list[LogItem]:
    """A stream's entries, as XRANGE or XREAD answer them (the fields as redis-py's
    parsed dict, or the raw list: ``e``, the entry)."""
    return [
        LogItem(_version_of(i), bytes(f[b"e"] if isinstance(f, dict) else f[1])) for i, f in rows
    ]


def _has_entries(answer: Any, wake_key: str) -> bool:
    """Whether an XREAD's answer holds an entry of a game's log (not only wake ones)."""
    streams = answer.items() if isinstance(answer, dict) else (answer or ())
    return any(_text(key) != wake_key and rows for key, rows in streams)


def _reader_ended(task: asyncio.Task[None]) -> None:
    """The log reader only ends by close (a cancel); anything else is a bug, logged
    here (the next waiter starts a new reader)."""
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("redis_log_reader_failed", error=repr(error), exc_info=error)


def _cancel_if_asked() -> None:
    """Raise the cancel of this task that redis-py swallowed, if it did: a cancel that
    lands in the zero-second ``asyncio.timeout`` of its connection check (a pool's
    ``can_read_destructive``) comes out of the command as a normal answer on Python
    3.11 (the task still counts it: ``cancelling()``).  A waiter must not then wait
    its whole timeout (tests/integration/test_redis_log_reader.py)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class _ShardReader:
    """One shard's log reader (see the module's docstring): its waiters, its read set
    and its wake stream, in the shard's slot."""

    def __init__(self, store: RedisStore, shard: int) -> None:
        self._store = store
        self.shard = shard
        self.wake_key = index_key(shard, f"wake:{secrets.token_hex(8)}")
        # (written before a WAIT that confirms a read: replica acks only, _confirm_read)
        self.confirm_key = index_key(shard, f"confirm:{secrets.token_hex(8)}")
        self._wake_id = "0-0"  # the last wake entry read
        self.followed: dict[str, _Followed] = {}  # game id → its waiters and cursor
        self._by_key: dict[str, str] = {}  # log key → game id, of the followed games
        # the XREAD in flight: game id → the version it reads after (None: none is)
        self.in_flight: dict[str, int] | None = None
        self._woken = False  # a wake was sent for the XREAD in flight
        self._wanted: asyncio.Event | None = None  # a waiter registered (the idle reader waits)
        self.task: asyncio.Task[None] | None = None
        self._wakes: set[asyncio.Task[None]] = set()
        self._connection: AbstractConnection | None = None

    def register(self, game_id: str, after: int) -> _Waiter:
        if self.task is None or self.task.done():
            self._wanted = asyncio.Event()
            self.task = asyncio.create_task(self._dispatch(), name=f"redis-log-reader-{self.shard}")
            self.task.add_done_callback(_reader_ended)
        waiter = _Waiter(after, asyncio.get_running_loop().create_future())
        followed = self.followed.get(game_id)
        if followed is None:
            key = game_keys(game_id)[1]
            followed = self.followed[game_id] = _Followed(key, after)
            self._by_key[key] = game_id
        followed.waiters.add(waiter)
        followed.idle_since = None
        followed.cursor = min(followed.cursor, after)
        if self._wanted is not None:
            self._wanted.set()
        in_flight = self.in_flight
        if in_flight is not None:
            if in_flight.get(game_id, after + 1) > after:
                self._wake()  # the read in flight would not answer this waiter
            else:
                waiter.covered = True
        return waiter

    def unregister(self, game_id: str, waiter: _Waiter) -> None:
        future = waiter.future
        if not future.done():
            future.cancel()
        elif not future.cancelled():
            future.exception()  # (retrieved: no "exception never retrieved")
        followed = self.followed.get(game_id)
        if followed is None:
            return
        followed.waiters.discard(waiter)
        if not followed.waiters:
            followed.idle_since = time.monotonic()

    def _wake(self) -> None:
        """Make the XREAD in flight return now (once per read, whoever asks)."""
        if self._woken:
            return
        self._woken = True
        task = asyncio.create_task(self._send_wake())
        self._wakes.add(task)
        task.add_done_callback(self._wakes.discard)

    async def _send_wake(self) -> None:
        pipe = self._store._redis.pipeline(transaction=False)
        pipe.xadd(self.wake_key, {"w": "1"}, maxlen=1, approximate=False)
        pipe.pexpire(self.wake_key, WAKE_TTL_MS)
        # (unreachable: the reader's own read fails, and fails its waiters)
        with contextlib.suppress(StoreUnavailableError), _reachable():
            await pipe.execute()

    def _read_set(self) -> dict[str, int]:
        """The games to read (dropping those idle past LINGER): game id → cursor."""
        now = time.monotonic()
        for game_id, followed in list(self.followed.items()):
            if followed.idle_since is not None and now - followed.idle_since > LINGER:
                del self.followed[game_id]
                del self._by_key[followed.key]
        return {game_id: followed.cursor for game_id, followed in self.followed.items()}

    async def _dispatch(self) -> None:
        wanted = self._wanted
        assert wanted is not None
        backoff = 0.05
        while True:
            reading = self._read_set()
            if not reading:
                wanted.clear()
                await wanted.wait()
                continue
            keys = [self.wake_key, *(self.followed[g].key for g in reading)]
            ids = [self._wake_id, *(f"{cursor}-1" for cursor in reading.values())]
            self.in_flight, self._woken = reading, False
            try:
                with _reachable():
                    reader = self._connection = await self._store._reader_connection(
                        self.wake_key, self._connection
                    )
                    # (in lower case: upper-case strings here read as error reasons to
                    # tests/integration/test_error_reasons.py)
                    read = ("xread", "count", READ_COUNT, "block", READ_BLOCK_MS, "streams")
                    await reader.send_command(*read, *keys, *ids)
                    answer = await reader.read_response()
                    if self._store._ack_replicas and _has_entries(answer, self.wake_key):
                        await self._confirm_read(reader)
            except (StoreUnavailableError, RedisError) as exc:
                # (another error of Redis, a refused command, a slot moved: as
                # unreachable, for the waiters, and tried again after the backoff, on
                # the slot's node by then, not the reader's end)
                self.in_flight = None
                if self._connection is not None:
                    with contextlib.suppress(*_UNREACHABLE, RedisError):
                        await self._connection.disconnect(nowait=True)
                if not isinstance(exc, StoreUnavailableError):
                    exc = StoreUnavailableError(str(exc) or type(exc).__name__)
                self.fail_waiters(exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
                await self._store._relearn_slots()
                continue
            self.in_flight = None
            backoff = 0.05
            if isinstance(answer, dict):  # (RESP3: a map)
                answer = list(answer.items())
            for key, rows in answer or ():
                self._deliver(_text(key), rows, reading)

    async def _confirm_read(self, reader: AbstractConnection) -> None:
        """With replica acks: return once the entries just read are on enough replicas
        (a write of this connection, then WAIT: a replica that has it has everything
        its node wrote before).  A primary frozen past the node timeout, resumed,
        answers the XREAD blocked on it with the writes queued on its sockets while it
        slept (none acknowledged: their WAIT finds no replica) until it learns that its
        replica was promoted, and its resync then discards them: sessions and watchers
        must not get those events (the same version may hold another move, or the same
        one retried, which a cursor past it would skip).  Until the write is confirmed
        the read is not delivered; once the node says it serves the slot no more (a
        replica now: MOVED), the read fails as unreachable and is issued again, on the
        slot's node, from the same cursors."""
        while True:
            await reader.send_command("set", self.confirm_key, "1", "px", WAKE_TTL_MS)
            await reader.send_command(
                "wait", self._store._ack_replicas, self._store._ack_timeout_ms
            )
            await reader.read_response()
            confirmed = await reader.read_response()
            if int(confirmed) >= self._store._ack_replicas:
                return

    def _deliver(self, key: str, rows: list[Any], reading: dict[str, int]) -> None:
        if key == self.wake_key:
            if rows:
                self._wake_id = _text(rows[-1][0])
            return
        game_id = self._by_key.get(key)
        followed = self.followed.get(game_id) if game_id is not None else None
        if followed is None or game_id is None or not rows:
            return
        items = _rows(rows)
        read_after, last = reading[game_id], items[-1].version
        for waiter in list(followed.waiters):
            # the entries read are those after ``read_after``: they answer a waiter
            # after a version from there on (one further back is read again)
            if read_after <= waiter.after < last:
                followed.waiters.discard(waiter)
                if not waiter.future.done():
                    waiter.future.set_result([i for i in items if i.version > waiter.after])
        followed.cursor = min((w.after for w in followed.waiters), default=last)
        if not followed.waiters and followed.idle_since is None:
            followed.idle_since = time.monotonic()

    def fail_waiters(self, error: StoreUnavailableError) -> None:
        for followed in self.followed.values():
            for waiter in followed.waiters:
                if not waiter.future.done():
                    waiter.future.set_exception(StoreUnavailableError(error.error))
            followed.waiters.clear()
            if followed.idle_since is None:
                followed.idle_since = time.monotonic()

    async def close(self) -> None:
        for task in [self.task, *self._wakes]:
            # (again until it ends: redis-py may swallow a cancel that lands in its
            # own zero-second timeout, Python 3.11's asyncio.timeout; never the cancel
            # of close itself, which asyncio.wait passes on)
            while task is not None and not task.done():
                task.cancel()
                await asyncio.wait({task}, timeout=0.1)
            if task is not None and not task.cancelled():
                task.exception()  # (retrieved)
        self.fail_waiters(StoreUnavailableError("the store is closed"))
        if self._connection is not None:
            await self._connection.disconnect()


def _merged(rows_by_shard: list[list[Any]], limit: int) -> list[tuple[float, str, int]]:
    """The ``limit`` lowest-scored (member, score) pairs of every shard's range read
    (each in score order), as (score, member, shard)."""
    scored = (
        [(float(score), _text(member), shard) for member, score in rows]
        for shard, rows in enumerate(rows_by_shard)
    )
    return list(heapq.merge(*scored))[:limit]


class RedisStore(GameStore):
    def __init__(
        self,
        url: str,
        finished_ttl: int = 24 * 3600,
        max_connections: int = 64,
        command_timeout: float = 2.0,
        ack_replicas: int = 0,
        ack_timeout: float = 0.5,
    ) -> None:
        # a Lua compare-and-set takes well under a millisecond: ``command_timeout``
        # only bounds what a frozen Redis (or a lost connection) would make wait
        # (and a write's WAIT for its replicas, ``ack_timeout`` more)
        self._ack_replicas = ack_replicas
        self._ack_timeout_ms = max(1, round(ack_timeout * 1000))
        timeouts: dict[str, Any] = {
            "socket_timeout": command_timeout + (ack_timeout if ack_replicas else 0.0),
            "socket_connect_timeout": command_timeout,
        }
        self._command_timeout = command_timeout
        self._url = url
        self._redis: aioredis.Redis | RedisCluster
        self._probe: aioredis.Redis | RedisCluster
        plain = cluster_url(url)
        self._cluster: RedisCluster | None = None
        if plain is not None:
            # (a node's connections are made as needed, not pooled up to a bound:
            # redis-py's cluster client refuses a command past its bound, never waits)
            self._redis = self._cluster = cluster_client(plain, **timeouts)
            # The health probe's own client: a busy pool must not look like an outage.
            self._probe = cluster_client(plain, **timeouts)
        else:
            self._redis = aioredis.Redis(
                connection_pool=connection_pool(
                    url, max_connections=max_connections, timeout=10, **timeouts
                )
            )
            self._probe = aioredis.Redis(
                connection_pool=connection_pool(url, max_connections=1, timeout=1, **timeouts)
            )
        self._relearned = 0.0  # when the cluster's slots were last asked again (monotonic)
        self._probe_down: set[str] = set()  # the primaries the last probe found down
        self._relearning: set[asyncio.Task[None]] = set()  # (_relearn_later's tasks)
        # a shard's log reader, made with its first waiter
        self._readers: dict[int, _ShardReader] = {}
        self._closed = False
        # (redis-py types register_script for its standalone client; the script object
        # only calls evalsha and script_load, which the cluster client routes by key)
        scripts = cast(aioredis.Redis, self._redis)
        self._create = scripts.register_script(_CREATE)
        self._commit = scripts.register_script(_COMMIT)
        self._bot_turns = scripts.register_script(_BOT_TURNS)
        self._confirm = scripts.register_script(_CONFIRM)
        self._take = scripts.register_script(_TAKE)
        self._hold = scripts.register_script(_HOLD)
        self._held = scripts.register_script(_HELD)
        self._ttl = finished_ttl

    async def _write(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any:
        """``script``'s answer; with replica acks, only once enough replicas have it."""
        if not self._ack_replicas:
            with _reachable(write=True):
                if self._cluster is not None:
                    return await self._write_once(self._cluster, script, keys, args)
                return await script(keys=keys, args=args)
        with _reachable(write=True):
            # one pipeline, one connection: WAIT counts the replicas that have its
            # connection's writes.  (EVALSHA by hand: a pipeline's own script
            # handling asks SCRIPT EXISTS first, a round trip more per write.)
            for _ in range(2):
                try:
                    answer, confirmed = await self._write_and_wait(script.sha, keys, args)
                    break
                except NoScriptError:  # (nothing ran: load it, send again)
                    await self._redis.script_load(script.script)
            else:
                raise StoreUnavailableError("Redis lost the script as it was loaded", write=True)
        if int(confirmed) < self._ack_replicas:
            raise StoreUnavailableError(
                f"{confirmed} of {self._ack_replicas} replica(s) confirmed the write"
                f" within {self._ack_timeout_ms} ms",
                write=True,
                reason="REPLICA_ACK_TIMEOUT",
            )
        return answer

    async def _write_once(
        self, cluster: RedisCluster, script: AsyncScript, keys: list[str], args: list[Any]
    ) -> Any:
        """``script`` on a cluster, sent once.  redis-py's cluster client sends a command
        again by itself after a connection error or a timeout, and a write whose first
        send had run then meets its own compare-and-set: False, "another writer got
        there first", for a write that landed.  Sent to its slot's node by name it is
        not sent again (MOVED and ASK, where nothing ran, are still followed), and its
        failure is the store unreachable, the outcome unknown (as on one Redis)."""
        await cluster.initialize()  # (learns the slots on first use; then a no-op)
        for _ in range(2):
            node = cluster.get_node_from_key(keys[0])
            if node is None:
                raise StoreUnavailableError("no primary serves the game's slot now", write=False)
            try:
                # (in lower case, as the reader's XREAD: see there)
                command = ("evalsha", script.sha, len(keys), *keys, *args)
                return await cluster.execute_command(*command, target_nodes=node)
            except NoScriptError:  # (nothing ran: load it, send again)
                await cluster.script_load(script.script)
        raise StoreUnavailableError("Redis lost the script as it was loaded", write=True)

    async def _write_and_wait(self, sha: str, keys: list[str], args: list[Any]) -> tuple[Any, int]:
        """EVALSHA then WAIT on one connection: the script's answer and the replicas
        that confirmed it.  On a cluster, that connection is one to the primary of the
        keys' slot (a cluster pipeline would send the keyless WAIT to any node)."""
        if self._cluster is None:
            pipe = self._redis.pipeline(transaction=False)
            pipe.evalsha(sha, len(keys), *keys, *args)
            pipe.wait(self._ack_replicas, self._ack_timeout_ms)
            answer, confirmed = await pipe.execute()
            return answer, int(confirmed)
        await self._cluster.initialize()  # (learns the slots on first use; then a no-op)
        for _ in range(3):
            node = self._cluster.get_node_from_key(keys[0])
            if node is None:
                raise StoreUnavailableError("no primary serves the game's slot now", write=False)
            connection = node.acquire_connection()
            try:
                # (in lower case, as the reader's XREAD: see there)
                await connection.send_packed_command(
                    connection.pack_commands(
                        [
                            ("evalsha", sha, len(keys), *keys, *args),
                            ("wait", self._ack_replicas, self._ack_timeout_ms),
                        ]
                    )
                )
                answer = await node.parse_response(connection, "evalsha")
                confirmed = await node.parse_response(connection, "wait")
                break
            except MovedError as exc:
                # (the slot has another primary now, the script ran nowhere: learn
                # the new owner, as the cluster client does, and send it there)
                await connection.disconnect()
                self._cluster.nodes_manager.update_moved_exception(exc)  # type: ignore[no-untyped-call]
            except AskError as exc:
                # (the slot is being moved to another primary, resharding, and these
                # keys are not all here: the script ran nowhere.  Not followed there:
                # a script of several keys is answered TRYAGAIN there until every
                # one has moved.  Unreachable for now, as TRYAGAIN is, not a
                # ResponseError: a client's retry meets the slot moved.)
                await connection.disconnect()
                raise StoreUnavailableError(
                    f"the game's slot is moving to {exc.host}:{exc.port}", write=False
                ) from exc
            except BaseException as exc:
                # (what the connection still holds of the two answers is unknown)
                await connection.disconnect()
                if isinstance(exc, _UNREACHABLE):
                    # (the node may be down and its slots served by another now: learn
                    # them again, as the cluster client does after its own commands'
                    # failures; nothing else may ask, and this path would go on
                    # sending to the dead node for good)
                    self._relearn_later()
                raise
            finally:
                node.release(connection)
        else:
            raise StoreUnavailableError("the cluster kept moving the game's slot", write=True)
        return answer, int(confirmed)

    async def create(self, game_id: str, write: Write) -> None:
        keys = [game_keys(game_id)[0], *_index_keys(game_id, write)]
        args: list[Any] = [write.record, game_id, *_index_args(game_id, write)]
        created = await self._write(self._create, keys, args)
        if not created:
            raise GameExistsError(game_id)

    async def load(self, game_id: str) -> Snapshot | None:
        with _reachable():
            rev, record = await _awaited(self._redis.hmget(game_keys(game_id)[0], ["rev", "rec"]))
        if rev is None or record is None:
            return None
        return Snapshot(int(rev), bytes(record))

    async def commit(self, game_id: str, expected_revision: int, write: Write) -> bool:
        # The indexes (bot turns, deadlines, active games, the lobby) change in the same script
        # as the record: a crash between two writes could leave a deadline unindexed,
        # and the game would wait for it for ever.
        entry = write.entry
        args: list[Any] = [
            expected_revision,
            write.record,
            str(entry.version) if entry else "",
            entry.entry if entry else b"",
            write.idempotency_key or "",
            write.response or b"",
            self._ttl if write.finished else 0,
            game_id,
            *_index_args(game_id, write),
        ]
        keys = [*game_keys(game_id), *_index_keys(game_id, write)]
        if write.take is not None:
            cell = write.take
            keys.append(game_rate_key(game_id, cell.name))
            args += [repr(1_000_000 / cell.rate), cell.burst]
        answer = int(await self._write(self._commit, keys, args))
        if answer < 0:
            raise RateRefusedError((-answer - 1) / 1_000_000)
        return answer == 1

    async def idempotent_response(self, game_id: str, key: str) -> bytes | None:
        if self._ack_replicas:  # (answered as a success: confirmed as a write is)
            return cast(
                bytes | None, await self._write(self._confirm, [game_keys(game_id)[2]], [key])
            )
        with _reachable():
            return await cast(Awaitable[bytes | None], self._redis.hget(game_keys(game_id)[2], key))

    async def read_log(self, game_id: str, after_version: int, limit: int = 1000) -> list[LogItem]:
        with _reachable():
            rows = await self._redis.xrange(
                game_keys(game_id)[1], min=f"{after_version + 1}-0", max="+", count=limit
            )
        return _rows(rows)

    async def wait_log(self, game_id: str, after_version: int, timeout: float) -> list[LogItem]:
        if self._closed:
            raise StoreUnavailableError("the store is closed")
        shard = shard_of(game_id)
        reader = self._readers.get(shard)
        if reader is None:
            reader = self._readers[shard] = _ShardReader(self, shard)
        # registered before the read: an entry committed after the read is the reader's
        waiter = reader.register(game_id, after_version)
        try:
            # (the read in flight names the game at this version or before: it answers
            # any entry after it, committed before it or since, so no read of our own)
            if not waiter.covered:
                items = await self.read_log(game_id, after_version)
                if items:
                    return items
                _cancel_if_asked()
            try:
                async with asyncio.timeout(timeout):  # (not wait_for: see StoreMonitor.run)
                    return await waiter.future
            except TimeoutError:
                return []
        finally:
            reader.unregister(game_id, waiter)

    async def _reader_connection(
        self, key: str, connection: AbstractConnection | None
    ) -> AbstractConnection:
        """A log reader's connection, connected, to the node serving ``key``'s slot:
        ``connection`` when it is to that node.  Its XREAD blocks READ_BLOCK_MS, so a
        read unanswered by then and ``command_timeout`` more is a frozen Redis or a
        lost connection.  (A connection of its own, outside any pool: the read is its
        only command.)"""
        timeouts: dict[str, Any] = {
            "socket_timeout": READ_BLOCK_MS / 1000 + self._command_timeout,
            "socket_connect_timeout": self._command_timeout,
        }
        if self._cluster is None:
            if connection is None:
                pool = connection_pool(self._url, max_connections=1, **timeouts)
                connection = pool.make_connection()  # type: ignore[no-untyped-call]
        else:
            await self._cluster.initialize()
            node = self._cluster.get_node_from_key(key)
            if node is None:
                raise StoreUnavailableError(f"no node serves the slot of {key}")
            address = (node.host, int(node.port))
            if connection is not None and _address(connection) != address:
                await connection.disconnect(nowait=True)
                connection = None
            if connection is None:
                # (as the cluster client makes its own: no retry below its own)
                options = {**node.connection_kwargs, **timeouts}
                options["retry"] = Retry(NoBackoff(), 0)
                connection = node.connection_class(**options)
        await connection.connect()
        return connection

    def _relearn_later(self) -> None:
        """:meth:`_relearn_slots` in a task of its own: the failed call is answered
        now, not after the slots are read again (a frozen node delays that read)."""
        if self._cluster is None or time.monotonic() - self._relearned < 1.0:
            return
        task = asyncio.create_task(self._relearn_slots())
        self._relearning.add(task)
        task.add_done_callback(self._relearning.discard)

    async def _relearn_slots(self) -> None:
        """After a reader's failure on a cluster: ask which node serves each slot again
        (once a second at most, whichever reader asks), as the cluster client does
        after its own commands' failures."""
        if self._cluster is None or time.monotonic() - self._relearned < 1.0:
            return
        self._relearned = time.monotonic()
        with contextlib.suppress(*_UNREACHABLE, RedisError):
            async with asyncio.timeout(self._command_timeout * 2):
                await self._cluster.nodes_manager.initialize()

    # ------------------------------------------------------------------ across shards

    async def _each_shard(self, read: Callable[[Any, int], object]) -> list[Any]:
        """``read(pipeline, shard)`` of every shard, in one pipeline: one round trip on
        one Redis, one per node on a cluster (redis-py's cluster pipeline groups the
        commands by slot); the answers in shard order.  A script's first call on a
        node (or after a failover: a promoted replica has none) loads it."""
        for attempt in (1, 2):
            pipe = self._redis.pipeline(transaction=False)
            for shard in range(SHARDS):
                read(pipe, shard)
            try:
                with _reachable():
                    return list(await pipe.execute())
            except NoScriptError:
                if attempt == 2:
                    raise
                with _reachable():
                    await self._redis.script_load(_BOT_TURNS)
        raise AssertionError("unreachable")  # (the loop returns or raises)

    async def due_deadlines(self, now: float, limit: int = 100) -> list[str]:
        if limit <= 0:
            return []

        def due(pipe: Any, shard: int) -> None:
            key = index_key(shard, "deadlines")
            pipe.zrangebyscore(key, "-inf", now, start=0, num=limit, withscores=True)

        return [game for _, game, _ in _merged(await self._each_shard(due), limit)]

    async def bot_turns(self, limit: int = 100, lease: float = 0.0) -> list[str]:
        """Every shard's due turns, longest waiting first; with a lease, the shards of
        the first ``limit`` claim as many in their scripts (the turns due first in
        each shard by then: another worker's claim may have taken some of those
        seen), again until ``limit`` are claimed or none is due."""
        if limit <= 0:
            return []
        # (a write: it claims the turns, but claiming twice is harmless)
        claimed: list[tuple[float, str, int]] = []
        for _ in range(CLAIM_ROUNDS if lease > 0 else 1):
            wanted = limit - len(claimed)
            seen = _merged(await self._turns(Counter(), wanted), wanted)
            if lease <= 0:
                return [game for _, game, _ in seen]
            if not seen:
                break
            counts = Counter(shard for _, _, shard in seen)
            claimed.extend(_merged(await self._turns(counts, 0, lease), wanted))
            if len(claimed) >= limit:
                break
        return [game for _, game, _ in sorted(claimed)]

    async def _turns(
        self, counts: Counter[int], limit: int, lease: float = 0.0
    ) -> list[list[tuple[Any, Any]]]:
        """Every shard's due turns (claimed for ``lease`` seconds if above 0): up to
        ``counts[shard]``, or else ``limit``; (id, when listed from) pairs."""

        def read(pipe: Any, shard: int) -> None:
            key = index_key(shard, "botturns")
            wanted = counts[shard] or limit  # (0: none, and the answers keep shard order)
            # (as a raw command: redis-py's cluster pipeline refuses its ``evalsha``
            # method, for the loading of scripts that _each_shard does itself; in
            # lower case, as the reader's XREAD: see there)
            pipe.execute_command("evalsha", self._bot_turns.sha, 1, key, wanted, repr(float(lease)))

        answers = await self._each_shard(read)
        return [list(zip(flat[::2], flat[1::2], strict=True)) for flat in answers]

    async def open_games(
        self, rule_set_hash: str = "", after: int = 0, limit: int = 50
    ) -> list[OpenGame]:
        if limit <= 0:
            return []

        def page(pipe: Any, shard: int) -> None:
            key = lobby_key(shard, rule_set_hash)
            pipe.zrangebyscore(key, f"({after}", "+inf", start=0, num=limit, withscores=True)

        listed = _merged(await self._each_shard(page), limit)
        return [OpenGame(game, int(position)) for position, game, _ in listed]

    async def games_in_play(self) -> int:
        def active(pipe: Any, shard: int) -> None:
            pipe.scard(index_key(shard, "active"))

        return sum(await self._each_shard(active))

    async def unfinished(self, game_ids: list[str]) -> set[str]:
        if not game_ids:
            return set()
        # (each game's shard's active set; a cluster pipeline groups them by node)
        pipe = self._redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.sismember(index_key(shard_of(game_id), "active"), game_id)
        with _reachable():
            found = await pipe.execute()
        return {g for g, there in zip(game_ids, found, strict=True) if there}

    async def take(
        self, key: str, rate: float, burst: int, cost: int = 1, game_id: str | None = None
    ) -> Admission:
        args: list[Any] = [repr(1_000_000 / rate), burst, cost]
        cell = rate_key(key) if game_id is None else game_rate_key(game_id, key)
        with _reachable():
            allowed, wait = await self._take(keys=[cell], args=args)
        return Admission(bool(allowed), int(wait) / 1_000_000)

    async def hold(self, key: str, member: str, limit: int, seconds: float) -> bool:
        args: list[Any] = [member, limit, repr(seconds * 1_000_000)]
        with _reachable():
            return bool(await self._hold(keys=[hold_key(key)], args=args))

    async def release(self, key: str, *members: str) -> None:
        if members:
            with _reachable():
                await _awaited(self._redis.zrem(hold_key(key), *members))

    async def held(self, key: str) -> list[str]:
        with _reachable():
            ids = await self._held(keys=[hold_key(key)])
        return [i.decode() if isinstance(i, bytes) else str(i) for i in ids]

    async def ping(self) -> bool:
        with _reachable():
            try:
                async with asyncio.timeout(self._command_timeout):
                    if isinstance(self._probe, RedisCluster):
                        # (every primary: each serves a part of the games)
                        targets = RedisCluster.PRIMARIES
                        return bool(await self._probe.ping(target_nodes=targets))
                    return bool(await self._probe.ping())
            except TimeoutError:
                raise StoreUnavailableError(
                    f"no answer to PING within {self._command_timeout:g} s"
                ) from None

    async def ping_parts(self) -> dict[str, str]:
        """On a cluster: each primary pinged on its own (its name, ``host:port``, when
        down), so that one primary down (until its replica is promoted) refuses only
        the calls that need it.  After a round that found one down, the probe's map of
        the slots is asked again first (of the other nodes): it learns the promoted
        replica.  Every primary down, or no map at all: the whole store."""
        if not isinstance(self._probe, RedisCluster):
            return await super().ping_parts()
        probe = self._probe
        try:
            async with asyncio.timeout(self._command_timeout * 2):
                if self._probe_down:
                    for name in self._probe_down:  # (asked last: they may be frozen)
                        probe.nodes_manager.startup_nodes.pop(name, None)
                    with contextlib.suppress(*_UNREACHABLE, RedisError):
                        await probe.nodes_manager.initialize()
                with _reachable():
                    await probe.initialize()  # (learns the slots on first use; then a no-op)
        except TimeoutError:
            pass  # (the map it has)
        except StoreUnavailableError as exc:
            return {WHOLE: exc.error}
        primaries = probe.get_primaries()
        if not primaries:
            return {WHOLE: "the cluster has no primary"}
        answers = await asyncio.gather(*(self._ping_node(node) for node in primaries))
        down = {node.name: why for node, why in zip(primaries, answers, strict=True) if why}
        self._probe_down = set(down)
        for client in (self._redis, probe):
            if isinstance(client, _Cluster):
                client.down = frozenset(down)
        if len(down) == len(primaries):
            return {WHOLE: "no primary answers: " + "; ".join(f"{n}: {w}" for n, w in down.items())}
        return down

    async def _ping_node(self, node: Any) -> str:
        """Why ``node`` did not answer PING ("": it did).  (The node's own command, not
        the cluster client's: its failure would close every node's connections.)"""
        try:
            async with asyncio.timeout(self._command_timeout):
                answered = await node.execute_command("PING")
        except TimeoutError:
            with contextlib.suppress(Exception):
                await node.disconnect()
            return f"no answer to PING within {self._command_timeout:g} s"
        except (*_UNREACHABLE, RedisError) as exc:
            with contextlib.suppress(Exception):
                await node.disconnect()
            return str(exc) or type(exc).__name__
        return "" if answered else "the node did not answer PING"

    def part_of_game(self, game_id: str) -> str:
        return self._part_of(game_keys(game_id)[0])

    def part_of_key(self, kind: str, name: str) -> str:
        return self._part_of(hold_key(name) if kind == "hold" else rate_key(name))

    def _part_of(self, key: str) -> str:
        """The primary that serves ``key``'s slot, as the health probe last learnt the
        slots (``WHOLE``: one Redis, or a slot it does not know)."""
        if not isinstance(self._probe, RedisCluster):
            return WHOLE
        with contextlib.suppress(RedisError, RedisClusterException, KeyError, IndexError):
            manager = self._probe.nodes_manager
            return str(manager.get_node_from_slot(self._probe.keyslot(key)).name)
        return WHOLE

    async def close(self) -> None:
        self._closed = True
        for reader in self._readers.values():
            await reader.close()
        for task in list(self._relearning):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._redis.aclose()
        await self._probe.aclose()


def _address(connection: AbstractConnection) -> tuple[str, int]:
    return (str(getattr(connection, "host", "")), int(getattr(connection, "port", 0)))
