"""Waiting for a log (:meth:`RedisStore.wait_log`): **one reader per server process**
on one Redis (on a Redis Cluster, one per shard with a waiter: an XREAD names keys of
one slot), not a connection per waiter.

A reader holds one dedicated connection (on a cluster, to the node that serves its
shard's slot) and loops on ``XREAD BLOCK 5000 COUNT 1000 STREAMS`` over the log of
every game it follows that has a waiter, plus its own wake stream (in its shard's
slot):

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
reader's next ``XREAD`` is missed.  A game that sessions of this process follow
(:meth:`ShardReader.follow`, a Play session from its start to its end) stays in the
read set between their waits (at its last version delivered): a session that comes
back after each move finds its game there and needs no wake; after the last
session's :meth:`ShardReader.unfollow` it leaves the read set at once.  A game that
no session follows (a watch's) stays ``LINGER`` seconds after its last waiter
left.  A commit through any replica lands in the game's log stream, so it reaches
every replica's reader at once.  A commit of this process reaches its waiters at
once, without a read (:meth:`ShardReader.committed`), and after a read that brought
entries the reader waits ``REREAD_DELAY`` before the next: that read carries the
moves of other processes only, all those of that while at once; ``REREAD_OWN_DELAY``
after a read that brought only this process's own commits (its waiters had them
already).  When a reader's connection fails, its waiters get
:class:`StoreUnavailableError`, and it reconnects with a backoff (on a cluster, to
the node that serves the slot by then: after a failover, the promoted replica).

With replica acks (:mod:`.store`), the reader delivers what it read only once a
replica has it too (a write of its connection, then WAIT: ``_confirm_read``), so no
session or watch gets a move that a failover could still take back.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import structlog
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import RedisError

from services.store.base import LogCursor, LogItem, StoreUnavailableError

from .errors import UNREACHABLE, reachable
from .keys import game_keys, index_key
from .link import RedisLink
from .replies import log_items, text

log = structlog.get_logger("glintwick.store")

#: how long a log reader's XREAD blocks before it is issued again (milliseconds)
READ_BLOCK_MS = 5000
#: entries read per game and XREAD (as read_log's default limit)
READ_COUNT = 1000
#: seconds a game stays in the reader's XREAD after its last waiter left
LINGER = 10.0
#: milliseconds the wake stream outlives its last entry
WAKE_TTL_MS = 60_000
#: seconds the reader waits after a read that brought entries before it reads again:
#: the entries this process commits reach its waiters at once (:meth:`ShardReader.
#: committed`), so the read only carries other processes' moves, and one read then
#: answers every entry of that while rather than one XREAD per move
REREAD_DELAY = 0.005
#: the wait instead after a read that brought nothing this process had not delivered
#: itself (its own commits only, :meth:`ShardReader.committed`): one process alone on
#: its Redis reads about REREAD_OWN_DELAY / REREAD_DELAY times fewer XREADs, each
#: naming every followed game; another process's move then reaches the sessions at
#: most this late
REREAD_OWN_DELAY = 0.025


@dataclass(eq=False)
class Waiter:
    """One wait_log call: the entries after ``after`` resolve its future."""

    after: int
    future: asyncio.Future[list[LogItem]]
    # registered while the read in flight named its game at ``after`` or before
    covered: bool = False
    # its caller's position, which a commit of this process may move on (LogCursor)
    cursor: LogCursor | None = None

    def answer_now(self) -> None:
        """The cursor's wake: answered now with what came after it (nothing yet)."""
        if not self.future.done():
            self.future.set_result([])


@dataclass(eq=False)
class Followed:
    """A game in the reader's XREAD: its waiters, and the version it is read after
    (the lowest waiter's, or the last delivered once none waits)."""

    key: str
    cursor: int
    waiters: set[Waiter] = field(default_factory=set)
    committed: int = 0  # the newest version this process committed (and delivered)
    committing: int = 0  # the version this process's commit in flight writes (0: none)
    idle_since: float | None = None  # when its last waiter left (monotonic clock)


def _has_entries(answer: Any, wake_key: str) -> bool:
    """Whether an XREAD's answer holds an entry of a game's log (not only wake ones)."""
    streams = answer.items() if isinstance(answer, dict) else (answer or ())
    return any(text(key) != wake_key and rows for key, rows in streams)


def _reader_ended(task: asyncio.Task[None]) -> None:
    """The log reader only ends by close (a cancel); anything else is a bug, logged
    here (the next waiter starts a new reader)."""
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("redis_log_reader_failed", error=repr(error), exc_info=error)


