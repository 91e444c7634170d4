"""The game state: an immutable GameState, its queries, and the front door to the rules.

The rules sit below this module: :mod:`.dealing`, :mod:`.moves`, :mod:`.transitions`,
:mod:`.claims` and the stored form, :mod:`.codec`.  They read a state through its
fields and queries, make the next one with :meth:`GameState.evolve`, and know the
class itself only as a type (a deal and a decoded state are built by the class they
are handed), so its methods here call them and no import runs in a circle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from engine.actions import Action
from engine.cards import Card, field_values
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
_KEEP: Any = object()


@dataclass(slots=True, init=False, unsafe_hash=True)
class GameState:
    """One moment of a game.  Immutable: transitions return new states.  (By convention:
    nothing writes a field after ``__init__``.  Not a frozen dataclass, whose generated
    ``__init__`` would run interpreted in the compiled engine: engine/compiled.py.)

    A game is fully determined by its rule set, seats, seed (and arranged deck orders)
    and the accepted actions: the engine has no I/O, no clock and no randomness but the
    seeded shuffle of :mod:`engine.shuffle`.  Every rule reads a field of the RuleSet,
    never its name.  Where the rules are silent, docs/DECISIONS.md says what it does.
    This field list is the one definition of a state: ``__init__`` and :meth:`evolve`
    take a keyword per field (tests/unit/test_engine_build.py checks them against it),
    and the stored form (:mod:`engine.game.codec`) is derived from it.
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

    def __init__(
        self,
        rules: RuleSet,
        seats: int,
        seed: bytes,
        round_number: int,
        phase: Phase,
        current: int,
        hands: tuple[tuple[Card, ...], ...],
        stock: tuple[Card, ...],
        discards: tuple[Card, ...],
        table: tuple[Meld, ...],
        opened: tuple[bool, ...],
        scores: tuple[int, ...],
        taken_from_discard: int | None = None,
        laid_this_turn: bool = False,
        claim_answers: tuple[bool | None, ...] = (),
        exhaustions: int = 0,
        epoch: int = 0,
        turns_completed: int = 0,
        action_count: int = 0,
        stock_orders: tuple[tuple[int, tuple[int, ...]], ...] = (),
        abandoned: bool = False,
    ) -> None:
        self.rules = rules
        self.seats = seats
        self.seed = seed
        self.round_number = round_number
        self.phase = phase
        self.current = current
        self.hands = hands
        self.stock = stock
        self.discards = discards
        self.table = table
        self.opened = opened
        self.scores = scores
        self.taken_from_discard = taken_from_discard
        self.laid_this_turn = laid_this_turn
        self.claim_answers = claim_answers
        self.exhaustions = exhaustions
        self.epoch = epoch
        self.turns_completed = turns_completed
        self.action_count = action_count
        self.stock_orders = stock_orders
        self.abandoned = abandoned
        self._memo = None

    def evolve(
        self,
        *,
        rules: Any = _KEEP,
        seats: Any = _KEEP,
        seed: Any = _KEEP,
        round_number: Any = _KEEP,
        phase: Any = _KEEP,
        current: Any = _KEEP,
        hands: Any = _KEEP,
        stock: Any = _KEEP,
        discards: Any = _KEEP,
        table: Any = _KEEP,
        opened: Any = _KEEP,
        scores: Any = _KEEP,
        taken_from_discard: Any = _KEEP,
        laid_this_turn: Any = _KEEP,
        claim_answers: Any = _KEEP,
        exhaustions: Any = _KEEP,
        epoch: Any = _KEEP,
        turns_completed: Any = _KEEP,
        action_count: Any = _KEEP,
        stock_orders: Any = _KEEP,
        abandoned: Any = _KEEP,
    ) -> GameState:
        """A copy of this state with these fields changed."""
        return GameState(
            self.rules if rules is _KEEP else rules,
            self.seats if seats is _KEEP else seats,
            self.seed if seed is _KEEP else seed,
            self.round_number if round_number is _KEEP else round_number,
            self.phase if phase is _KEEP else phase,
            self.current if current is _KEEP else current,
            self.hands if hands is _KEEP else hands,
            self.stock if stock is _KEEP else stock,
            self.discards if discards is _KEEP else discards,
            self.table if table is _KEEP else table,
            self.opened if opened is _KEEP else opened,
            self.scores if scores is _KEEP else scores,
            self.taken_from_discard if taken_from_discard is _KEEP else taken_from_discard,
            self.laid_this_turn if laid_this_turn is _KEEP else laid_this_turn,
            self.claim_answers if claim_answers is _KEEP else claim_answers,
            self.exhaustions if exhaustions is _KEEP else exhaustions,
            self.epoch if epoch is _KEEP else epoch,
            self.turns_completed if turns_completed is _KEEP else turns_completed,
            self.action_count if action_count is _KEEP else action_count,
            self.stock_orders if stock_orders is _KEEP else stock_orders,
            self.abandoned if abandoned is _KEEP else abandoned,
        )

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
    def check_seat(self, seat: object) -> int:
        """``seat``, or InvalidActionError unless it is a seat of this game.  (Typed
        ``object``: a compiled int parameter would take ``True`` as 1.)"""
        if type(seat) is not int or not 0 <= seat < self.seats:
            raise InvalidActionError(f"no seat {seat!r} in a game of {self.seats}")
        return seat

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
            self._memo = memo
        return memo

    # ------------------------------------------------------------------ the rules
    def legal_actions(self, seat: object) -> list[Action]:
        """Every legal action of ``seat`` now, canonical forms where many card choices are
        equivalent (docs/DECISIONS.md); ``[]`` for a seat that may not act."""
        return moves.legal_actions(self, self.check_seat(seat))

    def apply_action(self, seat: object, action: Action | object) -> Result:
        """The new state and the events after ``seat`` takes ``action``.

        Raises InvalidActionError (malformed) or IllegalActionError (forbidden now);
        ``self`` never changes.  (``seat`` and ``action`` typed loosely: compiled, a
        typed parameter would refuse or convert a wrong type before the checks here.)
        """
        index = self.check_seat(seat)
        handler = transitions.HANDLERS.get(type(action))
        if handler is None:
            raise InvalidActionError(f"not an action: {action!r}")
        return handler(self, index, action)

    def abandon(self) -> Result:
        """The game over without a winner, where it stands: the ending for a game
        nobody plays any more.  No seat's action and no clock: who decides that a
        game is abandoned, and when, is the caller's (the service's idle time,
        docs/API.md).  One more version (``action_count``), whose one event is
        ``game_abandoned``; IllegalActionError GAME_OVER when the game is over."""
        return transitions.abandon(self)

    def check(self, seat: object, action: Action | object) -> None:
        """Dry run: raises exactly as :meth:`apply_action` would, returns nothing."""
        self.apply_action(seat, action)

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
        except IllegalActionError as illegal:
            raise InvalidActionError(f"malformed game state: {illegal.message}") from illegal
        # (a name of its own: compiled, one name holds one type, the first clause's)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise InvalidActionError(f"malformed game state: {exc!r}") from exc

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), field_values(self))  # copy and pickle (engine/cards.py)


#: the stored form of a state (to_dict/from_dict), checked against the field list now
_CODEC = codec.StateCodec(GameState)
