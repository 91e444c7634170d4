"""The game state: an immutable GameState, its queries, and the front door to the rules.

The rules sit below this module: :mod:`.dealing`, :mod:`.moves`, :mod:`.transitions`,
:mod:`.claims` and the stored form, :mod:`.codec`.  They read a state through its
fields and queries, make the next one with :meth:`GameState.evolve`, and know the
class itself only as a type (a deal and a decoded state are built by the class they
are handed), so its methods here call them and no import runs in a circle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Final

from engine.actions import Action
from engine.cards import Card
from engine.errors import IllegalActionError, InvalidActionError
from engine.events import Event
from engine.game import claims, codec, dealing, moves, transitions
from engine.game.phase import CLAIM_PHASE, GAME_OVER, Phase
from engine.melds import Meld, is_full
from engine.rulesets import Contract, RuleSet, Stalemate
from engine.solver import Selection, best_selection, can_lay

Result = tuple["GameState", list[Event]]

# Enum members as module constants: Python 3.11 reads ``Enum.MEMBER`` through
# EnumType's ``__getattr__`` hook, ten times the cost of a global (the hot path).
_EXHAUSTIONS: Final = Stalemate.EXHAUSTIONS


@dataclass(frozen=True, slots=True)
class GameState:
    """One moment of a game.  Immutable: transitions return new states.

    A game is fully determined by its rule set, seats, seed (and arranged deck orders)
    and the accepted actions: the engine has no I/O, no clock and no randomness but the
    seeded shuffle of :mod:`engine.shuffle`.  Every rule reads a field of the RuleSet,
    never its name.  Where the rules are silent, docs/DECISIONS.md says what it does.
    This field list is the one definition of a state: :func:`evolve` and the stored
    form (:mod:`engine.game.codec`) are derived from it.
    """

    rules: RuleSet
    seats: int
    seed: bytes
    round_number: int  # 1-based
    phase: Phase
    current: int  # the seat whose turn it is (CLAIM: the seat whose turn comes next)
    hands: tuple[tuple[Card, ...], ...]  # each sorted by card id
    stock: tuple[Card, ...]  # stock[0] is the top (drawn next)
    discards: tuple[Card, ...]  # discards[-1] is the top
    table: tuple[Meld, ...]  # in the order laid; index = meld id for LayOff/SwapJoker
    opened: tuple[bool, ...]
    scores: tuple[int, ...]  # cumulative
    taken_from_discard: int | None = None  # card id drawn from the discard pile this turn
    laid_this_turn: bool = False  # the current seat laid its contract this turn
    claim_answers: tuple[bool | None, ...] = ()  # CLAIM: per seat, None = not answered yet
    exhaustions: int = 0  # stock exhaustions this round (stalemate EXHAUSTIONS)
    epoch: int = 0  # reshuffles so far this round (the shuffle epoch of the last one)
    turns_completed: int = 0  # this round
    action_count: int = 0  # actions accepted since the game began
    stock_orders: tuple[tuple[int, tuple[int, ...]], ...] = ()  # arranged decks by round
    abandoned: bool = False  # GAME_OVER by :meth:`abandon`, not by its last round: no winners
    # the solver's answers for this state's hands (a state never changes, so neither do they)
    _memo: dict[Any, Any] | None = field(default=None, init=False, compare=False, repr=False)

    # ------------------------------------------------------------------ creation
    @classmethod
    def new_game(
        cls,
        rules: RuleSet,
        seats: int,
        seed: bytes,
        stock_orders: Mapping[int, Sequence[int]] | None = None,
    ) -> GameState:
        """A new game, round 1 dealt.  ``stock_orders``: optional arranged deck per round
        (every card id of the deck once, top first) used instead of the seeded deal."""
        return cls.new_game_with_events(rules, seats, seed, stock_orders)[0]

    @classmethod
    def new_game_with_events(
        cls,
        rules: RuleSet,
        seats: int,
        seed: bytes,
        stock_orders: Mapping[int, Sequence[int]] | None = None,
    ) -> Result:
        """Like :meth:`new_game`, also returning the events of the first deal."""
        if not isinstance(rules, RuleSet):
            raise InvalidActionError("rules must be a RuleSet")
        if type(seats) is not int or not rules.min_players <= seats <= rules.max_players:
            raise InvalidActionError(
                f"{rules.name} is played by {rules.min_players}..{rules.max_players} seats,"
                f" not {seats!r}"
            )
        if not isinstance(seed, bytes | bytearray):
            raise InvalidActionError("the seed must be bytes")
        orders = dealing.check_stock_orders(rules, stock_orders or {})
        return dealing.deal(cls, rules, seats, bytes(seed), 1, (0,) * seats, orders, 0)

    # ------------------------------------------------------------------ queries
    @property
    def contract(self) -> Contract:
        return self.rules.contracts[self.round_number - 1]

    @property
    def claim_answers_given(self) -> int:
        """In a claim window, how many seats have answered it (the window opened that
        many actions ago); 0 otherwise."""
        return claims.answered(self) if self.phase is CLAIM_PHASE else 0

    @property
    def claim_discarder(self) -> int | None:
        """In a claim window, the seat that discarded; None otherwise."""
        if self.phase is not CLAIM_PHASE:
            return None
        return claims.discarder(self)

    @property
    def to_act(self) -> tuple[int, ...]:
        """Seats that may act now (in a claim window, those yet to answer, by priority)."""
        phase = self.phase
        if phase is GAME_OVER:
            return ()
        if phase is CLAIM_PHASE:
            return claims.waiting(self)
        return (self.current,)

    def is_terminal(self) -> bool:
        return self.phase is GAME_OVER

    def returns(self) -> tuple[float, ...]:
        """Minus the cumulative score of each seat (higher is better)."""
        return tuple(float(-s) for s in self.scores)

    def winners(self) -> tuple[int, ...]:
        """The seats with the lowest cumulative score (all of them on a tie); none in
        an abandoned game (docs/DECISIONS.md)."""
        if self.abandoned:
            return ()
        best = min(self.scores)
        return tuple(i for i, s in enumerate(self.scores) if s == best)

    def all_cards(self) -> list[Card]:
        cards = [c for hand in self.hands for c in hand]
        cards.extend(self.stock)
        cards.extend(self.discards)
        for m in self.table:
            cards.extend(m.cards)
        return cards

    # ------------------------------------------------------------------ shared rules
    def check_seat(self, seat: int) -> None:
        """InvalidActionError unless ``seat`` is a seat of this game."""
        if type(seat) is not int or not 0 <= seat < self.seats:
            raise InvalidActionError(f"no seat {seat!r} in a game of {self.seats}")

    def stock_draw_allowed(self) -> bool:
        """Whether ``Draw(STOCK)`` is allowed by the stock (it may be empty: a reshuffle)."""
        if self.stock:
            return True
        rules = self.rules
        return not (rules.stalemate is _EXHAUSTIONS and rules.draw_from_discard and self.discards)

    def round_is_dead(self) -> bool:
        """Whether the round is dead under a rule set that ends such rounds
        (``dead_round_ends``): every seat is open and every meld on the table is full,
        so no card can be laid off and no hand can empty (docs/RULES.md, rule 6)."""
        rules = self.rules
        if not rules.dead_round_ends or not all(self.opened):
            return False
        return all(is_full(m, rules) for m in self.table)

    @property
    def blocked_card(self) -> int | None:
        """The card taken from the discard pile this turn, in a round with discards: it
        may not be discarded, nor be left as the only card in hand."""
        taken = self.taken_from_discard
        if taken is None or not self.contract.discards:
            return None
        return taken

    def strands_blocked_card(self, left: Sequence[Card]) -> bool:
        """Whether a hand left with ``left`` would hold only :attr:`blocked_card`."""
        blocked = self.blocked_card
        return blocked is not None and len(left) == 1 and left[0].id == blocked

    def automatic_selection(self, seat: int) -> Selection | None:
        """The melds ``LayContract()`` lays for ``seat`` (the solver's choice), if any."""
        memo = self._memo_dict()
        key = ("sel", seat)
        if key not in memo:
            memo[key] = best_selection(self.hands[seat], self.rules, self.round_number)
        result: Selection | None = memo[key]
        return result

    def can_lay_contract(self, seat: int) -> bool:
        """Whether ``seat``'s hand holds the round's contract (cheaper than the selection)."""
        memo = self._memo_dict()
        key = ("sel", seat)
        if key in memo:
            return memo[key] is not None
        key = ("can", seat)
        if key not in memo:
            memo[key] = can_lay(self.hands[seat], self.rules, self.round_number)
        return bool(memo[key])

    def _memo_dict(self) -> dict[Any, Any]:
        memo = self._memo
        if memo is None:
            memo = {}
            _set_memo(self, memo)
        return memo

    # ------------------------------------------------------------------ the rules
    def legal_actions(self, seat: int) -> list[Action]:
        """Every legal action of ``seat`` now, canonical forms where many card choices are
        equivalent (docs/DECISIONS.md); ``[]`` for a seat that may not act."""
        return moves.legal_actions(self, seat)

    def apply_action(self, seat: int, action: Action) -> Result:
        """The new state and the events after ``seat`` takes ``action``.

        Raises InvalidActionError (malformed) or IllegalActionError (forbidden now);
        ``self`` never changes.
        """
        self.check_seat(seat)
        handler = transitions.HANDLERS.get(type(action))
        if handler is None:
            raise InvalidActionError(f"not an action: {action!r}")
        return handler(self, seat, action)

    def abandon(self) -> Result:
        """The game over without a winner, where it stands: the ending for a game
        nobody plays any more.  No seat's action and no clock: who decides that a
        game is abandoned, and when, is the caller's (the service's idle time,
        docs/API.md).  One more version (``action_count``), whose one event is
        ``game_abandoned``; IllegalActionError GAME_OVER when the game is over."""
        return transitions.abandon(self)

    def check(self, seat: int, action: Action) -> None:
        """Dry run: raises exactly as :meth:`apply_action` would, returns nothing."""
        self.apply_action(seat, action)

    if TYPE_CHECKING:
        # (written from the field list once the class exists: see :func:`evolve`)
        def evolve(self, **changes: Any) -> GameState:
            """A copy of this state with ``changes`` (keywords: its fields)."""
            ...

    # ------------------------------------------------------------------ stored form
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form, lossless (secrets included: for the store only)."""
        return _CODEC.to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameState:
        """Rebuild a state from :meth:`to_dict`'s form, validating it (InvalidActionError).

        Hands are normalised to id order.  ``rules`` may also be a preset's name, or a
        RuleSet itself (what a service that keeps its rule sets decoded passes).
        """
        try:
            return _CODEC.from_dict(data)
        except InvalidActionError:
            raise
        except IllegalActionError as exc:
            raise InvalidActionError(f"malformed game state: {exc.message}") from exc
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise InvalidActionError(f"malformed game state: {exc!r}") from exc


# ---------------------------------------------------------------------- fast copies

_KEEP: Any = object()
_set_memo: Callable[[GameState, Any], None] = GameState.__dict__["_memo"].__set__


class _Draft:
    """A mutable twin of GameState (the same slots, in the same order): :func:`evolve`
    fills one with plain attribute stores, which Python runs far faster than the frozen
    class's slot setters, then makes it a GameState by ``__class__`` assignment (allowed
    between classes of one layout).  Nothing else ever holds a draft."""

    __slots__ = GameState.__slots__


def _write_evolve() -> Callable[..., GameState]:
    """:func:`evolve`, written from GameState's field list as dataclasses writes an
    ``__init__``: one keyword per field and one slot write each, nothing looked up by
    name when it runs."""
    assert _Draft.__slots__ == tuple(f.name for f in fields(GameState))
    scope: dict[str, Any] = {"Draft": _Draft, "GameState": GameState, "KEEP": _KEEP}
    keywords: list[str] = []
    body = ["    new = Draft()"]
    for f in fields(GameState):
        if f.init:
            keywords.append(f"{f.name}=KEEP")
            body.append(f"    new.{f.name} = s.{f.name} if {f.name} is KEEP else {f.name}")
        else:  # derived caches start empty
            assert f.default is not MISSING
            scope[f"default_{f.name}"] = f.default
            body.append(f"    new.{f.name} = default_{f.name}")
    body.append("    new.__class__ = GameState")
    source = "\n".join([f"def evolve(s, *, {', '.join(keywords)}):", *body, "    return new"])
    exec(source, scope)
    written: Callable[..., GameState] = scope["evolve"]
    return written


#: ``evolve(state, field=value, ...)``: a copy of ``state`` with these fields changed.
#: The same result as ``dataclasses.replace`` but many times faster: the hot path
#: of every action.  (Typed loosely: its keywords are GameState's fields.)
evolve: Callable[..., GameState] = _write_evolve()


# The rules reach it through the state they hold, ``state.evolve(...)`` (a method
# call costs what a call of the module's function does): they may not import this module.
GameState.evolve = evolve  # type: ignore[method-assign]

#: the stored form of a state (to_dict/from_dict), checked against the field list now
_CODEC = codec.StateCodec(GameState)
