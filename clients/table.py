"""The table core: what a client playing seats through the API decides, without I/O.

Every client that plays seats through the public API (the bot runner, the house-bot
pool, the tournament over gRPC, ``bench_play``, the load tests' tables, the probe and
the fault campaign) is told the same things and answers them the same way; a
:class:`Table` holds those answers, once.  It is *fed* what the server said (a seat's
view, a prompt, an act's result or refusal, a session's end) and *returns* what to
do next: a :class:`Turn` whose :meth:`~Turn.choose` gives the :class:`Act` to send,
the call to make next (the unary calls: :class:`ReadView`, :class:`ListActions`,
:class:`Wait`, :class:`Over`), or nothing.  It sends nothing, awaits nothing and
reads no clock (a runner passes in how long a move took), so the one set of rules
serves the async runners over the SDK (:mod:`clients.runners`: a Play stream, unary
calls) and the load tests' gevent users, whose thin sync loops differ only in their I/O.

What it owns:

* **in turn order**: where every seat of a game is played at this table, only the
  seat first in the view's ``to_act`` answers (a claim window prompts several seats
  at once: who answers first is then never a matter of timing, and each bot's
  randomness is drawn exactly as in process); the others are prompted again, or
  looked at again, once it has;
* **refusals**: ``ABORTED`` is a race (the game moved on: a fresh prompt or view
  follows), not a failure, and neither is an act that found its seat's session over
  (the game ended under it); ``FAILED_PRECONDITION`` / ``INVALID_ARGUMENT`` are
  *illegal* actions, ``DEADLINE_EXCEEDED`` *timeouts*, anything else *errors*; after
  ``max_failures`` failures in a row the seat is given up (:func:`outcome_of`);
* **versions and request ids**: an act expects the version of the prompt, or of the
  legal actions, it answers, and carries a fresh request id (a resend reuses it: the
  server applies it once);
* **each seat's result** (:class:`SeatResult`): moves, refusals, latencies, the
  final view.

The bot decides through :func:`clients.turn.wire_choice`, called by :meth:`Turn.choose`
(a runner may call that in a thread: the choice touches nothing of the table).
"""

from __future__ import annotations

import enum
import random
import secrets
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from clients.bots.base import Bot
from clients.turn import wire_choice
from glintwick.v1 import game_pb2 as pb

__all__ = [
    "Act",
    "ListActions",
    "Next",
    "Outcome",
    "Over",
    "Randomness",
    "ReadView",
    "SeatResult",
    "Table",
    "Turn",
    "Wait",
    "outcome_of",
]


class Outcome(enum.Enum):
    """What became of an act."""

    MOVED = "moved"  # applied: the game is at a new version
    RACE = "race"  # ABORTED: another writer took the version first (the game moved on)
    ENDED = "ended"  # the seat's session was over when the act reached it (game ended)
    GONE = "gone"  # NOT_FOUND: the game is gone
    ILLEGAL = "illegal"  # FAILED_PRECONDITION / INVALID_ARGUMENT: the bot's mistake
    TIMEOUT = "timeout"  # DEADLINE_EXCEEDED
    ERROR = "error"  # anything else

    @property
    def failed(self) -> bool:
        """Whether it counts as the seat's failure (a race or a game over does not)."""
        return self not in (Outcome.MOVED, Outcome.RACE, Outcome.ENDED)


_ILLEGAL = frozenset({"FAILED_PRECONDITION", "INVALID_ARGUMENT"})
#: what an act meets when its seat's session is over by the time it is sent: the
#: server has no session of the seat (INVALID_ARGUMENT), or the SDK's stream ended
#: with its last session (CANCELLED)
_SESSION_ENDED = frozenset({"INVALID_ARGUMENT", "CANCELLED"})


def outcome_of(code: str, *, session_open: bool = True) -> Outcome:
    """What a refusal with the status named ``code`` (``"ABORTED"``) means for the seat
    that acted; ``session_open``: whether its Play session was still on after the
    refusal (a unary call has none: True)."""
    if code == "ABORTED":
        return Outcome.RACE
    if not session_open and code in _SESSION_ENDED:
        return Outcome.ENDED
    if code == "NOT_FOUND":
        return Outcome.GONE
    if code in _ILLEGAL:
        return Outcome.ILLEGAL
    if code == "DEADLINE_EXCEEDED":
        return Outcome.TIMEOUT
    return Outcome.ERROR


@dataclass(frozen=True)
class Act:
    """One act to send: ``action`` for ``seat`` at the version it expects, with its
    request id (the same on every resend: the server applies it once)."""

    game_id: str
    seat: int
    action: pb.Action
    expected_version: int
    request_id: str


@dataclass(frozen=True)
class Turn:
    """A seat may act: what its bot decides on, and the act's version and request id."""

    game_id: str
    seat: int
    version: int
    view: pb.View
    legal: Sequence[pb.Action]
    bot: Bot
    rng: random.Random
    request_id: str

    def choose(self) -> Act:
        """The bot's choice among the legal actions, as the act to send."""
        return self.act(wire_choice(self.bot, self.view, self.legal, self.rng))

    def act(self, action: pb.Action) -> Act:
        """``action`` as this turn's act (at its version, with its request id)."""
        return Act(self.game_id, self.seat, action, self.version, self.request_id)


