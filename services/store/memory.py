"""The embedded default store: everything in this process, same semantics as Redis.

A finished game expires ``finished_ttl`` after its last write, as Redis expires its
keys: gone for every reader from then, and its memory freed by the next write (a
heap of expiry times: a busy server holds no more finished games than one TTL's).
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from services.store.base import (
    Admission,
    GameExistsError,
    GameStore,
    LogCursor,
    LogItem,
    OpenGame,
    RateRefusedError,
    Snapshot,
    Write,
    answer_later,
)

#: limit calls between two sweeps of the expired rate-limit cells and bounded sets
_LIMITS_SWEEP = 1024


def _game_cell(game_id: str, name: str) -> str:
    """The key of a game's rate-limit cell (apart from every other cell's)."""
    return f"\0game:{game_id}:{name}"


@dataclass
class _Game:
    revision: int
    record: bytes
    log: list[LogItem] = field(default_factory=list)
    responses: dict[str, bytes] = field(default_factory=dict)
    expires_at: float | None = None
    deadline: float | None = None


class MemoryStore(GameStore):
    def __init__(
        self, finished_ttl: float = 24 * 3600, clock: Callable[[], float] = time.time
    ) -> None:
        self._games: dict[str, _Game] = {}
        # the bot-turn index: game id → (listed from, a tie-break sequence number)
        self._bot_turns: dict[str, tuple[float, int]] = {}
        self._sequence = itertools.count()
        # the lobby: rule-set hash → {game id: position}, and "" → every listed game;
        # positions only grow, so each dict is in lobby order (insertion order)
        self._lobby: dict[str, dict[str, int]] = {}
        self._lobby_clock = 0  # the last position given
        # each game's log waiters, woken by its own commits only (one condition for every
        # game woke every session of every game at each move: O(sessions) a move), in
        # the order they came (a dict as an ordered set), as the condition woke them: the
        # sessions of one game send a move's messages in the order they subscribed
        self._waiters: dict[str, dict[asyncio.Future[bool], LogCursor | None]] = {}
        self._expiries: list[tuple[float, str]] = []  # a heap: (expires at, game id)
        self._ttl = finished_ttl
        self._clock = clock
        # the limits' cells and bounded sets (see GameStore.take and hold): a cell is
        # its theoretical arrival time, a set its members' lease ends; both dropped
        # once expired (every _LIMITS_SWEEP calls: the memory stays bounded)
        self._cells: dict[str, float] = {}
        self._sets: dict[str, dict[str, float]] = {}
        self._limit_calls = 0

    def _live(self, game_id: str) -> _Game | None:
        game = self._games.get(game_id)
        if game is not None and game.expires_at is not None and game.expires_at <= self._clock():
            self._drop(game_id)
            return None
        return game

    def _drop(self, game_id: str) -> None:
        del self._games[game_id]
        self._wake(game_id)  # (a waiter of a game gone reads the end of it)
        self._bot_turns.pop(game_id, None)

    def _purge(self) -> None:
        """Free the games expired by now (a heap entry outlived by a later expiry of
        its game is skipped)."""
        now, expiries = self._clock(), self._expiries
        while expiries and expiries[0][0] <= now:
            expires_at, game_id = heapq.heappop(expiries)
            game = self._games.get(game_id)
            if game is not None and game.expires_at == expires_at:
                self._drop(game_id)

    async def create(self, game_id: str, write: Write) -> None:
        self._purge()
        if self._live(game_id) is not None:
            raise GameExistsError(game_id)
        self._games[game_id] = _Game(1, write.record)
        self._index(game_id, write)

    async def load(self, game_id: str) -> Snapshot | None:
        game = self._live(game_id)
        return None if game is None else Snapshot(game.revision, game.record)

    async def commit(self, game_id: str, expected_revision: int, write: Write) -> bool:
        # No await between the check and the write: atomic on the event loop.
        game = self._live(game_id)
        if game is None or game.revision != expected_revision:
            return False
        if write.idempotency_key is not None and write.idempotency_key in game.responses:
            return False  # that request was applied before: never twice
        if write.take is not None:
            cell = write.take
            admission = self._take(_game_cell(game_id, cell.name), cell.rate, cell.burst, 1)
            if not admission.allowed:
                raise RateRefusedError(admission.retry_after)
        game.revision += 1
        game.record = write.record
        if write.entry is not None:
            game.log.append(write.entry)
        if write.idempotency_key is not None and write.response is not None:
            game.responses[write.idempotency_key] = write.response
        if write.finished:
            game.expires_at = self._clock() + self._ttl
            heapq.heappush(self._expiries, (game.expires_at, game_id))
        self._index(game_id, write)
        self._purge()
        self._wake(game_id, -1 if write.entry is None else write.entry.version)
        return True

    def _wake(self, game_id: str, version: int = -1) -> None:
        """Answer the game's waiters (``version``: the entry just committed, which
        a waiter's cursor may handle itself: it waits on, after it)."""
        waiters = self._waiters.pop(game_id, None)
        if waiters is None:
            return
        kept: dict[asyncio.Future[bool], LogCursor | None] = {}
        for waiter, cursor in waiters.items():
            if cursor is not None and cursor.moved_on(version):
                kept[waiter] = cursor
            elif not waiter.done():
                waiter.set_result(True)
        if kept:
            self._waiters[game_id] = kept

    def _index(self, game_id: str, write: Write) -> None:
        """A write's deadline, bot-turn and lobby index entries (create and commit alike)."""
        self._games[game_id].deadline = write.deadline
        if write.bot_turn:
            self._bot_turns[game_id] = (self._clock(), next(self._sequence))
        elif write.bot_turn_changed:
            self._bot_turns.pop(game_id, None)
        if write.open_seats:
            self._list(game_id, write.rule_set_hash)
        elif write.open_seats_changed:
            for key in ("", write.rule_set_hash):
                listed = self._lobby.get(key, {})
                listed.pop(game_id, None)
                if not listed:
                    self._lobby.pop(key, None)

    def _list(self, game_id: str, rule_set_hash: str) -> None:
        if game_id in self._lobby.get("", {}):
            return  # listed already: it keeps its place
        self._lobby_clock = max(int(self._clock() * 1_000_000), self._lobby_clock + 1)
        for key in ("", rule_set_hash):
            self._lobby.setdefault(key, {})[game_id] = self._lobby_clock

    async def idempotent_response(self, game_id: str, key: str) -> bytes | None:
        game = self._live(game_id)
        return None if game is None else game.responses.get(key)

    async def read_log(self, game_id: str, after_version: int, limit: int = 1000) -> list[LogItem]:
        return self._log_after(game_id, after_version, limit)

    def _log_after(self, game_id: str, after_version: int, limit: int = 1000) -> list[LogItem]:
        game = self._live(game_id)
        if game is None:
            return []
        # versions are 1, 2, …, so the entry after version v sits at index v
        return game.log[after_version : after_version + limit]

    async def wait_log(
        self, game_id: str, after_version: int, timeout: float, cursor: LogCursor | None = None
    ) -> list[LogItem]:
        items = self._log_after(game_id, after_version)
        if items:
            return items
        waiter: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        waiters = self._waiters.setdefault(game_id, {})
        waiters[waiter] = cursor
        timer = answer_later(waiter, timeout, False)
        if cursor is not None:
            cursor.wake = functools.partial(_answer_now, waiter)
        try:
            if not await waiter:
                return []
        finally:
            timer.cancel()
            if cursor is not None:
                cursor.wake = None
            waiters = self._waiters.get(game_id, {})
            waiters.pop(waiter, None)
            if not waiters and game_id in self._waiters:
                del self._waiters[game_id]
        return self._log_after(game_id, after_version if cursor is None else cursor.after)

    async def due_deadlines(self, now: float, limit: int = 100) -> list[str]:
        due = [
            (g.deadline, gid)
            for gid, g in self._games.items()
            if g.deadline is not None and g.deadline <= now
        ]
        return [gid for _, gid in sorted(due)[:limit]]

    async def bot_turns(self, limit: int = 100, lease: float = 0.0) -> list[str]:
        now = self._clock()
        ready = ((score, gid) for gid, score in self._bot_turns.items() if score[0] <= now)
        found = [gid for _, gid in heapq.nsmallest(max(limit, 0), ready)]
        found = [gid for gid in found if self._live(gid) is not None]
        if lease > 0:
            for gid in found:
                self._bot_turns[gid] = (now + lease, next(self._sequence))
        return found

    async def open_games(
        self, rule_set_hash: str = "", after: int = 0, limit: int = 50
    ) -> list[OpenGame]:
        listed = self._lobby.get(rule_set_hash, {}).items()
        later = (OpenGame(gid, position) for gid, position in listed if position > after)
        return list(itertools.islice(later, max(limit, 0)))

    async def games_in_play(self) -> int:
        return sum(1 for g in self._games.values() if g.expires_at is None)

    async def unfinished(self, game_ids: list[str]) -> set[str]:
        return {
            g for g in game_ids if (game := self._live(g)) is not None and game.expires_at is None
        }

    async def take(
        self, key: str, rate: float, burst: int, cost: int = 1, game_id: str | None = None
    ) -> Admission:
        return self._take(key if game_id is None else _game_cell(game_id, key), rate, burst, cost)

    def _take(self, key: str, rate: float, burst: int, cost: int) -> Admission:
        now = self._limits_now()
        interval = 1.0 / rate
        arrival = max(self._cells.get(key, now), now) + cost * interval
        allowed_at = arrival - burst * interval
        if allowed_at > now:
            return Admission(False, allowed_at - now)
        self._cells[key] = arrival
        return Admission(True)

    async def hold(self, key: str, member: str, limit: int, seconds: float) -> bool:
        now = self._limits_now()
        members = self._live_members(key, now)
        if member not in members and len(members) >= limit:
            return False
        self._sets.setdefault(key, {})[member] = now + seconds
        return True

    async def release(self, key: str, *members: str) -> None:
        held = self._sets.get(key, {})
        for member in members:
            held.pop(member, None)
        if not held:
            self._sets.pop(key, None)

    async def held(self, key: str) -> list[str]:
        return list(self._live_members(key, self._clock()))

    def _live_members(self, key: str, now: float) -> dict[str, float]:
        held = self._sets.get(key, {})
        for member in [m for m, until in held.items() if until <= now]:
            del held[member]
        return held

    def _limits_now(self) -> float:
        """The clock, after dropping the expired cells and sets now and then (a cell
        is expired once full again, a set once its last lease ends)."""
        now = self._clock()
        self._limit_calls += 1
        if self._limit_calls % _LIMITS_SWEEP == 0:
            self._cells = {k: at for k, at in self._cells.items() if at > now}
            for key in list(self._sets):
                if not self._live_members(key, now):
                    del self._sets[key]
        return now

    async def ping(self) -> bool:
        return True


def _answer_now(waiter: asyncio.Future[bool]) -> None:
    if not waiter.done():
        waiter.set_result(True)