def cancel_if_asked() -> None:
    """Raise the cancel of this task that redis-py swallowed, if it did: a cancel that
    lands in the zero-second ``asyncio.timeout`` of its connection check (a pool's
    ``can_read_destructive``) comes out of the command as a normal answer on Python
    3.11 (the task still counts it: ``cancelling()``).  A waiter must not then wait
    its whole timeout (tests/integration/test_redis_log_reader.py)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class ShardReader:
    """One shard's log reader (see the module's docstring): its waiters, its read set
    and its wake stream, in the shard's slot."""

    def __init__(self, link: RedisLink, shard: int) -> None:
        self._link = link
        self.shard = shard
        self.wake_key = index_key(shard, f"wake:{secrets.token_hex(8)}")
        # (written before a WAIT that confirms a read: replica acks only, _confirm_read)
        self.confirm_key = index_key(shard, f"confirm:{secrets.token_hex(8)}")
        self._wake_id = "0-0"  # the last wake entry read
        self.followed: dict[str, Followed] = {}  # game id → its waiters and cursor
        # the games a session of this process follows (store.follow): how many sessions
        self._sessions: dict[str, int] = {}
        self._by_key: dict[str, str] = {}  # log key → game id, of the followed games
        # the XREAD in flight: game id → the version it reads after (None: none is)
        self.in_flight: dict[str, int] | None = None
        self._woken = False  # a wake was sent for the XREAD in flight
        # between two reads (REREAD_DELAY): the next read names every followed game at
        # its lowest waiter's version, so a waiter registered now is covered by it
        self._rereading = False
        self._wanted: asyncio.Event | None = None  # a waiter registered (the idle reader waits)
        self.task: asyncio.Task[None] | None = None
        self._wakes: set[asyncio.Task[None]] = set()
        self._connection: AbstractConnection | None = None

    def register(self, game_id: str, after: int, cursor: LogCursor | None = None) -> Waiter:
        if self.task is None or self.task.done():
            self._wanted = asyncio.Event()
            self.task = asyncio.create_task(self._dispatch(), name=f"redis-log-reader-{self.shard}")
            self.task.add_done_callback(_reader_ended)
        waiter = Waiter(after, asyncio.get_running_loop().create_future())
        if cursor is not None:
            waiter.cursor = cursor
            cursor.wake = waiter.answer_now
        followed = self.followed.get(game_id)
        if followed is None:
            key = game_keys(game_id)[1]
            followed = self.followed[game_id] = Followed(key, after)
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
        elif self._rereading:
            waiter.covered = True  # (the next read starts at this version or before)
        return waiter

    def committing(self, game_id: str, version: int) -> None:
        """This process sends a commit of ``version`` of the game: a read that brings
        that entry first leaves the waits that their owner handles (:class:`LogCursor`)
        to the commit's answer (:meth:`commit_answered`)."""
        followed = self.followed.get(game_id)
        if followed is not None:
            followed.committing = version

    def commit_answered(self, game_id: str, item: LogItem, landed: bool) -> None:
        """The commit of ``item`` is answered: :meth:`committed` if it landed; if not
        (another move took that version, or the outcome is unknown), the waits a read
        left to it are answered now (with nothing: they read the log again)."""
        followed = self.followed.get(game_id)
        if followed is not None and followed.committing == item.version:
            followed.committing = 0
        if landed:
            self.committed(game_id, item)
        elif followed is not None:
            for waiter in list(followed.waiters):
                cursor = waiter.cursor
                if cursor is not None and cursor.handles == item.version:
                    waiter.answer_now()

    def committed(self, game_id: str, item: LogItem) -> None:
        """This process committed ``item`` to the game's log: the waiters right before
        it get it now, not after a read (the read that brings it again answers nobody:
        a waiter it answers has left)."""
        followed = self.followed.get(game_id)
        if followed is None:
            return
        version = item.version
        followed.committed = max(followed.committed, version)
        moved = False
        for waiter in list(followed.waiters):
            if waiter.after == version - 1:
                cursor = waiter.cursor
                if cursor is not None and cursor.moved_on(version):
                    waiter.after = version  # (its owner handles the entry: it waits on)
                    moved = True
                    continue
                followed.waiters.discard(waiter)
                if not waiter.future.done():
                    waiter.future.set_result([item])
        if not followed.waiters:
            followed.cursor = max(followed.cursor, version)
            if followed.idle_since is None:
                followed.idle_since = time.monotonic()
        elif moved:  # (the next read starts after what its waiters have)
            followed.cursor = min(w.after for w in followed.waiters)

    def follow(self, game_id: str) -> None:
        """A session follows the game: it stays in the read set between its waits."""
        self._sessions[game_id] = self._sessions.get(game_id, 0) + 1

    def unfollow(self, game_id: str) -> None:
        """A session's end: after the game's last, the game leaves the read set at once
        if nobody waits on it (no LINGER: its sessions are over)."""
        left = self._sessions.get(game_id, 0) - 1
        if left > 0:
            self._sessions[game_id] = left
            return
        self._sessions.pop(game_id, None)
        followed = self.followed.get(game_id)
        if followed is not None and not followed.waiters:
            del self.followed[game_id]
            del self._by_key[followed.key]

    def unregister(self, game_id: str, waiter: Waiter) -> None:
        if waiter.cursor is not None:
            waiter.cursor.wake = None
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
        pipe = self._link.redis.pipeline(transaction=False)
        pipe.xadd(self.wake_key, {"w": "1"}, maxlen=1, approximate=False)
        pipe.pexpire(self.wake_key, WAKE_TTL_MS)
        # (unreachable: the reader's own read fails, and fails its waiters)
        with contextlib.suppress(StoreUnavailableError), reachable():
            await pipe.execute()

    def _read_set(self) -> dict[str, int]:
        """The games to read (dropping those idle past LINGER): game id → cursor."""
        now = time.monotonic()
        sessions = self._sessions
        for game_id, followed in list(self.followed.items()):
            idle_since = followed.idle_since
            if idle_since is not None and now - idle_since > LINGER and game_id not in sessions:
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
                with reachable():
                    reader = self._connection = await self._link.reader_connection(
                        self.wake_key, self._connection, READ_BLOCK_MS
                    )
                    # (in lower case: upper-case strings here read as error reasons to
                    # tests/integration/test_error_reasons.py)
                    read = ("xread", "count", READ_COUNT, "block", READ_BLOCK_MS, "streams")
                    await reader.send_command(*read, *keys, *ids)
                    answer = await reader.read_response()
                    if self._link.ack_replicas and _has_entries(answer, self.wake_key):
                        await self._confirm_read(reader)
            except (StoreUnavailableError, RedisError) as exc:
                # (another error of Redis, a refused command, a slot moved: as
                # unreachable, for the waiters, and tried again after the backoff, on
                # the slot's node by then, not the reader's end)
                self.in_flight = None
                if self._connection is not None:
                    with contextlib.suppress(*UNREACHABLE, RedisError):
                        await self._connection.disconnect(nowait=True)
                if not isinstance(exc, StoreUnavailableError):
                    exc = StoreUnavailableError(str(exc) or type(exc).__name__)
                self.fail_waiters(exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
                await self._link.relearn_slots()
                continue
            self.in_flight = None
            backoff = 0.05
            if isinstance(answer, dict):  # (RESP3: a map)
                answer = list(answer.items())
            fresh = False
            for key, rows in answer or ():
                fresh = self._deliver(text(key), rows, reading) or fresh
            if answer and REREAD_DELAY > 0:
                self._rereading = True
                try:
                    await asyncio.sleep(REREAD_DELAY if fresh else REREAD_OWN_DELAY)
                finally:
                    self._rereading = False

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
            await reader.send_command("wait", self._link.ack_replicas, self._link.ack_timeout_ms)
            await reader.read_response()
            confirmed = await reader.read_response()
            if int(confirmed) >= self._link.ack_replicas:
                return

    def _deliver(self, key: str, rows: list[Any], reading: dict[str, int]) -> bool:
        """Hand a read's rows of ``key`` to their waiters; whether they held an entry this
        process had not committed itself (a wake's: whether it woke the read for a waiter)."""
        if key == self.wake_key:
            if rows:
                self._wake_id = text(rows[-1][0])
            return bool(rows)
        game_id = self._by_key.get(key)
        followed = self.followed.get(game_id) if game_id is not None else None
        if followed is None or game_id is None or not rows:
            return False
        items = log_items(rows)
        read_after, last = reading[game_id], items[-1].version
        # (this process's commit in flight wrote that entry, maybe: the waits its
        # owner handles are the commit's answer's to move on, or to answer)
        mine = followed.committing if followed.committing == last else -1
        for waiter in list(followed.waiters):
            if mine > 0 and waiter.cursor is not None and waiter.cursor.handles == mine:
                continue
            # the entries read are those after ``read_after``: they answer a waiter
            # after a version from there on (one further back is read again)
            if read_after <= waiter.after < last:
                followed.waiters.discard(waiter)
                if not waiter.future.done():
                    waiter.future.set_result([i for i in items if i.version > waiter.after])
        followed.cursor = min((w.after for w in followed.waiters), default=last)
        if not followed.waiters and followed.idle_since is None:
            followed.idle_since = time.monotonic()
        return last > max(followed.committed, mine)

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
