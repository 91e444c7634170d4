"""A stored game as the use cases see it, and the pure rules of its record.

Everything here is a function of the record and the engine states alone (no
store, no cache; the time, where a rule needs it, is given): which house-bot seat
may act, when the running deadline passes, when an idle game ends abandoned, what
a write of a new record must tell the store's indexes.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.game import GameState, Phase
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services.errors import ServiceError, precondition
from services.store.base import CellTake, LogItem, Write


@dataclass(frozen=True, slots=True)
class Seated:
    """What a move reads of a record's seats, read once a record (each read of a seat
    is a few calls into upb): whether every seat is taken (:func:`table_full`), each
    joined seat's token hash (None: free) and each seat's house bot ("": none)."""

    full: bool
    token_hashes: tuple[bytes | None, ...]
    bots: tuple[str, ...]

    @classmethod
    def of(cls, record: spb.StoredGame) -> Seated:
        seats = [(s.joined, s.token_hash, s.bot) for s in record.seats]
        hashes = tuple(digest if joined else None for joined, digest, _ in seats)
        return cls(None not in hashes, hashes, tuple(bot for _, _, bot in seats))


@dataclass
class Loaded:
    """A game at one revision of the store: its record and the state it holds."""

    revision: int
    record: spb.StoredGame
    state: GameState
    #: :class:`Seated` of the record, once asked (a move asks several times, and a
    #: move's record, its seats unchanged, hands it on: :meth:`Context.committed`)
    seats: Seated | None = field(default=None, repr=False, compare=False)

    @property
    def version(self) -> int:
        return self.state.action_count

    def seated(self) -> Seated:
        """:class:`Seated` of the record (a record at a revision never changes)."""
        seats = self.seats
        if seats is None:
            seats = self.seats = Seated.of(self.record)
        return seats

    def table_full(self) -> bool:
        """:func:`table_full` of the record."""
        return self.seated().full


@dataclass(frozen=True, slots=True)
class IdleLimits:
    """How long a game waits for a move (or a join) before it ends abandoned, in
    seconds (0: for ever): a table with a seat nobody has joined ``unjoined_after``
    its last write, any other game ``abandon_after`` its last move (docs/API.md,
    "Abandoned games")."""

    abandon_after: float = 3 * 3600.0
    unjoined_after: float = 30 * 60.0


# An idle deadline is rounded up to a 64th of its limit (under 3 minutes of 3 hours):
# the deadline index is then rewritten about once per that step in a busy game, not
# on every move, and a game still waits at least its whole limit.
IDLE_STEPS = 64


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def join_request_hash(request_id: str) -> bytes:
    """What a seat keeps of the request id of the JoinGame that took it (the id is a
    credential for that join's retry: stored hashed, as a token is)."""
    return hashlib.sha256(b"join:" + request_id.encode()).digest()


def bot_seat(record: spb.StoredGame, state: GameState, full: bool | None = None) -> int | None:
    """The house-bot seat that may act now, if any (the first by claim priority).

    House bots play once the table is full (every seat joined, by a player or a
    bot) and until the game is over.
    """
    seats = record.seats
    # (who may act first: on most moves none is a bot, and that settles it)
    waiting = next((seat for seat in state.to_act if seats[seat].bot), None)
    if waiting is None or state.is_terminal():
        return None
    if not table_full(record, full):
        return None
    return waiting


def table_full(record: spb.StoredGame, known: bool | None = None) -> bool:
    """Whether every seat is taken (by a player or a house bot): the game starts then,
    and no seat may act before (``TABLE_NOT_FULL``, docs/RULES.md).  ``known``: the
    answer already worked out for ``record`` (:attr:`Seated.full`), else read here."""
    if known is not None:
        return known
    return all(s.joined for s in record.seats)


def table_not_full(record: spb.StoredGame) -> ServiceError:
    """The refusal of an act at a table still waiting for players."""
    free = sum(1 for s in record.seats if not s.joined)
    return precondition(
        "TABLE_NOT_FULL",
        f"the game starts when every seat is taken: {free} of {len(record.seats)} still free",
    )


def has_open_seats(record: spb.StoredGame, state: GameState, full: bool | None = None) -> bool:
    """Whether the game waits for players: a seat nobody has joined, and not over
    (what the lobby lists).  ``full``: :func:`table_full` of ``record``, when known."""
    if state.is_terminal():
        return False
    return not table_full(record, full)


def next_deadline(
    record: spb.StoredGame,
    before: GameState | None,
    after: GameState,
    clock: Callable[[], float],
    full: bool | None = None,
) -> float:
    """When the running deadline passes (0: none).

    A turn's deadline starts when the turn starts and runs through its draw and
    plays; a claim window's starts when the window opens.  ``full``: :func:`table_full`
    of ``record``, when known.
    """
    if after.is_terminal() or not table_full(record, full):
        return 0.0  # (the first turn's clock starts with the join that fills the table)
    limits = record.deadlines
    seconds = limits.claim_seconds if after.phase is Phase.CLAIM else limits.turn_seconds
    if not seconds:
        return 0.0
    same_stage = (
        before is not None
        and before.round_number == after.round_number
        and (before.phase is Phase.CLAIM) == (after.phase is Phase.CLAIM)
        and before.current == after.current
        and record.deadline_unix > 0
    )
    if same_stage:
        return record.deadline_unix
    return clock() + seconds


def idle_deadline(
    record: spb.StoredGame, after: GameState, idle: IdleLimits, now: float, full: bool | None = None
) -> float:
    """When a game written at ``now`` ends abandoned if nothing is written first (0:
    never): ``now`` plus its stage's limit, rounded up to the limit's IDLE_STEPS-th."""
    if after.is_terminal():
        return 0.0
    open_seats = has_open_seats(record, after, full)
    limit = idle.unjoined_after if open_seats else idle.abandon_after
    if limit <= 0:
        return 0.0
    step = limit / IDLE_STEPS
    return math.ceil((now + limit) / step) * step


def indexed_deadline(record: spb.StoredGame) -> float | None:
    """The game's time in the deadline index: the earliest of its running deadline and
    its idle deadline (None: neither).  The sweeper finds it then, and the record
    says which has passed (:mod:`.deadlines`)."""
    turn, idle = record.deadline_unix, record.idle_deadline_unix
    if turn > 0 and idle > 0:
        return min(turn, idle)
    return turn or idle or None


def store_write(
    before: Loaded | None,
    record: spb.StoredGame,
    after: GameState,
    *,
    idle: IdleLimits,
    now: float,
    by_deadline: bool = False,
    entry: LogItem | None = None,
    idempotency_key: str | None = None,
    response: bytes | None = None,
    take: CellTake | None = None,
    full: bool | None = None,
) -> Write:
    """The store write of ``record`` (holding ``after``) over ``before`` (None: a new
    game) at ``now``: its deadline, bot-turn and lobby index fields worked out in one
    place, so no write can forget them (a game missing from the bot-turn index stalls).

    The record's idle deadline is stamped here too: every write by a player, a bot,
    a join or the creation starts the idle clock again; a default action of the
    deadline sweeper (``by_deadline``) does not, so a game everyone left ends
    abandoned even while its deadlines play for them (docs/DECISIONS.md).  ``full``:
    :func:`table_full` of ``record``, when known (a move's: its seats are unchanged)."""
    if full is None:
        full = table_full(record)
    if before is None or not by_deadline or after.is_terminal():
        record.idle_deadline_unix = idle_deadline(record, after, idle, now, full)
    deadline = indexed_deadline(record)
    bot_turn = bot_seat(record, after, full) is not None
    bot_before = (
        None if before is None else bot_seat(before.record, before.state, before.table_full())
    )
    bot_turn_before = bot_before is not None
    open_seats = has_open_seats(record, after, full)
    open_before = before is not None and has_open_seats(
        before.record, before.state, before.table_full()
    )
    return Write(
        record=record.SerializeToString(),
        entry=entry,
        idempotency_key=idempotency_key,
        response=response,
        finished=after.is_terminal(),
        deadline=deadline,
        deadline_changed=before is None or deadline != indexed_deadline(before.record),
        bot_turn=bot_turn,
        bot_turn_changed=bot_turn or bot_turn_before,
        open_seats=open_seats,
        open_seats_changed=open_seats != open_before,
        rule_set_hash=record.state.rules.hash,
        take=take,
    )


def seat_infos(record: spb.StoredGame) -> list[pb.SeatInfo]:
    """The public description of every seat (never its token)."""
    return [
        pb.SeatInfo(seat=i, joined=s.joined, name=s.name, bot=s.bot)
        for i, s in enumerate(record.seats)
    ]


def game_message(loaded: Loaded) -> pb.Game:
    """The public ``Game`` message of a stored game."""
    record = loaded.record
    return pb.Game(
        game_id=record.game_id,
        rule_set=convert.rules_to_pb(loaded.state.rules),
        seats=loaded.state.seats,
        seat_info=seat_infos(record),
        version=loaded.version,
        finished=loaded.state.is_terminal(),
        deadlines=record.deadlines,
        arranged=record.arranged,
    )