@dataclass
class SeatResult:
    """One seat's play: its moves and refusals, each move's latency (the bot's choice
    and the act's answer; by unary calls the legal actions' listing too), its final view."""

    seat: int
    bot: str
    moves: int = 0
    illegal: int = 0
    timeouts: int = 0
    errors: int = 0
    races: int = 0  # acts the game had moved past (ABORTED, its session over): no failure
    latencies: list[float] = field(default_factory=list)  # seconds per move
    final_view: pb.View | None = None  # the seat's view of its game's end
    gave_up: bool = False  # ``max_failures`` failures in a row
    refusal: str = ""  # the last failure: "CODE: message"

    @property
    def mean_latency_ms(self) -> float:
        return 1000 * sum(self.latencies) / len(self.latencies) if self.latencies else 0.0


# --------------------------------------------------------------------------- unary calls


@dataclass(frozen=True)
class ReadView:
    """Read ``seat``'s view (GetView) and feed it to :meth:`Table.viewed`."""

    seat: int


@dataclass(frozen=True)
class ListActions:
    """``seat`` may act at ``version``: list its legal actions (ListLegalActions) and
    feed them to :meth:`Table.listed`; then read its view again."""

    seat: int
    version: int


@dataclass(frozen=True)
class Wait:
    """No seat of this table may act now: wait for the game to move (a watch's next
    item, or a poll interval), then read ``seat``'s view again."""

    seat: int


@dataclass(frozen=True)
class Over:
    """Nothing more to do at this table: the game is over (or its seat given up)."""


Next = ReadView | ListActions | Wait | Over


# --------------------------------------------------------------------------- the table


@dataclass
class _Seat:
    bot: Bot
    rng: Randomness
    result: SeatResult
    version: int = 0  # the newest version the seat was told of
    view: pb.View | None = None  # the newest view it was given
    failures: int = 0  # in a row


#: a seat's randomness: one generator for all its moves, or one per move, made from the
#: version it acts at (a bot pool's: which worker plays a turn does not change the move)
Randomness = random.Random | Callable[[int], random.Random]


def _fresh_request_id() -> str:
    """128 random bits, as hex (what a UUID4 holds, without building one)."""
    return secrets.token_hex(16)


