"""The game state machine: an immutable :class:`GameState` and pure transitions.

``GameState.apply_action(seat, action)`` validates an action and returns a *new*
state plus the events it caused; it never mutates ``self``.  A malformed action
raises :class:`~engine.errors.InvalidActionError`, an action the rules forbid now
raises :class:`~engine.errors.IllegalActionError` with a :class:`~engine.errors.Reason`;
either way nothing changed.  Every rule is driven by the fields of the
:class:`~engine.rulesets.RuleSet`, never by its name, so custom rule sets work.
The module is pure: no I/O, no clock, no ``random``; the only randomness is the
seeded shuffle of :mod:`engine.shuffle`, so a game is fully determined by its
rule set, seats, seed (and optional arranged deck orders) and the accepted actions.

Phases
------
``DRAW``: the current seat must draw.  ``PLAY``: it has drawn and may lay its
contract, lay off, lay extra melds, swap jokers, and finally discard (or end its
turn in a round without discards).  ``CLAIM``: a May-I window after a discard;
``current`` is then already the seat whose turn comes next, so the discarder is
``(current - 1) % seats``.  ``GAME_OVER``: after the last round.

Decisions (where RULES.md is silent; each is pinned by tests/unit/test_game_rules.py)
-----------------------------------------------------------------------------------
Dealing
  * A round's deck is ``shuffled(full deck in id order, round_seed(seed, round), epoch=0)``
    or, when ``stock_orders[round]`` was given to ``new_game``, exactly that order of
    card ids (top first).  Cards are dealt one at a time, round-robin, starting with
    the round's first seat ``(round - 1) % seats``: deck card ``j`` (for
    ``j < seats * deal``) goes to seat ``(first + j) % seats``.  With an upcard, the
    next card starts the discard pile; the rest is the stock, ``stock[0]`` on top.
    :func:`arrange_deck` builds such an order from the hands one wants to deal.
  * Hands are kept sorted by card id.
  * Later reshuffles of a round use epochs 1, 2, … of the seeded shuffle (even
    when the deal was arranged); the input is the discard pile without its top card,
    bottom first.  The epoch only advances when a reshuffle actually happens.
  * The round that ends is followed at once (in the same action) by the deal of the
    next one; after the last round the phase is ``GAME_OVER`` and the final hands,
    table and piles stay as they were.

Drawing and the stock
  * ``Draw(STOCK)`` from an empty stock: where the rule set settles by exhaustions
    and the top of the discard pile may be drawn, it is refused (``STOCK_EMPTY``):
    only ``Draw(DISCARD)`` is legal.  Otherwise (``contract``; custom rule sets that
    cannot draw from the pile) the discard pile except its top is reshuffled into a
    new stock and the top new card is drawn; if that leaves nothing to draw, the round
    ends at once with nobody out (reason ``"dry"``), whatever the stalemate rule.
  * Exhaustions (stalemate ``EXHAUSTIONS``): only a draw from the stock that empties
    it counts.  Below ``max_exhaustions`` the pile except its top is reshuffled at
    once (event ``stock_reshuffled``; ``stock_not_reshuffled`` when only the top card
    is there: the stock stays empty and does not count again).  The
    ``max_exhaustions``-th exhaustion ends the round when the current turn completes
    (or at once if someone goes out first).
  * ``turn_cap`` (when not None) counts completed turns of the round: a turn completes
    with its discard or, in a round without discards, with ``EndTurn``.  When both
    stalemates strike at the same turn end, the reason is ``"exhaustions"``.

Claims (May I?, rule sets with ``may_i`` in rounds with discards)
  * A window opens after every discard that does not empty the discarder's hand (and
    does not end the round by a stalemate).  Every other seat answers ``Claim`` or
    ``PassClaim`` in any order; it closes when all have answered (the service answers
    ``PassClaim`` for seats whose deadline passes).  The winner is the first claimant
    in turn order after the discarder, whatever the order of the answers.  The winner
    takes the discard (removed from the pile) plus ``claim_penalty_cards`` from the top
    of the stock (as many as there are, should the stock hold fewer: only possible with
    custom penalties above 1; penalty cards never count as an exhaustion).  Then the
    seat after the discarder starts its turn (phase ``DRAW``).
  * ``Claim`` is refused with ``CLAIM_STOCK_EMPTY`` while the stock is empty;
    ``PassClaim`` is always allowed.  Answers are public as they come.

Laying down and melding
  * ``LayContract()`` lets the solver choose (:func:`engine.solver.best_selection`);
    an explicit selection (only where ``explicit_contract``) must name exactly one meld
    per contract requirement, matched by kind: with ``exact_contract_sizes`` the sizes
    must be equal, otherwise each meld must reach its requirement's size (the largest
    melds meet the largest requirements).  The melds go to the table in the order
    given (automatic: the solver's order).  A card named twice, or a set given a start
    rank, is malformed (``InvalidActionError``).
  * A contract, extra meld or lay-off that empties the hand goes out (this includes a
    ``contract`` contract that uses every card).
  * Where the turn's card was taken from the discard pile and the round has discards,
    a contract, extra meld or lay-off that would leave exactly that card in hand is
    refused (``LAST_CARD_BLOCKED``); discarding it is refused (``BLOCKED_DISCARD``),
    its twin is fine.
  * Extra melds (``extra_melds``) accept a run's start rank only where the rule set
    lets players name positions (``explicit_contract``); elsewhere a start other than
    the automatic one is refused with ``EXPLICIT_SELECTION_NOT_ALLOWED``.
  * Lay-offs: naming an end for a set is refused (``LAYOFF_DOES_NOT_FIT``); a natural's
    end is optional and, when given, must be the end its rank fits.  A natural whose
    place a joker holds is refused with ``POSITION_HELD_BY_JOKER`` (in ``contract``
    that is a ``SwapJoker``).  Joker lay-offs are checked first
    (``LAYOFF_JOKER_NOT_ALLOWED`` even before opening), then ``NOT_OPEN``.
  * Joker swaps (``joker_swap``) are allowed on any turn after drawing, open or not,
    the lay-down turn included.

Secrecy and events
  * Events (engine/events.py) carry public payloads and per-seat secrets (a dealt hand,
    a card drawn from the stock, claim penalty cards).  Hands are never revealed, not
    even at the end of a round (only each seat's penalty points are).  ``round_ended``
    reveals that round's seed (so its commitment, published in ``round_started``, can be
    checked); ``game_ended`` reveals the game seed.  Views show the game seed only once
    the game is over.
  * ``new_game_with_events`` also returns the first deal's events (``new_game`` drops
    them).  ``legal_actions``, ``apply_action`` and the views raise InvalidActionError
    for a seat that does not exist (``legal_actions`` returns ``[]`` for a real seat that
    may not act).

Order of checks
  Malformed input first (InvalidActionError: card ids outside the deck, negative meld
  indices, malformed melds), then: game over, claim window open, not your turn, draw
  first / already drew, then the rule checks of the action in the order written in
  its handler (for lay-offs: joker allowed, open, not the lay-down turn, meld exists,
  card held, fits; then the last-card rule).

legal_actions(seat)
  Lists every legal action except that, where many card choices are equivalent, it
  lists canonical forms only:
  * ``LayContract()`` (automatic) whenever the automatic lay-down is legal; explicit
    selections are legal where allowed but never enumerated.
  * Extra melds (``ExtraMeld`` with ``start=None``): for each rank, the set of every
    natural of that rank held (with ``set_distinct_suits``: the lowest-id card of each
    suit), cut to ``set_max`` cards by id order, when it is big enough; and, if the hand
    holds a joker and melds may hold one, the same naturals plus the lowest-id joker when
    that makes a legal set.  For each suit and each maximal stretch of consecutive
    ranks held (the lowest-id card per rank; an ace also counts above the king where
    ``ace_high``): the stretch when it is long enough (a 14-long A..A stretch gives its
    first and its last 13); with a joker, the stretch plus the joker (placed by the
    automatic placement) and two stretches one rank apart joined by the joker.
  * Lay-offs: every (card, meld) a card fits, each physical card listed; ``end=None``
    for naturals (``LOW`` and ``HIGH`` both listed when an ace fits both ends of a run)
    and sets, and each legal end by name for a joker on a run.
  * Swaps: every legal (card, meld); discards: every legal card; draws: every legal
    source; claims: ``Claim`` (when the stock is not empty) and ``PassClaim``.
  Twins are not deduplicated: each physical card gives its own action.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from itertools import pairwise
from operator import attrgetter
from typing import Any

from engine.actions import (
    Action,
    Claim,
    Discard,
    Draw,
    DrawSource,
    EndTurn,
    ExtraMeld,
    LayContract,
    LayOff,
    MeldSpec,
    PassClaim,
    SwapJoker,
)
from engine.cards import MAX_DECKS, MAX_JOKERS, Card, card, cards_from_codes, full_deck
from engine.errors import IllegalActionError, InvalidActionError, Reason
from engine.events import Event, EventType, card_json, cards_json, meld_json
from engine.melds import End, Meld, build_meld, build_run, build_set, lay_off, swap_joker
from engine.rulesets import Contract, MeldKind, RuleSet, Stalemate, ruleset
from engine.shuffle import commitment, round_seed, shuffled
from engine.solver import Selection, best_selection, can_lay

__all__ = ["GameState", "Phase", "arrange_deck"]


class Phase(StrEnum):
    DRAW = "draw"  # current seat must draw
    PLAY = "play"  # current seat has drawn: melds, lay-offs, swaps, discard / end turn
    CLAIM = "claim"  # May-I window after a discard: seats answer claim/pass
    GAME_OVER = "game_over"


Result = tuple["GameState", list[Event]]

_BY_ID = attrgetter("id")
_DRAW_STOCK = Draw(DrawSource.STOCK)
_DRAW_DISCARD = Draw(DrawSource.DISCARD)
_LAY_AUTO = LayContract()
_CLAIM = Claim()
_PASS = PassClaim()
_END_TURN = EndTurn()
_NO_SECRET: dict[int, Mapping[str, Any]] = {}


def _illegal(reason: Reason, message: str) -> IllegalActionError:
    return IllegalActionError(reason, message)


def _add(hand: tuple[Card, ...], *cards: Card) -> tuple[Card, ...]:
    return tuple(sorted((*hand, *cards), key=_BY_ID))


def _without(hand: tuple[Card, ...], c: Card) -> tuple[Card, ...]:
    return tuple(x for x in hand if x is not c)


def _meld_index(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise InvalidActionError(f"a meld is named by its non-negative table index, not {value!r}")
    return value


def _fit_ends(meld: Meld, c: Card, rules: RuleSet) -> tuple[End | None, ...]:
    """The ``end`` values with which ``c`` may be laid off on ``meld`` (fast path of
    :func:`engine.melds.lay_off`; empty when it does not fit)."""
    cards = meld.cards
    size = len(cards)
    if c.rank == 0:  # joker
        if not rules.layoff_jokers:
            return ()
        most = rules.max_jokers_per_meld
        if most is not None and sum(1 for x in cards if x.rank == 0) >= most:
            return ()
        if meld.kind is MeldKind.SET:
            if rules.set_max is not None and size >= rules.set_max:
                return ()
            return (None,)
        if size >= 13:
            return ()
        if meld.rank > 1:
            if meld.rank + size - 1 < rules.highest_run_rank:
                return (End.LOW, End.HIGH)
            return (End.LOW,)
        if meld.rank + size - 1 < rules.highest_run_rank:
            return (End.HIGH,)
        return ()
    if meld.kind is MeldKind.SET:
        if c.rank != meld.rank:
            return ()
        if rules.set_max is not None and size >= rules.set_max:
            return ()
        if rules.set_distinct_suits:
            suit = c.suit
            for x in cards:
                if x.suit == suit:
                    return ()
        return (None,)
    if c.suit != meld.suit or size >= 13:
        return ()
    low = meld.rank > 1 and c.rank == meld.rank - 1
    above = meld.rank + size
    high = above <= rules.highest_run_rank and (c.rank == above or (c.rank == 1 and above == 14))
    if low and high:
        return (End.LOW, End.HIGH)
    if low or high:
        return (None,)
    return ()


def _split_stretches(positions: list[int]) -> list[list[int]]:
    stretches: list[list[int]] = []
    for p in positions:
        if stretches and stretches[-1][-1] == p - 1:
            stretches[-1].append(p)
        else:
            stretches.append([p])
    return stretches


def _canonical_extra_melds(
    hand: Sequence[Card], rules: RuleSet
) -> list[tuple[MeldKind, tuple[Card, ...]]]:
    """The canonical extra melds of a hand (see the module docstring)."""
    naturals = [c for c in hand if c.rank != 0]
    joker: Card | None = None
    if rules.max_jokers_per_meld is None or rules.max_jokers_per_meld >= 1:
        joker = next((c for c in hand if c.rank == 0), None)
    min_nat = rules.min_naturals_per_meld
    out: list[tuple[MeldKind, tuple[Card, ...]]] = []
    by_rank: dict[int, list[Card]] = {}
    by_suit: dict[int, dict[int, Card]] = {}
    ace_high = rules.highest_run_rank == 14
    for c in naturals:
        by_rank.setdefault(c.rank, []).append(c)
        ranks = by_suit.setdefault(c.suit, {})
        if c.rank not in ranks:
            ranks[c.rank] = c
            if c.rank == 1 and ace_high:
                ranks[14] = c
    set_max = rules.set_max
    for rank in sorted(by_rank):
        group = by_rank[rank]
        if rules.set_distinct_suits:
            suits: set[int] = set()
            picked: list[Card] = []
            for c in group:
                if c.suit not in suits:
                    suits.add(c.suit)
                    picked.append(c)
            group = picked
        if set_max is not None:
            group = group[:set_max]
        n = len(group)
        if n < min_nat:
            continue
        if n >= rules.set_min:
            out.append((MeldKind.SET, tuple(group)))
        if joker is not None and n + 1 >= rules.set_min and (set_max is None or n + 1 <= set_max):
            out.append((MeldKind.SET, (*group, joker)))
    run_min = rules.run_min
    top = rules.highest_run_rank
    for suit in sorted(by_suit):
        ranks = by_suit[suit]
        stretches = _split_stretches(sorted(ranks))
        for s in stretches:
            size = len(s)
            if size < min_nat:
                continue
            if size >= run_min:
                if size <= 13:
                    out.append((MeldKind.RUN, tuple(ranks[p] for p in s)))
                else:
                    out.append((MeldKind.RUN, tuple(ranks[p] for p in s[:13])))
                    out.append((MeldKind.RUN, tuple(ranks[p] for p in s[-13:])))
            if joker is not None and run_min <= size + 1 <= 13 and (s[0] > 1 or s[-1] < top):
                out.append((MeldKind.RUN, (*(ranks[p] for p in s), joker)))
        if joker is not None:
            for a, b in pairwise(stretches):
                total = len(a) + len(b) + 1
                if b[0] - a[-1] == 2 and run_min <= total <= 13:
                    joined = (*(ranks[p] for p in a), joker, *(ranks[p] for p in b))
                    out.append((MeldKind.RUN, joined))
    return out


@dataclass(frozen=True, slots=True)
class GameState:
    """One moment of a game.  Immutable: transitions return new states."""

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
        orders = _check_stock_orders(rules, stock_orders or {})
        return _deal(rules, seats, bytes(seed), 1, (0,) * seats, orders, 0)

    # ------------------------------------------------------------------ queries
    @property
    def contract(self) -> Contract:
        return self.rules.contracts[self.round_number - 1]

    @property
    def claim_discarder(self) -> int | None:
        """In a claim window, the seat that discarded; None otherwise."""
        if self.phase is not Phase.CLAIM:
            return None
        return (self.current - 1) % self.seats

    @property
    def to_act(self) -> tuple[int, ...]:
        """Seats that may act now (in a claim window, those yet to answer, by priority)."""
        phase = self.phase
        if phase is Phase.GAME_OVER:
            return ()
        if phase is Phase.CLAIM:
            n = self.seats
            discarder = (self.current - 1) % n
            answers = self.claim_answers
            return tuple(
                s for s in ((discarder + k) % n for k in range(1, n)) if answers[s] is None
            )
        return (self.current,)

    def is_terminal(self) -> bool:
        return self.phase is Phase.GAME_OVER

    def returns(self) -> tuple[float, ...]:
        """Minus the cumulative score of each seat (higher is better)."""
        return tuple(float(-s) for s in self.scores)

    def winners(self) -> tuple[int, ...]:
        """The seats with the lowest cumulative score (all of them on a tie)."""
        best = min(self.scores)
        return tuple(i for i, s in enumerate(self.scores) if s == best)

    def all_cards(self) -> list[Card]:
        cards = [c for hand in self.hands for c in hand]
        cards.extend(self.stock)
        cards.extend(self.discards)
        for m in self.table:
            cards.extend(m.cards)
        return cards

    # ------------------------------------------------------------------ legal actions
    def legal_actions(self, seat: int) -> list[Action]:
        """Every legal action of ``seat`` now (canonical forms, see the module docstring)."""
        self._check_seat(seat)
        phase = self.phase
        if phase is Phase.CLAIM:
            if seat == (self.current - 1) % self.seats or self.claim_answers[seat] is not None:
                return []
            return [_CLAIM, _PASS] if self.stock else [_PASS]
        if phase is Phase.GAME_OVER or seat != self.current:
            return []
        if phase is Phase.DRAW:
            out: list[Action] = []
            if self._stock_draw_allowed():
                out.append(_DRAW_STOCK)
            if self.rules.draw_from_discard and self.discards:
                out.append(_DRAW_DISCARD)
            return out
        return self._play_actions(seat)

    def _stock_draw_allowed(self) -> bool:
        if self.stock:
            return True
        rules = self.rules
        return not (
            rules.stalemate is Stalemate.EXHAUSTIONS and rules.draw_from_discard and self.discards
        )

    def _play_actions(self, seat: int) -> list[Action]:
        rules = self.rules
        hand = self.hands[seat]
        contract = self.contract
        blocked = self.taken_from_discard if contract.discards else None
        # the card taken from the pile, while it is still in hand (it must not be left alone)
        lonely = blocked if blocked is not None and any(c.id == blocked for c in hand) else None
        out: list[Action] = []
        table = self.table
        if not self.opened[seat]:
            if self._auto_contract_legal(seat):
                out.append(_LAY_AUTO)
        else:
            if table and (rules.layoff_on_opening_turn or not self.laid_this_turn):
                guard = lonely is not None and len(hand) == 2
                for c in hand:
                    if guard and c.id != lonely:
                        continue  # the card taken from the pile would be left alone
                    cid = c.id
                    for i, m in enumerate(table):
                        for end in _fit_ends(m, c, rules):
                            out.append(LayOff(cid, i, end))
            if rules.extra_melds:
                size = len(hand)
                for kind, cards in _canonical_extra_melds(hand, rules):
                    if (
                        lonely is not None
                        and size - len(cards) == 1
                        and all(c.id != lonely for c in cards)
                    ):
                        continue
                    out.append(ExtraMeld(MeldSpec(kind, tuple(c.id for c in cards))))
        if rules.joker_swap and table:
            for i, m in enumerate(table):
                if m.kind is not MeldKind.RUN:
                    continue
                wanted: list[int] = []
                for k, held in enumerate(m.cards):
                    if held.rank == 0:
                        position = m.rank + k
                        wanted.append(1 if position == 14 else position)
                if not wanted:
                    continue
                for c in hand:
                    if c.suit == m.suit and c.rank in wanted:
                        out.append(SwapJoker(c.id, i))
        if contract.discards:
            discard = _DISCARDS
            out.extend(discard[c.id] for c in hand if c.id != blocked)
        else:
            out.append(_END_TURN)
        return out

    def _memo_dict(self) -> dict[Any, Any]:
        memo = self._memo
        if memo is None:
            memo = {}
            object.__setattr__(self, "_memo", memo)
        return memo

    def _selection(self, seat: int) -> Selection | None:
        memo = self._memo_dict()
        key = ("sel", seat)
        if key not in memo:
            memo[key] = best_selection(self.hands[seat], self.rules, self.round_number)
        result: Selection | None = memo[key]
        return result

    def _can_lay(self, seat: int) -> bool:
        memo = self._memo_dict()
        key = ("sel", seat)
        if key in memo:
            return memo[key] is not None
        key = ("can", seat)
        if key not in memo:
            memo[key] = can_lay(self.hands[seat], self.rules, self.round_number)
        return bool(memo[key])

    def _auto_contract_legal(self, seat: int) -> bool:
        if not self._can_lay(seat):
            return False
        blocked = self.taken_from_discard
        if blocked is None or not self.contract.discards:
            return True
        selection = self._selection(seat)
        if selection is None:
            return False
        used = {c.id for m in selection.melds for c in m.cards}
        left = [c for c in self.hands[seat] if c.id not in used]
        return not (len(left) == 1 and left[0].id == blocked)

    # ------------------------------------------------------------------ applying actions
    def apply_action(self, seat: int, action: Action) -> Result:
        """The new state and the events after ``seat`` takes ``action``.

        Raises InvalidActionError (malformed) or IllegalActionError (forbidden now);
        ``self`` never changes.
        """
        self._check_seat(seat)
        handler = _HANDLERS.get(type(action))
        if handler is None:
            raise InvalidActionError(f"not an action: {action!r}")
        return handler(self, seat, action)

    def check(self, seat: int, action: Action) -> None:
        """Dry run: raises exactly as :meth:`apply_action` would, returns nothing."""
        self.apply_action(seat, action)

    def _check_seat(self, seat: int) -> None:
        if type(seat) is not int or not 0 <= seat < self.seats:
            raise InvalidActionError(f"no seat {seat!r} in a game of {self.seats}")

    def _card(self, card_id: Any) -> Card:
        if type(card_id) is not int or not 0 <= card_id < self.rules.deck_size:
            raise InvalidActionError(f"no card has id {card_id!r} in this game")
        return card(card_id, self.rules.decks)

    def _require_turn(self, seat: int) -> None:
        phase = self.phase
        if phase is Phase.GAME_OVER:
            raise _illegal(Reason.GAME_OVER, "the game is over")
        if phase is Phase.CLAIM:
            raise _illegal(Reason.CLAIM_WINDOW_OPEN, "a claim window is open")
        if seat != self.current:
            raise _illegal(Reason.NOT_YOUR_TURN, f"it is seat {self.current}'s turn")

    def _require_play(self, seat: int) -> None:
        self._require_turn(seat)
        if self.phase is Phase.DRAW:
            raise _illegal(Reason.MUST_DRAW_FIRST, "draw a card first")

    def _require_in_hand(self, seat: int, c: Card) -> None:
        for x in self.hands[seat]:
            if x is c:
                return
        raise _illegal(Reason.CARD_NOT_IN_HAND, f"{c.code} (#{c.id}) is not in your hand")

    def _check_last_card(self, hand: tuple[Card, ...]) -> None:
        blocked = self.taken_from_discard
        if (
            blocked is not None
            and len(hand) == 1
            and hand[0].id == blocked
            and self.contract.discards
        ):
            raise _illegal(
                Reason.LAST_CARD_BLOCKED,
                "that would leave only the card taken from the discard pile,"
                " which cannot be discarded",
            )

    def _spec_cards(self, spec: Any, seen: set[int]) -> list[Card]:
        """Shape validation of a MeldSpec (InvalidActionError only)."""
        if not isinstance(spec, MeldSpec) or not isinstance(spec.kind, MeldKind):
            raise InvalidActionError(f"not a meld: {spec!r}")
        if not isinstance(spec.cards, tuple | list) or not spec.cards:
            raise InvalidActionError("a meld needs cards")
        start = spec.start
        if start is not None:
            if spec.kind is MeldKind.SET:
                raise InvalidActionError("a set has no start rank")
            if type(start) is not int or not 1 <= start <= 14:
                raise InvalidActionError("a run's start must be a rank 1..14")
        cards: list[Card] = []
        for cid in spec.cards:
            c = self._card(cid)
            if c.id in seen:
                raise InvalidActionError(f"card #{c.id} is named twice")
            seen.add(c.id)
            cards.append(c)
        return cards

    # --- DRAW
    def _do_draw(self, seat: int, action: Draw) -> Result:
        source = action.source
        if not isinstance(source, DrawSource):
            raise InvalidActionError(f"unknown draw source {source!r}")
        self._require_turn(seat)
        if self.phase is not Phase.DRAW:
            raise _illegal(Reason.ALREADY_DREW, "you already drew this turn")
        rules = self.rules
        hands = list(self.hands)
        events: list[Event] = []
        if source is DrawSource.DISCARD:
            if not rules.draw_from_discard:
                raise _illegal(Reason.DISCARD_DRAW_NOT_ALLOWED, "draw from the stock only")
            if not self.discards:
                raise _illegal(Reason.DISCARD_PILE_EMPTY, "the discard pile is empty")
            c = self.discards[-1]
            discards = self.discards[:-1]
            hands[seat] = _add(hands[seat], c)
            events.append(
                Event(
                    EventType.DREW,
                    seat,
                    {
                        "source": source.value,
                        "card": card_json(c),
                        "stock_size": len(self.stock),
                        "discard_size": len(discards),
                    },
                )
            )
            nxt = _evolve(
                self,
                phase=Phase.PLAY,
                hands=tuple(hands),
                discards=discards,
                taken_from_discard=c.id,
                laid_this_turn=False,
                action_count=self.action_count + 1,
            )
            return nxt, events
        stock, discards, epoch = self.stock, self.discards, self.epoch
        if not stock:
            if not self._stock_draw_allowed():
                raise _illegal(Reason.STOCK_EMPTY, "the stock is empty: draw from the discard pile")
            if len(discards) < 2:
                events.append(Event(EventType.STOCK_NOT_RESHUFFLED, None, {"cards": 0}))
                base = _evolve(self, action_count=self.action_count + 1)
                return base._end_round(events, "dry", None)
            stock, discards, epoch = self._reshuffle(discards, epoch, events)
        c = stock[0]
        stock = stock[1:]
        hands[seat] = _add(hands[seat], c)
        events.append(
            Event(
                EventType.DREW,
                seat,
                {"source": source.value, "stock_size": len(stock), "discard_size": len(discards)},
                {seat: {"card": card_json(c)}},
            )
        )
        exhaustions = self.exhaustions
        if not stock and rules.stalemate is Stalemate.EXHAUSTIONS:
            exhaustions += 1
            settles = exhaustions >= rules.max_exhaustions
            events.append(
                Event(EventType.STOCK_EXHAUSTED, None, {"count": exhaustions, "settles": settles})
            )
            if not settles:
                if len(discards) >= 2:
                    stock, discards, epoch = self._reshuffle(discards, epoch, events)
                else:
                    events.append(Event(EventType.STOCK_NOT_RESHUFFLED, None, {"cards": 0}))
        nxt = _evolve(
            self,
            phase=Phase.PLAY,
            hands=tuple(hands),
            stock=stock,
            discards=discards,
            epoch=epoch,
            exhaustions=exhaustions,
            taken_from_discard=None,
            laid_this_turn=False,
            action_count=self.action_count + 1,
        )
        return nxt, events

    def _reshuffle(
        self, discards: tuple[Card, ...], epoch: int, events: list[Event]
    ) -> tuple[tuple[Card, ...], tuple[Card, ...], int]:
        epoch += 1
        stock = tuple(shuffled(discards[:-1], round_seed(self.seed, self.round_number), epoch))
        events.append(
            Event(EventType.STOCK_RESHUFFLED, None, {"cards": len(stock), "epoch": epoch})
        )
        return stock, discards[-1:], epoch

    # --- LAY CONTRACT
    def _do_lay_contract(self, seat: int, action: LayContract) -> Result:
        specs = action.melds
        cards_of: list[list[Card]] = []
        if specs is not None:
            if not isinstance(specs, tuple | list) or not specs:
                raise InvalidActionError("an explicit contract needs a non-empty list of melds")
            seen: set[int] = set()
            cards_of = [self._spec_cards(spec, seen) for spec in specs]
        self._require_play(seat)
        if self.opened[seat]:
            raise _illegal(Reason.ALREADY_OPEN, "you already laid your contract this round")
        rules = self.rules
        if specs is None:
            selection = self._selection(seat)
            if selection is None:
                raise _illegal(
                    Reason.CONTRACT_NOT_AVAILABLE, "your hand cannot lay this round's contract"
                )
            melds = tuple(m.with_owner(seat) for m in selection.melds)
        else:
            if not rules.explicit_contract:
                raise _illegal(
                    Reason.EXPLICIT_SELECTION_NOT_ALLOWED,
                    "this rule set only lays the contract automatically",
                )
            melds = self._explicit_contract(seat, specs, cards_of)
        used = {c.id for m in melds for c in m.cards}
        hand = tuple(c for c in self.hands[seat] if c.id not in used)
        self._check_last_card(hand)
        start = len(self.table)
        hands = list(self.hands)
        hands[seat] = hand
        opened = list(self.opened)
        opened[seat] = True
        base = _evolve(
            self,
            hands=tuple(hands),
            table=self.table + melds,
            opened=tuple(opened),
            laid_this_turn=True,
            action_count=self.action_count + 1,
        )
        events = [
            Event(
                EventType.LAID_CONTRACT,
                seat,
                {
                    "automatic": specs is None,
                    "melds": [meld_json(m, start + i) for i, m in enumerate(melds)],
                },
            )
        ]
        if not hand:
            return base._end_round(events, "went_out", seat)
        return base, events

    def _explicit_contract(
        self, seat: int, specs: Sequence[MeldSpec], cards_of: list[list[Card]]
    ) -> tuple[Meld, ...]:
        for cards in cards_of:
            for c in cards:
                self._require_in_hand(seat, c)
        rules = self.rules
        need: dict[MeldKind, list[int]] = {MeldKind.SET: [], MeldKind.RUN: []}
        for req in self.contract.melds:
            need[req.kind].append(req.size)
        have: dict[MeldKind, list[int]] = {MeldKind.SET: [], MeldKind.RUN: []}
        for spec, cards in zip(specs, cards_of, strict=True):
            have[spec.kind].append(len(cards))
        described = self.contract.describe()
        for kind in (MeldKind.SET, MeldKind.RUN):
            if len(need[kind]) != len(have[kind]):
                raise _illegal(
                    Reason.SELECTION_DOES_NOT_MATCH_CONTRACT,
                    f"the contract is {described}: it needs {len(need[kind])} {kind.value}(s)",
                )
        melds = tuple(
            build_meld(spec.kind, cards, rules, None, spec.start).with_owner(seat)
            for spec, cards in zip(specs, cards_of, strict=True)
        )
        for kind in (MeldKind.SET, MeldKind.RUN):
            needed = sorted(need[kind])
            given = sorted(have[kind])
            ok = (
                needed == given
                if rules.exact_contract_sizes
                else all(g >= n for g, n in zip(given, needed, strict=True))
            )
            if not ok:
                raise _illegal(
                    Reason.SELECTION_DOES_NOT_MATCH_CONTRACT,
                    f"the contract is {described}: {kind.value} sizes {given} do not fit",
                )
        return melds

    # --- EXTRA MELD
    def _do_extra_meld(self, seat: int, action: ExtraMeld) -> Result:
        spec = action.meld
        cards = self._spec_cards(spec, set())
        self._require_play(seat)
        rules = self.rules
        if not rules.extra_melds:
            raise _illegal(Reason.EXTRA_MELD_NOT_ALLOWED, "this rule set has no extra melds")
        if not self.opened[seat]:
            raise _illegal(Reason.NOT_OPEN, "lay your contract before laying extra melds")
        for c in cards:
            self._require_in_hand(seat, c)
        start = spec.start
        if start is not None and not rules.explicit_contract:
            automatic = build_run(cards, rules)
            if automatic.rank != start:
                raise _illegal(
                    Reason.EXPLICIT_SELECTION_NOT_ALLOWED,
                    "this rule set places jokers itself (lowest start)",
                )
        meld = build_meld(spec.kind, cards, rules, None, start).with_owner(seat)
        used = {c.id for c in cards}
        hand = tuple(c for c in self.hands[seat] if c.id not in used)
        self._check_last_card(hand)
        hands = list(self.hands)
        hands[seat] = hand
        base = _evolve(
            self, hands=tuple(hands), table=(*self.table, meld), action_count=self.action_count + 1
        )
        events = [Event(EventType.EXTRA_MELD, seat, {"meld": meld_json(meld, len(self.table))})]
        if not hand:
            return base._end_round(events, "went_out", seat)
        return base, events

    # --- LAY OFF
    def _do_lay_off(self, seat: int, action: LayOff) -> Result:
        c = self._card(action.card)
        index = _meld_index(action.meld)
        end = action.end
        if end is not None and not isinstance(end, End):
            raise InvalidActionError(f"unknown end {end!r}")
        self._require_play(seat)
        rules = self.rules
        if c.is_joker and not rules.layoff_jokers:
            raise _illegal(Reason.LAYOFF_JOKER_NOT_ALLOWED, "jokers cannot be laid off")
        if not self.opened[seat]:
            raise _illegal(Reason.NOT_OPEN, "lay your contract before laying off")
        if self.laid_this_turn and not rules.layoff_on_opening_turn:
            raise _illegal(
                Reason.LAYOFF_ON_OPENING_TURN, "no lay-offs on the turn the contract was laid"
            )
        if index >= len(self.table):
            raise _illegal(Reason.NO_SUCH_MELD, f"there is no meld {index} on the table")
        self._require_in_hand(seat, c)
        meld = self.table[index]
        if meld.kind is MeldKind.SET and end is not None:
            raise _illegal(Reason.LAYOFF_DOES_NOT_FIT, "a set has no ends")
        grown = lay_off(meld, c, rules, end)
        hand = _without(self.hands[seat], c)
        self._check_last_card(hand)
        hands = list(self.hands)
        hands[seat] = hand
        table = list(self.table)
        table[index] = grown
        base = _evolve(
            self, hands=tuple(hands), table=tuple(table), action_count=self.action_count + 1
        )
        if meld.kind is MeldKind.SET:
            side: str | None = None
        else:
            side = (End.LOW if grown.rank < meld.rank else End.HIGH).value
        events = [
            Event(
                EventType.LAID_OFF,
                seat,
                {"card": card_json(c), "meld": meld_json(grown, index), "end": side},
            )
        ]
        if not hand:
            return base._end_round(events, "went_out", seat)
        return base, events

    # --- SWAP JOKER
    def _do_swap(self, seat: int, action: SwapJoker) -> Result:
        c = self._card(action.card)
        index = _meld_index(action.meld)
        self._require_play(seat)
        rules = self.rules
        if not rules.joker_swap:
            raise _illegal(Reason.SWAP_NOT_ALLOWED, "this rule set has no joker swaps")
        if index >= len(self.table):
            raise _illegal(Reason.NO_SUCH_MELD, f"there is no meld {index} on the table")
        self._require_in_hand(seat, c)
        meld, joker = swap_joker(self.table[index], c, rules)
        hands = list(self.hands)
        hands[seat] = _add(_without(self.hands[seat], c), joker)
        table = list(self.table)
        table[index] = meld
        nxt = _evolve(
            self, hands=tuple(hands), table=tuple(table), action_count=self.action_count + 1
        )
        events = [
            Event(
                EventType.JOKER_SWAPPED,
                seat,
                {"card": card_json(c), "joker": card_json(joker), "meld": meld_json(meld, index)},
            )
        ]
        return nxt, events

    # --- DISCARD / END TURN
    def _do_discard(self, seat: int, action: Discard) -> Result:
        c = self._card(action.card)
        self._require_play(seat)
        if not self.contract.discards:
            raise _illegal(
                Reason.NO_DISCARD_THIS_ROUND, "there are no discards this round: end your turn"
            )
        self._require_in_hand(seat, c)
        if c.id == self.taken_from_discard:
            raise _illegal(
                Reason.BLOCKED_DISCARD, "you cannot discard the card you took from the discard pile"
            )
        hand = _without(self.hands[seat], c)
        hands = list(self.hands)
        hands[seat] = hand
        discards = (*self.discards, c)
        events = [
            Event(EventType.DISCARDED, seat, {"card": card_json(c), "discard_size": len(discards)})
        ]
        if not hand:
            base = _evolve(
                self, hands=tuple(hands), discards=discards, action_count=self.action_count + 1
            )
            return base._end_round(events, "went_out", seat)
        return self._complete_turn(
            seat, events, hands=tuple(hands), discards=discards, discarded=True
        )

    def _do_end_turn(self, seat: int, action: EndTurn) -> Result:
        self._require_play(seat)
        if self.contract.discards:
            raise _illegal(Reason.END_TURN_NOT_ALLOWED, "end your turn with a discard")
        return self._complete_turn(
            seat, [], hands=self.hands, discards=self.discards, discarded=False
        )

    def _complete_turn(
        self,
        seat: int,
        events: list[Event],
        *,
        hands: tuple[tuple[Card, ...], ...],
        discards: tuple[Card, ...],
        discarded: bool,
    ) -> Result:
        rules = self.rules
        turns = self.turns_completed + 1
        events.append(Event(EventType.TURN_ENDED, seat, {"turns_completed": turns}))
        reason: str | None = None
        if rules.stalemate is Stalemate.EXHAUSTIONS and self.exhaustions >= rules.max_exhaustions:
            reason = "exhaustions"
        elif rules.turn_cap is not None and turns >= rules.turn_cap:
            reason = "turn_cap"
        if reason is not None:
            base = _evolve(
                self,
                hands=hands,
                discards=discards,
                turns_completed=turns,
                action_count=self.action_count + 1,
            )
            return base._end_round(events, reason, None)
        n = self.seats
        nxt_seat = (seat + 1) % n
        if rules.may_i and discarded:
            events.append(
                Event(
                    EventType.CLAIM_WINDOW_OPENED,
                    seat,
                    {
                        "card": card_json(discards[-1]),
                        "seats": [(seat + k) % n for k in range(1, n)],
                    },
                )
            )
            nxt = _evolve(
                self,
                phase=Phase.CLAIM,
                current=nxt_seat,
                hands=hands,
                discards=discards,
                claim_answers=(None,) * n,
                taken_from_discard=None,
                laid_this_turn=False,
                turns_completed=turns,
                action_count=self.action_count + 1,
            )
            return nxt, events
        events.append(Event(EventType.TURN_STARTED, nxt_seat, {"round": self.round_number}))
        nxt = _evolve(
            self,
            phase=Phase.DRAW,
            current=nxt_seat,
            hands=hands,
            discards=discards,
            taken_from_discard=None,
            laid_this_turn=False,
            turns_completed=turns,
            action_count=self.action_count + 1,
        )
        return nxt, events

    # --- CLAIMS
    def _do_claim(self, seat: int, action: Claim | PassClaim) -> Result:
        claim = isinstance(action, Claim)
        phase = self.phase
        if phase is Phase.GAME_OVER:
            raise _illegal(Reason.GAME_OVER, "the game is over")
        if phase is not Phase.CLAIM:
            raise _illegal(Reason.NO_CLAIM_WINDOW, "no discard is open to claims")
        n = self.seats
        discarder = (self.current - 1) % n
        if seat == discarder:
            raise _illegal(Reason.OWN_DISCARD, "you cannot claim your own discard")
        if self.claim_answers[seat] is not None:
            raise _illegal(Reason.ALREADY_ANSWERED, "you already answered this claim window")
        if claim and not self.stock:
            raise _illegal(Reason.CLAIM_STOCK_EMPTY, "no claims while the stock is empty")
        answers = list(self.claim_answers)
        answers[seat] = claim
        events = [Event(EventType.CLAIM_ANSWERED, seat, {"claim": claim})]
        order = [(discarder + k) % n for k in range(1, n)]
        if any(answers[s] is None for s in order):
            nxt = _evolve(self, claim_answers=tuple(answers), action_count=self.action_count + 1)
            return nxt, events
        claimants = [s for s in order if answers[s]]
        top = self.discards[-1]
        hands = self.hands
        stock = self.stock
        discards = self.discards
        winner: int | None = None
        if claimants:
            winner = claimants[0]
            take = min(self.rules.claim_penalty_cards, len(stock))
            penalty = stock[:take]
            stock = stock[take:]
            discards = discards[:-1]
            new_hands = list(hands)
            new_hands[winner] = _add(hands[winner], top, *penalty)
            hands = tuple(new_hands)
            events.append(
                Event(
                    EventType.CLAIM_AWARDED,
                    winner,
                    {"card": card_json(top), "penalty_cards": take},
                    {winner: {"penalty": cards_json(penalty)}},
                )
            )
        events.append(
            Event(
                EventType.CLAIM_WINDOW_CLOSED,
                discarder,
                {"card": card_json(top), "winner": winner, "claimants": claimants},
            )
        )
        events.append(Event(EventType.TURN_STARTED, self.current, {"round": self.round_number}))
        nxt = _evolve(
            self,
            phase=Phase.DRAW,
            hands=hands,
            stock=stock,
            discards=discards,
            claim_answers=(),
            action_count=self.action_count + 1,
        )
        return nxt, events

    # ------------------------------------------------------------------ round end
    def _end_round(self, events: list[Event], reason: str, out: int | None) -> Result:
        """Settle the round of ``self`` (already updated by the action) and go on."""
        rules = self.rules
        penalties = [sum(rules.penalty(c) for c in hand) for hand in self.hands]
        scores = tuple(s + p for s, p in zip(self.scores, penalties, strict=True))
        events.append(
            Event(
                EventType.ROUND_ENDED,
                out,
                {
                    "round": self.round_number,
                    "reason": reason,
                    "penalties": penalties,
                    "scores": list(scores),
                    "round_seed": round_seed(self.seed, self.round_number).hex(),
                },
            )
        )
        if self.round_number < rules.rounds:
            nxt, dealt = _deal(
                rules,
                self.seats,
                self.seed,
                self.round_number + 1,
                scores,
                self.stock_orders,
                self.action_count,
            )
            events.extend(dealt)
            return nxt, events
        final = _evolve(
            self,
            phase=Phase.GAME_OVER,
            scores=scores,
            claim_answers=(),
            taken_from_discard=None,
            laid_this_turn=False,
        )
        events.append(
            Event(
                EventType.GAME_ENDED,
                None,
                {"scores": list(scores), "winners": list(final.winners()), "seed": self.seed.hex()},
            )
        )
        return final, events

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form, lossless (secrets included: for the store only)."""
        rules: dict[str, Any] = json.loads(json.dumps(self.rules.to_dict()))
        return {
            "rules": rules,
            "seats": self.seats,
            "seed": self.seed.hex(),
            "round": self.round_number,
            "phase": self.phase.value,
            "current": self.current,
            "hands": [[c.id for c in hand] for hand in self.hands],
            "stock": [c.id for c in self.stock],
            "discards": [c.id for c in self.discards],
            "table": [
                {
                    "kind": m.kind.value,
                    "cards": [c.id for c in m.cards],
                    "rank": m.rank,
                    "suit": m.suit,
                    "owner": m.owner,
                }
                for m in self.table
            ],
            "opened": list(self.opened),
            "scores": list(self.scores),
            "taken_from_discard": self.taken_from_discard,
            "laid_this_turn": self.laid_this_turn,
            "claim_answers": list(self.claim_answers),
            "exhaustions": self.exhaustions,
            "epoch": self.epoch,
            "turns_completed": self.turns_completed,
            "action_count": self.action_count,
            "stock_orders": {str(r): list(order) for r, order in self.stock_orders},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameState:
        """Rebuild a state from :meth:`to_dict`'s form, validating it (InvalidActionError).

        Hands are normalised to id order.  ``rules`` may also be a preset's name, or a
        RuleSet itself (what a service that keeps its rule sets decoded passes).
        """
        try:
            return _from_dict(data)
        except InvalidActionError:
            raise
        except IllegalActionError as exc:
            raise InvalidActionError(f"malformed game state: {exc.message}") from exc
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise InvalidActionError(f"malformed game state: {exc!r}") from exc


# ---------------------------------------------------------------------- fast copies

_KEEP: Any = object()
_NEW: Callable[[type[GameState]], GameState] = object.__new__


def _setter(name: str) -> Callable[[GameState, Any], None]:
    """The slot's own setter: writes a field of a new state without the frozen __init__."""
    setter: Callable[[GameState, Any], None] = GameState.__dict__[name].__set__
    return setter


_S_RULES, _S_SEATS, _S_SEED, _S_ROUND, _S_PHASE, _S_CURRENT = map(
    _setter, ("rules", "seats", "seed", "round_number", "phase", "current")
)
_S_HANDS, _S_STOCK, _S_DISCARDS, _S_TABLE, _S_OPENED, _S_SCORES = map(
    _setter, ("hands", "stock", "discards", "table", "opened", "scores")
)
_S_TAKEN, _S_LAID, _S_ANSWERS, _S_EXHAUSTIONS, _S_EPOCH, _S_TURNS = map(
    _setter,
    (
        "taken_from_discard",
        "laid_this_turn",
        "claim_answers",
        "exhaustions",
        "epoch",
        "turns_completed",
    ),
)
_S_ACTIONS, _S_ORDERS, _S_MEMO = map(_setter, ("action_count", "stock_orders", "_memo"))


def _evolve(
    s: GameState,
    *,
    phase: Phase = _KEEP,
    current: int = _KEEP,
    hands: tuple[tuple[Card, ...], ...] = _KEEP,
    stock: tuple[Card, ...] = _KEEP,
    discards: tuple[Card, ...] = _KEEP,
    table: tuple[Meld, ...] = _KEEP,
    opened: tuple[bool, ...] = _KEEP,
    scores: tuple[int, ...] = _KEEP,
    taken_from_discard: int | None = _KEEP,
    laid_this_turn: bool = _KEEP,
    claim_answers: tuple[bool | None, ...] = _KEEP,
    exhaustions: int = _KEEP,
    epoch: int = _KEEP,
    turns_completed: int = _KEEP,
    action_count: int = _KEEP,
) -> GameState:
    """A copy of ``s`` with these fields changed, within a round (rules, seats, seed,
    round and arranged decks never change there).  Same result as
    ``dataclasses.replace`` but about four times faster: the hot path of every action."""
    new = _NEW(GameState)
    _S_RULES(new, s.rules)
    _S_SEATS(new, s.seats)
    _S_SEED(new, s.seed)
    _S_ROUND(new, s.round_number)
    _S_ORDERS(new, s.stock_orders)
    _S_PHASE(new, s.phase if phase is _KEEP else phase)
    _S_CURRENT(new, s.current if current is _KEEP else current)
    _S_HANDS(new, s.hands if hands is _KEEP else hands)
    _S_STOCK(new, s.stock if stock is _KEEP else stock)
    _S_DISCARDS(new, s.discards if discards is _KEEP else discards)
    _S_TABLE(new, s.table if table is _KEEP else table)
    _S_OPENED(new, s.opened if opened is _KEEP else opened)
    _S_SCORES(new, s.scores if scores is _KEEP else scores)
    _S_TAKEN(new, s.taken_from_discard if taken_from_discard is _KEEP else taken_from_discard)
    _S_LAID(new, s.laid_this_turn if laid_this_turn is _KEEP else laid_this_turn)
    _S_ANSWERS(new, s.claim_answers if claim_answers is _KEEP else claim_answers)
    _S_EXHAUSTIONS(new, s.exhaustions if exhaustions is _KEEP else exhaustions)
    _S_EPOCH(new, s.epoch if epoch is _KEEP else epoch)
    _S_TURNS(new, s.turns_completed if turns_completed is _KEEP else turns_completed)
    _S_ACTIONS(new, s.action_count if action_count is _KEEP else action_count)
    _S_MEMO(new, None)
    return new


# _evolve must write every field: fail at import if GameState grows one it forgets
assert {f.name for f in fields(GameState)} == {
    "rules", "seats", "seed", "round_number", "stock_orders", "phase", "current", "hands",
    "stock", "discards", "table", "opened", "scores", "taken_from_discard", "laid_this_turn",
    "claim_answers", "exhaustions", "epoch", "turns_completed", "action_count", "_memo",
}, "update _evolve for the new GameState fields"  # fmt: skip

# one Discard per card id, shared: actions are immutable values
_DISCARDS = tuple(Discard(i) for i in range(MAX_DECKS * 52 + MAX_JOKERS))


_Handler = Callable[[GameState, int, Any], Result]

_HANDLERS: dict[type, _Handler] = {
    Draw: GameState._do_draw,
    LayContract: GameState._do_lay_contract,
    ExtraMeld: GameState._do_extra_meld,
    LayOff: GameState._do_lay_off,
    SwapJoker: GameState._do_swap,
    Discard: GameState._do_discard,
    EndTurn: GameState._do_end_turn,
    Claim: GameState._do_claim,
    PassClaim: GameState._do_claim,
}


# ---------------------------------------------------------------------- dealing


def _check_stock_orders(
    rules: RuleSet, orders: Mapping[int, Sequence[int]]
) -> tuple[tuple[int, tuple[int, ...]], ...]:
    if not isinstance(orders, Mapping):
        raise InvalidActionError("stock_orders maps round numbers to card id lists")
    everything = list(range(rules.deck_size))
    result: list[tuple[int, tuple[int, ...]]] = []
    for r in sorted(orders):
        if type(r) is not int or not 1 <= r <= rules.rounds:
            raise InvalidActionError(f"stock_orders: no round {r!r}")
        order = tuple(orders[r])
        if any(type(x) is not int for x in order) or sorted(order) != everything:
            raise InvalidActionError(
                f"stock_orders[{r}] must hold every card id 0..{rules.deck_size - 1} exactly once"
            )
        result.append((r, order))
    return tuple(result)


def _deal(
    rules: RuleSet,
    seats: int,
    seed: bytes,
    round_number: int,
    scores: tuple[int, ...],
    stock_orders: tuple[tuple[int, tuple[int, ...]], ...],
    action_count: int,
) -> Result:
    contract = rules.contracts[round_number - 1]
    seed_of_round = round_seed(seed, round_number)
    arranged = dict(stock_orders).get(round_number)
    if arranged is None:
        deck = shuffled(full_deck(rules.decks, rules.jokers), seed_of_round, 0)
    else:
        deck = [card(i, rules.decks) for i in arranged]
    first = (round_number - 1) % seats
    dealt: list[list[Card]] = [[] for _ in range(seats)]
    count = seats * contract.deal
    for j in range(count):
        dealt[(first + j) % seats].append(deck[j])
    discards: tuple[Card, ...] = ()
    if rules.initial_upcard:
        discards = (deck[count],)
        count += 1
    hands = tuple(tuple(sorted(h, key=_BY_ID)) for h in dealt)
    state = GameState(
        rules=rules,
        seats=seats,
        seed=seed,
        round_number=round_number,
        phase=Phase.DRAW,
        current=first,
        hands=hands,
        stock=tuple(deck[count:]),
        discards=discards,
        table=(),
        opened=(False,) * seats,
        scores=scores,
        action_count=action_count,
        stock_orders=stock_orders,
    )
    events = [
        Event(
            EventType.ROUND_STARTED,
            None,
            {
                "round": round_number,
                "rounds": rules.rounds,
                "contract": {
                    "name": contract.name,
                    "melds": [{"kind": m.kind.value, "size": m.size} for m in contract.melds],
                    "deal": contract.deal,
                    "discards": contract.discards,
                },
                "first_seat": first,
                "commitment": commitment(seed_of_round),
                "arranged": arranged is not None,
                "upcard": card_json(discards[-1]) if discards else None,
                "stock_size": len(state.stock),
                "hand_size": contract.deal,
            },
            {s: {"hand": cards_json(hands[s])} for s in range(seats)},
        ),
        Event(EventType.TURN_STARTED, first, {"round": round_number}),
    ]
    return state, events


def arrange_deck(
    rules: RuleSet,
    seats: int,
    round_number: int,
    hands: Sequence[Sequence[str]],
    upcard: str | None = None,
    stock: Sequence[str] = (),
) -> list[int]:
    """A deck order (card ids, top first) for ``new_game(stock_orders={round: ...})``.

    ``hands[s]`` are the codes (``"7H"``, ``"JK"``) seat ``s`` is dealt (exactly the
    round's deal size each); ``upcard`` the face-up card (rule sets with an upcard;
    None: the next free card); ``stock`` the top of the stock, in drawing order.  Codes
    name physical cards in order of appearance across hands (seat 0 first), upcard and
    stock: the first ``7H`` is deck 0's, the second deck 1's.  Every other card follows
    at the bottom of the stock in id order.
    """
    contract = rules.contract(round_number)
    if len(hands) != seats:
        raise InvalidActionError(f"give one hand per seat ({seats})")
    for s, hand in enumerate(hands):
        if len(hand) != contract.deal:
            raise InvalidActionError(
                f"seat {s} must be dealt {contract.deal} cards, not {len(hand)}"
            )
    if upcard is not None and not rules.initial_upcard:
        raise InvalidActionError(f"{rules.name} turns up no card")
    codes = [code for hand in hands for code in hand]
    codes += [upcard] if upcard is not None else []
    codes += list(stock)
    chosen = cards_from_codes(codes, rules.decks, rules.jokers)
    hand_cards = [chosen[s * contract.deal : (s + 1) * contract.deal] for s in range(seats)]
    rest = chosen[seats * contract.deal :]
    named = {c.id for c in chosen}
    free = [c for c in full_deck(rules.decks, rules.jokers) if c.id not in named]
    order: list[Card] = []
    first = (round_number - 1) % seats
    for j in range(seats * contract.deal):
        seat = (first + j) % seats
        order.append(hand_cards[seat][j // seats])
    if rules.initial_upcard:
        if upcard is not None:
            order.append(rest.pop(0))
        else:
            order.append(free.pop(0))
    order.extend(rest)
    order.extend(free)
    return [c.id for c in order]


# ---------------------------------------------------------------------- from_dict


def _int(value: Any, what: str, low: int = 0, high: int | None = None) -> int:
    if type(value) is not int or value < low or (high is not None and value > high):
        raise InvalidActionError(f"{what} must be an integer in {low}..{high}, not {value!r}")
    return value


def _bool(value: Any, what: str) -> bool:
    if type(value) is not bool:
        raise InvalidActionError(f"{what} must be true or false, not {value!r}")
    return value


def _from_dict(data: Mapping[str, Any]) -> GameState:
    if not isinstance(data, Mapping):
        raise InvalidActionError("a game state is an object")
    known = {
        "rules", "seats", "seed", "round", "phase", "current", "hands", "stock", "discards",
        "table", "opened", "scores", "taken_from_discard", "laid_this_turn", "claim_answers",
        "exhaustions", "epoch", "turns_completed", "action_count", "stock_orders",
    }  # fmt: skip
    unknown = sorted(set(data) - known)
    if unknown:
        raise InvalidActionError(f"unknown game state keys: {unknown}")
    raw_rules = data["rules"]
    if isinstance(raw_rules, RuleSet):
        rules = raw_rules
    else:
        rules = ruleset(raw_rules) if isinstance(raw_rules, str) else RuleSet.from_dict(raw_rules)
    seats = _int(data["seats"], "seats", rules.min_players, rules.max_players)
    seed = bytes.fromhex(data["seed"])
    round_number = _int(data["round"], "round", 1, rules.rounds)
    phase = Phase(data["phase"])
    current = _int(data["current"], "current", 0, seats - 1)

    def cards(ids: Any, what: str) -> tuple[Card, ...]:
        if not isinstance(ids, list | tuple):
            raise InvalidActionError(f"{what} must be a list of card ids")
        return tuple(card(_int(i, what, 0, rules.deck_size - 1), rules.decks) for i in ids)

    if not isinstance(data["hands"], list | tuple) or len(data["hands"]) != seats:
        raise InvalidActionError("one hand per seat")
    hands = tuple(
        tuple(sorted(cards(h, f"hands[{s}]"), key=_BY_ID)) for s, h in enumerate(data["hands"])
    )
    stock = cards(data["stock"], "stock")
    discards = cards(data["discards"], "discards")
    table: list[Meld] = []
    for i, m in enumerate(data["table"]):
        table.append(_meld_from_dict(m, rules, seats, i))
    everything = [c.id for h in hands for c in h]
    everything += [c.id for c in stock] + [c.id for c in discards]
    everything += [c.id for m in table for c in m.cards]
    if sorted(everything) != list(range(rules.deck_size)):
        raise InvalidActionError("every card of the deck must be in exactly one place")
    opened = tuple(_bool(x, "opened") for x in data["opened"])
    scores = tuple(_int(x, "scores") for x in data["scores"])
    if len(opened) != seats or len(scores) != seats:
        raise InvalidActionError("opened and scores need one entry per seat")
    for m in table:
        if not opened[m.owner]:
            raise InvalidActionError(f"a meld belongs to seat {m.owner}, who is not open")
    taken = data.get("taken_from_discard")
    if taken is not None:
        taken = _int(taken, "taken_from_discard", 0, rules.deck_size - 1)
    answers_raw = data.get("claim_answers", [])
    answers: tuple[bool | None, ...] = tuple(
        None if a is None else _bool(a, "claim_answers") for a in answers_raw
    )
    if phase is Phase.CLAIM:
        if len(answers) != seats or not discards:
            raise InvalidActionError("a claim window needs a discard and one answer slot per seat")
    elif answers:
        raise InvalidActionError("claim answers outside a claim window")
    raw_orders = data.get("stock_orders", {})
    if not isinstance(raw_orders, Mapping):
        raise InvalidActionError("stock_orders must be an object")
    orders = _check_stock_orders(rules, {int(k): v for k, v in raw_orders.items()})
    return GameState(
        rules=rules,
        seats=seats,
        seed=seed,
        round_number=round_number,
        phase=phase,
        current=current,
        hands=hands,
        stock=stock,
        discards=discards,
        table=tuple(table),
        opened=opened,
        scores=scores,
        taken_from_discard=taken,
        laid_this_turn=_bool(data.get("laid_this_turn", False), "laid_this_turn"),
        claim_answers=answers,
        exhaustions=_int(data.get("exhaustions", 0), "exhaustions"),
        epoch=_int(data.get("epoch", 0), "epoch"),
        turns_completed=_int(data.get("turns_completed", 0), "turns_completed"),
        action_count=_int(data.get("action_count", 0), "action_count"),
        stock_orders=orders,
    )


def _meld_from_dict(m: Any, rules: RuleSet, seats: int, index: int) -> Meld:
    if not isinstance(m, Mapping):
        raise InvalidActionError(f"table[{index}] must be an object")
    kind = MeldKind(m["kind"])
    ids = m["cards"]
    if not isinstance(ids, list | tuple) or not ids:
        raise InvalidActionError(f"table[{index}] needs cards")
    cs = tuple(card(_int(i, "meld card", 0, rules.deck_size - 1), rules.decks) for i in ids)
    owner = _int(m["owner"], "owner", 0, seats - 1)
    rank = _int(m["rank"], "rank", 1, 14)
    if kind is MeldKind.SET:
        built = build_set(cs, rules)
        if built.rank != rank or built.cards != tuple(sorted(cs, key=_BY_ID)):
            raise InvalidActionError(f"table[{index}] is not a valid set")
        return built.with_owner(owner)
    built = build_run(cs, rules, start=rank)
    for mine, theirs in zip(cs, built.cards, strict=True):
        if mine.is_joker != theirs.is_joker or (not mine.is_joker and mine is not theirs):
            raise InvalidActionError(f"table[{index}] is not a valid run in this order")
    return Meld(MeldKind.RUN, cs, rank, built.suit, owner)
