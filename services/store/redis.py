"""The Redis store: one Lua compare-and-set per write, keys hash-tagged per game.

Keys (the ``{id}`` hash tag keeps a game's keys in one Redis Cluster slot, so the
script may touch them all):

* ``g:{id}:rec`` — hash: ``rev`` (the compare-and-set token) and ``rec`` (the record)
* ``g:{id}:log`` — stream: one entry per accepted action, id ``<version>-1``
* ``g:{id}:req`` — hash: idempotency key → the stored response
* ``glintwick:deadlines`` — sorted set: game id by when its deadline passes
  (the sweeper re-checks every due game against its record);
* ``glintwick:active`` — set of unfinished game ids;
* ``glintwick:botturns`` — sorted set: game id by when it is listed from (when a
  house-bot seat started waiting, or when a worker's lease on the turn ends; times
  from Redis's clock, so replicas' clocks do not matter);
* ``glintwick:lobby`` — sorted set: the games with a free seat (the lobby), by
  position: when listed (at creation), microseconds of Redis's clock, made unique
  by ``glintwick:lobbyclock`` (the last position given: one more when two games
  share a microsecond), so a position is an exact cursor for the lobby's pages;
* ``glintwick:lobby:<rule-set hash>`` — the same, for one rule set: a filtered
  lobby page is one range read, never a scan past other rule sets' games.

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
find).  The scripts so
touch keys outside the game's hash tag: fine for one Redis (this store's client);
a Redis Cluster deployment would need the indexes in each game's slot.  Needs
Redis >= 5 (``TIME`` in a writing script).

Finished games expire after a configurable time.

Waiting for a log (:meth:`RedisStore.wait_log`): **one reader per store** (per
server process), not a connection per waiter.  A dispatcher task holds one
dedicated connection and loops on ``XREAD BLOCK 5000 COUNT 1000 STREAMS`` over the
log of every game that has a waiter, plus its own wake stream:

* ``glintwick:wake:{<random hex>}`` — stream, this store's own (a fresh name per
  RedisStore), at most one entry (``MAXLEN 1``), expiring ``WAKE_TTL_MS`` after its
  last entry (``PEXPIRE`` with each ``XADD``): a dead process leaves nothing behind.

A waiter registers its future (game, version) *first*, then reads the log without
blocking; entries found there are its answer, otherwise it awaits the future (up to
its timeout), which the dispatcher resolves with the entries after its version.
(A waiter whose game the read in flight names at its version or before skips that
read: the ``XREAD`` in flight answers any entry after it, whenever committed.)  A
waiter whose game is not in the read in flight (or is there at a later version)
adds an entry to the wake stream (one per read in flight, whoever asks), so that
the read returns at once and is issued again with the game in it.  Every read
names explicit ids (a game's last version delivered, ``<v>-1``; the last wake
entry), never ``$``, so nothing committed between a waiter's read and the
dispatcher's next ``XREAD`` is missed.  A game stays in the read set ``LINGER``
seconds after its last waiter left (at its last version delivered): a session
that comes back after each move finds its game there and needs no wake.  A
commit through any replica lands in the game's log stream, so it reaches every
replica's reader at once.  When the reader's connection fails, its waiters get
:class:`StoreUnavailableError`, and it reconnects with a backoff.  (Redis Cluster,
issue 18: one ``XREAD`` must name keys of one slot, so a cluster needs one reader
per shard, each with its own wake stream in that shard.)

Every call has a deadline (``command_timeout``, and a blocking read its wait plus
that): a Redis that is down, or frozen, answers :class:`StoreUnavailableError`
within it instead of an error of the client library, or a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypeVar, cast

import hiredis
import redis.asyncio as aioredis
import structlog
from redis.asyncio.connection import AbstractConnection, parse_url
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import DataError, ReadOnlyError, RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.typing import EncodableT

from services.store.base import (
    Admission,
    GameExistsError,
    GameStore,
    LogItem,
    OpenGame,
    Snapshot,
    StoreUnavailableError,
    Write,
)

T = TypeVar("T")

log = structlog.get_logger("glintwick.store")

DEADLINES_KEY = "glintwick:deadlines"
ACTIVE_KEY = "glintwick:active"
BOT_TURNS_KEY = "glintwick:botturns"
LOBBY_KEY = "glintwick:lobby"
LOBBY_CLOCK_KEY = "glintwick:lobbyclock"


#: how long the log reader's XREAD blocks before it is issued again (milliseconds)
READ_BLOCK_MS = 5000
#: entries read per game and XREAD (as read_log's default limit)
READ_COUNT = 1000
#: seconds a game stays in the reader's XREAD after its last waiter left
LINGER = 10.0
#: milliseconds the wake stream outlives its last entry
WAKE_TTL_MS = 60_000


def lobby_key(rule_set_hash: str) -> str:
    """The lobby index of one rule set ("": of every rule set)."""
    return f"{LOBBY_KEY}:{rule_set_hash}" if rule_set_hash else LOBBY_KEY


# A write's index entries, one function for both writing scripts: ``bot_turn`` 'set'
# (list the game from now, Redis's clock) or 'del' or ''; ``deadline`` a Unix time
# or 'del' or ''; ``finished`` '1' or ''; ``open`` 'add' (list the game in the
# lobby, unless it is listed) or 'del' or '' ('' everywhere: leave that index alone).
# (Positions are formatted with %d: Lua's own number-to-string keeps 14 digits.)
_INDEXES = """
local function indexes(keys, game, bot_turn, deadline, finished, open)
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
indexes({unpack(KEYS, 2, 7)}, ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return 1
"""
)

# KEYS: record, log, requests, the index keys; ARGV: expected revision, record,
# entry version, entry, idempotency key, response, ttl, game id, the index args
_COMMIT = (
    _INDEXES
    + """
local rev = redis.call('HGET', KEYS[1], 'rev')
if (not rev) or tonumber(rev) ~= tonumber(ARGV[1]) then return 0 end
if ARGV[5] ~= '' and redis.call('HEXISTS', KEYS[3], ARGV[5]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'rev', tonumber(rev) + 1, 'rec', ARGV[2])
if ARGV[3] ~= '' then redis.call('XADD', KEYS[2], ARGV[3] .. '-1', 'e', ARGV[4]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], ARGV[5], ARGV[6]) end
local ttl = tonumber(ARGV[7])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
  redis.call('EXPIRE', KEYS[3], ttl)