class Table:
    """The seats a client plays, and every decision of their play (see the module).

    ``in_turn_order``: where every seat of a game is seated here, answer only the seat
    first in ``to_act``, but every seat of a May I? window, each on its one prompt there
    (False: every seat that may act).  ``max_failures``: failures in
    a row after which a seat is given up (None: never).  ``request_ids`` makes each
    act's request id (default: 128 random bits, in hex).
    """

    def __init__(
        self,
        *,
        in_turn_order: bool = True,
        max_failures: int | None = 10,
        request_ids: Callable[[], str] = _fresh_request_id,
    ) -> None:
        self.in_turn_order = in_turn_order
        self.max_failures = max_failures
        self._request_id = request_ids
        self._seats: dict[tuple[str, int], _Seat] = {}
        self._per_game: Counter[str] = Counter()

    # ------------------------------------------------------------------ the seats

    def sit(self, game_id: str, seat: int, bot: Bot, rng: Randomness) -> SeatResult:
        """Play ``seat`` of ``game_id`` here with ``bot`` (its randomness ``rng``).  A seat
        already here takes the new bot and randomness and keeps its counts."""
        playing = self._seats.get((game_id, seat))
        if playing is None:
            playing = _Seat(bot, rng, SeatResult(seat, bot.name))
            self._seats[(game_id, seat)] = playing
            self._per_game[game_id] += 1
        else:
            playing.bot, playing.rng = bot, rng
        return playing.result

    def leave(self, game_id: str, seat: int) -> None:
        """Play ``seat`` here no more (its result goes with it)."""
        if self._seats.pop((game_id, seat), None) is not None:
            self._per_game[game_id] -= 1
            if not self._per_game[game_id]:
                del self._per_game[game_id]

    def result(self, game_id: str, seat: int) -> SeatResult:
        return self._seats[(game_id, seat)].result

    @property
    def results(self) -> list[SeatResult]:
        """Every seat's result, in the order they sat."""
        return [playing.result for playing in self._seats.values()]

    def playing(self, game_id: str, seat: int) -> bool:
        """Whether ``seat`` is played here (seated, and not given up)."""
        playing = self._seats.get((game_id, seat))
        return playing is not None and not playing.result.gave_up

    def version(self, game_id: str, seat: int) -> int:
        """The newest version ``seat`` was told of (a prompt's, a view's, an act's result):
        where a session of it resumes."""
        return self._seats[(game_id, seat)].version

    def view(self, game_id: str) -> pb.View | None:
        """The newest view any seat of ``game_id`` was given (its final view, once over)."""
        views = [p.result.final_view or p.view for (g, _), p in self._seats.items() if g == game_id]
        return max((v for v in views if v is not None), key=lambda v: v.version, default=None)

    def moves(self, game_id: str) -> int:
        """The moves made here at ``game_id``."""
        return sum(p.result.moves for (g, _), p in self._seats.items() if g == game_id)

    # ------------------------------------------------------------------ a Play stream

    def prompted(
        self, game_id: str, seat: int, version: int, view: pb.View, legal: Sequence[pb.Action]
    ) -> Turn | None:
        """A prompt of ``seat``: its turn to decide on, or None (not to be answered: no
        legal action, the seat given up, or another seat answers first)."""
        playing = self._told(game_id, seat, version, view)
        if not legal or playing.result.gave_up or not self._answers(game_id, seat, view):
            return None
        return self._turn(game_id, seat, version, view, legal, playing)

    def saw(self, game_id: str, seat: int, view: pb.View) -> None:
        """A view of ``seat`` that asks nothing (a session's snapshot)."""
        self._told(game_id, seat, view.version, view)

    def closed(self, game_id: str, seat: int, final_view: pb.View | None) -> None:
        """``seat``'s session ended, with its final view when the game is over."""
        if final_view is not None:
            playing = self._told(game_id, seat, final_view.version, final_view)
            playing.result.final_view = final_view

    # ------------------------------------------------------------------ unary calls

    def viewed(self, game_id: str, seat: int, view: pb.View) -> Next:
        """``seat``'s view was read (GetView): what to do next.  (The table follows the
        turn: when the seat to act first is another one it plays, that seat's view is
        read next; when it plays none of the seats to act, it waits.)"""
        playing = self._told(game_id, seat, view.version, view)
        playing.view = view  # (what the seat decides on, should a stale read come late)
        if view.game_over:
            playing.result.final_view = view
            return Over()
        if playing.result.gave_up:
            return Over()
        if view.may_act and self._answers(game_id, seat, view):
            return ListActions(seat, view.version)
        first = view.to_act[0] if view.to_act else seat
        if first != seat and (game_id, first) in self._seats:
            # (a seat given up here is to act: nobody else will play it)
            return ReadView(first) if self.playing(game_id, first) else Over()
        return Wait(seat)

    def listed(
        self, game_id: str, seat: int, version: int, legal: Sequence[pb.Action]
    ) -> Turn | None:
        """``seat``'s legal actions at ``version`` (ListLegalActions): its turn, or None
        when they are not of the view just read (the game moved between the two calls)
        or there are none: then read the view again."""
        playing = self._seats[(game_id, seat)]
        view = playing.view
        if view is None or version != view.version or not legal or playing.result.gave_up:
            return None
        return self._turn(game_id, seat, version, view, legal, playing)

    # ------------------------------------------------------------------ answers

    def applied(self, act: Act, version: int, seconds: float) -> Outcome:
        """``act`` was applied: the game is at ``version``; the move took ``seconds``."""
        playing = self._seats.get((act.game_id, act.seat))
        if playing is not None:
            playing.version = max(playing.version, version)
            playing.failures = 0
            playing.result.moves += 1
            playing.result.latencies.append(seconds)
        return Outcome.MOVED

    def refused(
        self, act: Act, code: str, message: str = "", *, session_open: bool = True
    ) -> Outcome:
        """``act`` was refused with the status named ``code``: counted, and the seat
        given up after ``max_failures`` failures in a row (see :func:`outcome_of`)."""
        outcome = outcome_of(code, session_open=session_open)
        playing = self._seats.get((act.game_id, act.seat))
        if playing is None:
            return outcome
        result = playing.result
        if not outcome.failed:
            result.races += 1
            return outcome
        if outcome is Outcome.ILLEGAL:
            result.illegal += 1
        elif outcome is Outcome.TIMEOUT:
            result.timeouts += 1
        else:
            result.errors += 1
        result.refusal = f"{code}: {message}" if message else code
        playing.failures += 1
        if self.max_failures is not None and playing.failures >= self.max_failures:
            result.gave_up = True
        return outcome

    # ------------------------------------------------------------------ the rules

    def _told(self, game_id: str, seat: int, version: int, view: pb.View) -> _Seat:
        playing = self._seats[(game_id, seat)]
        playing.version = max(playing.version, version)
        if playing.view is None or view.version >= playing.view.version:
            playing.view = view
        return playing

    def _answers(self, game_id: str, seat: int, view: pb.View) -> bool:
        """The in-turn-order rule: whether ``seat`` answers a view where it may act.  A
        May I? window's seats each answer their one prompt there, in any order (the
        server prompts a seat once a window, and the first claimant in turn order after
        the discarder wins however the answers arrive)."""
        if not self.in_turn_order or not view.to_act or view.to_act[0] == seat:
            return True
        if view.HasField("claim"):
            return True
        return self._per_game[game_id] < view.seats  # (not every seat is played here)

    def _turn(
        self,
        game_id: str,
        seat: int,
        version: int,
        view: pb.View,
        legal: Sequence[pb.Action],
        playing: _Seat,
    ) -> Turn:
        rng = playing.rng if isinstance(playing.rng, random.Random) else playing.rng(version)
        return Turn(game_id, seat, version, view, legal, playing.bot, rng, self._request_id())
