"""The store interface: one source of truth for every game, shared by all replicas.

A game is a record (the ``StoredGame`` protobuf, opaque bytes here) with a
revision, plus an append-only log of accepted actions (``LogEntry`` bytes), each
tagged with the game version it produced.  Every write is one atomic
compare-and-set on the revision; a move's write also appends its log entry and
remembers its idempotency key, in the same atomic step, as it updates the
bot-turn index (the games where a house-bot seat may act now: what the bot pool
plays; an entry lost to a crash would stall a game for good), the deadline index
and the lobby index (the games with a free seat, by rule set: a game lost from it
could never be found to join).  Two implementations share these semantics:
:mod:`services.store.memory` (the embedded default) and :mod:`services.store.redis`
(Lua compare-and-set), and one contract test suite runs against both.  A store
that cannot be reached raises :class:`StoreUnavailableError` (never its client
library's own errors), which the faces answer as UNAVAILABLE and
:mod:`services.store.health` turns into health.

Besides the games, the store keeps what the limits of every replica share
(:mod:`services.usecases.quotas`): rate-limit cells (:meth:`GameStore.take`, GCRA on
the store's clock) and bounded sets of leases (:meth:`GameStore.hold`: the open games
of a client, the streams of a game or a client).  Each lives in one key of its own,
changed by one atomic step on that key alone (one Redis Cluster slot).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


def answer_later(future: asyncio.Future[T], seconds: float, answer: T) -> asyncio.TimerHandle:
    """Answer ``future`` with ``answer`` in ``seconds`` unless it is done by then (cancel
    the handle once it is): a log wait's timeout.  Cheaper than ``asyncio.timeout``
    around the await (about a tenth, paid on every wait of a session), with no cancel
    to tell apart from the caller's.  On the future's loop: ``get_running_loop()``
    costs a ``getpid()`` system call on Python 3.11."""
    return future.get_loop().call_later(seconds, _answer, future, answer)


def _answer(future: asyncio.Future[T], answer: T) -> None:
    if not future.done():
        future.set_result(answer)


@dataclass(eq=False, slots=True)
class LogCursor:
    """A log wait's position (:meth:`GameStore.wait_log`'s ``cursor``), which its owner
    may move on while the wait goes on.  ``handles``: a version whose entry the owner
    deals with itself when this process commits it (a Play stream that committed its
    session's move prompts the session in the same task): that commit moves ``after``
    on to it and the wait goes on, rather than answering it (a task's wake a move).
    ``wake``: set by the store while the wait is on, answers it now (its entries after
    ``after``, maybe none)."""

    after: int
    handles: int = -1
    wake: Callable[[], None] | None = None

    def moved_on(self, version: int) -> bool:
        """Whether this process's commit of ``version`` moves the wait on (and does)."""
        if version == self.handles and version == self.after + 1:
            self.after = version
            return True
        return False


@dataclass(frozen=True, slots=True)
class Snapshot:
    revision: int  # bumps on every write (the compare-and-set token)
    record: bytes


@dataclass(frozen=True, slots=True)
class LogItem:
    version: int  # the game version this entry produced (1, 2, …)
    entry: bytes


@dataclass(frozen=True, slots=True)
class CellTake:
    """A rate-limit cell of one game (:meth:`GameStore.take` with its ``game_id``)
    that a commit of that game takes in its own atomic step (``Write.take``)."""

    name: str
    rate: float
    burst: int


@dataclass(frozen=True, slots=True)
class Write:
    """One atomic write: the new record, and optionally an accepted action."""

    record: bytes
    entry: LogItem | None = None
    idempotency_key: str | None = None
    response: bytes | None = None  # what a repeated request gets back
    finished: bool = False  # start the finished game's expiry clock
    deadline: float | None = None  # when this game's running deadline passes (None: none)
    # False when the deadline is the one already stored: a store may skip its index then
    deadline_changed: bool = True
    # A house-bot seat may act after this write: the bot-turn index lists the game from
    # now (the store's clock), written in the same atomic step as the record.
    bot_turn: bool = False
    # False when no house-bot seat could act before this write either: a store may skip
    # its index then (True with ``bot_turn`` False takes the game out of the index).
    bot_turn_changed: bool = True
    # The game has a free seat and is not over after this write: the lobby index lists
    # it (if not listed yet: a game keeps its place), under its rule set's hash and in
    # the index of all games, from now (the store's clock).  False with
    # ``open_seats_changed``: the write takes it out of the lobby (its last seat taken,
    # or the game over).  False with ``open_seats_changed`` False: the lobby is left alone.
    open_seats: bool = False
    open_seats_changed: bool = True
    rule_set_hash: str = ""  # the game's rule-set hash: which lobby index lists it
    # A commit only: take one from this rate-limit cell of the game, in the same atomic
    # step, after the compare-and-set and idempotency checks passed (a commit refused
    # by them takes nothing); a cell that refuses fails the commit with
    # RateRefusedError, and nothing changes (a move's act limit, without a round trip
    # of its own)
    take: CellTake | None = None


@dataclass(frozen=True, slots=True)
class OpenGame:
    """A game of the lobby index: its id, and its unique place in the index."""

    game_id: str
    # when the game was listed (its creation), in microseconds of the store's clock,
    # made unique and increasing (one more than the last when two share a microsecond):
    # the lobby's order and its pages' cursor
    position: int


@dataclass(frozen=True, slots=True)
class Admission:
    """A rate limit's answer: allowed, or refused until ``retry_after`` seconds pass."""

    allowed: bool
    retry_after: float = 0.0


#: the part name of a whole store (:meth:`GameStore.ping_parts`)
WHOLE = ""


class GameExistsError(Exception):
    pass


class RateRefusedError(Exception):
    """A commit's rate-limit cell (``Write.take``) refused it: nothing changed;
    ``retry_after`` seconds until the cell would admit it."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"refused by the rate limit: retry in {retry_after:.3f} s")
        self.retry_after = retry_after


class StoreUnavailableError(Exception):
    """The store cannot be reached (refused, dropped, timed out): nothing about the
    game is known from this call.  ``write``: the call was a write whose outcome is
    unknown (it may have been applied: a retry with the same idempotency key is safe,
    the compare-and-set refuses it a second time).  ``reason``: the machine-readable
    reason clients get (``REPLICA_ACK_TIMEOUT``: a write the primary applied but that
    fewer replicas than asked confirmed in time, see RedisStore's ``ack_replicas``)."""

    def __init__(
        self, error: str, *, write: bool = False, reason: str = "STORE_UNAVAILABLE"
    ) -> None:
        super().__init__(error)
        self.error = error
        self.write = write
        self.reason = reason


class GameStore(ABC):
    """Async store of games.  Implementations must be safe for concurrent callers."""

    @abstractmethod
    async def create(self, game_id: str, write: Write) -> None:
        """Store a new game at revision 1 (``write.record``) with its deadline and
        bot-turn index entries, in one atomic step; GameExistsError if the id is
        taken.  (A new game has no log entry and no idempotency key yet.)"""

    @abstractmethod
    async def load(self, game_id: str) -> Snapshot | None: ...

    @abstractmethod
    async def commit(self, game_id: str, expected_revision: int, write: Write) -> bool:
        """Apply ``write`` if the game is still at ``expected_revision``.

        True when written; False when another writer got there first, or when
        ``write.idempotency_key`` is already stored (nothing changed either way).
        Appending the entry, storing the idempotent response and
        setting the expiry happen atomically with the record write (and taking
        ``write.take``'s cell, whose refusal raises :class:`RateRefusedError`).
        """

    @abstractmethod
    async def idempotent_response(self, game_id: str, key: str) -> bytes | None:
        """The response stored with ``key`` by an earlier successful commit."""

    @abstractmethod
    async def read_log(self, game_id: str, after_version: int, limit: int = 1000) -> list[LogItem]:
        """Entries with version > ``after_version``, in order."""

    @abstractmethod
    async def wait_log(
        self, game_id: str, after_version: int, timeout: float, cursor: LogCursor | None = None
    ) -> list[LogItem]:
        """Like read_log, but waits up to ``timeout`` seconds for a new entry.  With a
        ``cursor`` (at ``after_version``), the entries after its ``after`` when answered:
        see :class:`LogCursor`."""

    @abstractmethod
    async def due_deadlines(self, now: float, limit: int = 100) -> list[str]:
        """Ids of games whose running deadline is at or before ``now``."""

    @abstractmethod
    async def bot_turns(self, limit: int = 100, lease: float = 0.0) -> list[str]:
        """Ids of games where a house-bot seat may act (``Write.bot_turn``) and no lease
        holds, longest waiting first.

        ``lease`` > 0 also claims the games returned: later calls do not return them
        for ``lease`` seconds, or until their next write stamps a new turn.  Bot-pool
        workers claim turns so that they rarely think about the same one; a turn is
        applied once whatever happens, by the commit's compare-and-set.
        """

    @abstractmethod
    async def open_games(
        self, rule_set_hash: str = "", after: int = 0, limit: int = 50
    ) -> list[OpenGame]:
        """The lobby: the games listed by ``Write.open_seats`` (a free seat, not over),
        oldest listing first, from the one after position ``after`` (0: from the first);
        only those of ``rule_set_hash`` when given.  There is an index per rule-set hash
        besides the index of all games: a filtered read is one range of its index, never
        a scan past other rule sets' games."""

    @abstractmethod
    async def games_in_play(self) -> int:
        """How many stored games are not finished."""

    @abstractmethod
    async def unfinished(self, game_ids: list[str]) -> set[str]:
        """Those of ``game_ids`` that are stored games not finished (the games in play)."""

    @abstractmethod
    async def take(
        self, key: str, rate: float, burst: int, cost: int = 1, game_id: str | None = None
    ) -> Admission:
        """Take ``cost`` from the rate-limit cell ``key``: ``rate`` a second, ``burst`` at
        once (GCRA: the cell holds one time, the theoretical arrival of the next request;
        a refusal changes nothing).  The store's clock, so replicas' clocks do not
        matter; the cell expires once it is full again.  ``game_id``: a cell of that
        game (stored with it, one of its cells ``key``), which a commit of the game may
        take as well (``Write.take``: the same cell)."""

    @abstractmethod
    async def hold(self, key: str, member: str, limit: int, seconds: float) -> bool:
        """Hold ``member`` in the bounded set ``key`` for ``seconds`` (the store's clock;
        holding it again renews it), unless ``limit`` other unexpired members hold it
        already: False then, and nothing changes.  The set expires with its last lease."""

    @abstractmethod
    async def release(self, key: str, *members: str) -> None:
        """Take ``members`` out of the bounded set ``key`` (those not there: nothing)."""

    @abstractmethod
    async def held(self, key: str) -> list[str]:
        """The unexpired members of the bounded set ``key``."""

    @abstractmethod
    async def ping(self) -> bool:
        """Whether the store answers now (the store-health monitor's probe).  Every
        method raises :class:`StoreUnavailableError` when the store cannot be
        reached; the memory store never does."""

    async def ping_parts(self) -> dict[str, str]:
        """The parts of the store that do not answer now, each with why (``{}``: every
        part answers).  A store of one part answers ``{WHOLE: why}`` when it is down;
        a store of several (a Redis Cluster: its primaries) names those down, and says
        ``WHOLE`` when none answers (the store-health monitor's probe)."""
        try:
            answered = await self.ping()
        except StoreUnavailableError as exc:
            return {WHOLE: exc.error}
        return {} if answered else {WHOLE: "the store did not answer PING"}

    def follow(self, game_id: str) -> None:  # noqa: B027 - optional hook
        """A session of this process follows the game's log from now until
        :meth:`unfollow` (its waits come one after another): a store that reads logs for
        its waiters keeps reading this one between two waits, and stops at once after
        the last session's unfollow (Redis's log reader).  Others: nothing to do."""

    def unfollow(self, game_id: str) -> None:  # noqa: B027 - optional hook
        """The end of one :meth:`follow`."""

    def part_of_game(self, game_id: str) -> str:
        """The part of the store (:meth:`ping_parts`) that serves the game's keys."""
        return WHOLE

    def part_of_key(self, kind: str, name: str) -> str:
        """The part that serves a limit's key: ``kind`` ``rate`` (a rate-limit cell of
        :meth:`take` without a game) or ``hold`` (a bounded set of :meth:`hold`)."""
        return WHOLE

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