end
indexes({unpack(KEYS, 4, 9)}, ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12])
return 1
"""
)

_BOT_TURNS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local lease = tonumber(ARGV[2])
if lease > 0 then
  for _, id in ipairs(ids) do redis.call('ZADD', KEYS[1], 'XX', now + lease, id) end
end
return ids
"""


# GCRA: KEYS: the cell; ARGV: microseconds per request, burst, cost.  Returns
# {1, 0} (allowed: the cell moved on) or {0, microseconds to wait} (nothing changed).
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local arrival = tonumber(redis.call('GET', KEYS[1]) or now)
if arrival < now then arrival = now end
arrival = arrival + tonumber(ARGV[3]) * interval
local allowed_at = arrival - tonumber(ARGV[2]) * interval
if allowed_at > now then return {0, string.format('%.0f', allowed_at - now)} end
redis.call('SET', KEYS[1], string.format('%.0f', arrival),
           'PX', math.floor((arrival - now) / 1000) + 1)
return {1, '0'}
"""

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


def hold_key(name: str) -> str:
    """A bounded set's key: its own hash tag."""
    return f"glintwick:hold:{{{name}}}"


def _awaited(value: Awaitable[T] | T) -> Awaitable[T]:
    """redis-py types its commands for both clients; the asyncio client's are awaitables."""
    return cast(Awaitable[T], value)


def _keys(game_id: str) -> list[str]:
    return [f"g:{{{game_id}}}:rec", f"g:{{{game_id}}}:log", f"g:{{{game_id}}}:req"]


def _index_args(write: Write) -> list[str]:
    """The scripts' index arguments for ``write`` (see _INDEXES); '' where the index
    already says the same, the common case: no index write on most moves."""
    bot_turn = "set" if write.bot_turn else ("del" if write.bot_turn_changed else "")
    deadline = ""
    if write.deadline_changed:
        deadline = "del" if write.deadline is None else repr(write.deadline)
    lobby = "add" if write.open_seats else ("del" if write.open_seats_changed else "")
    return [bot_turn, deadline, "1" if write.finished else "", lobby]


def _index_keys(write: Write) -> list[str]:
    """The keys of the indexes ``write`` may touch (see _INDEXES), in its order."""
    return [
        BOT_TURNS_KEY,
        DEADLINES_KEY,
        ACTIVE_KEY,
        LOBBY_KEY,
        lobby_key(write.rule_set_hash),
        LOBBY_CLOCK_KEY,
    ]


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
    if utf8 and settings.get("encoding_errors", "strict") == "strict":
        base = settings.get("connection_class", aioredis.Connection)
        settings["connection_class"] = _packing(base)
    return pool(**settings, **options)


# What Redis being down, restarting, frozen or read-only (a replica after a
# failover) looks like to redis-py (its ConnectionError covers a refused or dropped
# connection, a Redis still loading its data, a refused password)
_UNREACHABLE = (RedisConnectionError, RedisTimeoutError, ReadOnlyError, OSError, TimeoutError)


@contextlib.contextmanager
def _reachable(*, write: bool = False) -> Iterator[None]:
    """Redis's unreachability as the store's :class:`StoreUnavailableError`."""
    try:
        yield
    except _UNREACHABLE as exc:
        raise StoreUnavailableError(str(exc) or type(exc).__name__, write=write) from exc


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


class RedisStore(GameStore):
    def __init__(
        self,
        url: str,
        finished_ttl: int = 24 * 3600,
        max_connections: int = 64,
        command_timeout: float = 2.0,
    ) -> None:
        # a Lua compare-and-set takes well under a millisecond: ``command_timeout``
        # only bounds what a frozen Redis (or a lost connection) would make wait
        timeouts: dict[str, Any] = {
            "socket_timeout": command_timeout,
            "socket_connect_timeout": command_timeout,
        }
        self._command_timeout = command_timeout
        self._redis = aioredis.Redis(
            connection_pool=connection_pool(
                url, max_connections=max_connections, timeout=10, **timeouts
            )
        )
        # The log reader's one connection (see the module's docstring): its XREAD
        # blocks READ_BLOCK_MS, so a read unanswered by then and ``command_timeout``
        # more is a frozen Redis or a lost connection.
        # (a connection of its own, outside any pool: the read is its only command)
        self._reader: AbstractConnection = connection_pool(
            url,
            max_connections=1,
            socket_timeout=READ_BLOCK_MS / 1000 + command_timeout,
            socket_connect_timeout=command_timeout,
        ).make_connection()  # type: ignore[no-untyped-call]
        self._wake_key = f"glintwick:wake:{{{secrets.token_hex(8)}}}"
        self._wake_id = "0-0"  # the last wake entry read
        self._followed: dict[str, _Followed] = {}  # game id → its waiters and cursor
        self._by_key: dict[str, str] = {}  # log key → game id, of the followed games
        # the XREAD in flight: game id → the version it reads after (None: none is)
        self._in_flight: dict[str, int] | None = None
        self._woken = False  # a wake was sent for the XREAD in flight
        self._wanted: asyncio.Event | None = None  # a waiter registered (the idle reader waits)
        self._dispatcher: asyncio.Task[None] | None = None
        self._wakes: set[asyncio.Task[None]] = set()
        self._closed = False
        # The health probe's own connection: a busy pool must not look like an outage.
        self._probe = aioredis.Redis(
            connection_pool=connection_pool(url, max_connections=1, timeout=1, **timeouts)
        )
        self._create = self._redis.register_script(_CREATE)
        self._commit = self._redis.register_script(_COMMIT)
        self._bot_turns = self._redis.register_script(_BOT_TURNS)
        self._take = self._redis.register_script(_TAKE)
        self._hold = self._redis.register_script(_HOLD)
        self._held = self._redis.register_script(_HELD)
        self._ttl = finished_ttl

    async def create(self, game_id: str, write: Write) -> None:
        keys = [_keys(game_id)[0], *_index_keys(write)]
        args: list[Any] = [write.record, game_id, *_index_args(write)]
        with _reachable(write=True):
            created = await self._create(keys=keys, args=args)
        if not created:
            raise GameExistsError(game_id)

    async def load(self, game_id: str) -> Snapshot | None:
        with _reachable():
            rev, record = await _awaited(self._redis.hmget(_keys(game_id)[0], ["rev", "rec"]))
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
            *_index_args(write),
        ]
        keys = [*_keys(game_id), *_index_keys(write)]
        with _reachable(write=True):
            return bool(await self._commit(keys=keys, args=args))

    async def idempotent_response(self, game_id: str, key: str) -> bytes | None:
        with _reachable():
            return await cast(Awaitable[bytes | None], self._redis.hget(_keys(game_id)[2], key))

    async def read_log(self, game_id: str, after_version: int, limit: int = 1000) -> list[LogItem]:
        with _reachable():
            rows = await self._redis.xrange(
                _keys(game_id)[1], min=f"{after_version + 1}-0", max="+", count=limit
            )
        return _rows(rows)

    async def wait_log(self, game_id: str, after_version: int, timeout: float) -> list[LogItem]:
        # registered before the read: an entry committed after the read is the reader's
        waiter = self._register(game_id, after_version)
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
            self._unregister(game_id, waiter)

    # ------------------------------------------------------------------ the log reader

    def _register(self, game_id: str, after: int) -> _Waiter:
        if self._closed:
            raise StoreUnavailableError("the store is closed")
        if self._dispatcher is None or self._dispatcher.done():
            self._wanted = asyncio.Event()
            self._dispatcher = asyncio.create_task(self._dispatch(), name="redis-log-reader")
            self._dispatcher.add_done_callback(_reader_ended)
        waiter = _Waiter(after, asyncio.get_running_loop().create_future())
        followed = self._followed.get(game_id)
        if followed is None:
            key = _keys(game_id)[1]
            followed = self._followed[game_id] = _Followed(key, after)
            self._by_key[key] = game_id
        followed.waiters.add(waiter)
        followed.idle_since = None
        followed.cursor = min(followed.cursor, after)
        if self._wanted is not None:
            self._wanted.set()
        in_flight = self._in_flight
        if in_flight is not None:
            if in_flight.get(game_id, after + 1) > after:
                self._wake()  # the read in flight would not answer this waiter
            else:
                waiter.covered = True
        return waiter

    def _unregister(self, game_id: str, waiter: _Waiter) -> None:
        future = waiter.future
        if not future.done():
            future.cancel()
        elif not future.cancelled():
            future.exception()  # (retrieved: no "exception never retrieved")
        followed = self._followed.get(game_id)
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
        pipe = self._redis.pipeline(transaction=False)
        pipe.xadd(self._wake_key, {"w": "1"}, maxlen=1, approximate=False)
        pipe.pexpire(self._wake_key, WAKE_TTL_MS)
        # (unreachable: the reader's own read fails, and fails its waiters)
        with contextlib.suppress(*_UNREACHABLE):
            await pipe.execute()

    def _read_set(self) -> dict[str, int]:
        """The games to read (dropping those idle past LINGER): game id → cursor."""
        now = time.monotonic()
        for game_id, followed in list(self._followed.items()):
            if followed.idle_since is not None and now - followed.idle_since > LINGER:
                del self._followed[game_id]
                del self._by_key[followed.key]
        return {game_id: followed.cursor for game_id, followed in self._followed.items()}

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
            keys = [self._wake_key, *(self._followed[g].key for g in reading)]
            ids = [self._wake_id, *(f"{cursor}-1" for cursor in reading.values())]
            self._in_flight, self._woken = reading, False
            try:
                with _reachable():
                    await self._reader.connect()  # type: ignore[no-untyped-call]
                    # (in lower case: upper-case strings here read as error reasons to
                    # tests/integration/test_error_reasons.py)
                    read = ("xread", "count", READ_COUNT, "block", READ_BLOCK_MS, "streams")
                    await self._reader.send_command(*read, *keys, *ids)
                    answer = await self._reader.read_response()
            except (StoreUnavailableError, RedisError) as exc:
                # (another error of Redis, a refused command: as unreachable, for the
                # waiters, and tried again after the backoff, not the reader's end)
                self._in_flight = None
                with contextlib.suppress(*_UNREACHABLE, RedisError):
                    await self._reader.disconnect(nowait=True)
                if not isinstance(exc, StoreUnavailableError):
                    exc = StoreUnavailableError(str(exc) or type(exc).__name__)
                self._fail_waiters(exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
                continue
            self._in_flight = None
            backoff = 0.05
            if isinstance(answer, dict):  # (RESP3: a map)
                answer = list(answer.items())
            for key, rows in answer or ():
                self._deliver(key.decode() if isinstance(key, bytes) else str(key), rows, reading)

    def _deliver(self, key: str, rows: list[Any], reading: dict[str, int]) -> None:
        if key == self._wake_key:
            if rows:
                last = rows[-1][0]
                self._wake_id = last.decode() if isinstance(last, bytes) else str(last)
            return
        game_id = self._by_key.get(key)
        followed = self._followed.get(game_id) if game_id is not None else None
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

    def _fail_waiters(self, error: StoreUnavailableError) -> None:
        for followed in self._followed.values():
            for waiter in followed.waiters:
                if not waiter.future.done():
                    waiter.future.set_exception(StoreUnavailableError(error.error))
            followed.waiters.clear()
            if followed.idle_since is None:
                followed.idle_since = time.monotonic()

    async def due_deadlines(self, now: float, limit: int = 100) -> list[str]:
        with _reachable():
            ids = await self._redis.zrangebyscore(DEADLINES_KEY, "-inf", now, start=0, num=limit)
        return [i.decode() if isinstance(i, bytes) else str(i) for i in ids]

    async def bot_turns(self, limit: int = 100, lease: float = 0.0) -> list[str]:
        if limit <= 0:
            return []
        # (a write: it claims the turns, but claiming twice is harmless)
        with _reachable():
            ids = await self._bot_turns(keys=[BOT_TURNS_KEY], args=[limit, repr(float(lease))])
        return [i.decode() if isinstance(i, bytes) else str(i) for i in ids]

    async def open_games(
        self, rule_set_hash: str = "", after: int = 0, limit: int = 50
    ) -> list[OpenGame]:
        if limit <= 0:
            return []
        with _reachable():
            rows = await self._redis.zrangebyscore(
                lobby_key(rule_set_hash), f"({after}", "+inf", start=0, num=limit, withscores=True
            )
        return [
            OpenGame(gid.decode() if isinstance(gid, bytes) else str(gid), int(score))
            for gid, score in rows
        ]

    async def games_in_play(self) -> int:
        with _reachable():
            return int(await _awaited(self._redis.scard(ACTIVE_KEY)))

    async def unfinished(self, game_ids: list[str]) -> set[str]:
        if not game_ids:
            return set()
        pipe = self._redis.pipeline(transaction=False)  # (one key: one slot)
        for game_id in game_ids:
            pipe.sismember(ACTIVE_KEY, game_id)
        with _reachable():
            found = await pipe.execute()
        return {g for g, there in zip(game_ids, found, strict=True) if there}

    async def take(self, key: str, rate: float, burst: int, cost: int = 1) -> Admission:
        args: list[Any] = [repr(1_000_000 / rate), burst, cost]
        with _reachable():
            allowed, wait = await self._take(keys=[rate_key(key)], args=args)
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
                    return bool(await self._probe.ping())
            except TimeoutError:
                raise StoreUnavailableError(
                    f"no answer to PING within {self._command_timeout:g} s"
                ) from None

    async def close(self) -> None:
        self._closed = True
        for task in [self._dispatcher, *self._wakes]:
            # (again until it ends: redis-py may swallow a cancel that lands in its
            # own zero-second timeout, Python 3.11's asyncio.timeout; never the cancel
            # of close itself, which asyncio.wait passes on)
            while task is not None and not task.done():
                task.cancel()
                await asyncio.wait({task}, timeout=0.1)
            if task is not None and not task.cancelled():
                task.exception()  # (retrieved)
        self._dispatcher = None
        self._fail_waiters(StoreUnavailableError("the store is closed"))
        await self._redis.aclose()
        await self._reader.disconnect()
        await self._probe.aclose()
