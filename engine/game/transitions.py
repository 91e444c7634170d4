"""Transitions: each action's checks and its new state and events, and the end of a round."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from engine.actions import (
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
from engine.cards import Card, card, card_json
from engine.errors import IllegalActionError, InvalidActionError, Reason
from engine.events import Event, EventType
from engine.game import claims, dealing
from engine.game.hands import hand_with, hand_without
from engine.game.phase import CLAIM_PHASE, DRAW_PHASE, GAME_OVER, PLAY_PHASE
from engine.melds import End, Meld, build_meld, build_run, lay_off, meld_json, swap_joker
from engine.rulesets import MeldKind, Stalemate
from engine.shuffle import round_seed, shuffled

if TYPE_CHECKING:
    from engine.game.state import GameState, Result

    _Handler = Callable[[GameState, int, Any], Result]

# Enum members as module constants: Python 3.11 reads ``Enum.MEMBER`` through
# EnumType's ``__getattr__`` hook, ten times the cost of a global (the hot path).
_DISCARD: Final = DrawSource.DISCARD
# and values (an enum's ``.value`` is a property written in Python)
_DISCARD_NAME: Final = DrawSource.DISCARD.value
_STOCK_NAME: Final = DrawSource.STOCK.value  # (a draw not from the discard pile)
_LOW_NAME: Final = End.LOW.value
_HIGH_NAME: Final = End.HIGH.value
_DISCARDED: Final = EventType.DISCARDED
_DREW: Final = EventType.DREW
_EXTRA_MELD: Final = EventType.EXTRA_MELD
_GAME_ABANDONED: Final = EventType.GAME_ABANDONED
_GAME_ENDED: Final = EventType.GAME_ENDED
_JOKER_SWAPPED: Final = EventType.JOKER_SWAPPED
_LAID_CONTRACT: Final = EventType.LAID_CONTRACT
_LAID_OFF: Final = EventType.LAID_OFF
_ROUND_ENDED: Final = EventType.ROUND_ENDED
_STOCK_EXHAUSTED: Final = EventType.STOCK_EXHAUSTED
_STOCK_NOT_RESHUFFLED: Final = EventType.STOCK_NOT_RESHUFFLED
_STOCK_RESHUFFLED: Final = EventType.STOCK_RESHUFFLED
_TURN_ENDED: Final = EventType.TURN_ENDED
_TURN_STARTED: Final = EventType.TURN_STARTED
_RUN: Final = MeldKind.RUN
_SET: Final = MeldKind.SET
_EXHAUSTIONS: Final = Stalemate.EXHAUSTIONS

# ---------------------------------------------------------------------- shared checks
# Malformed input first (InvalidActionError), then: game over, claim window open, not
# your turn, draw first / already drew, then each action's own rules in the order written.


def _card(state: GameState, card_id: Any) -> Card:
    if type(card_id) is not int or not 0 <= card_id < state.rules.deck_size:
        raise InvalidActionError(f"no card has id {card_id!r} in this game")
    return card(card_id, state.rules.decks)


def _meld_index(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise InvalidActionError(f"a meld is named by its non-negative table index, not {value!r}")
    return value


def _require_turn(state: GameState, seat: int) -> None:
    phase = state.phase
    if phase is GAME_OVER:
        raise IllegalActionError(Reason.GAME_OVER, "the game is over")
    if phase is CLAIM_PHASE:
        raise IllegalActionError(Reason.CLAIM_WINDOW_OPEN, "a claim window is open")
    if seat != state.current:
        raise IllegalActionError(Reason.NOT_YOUR_TURN, f"it is seat {state.current}'s turn")


def _require_play(state: GameState, seat: int) -> None:
    _require_turn(state, seat)
    if state.phase is DRAW_PHASE:
        raise IllegalActionError(Reason.MUST_DRAW_FIRST, "draw a card first")


def _require_in_hand(state: GameState, seat: int, c: Card) -> None:
    for x in state.hands[seat]:
        if x is c:
            return
    raise IllegalActionError(Reason.CARD_NOT_IN_HAND, f"{c.code} (#{c.id}) is not in your hand")


def _check_last_card(state: GameState, hand: tuple[Card, ...]) -> None:
    if state.strands_blocked_card(hand):
        raise IllegalActionError(
            Reason.LAST_CARD_BLOCKED,
            "that would leave only the card taken from the discard pile, which cannot be discarded",
        )


def _spec_cards(state: GameState, spec: Any, seen: set[int]) -> list[Card]:
    """Shape validation of a MeldSpec (InvalidActionError only)."""
    if not isinstance(spec, MeldSpec) or not isinstance(spec.kind, MeldKind):
        raise InvalidActionError(f"not a meld: {spec!r}")
    if not isinstance(spec.cards, tuple | list) or not spec.cards:
        raise InvalidActionError("a meld needs cards")
    start = spec.start
    if start is not None:
        if spec.kind is _SET:
            raise InvalidActionError("a set has no start rank")
        if type(start) is not int or not 1 <= start <= 14:
            raise InvalidActionError("a run's start must be a rank 1..14")
    cards: list[Card] = []
    for cid in spec.cards:
        c = _card(state, cid)
        if c.id in seen:
            raise InvalidActionError(f"card #{c.id} is named twice")
        seen.add(c.id)
        cards.append(c)
    return cards


# ---------------------------------------------------------------------- draw


def _draw(state: GameState, seat: int, action: Draw) -> Result:
    source = action.source
    if not isinstance(source, DrawSource):
        raise InvalidActionError(f"unknown draw source {source!r}")
    _require_turn(state, seat)
    if state.phase is not DRAW_PHASE:
        raise IllegalActionError(Reason.ALREADY_DREW, "you already drew this turn")
    rules = state.rules
    hands = list(state.hands)
    events: list[Event] = []
    if source is _DISCARD:
        if not rules.draw_from_discard:
            raise IllegalActionError(Reason.DISCARD_DRAW_NOT_ALLOWED, "draw from the stock only")
        if not state.discards:
            raise IllegalActionError(Reason.DISCARD_PILE_EMPTY, "the discard pile is empty")
        c = state.discards[-1]
        discards = state.discards[:-1]
        hands[seat] = hand_with(hands[seat], c)
        events.append(
            Event(
                _DREW,
                seat,
                {
                    "source": _DISCARD_NAME,
                    "card": card_json(c),
                    "stock_size": len(state.stock),
                    "discard_size": len(discards),
                },
            )
        )
        nxt = state.evolve(
            phase=PLAY_PHASE,
            hands=tuple(hands),
            discards=discards,
            taken_from_discard=c.id,
            laid_this_turn=False,
            action_count=state.action_count + 1,
        )
        return nxt, events
    stock, discards, epoch = state.stock, state.discards, state.epoch
    if not stock:
        if not state.stock_draw_allowed():
            raise IllegalActionError(
                Reason.STOCK_EMPTY, "the stock is empty: draw from the discard pile"
            )
        if len(discards) < 2:
            events.append(Event(_STOCK_NOT_RESHUFFLED, None, {"cards": 0}))
            base = state.evolve(action_count=state.action_count + 1)
            return _end_round(base, events, "dry", None)
        stock, discards, epoch = _reshuffle(state, discards, epoch, events)
    c = stock[0]
    stock = stock[1:]
    hands[seat] = hand_with(hands[seat], c)
    events.append(
        Event(
            _DREW,
            seat,
            {"source": _STOCK_NAME, "stock_size": len(stock), "discard_size": len(discards)},
            {seat: {"card": card_json(c)}},
        )
    )
    exhaustions = state.exhaustions
    if not stock and rules.stalemate is _EXHAUSTIONS:
        exhaustions += 1
        settles = exhaustions >= rules.max_exhaustions
        events.append(Event(_STOCK_EXHAUSTED, None, {"count": exhaustions, "settles": settles}))
        if not settles:
            if len(discards) >= 2:
                stock, discards, epoch = _reshuffle(state, discards, epoch, events)
            else:
                events.append(Event(_STOCK_NOT_RESHUFFLED, None, {"cards": 0}))
    nxt = state.evolve(
        phase=PLAY_PHASE,
        hands=tuple(hands),
        stock=stock,
        discards=discards,
        epoch=epoch,
        exhaustions=exhaustions,
        taken_from_discard=None,
        laid_this_turn=False,
        action_count=state.action_count + 1,
    )
    return nxt, events


def _reshuffle(
    state: GameState, discards: tuple[Card, ...], epoch: int, events: list[Event]
) -> tuple[tuple[Card, ...], tuple[Card, ...], int]:
    """A new stock from the discard pile but its top card: the round's next shuffle epoch."""
    epoch += 1
    stock = tuple(shuffled(discards[:-1], round_seed(state.seed, state.round_number), epoch))
    events.append(Event(_STOCK_RESHUFFLED, None, {"cards": len(stock), "epoch": epoch}))
    return stock, discards[-1:], epoch


# ---------------------------------------------------------------------- lay the contract


def _lay_contract(state: GameState, seat: int, action: LayContract) -> Result:
    specs = action.melds
    cards_of: list[list[Card]] = []
    if specs is not None:
        if not isinstance(specs, tuple | list) or not specs:
            raise InvalidActionError("an explicit contract needs a non-empty list of melds")
        seen: set[int] = set()
        cards_of = [_spec_cards(state, spec, seen) for spec in specs]
    _require_play(state, seat)
    if state.opened[seat]:
        raise IllegalActionError(Reason.ALREADY_OPEN, "you already laid your contract this round")
    if specs is None:
        selection = state.automatic_selection(seat)
        if selection is None:
            raise IllegalActionError(
                Reason.CONTRACT_NOT_AVAILABLE, "your hand cannot lay this round's contract"
            )
        melds = tuple(m.with_owner(seat) for m in selection.melds)
    else:
        if not state.rules.explicit_contract:
            raise IllegalActionError(
                Reason.EXPLICIT_SELECTION_NOT_ALLOWED,
                "this rule set only lays the contract automatically",
            )
        melds = _explicit_contract(state, seat, specs, cards_of)
    used = {c.id for m in melds for c in m.cards}
    hand = tuple(c for c in state.hands[seat] if c.id not in used)
    _check_last_card(state, hand)
    start = len(state.table)
    hands = list(state.hands)
    hands[seat] = hand
    opened = list(state.opened)
    opened[seat] = True
    base = state.evolve(
        hands=tuple(hands),
        table=state.table + melds,
        opened=tuple(opened),
        laid_this_turn=True,
        action_count=state.action_count + 1,
    )
    events = [
        Event(
            _LAID_CONTRACT,
            seat,
            {
                "automatic": specs is None,
                "melds": [meld_json(m, start + i) for i, m in enumerate(melds)],
            },
        )
    ]
    return _after_laying(base, events, seat)


def _explicit_contract(
    state: GameState, seat: int, specs: Sequence[MeldSpec], cards_of: list[list[Card]]
) -> tuple[Meld, ...]:
    for cards in cards_of:
        for c in cards:
            _require_in_hand(state, seat, c)
    rules = state.rules
    need: dict[MeldKind, list[int]] = {_SET: [], _RUN: []}
    for req in state.contract.melds:
        need[req.kind].append(req.size)
    have: dict[MeldKind, list[int]] = {_SET: [], _RUN: []}
    for spec, cards in zip(specs, cards_of, strict=True):
        have[spec.kind].append(len(cards))
    described = state.contract.describe()
    for kind in (_SET, _RUN):
        if len(need[kind]) != len(have[kind]):
            raise IllegalActionError(
                Reason.SELECTION_DOES_NOT_MATCH_CONTRACT,
                f"the contract is {described}: it needs {len(need[kind])} {kind.value}(s)",
            )
    melds = tuple(
        build_meld(spec.kind, cards, rules, None, spec.start).with_owner(seat)
        for spec, cards in zip(specs, cards_of, strict=True)
    )
    for kind in (_SET, _RUN):
        needed = sorted(need[kind])
        given = sorted(have[kind])
        ok = (
            needed == given
            if rules.exact_contract_sizes
            else all(g >= n for g, n in zip(given, needed, strict=True))
        )
        if not ok:
            raise IllegalActionError(
                Reason.SELECTION_DOES_NOT_MATCH_CONTRACT,
                f"the contract is {described}: {kind.value} sizes {given} do not fit",
            )
    return melds


# ---------------------------------------------------------------------- melds on the table


def _extra_meld(state: GameState, seat: int, action: ExtraMeld) -> Result:
    spec = action.meld
    cards = _spec_cards(state, spec, set())
    _require_play(state, seat)
    rules = state.rules
    if not rules.extra_melds:
        raise IllegalActionError(Reason.EXTRA_MELD_NOT_ALLOWED, "this rule set has no extra melds")
    if not state.opened[seat]:
        raise IllegalActionError(Reason.NOT_OPEN, "lay your contract before laying extra melds")
    for c in cards:
        _require_in_hand(state, seat, c)
    start = spec.start
    if start is not None and not rules.explicit_contract:
        automatic = build_run(cards, rules)
        if automatic.rank != start:
            raise IllegalActionError(
                Reason.EXPLICIT_SELECTION_NOT_ALLOWED,
                "this rule set places jokers itself (lowest start)",
            )
    meld = build_meld(spec.kind, cards, rules, None, start).with_owner(seat)
    used = {c.id for c in cards}
    hand = tuple(c for c in state.hands[seat] if c.id not in used)
    _check_last_card(state, hand)
    hands = list(state.hands)
    hands[seat] = hand
    base = state.evolve(
        hands=tuple(hands), table=(*state.table, meld), action_count=state.action_count + 1
    )
    events = [Event(_EXTRA_MELD, seat, {"meld": meld_json(meld, len(state.table))})]
    return _after_laying(base, events, seat)


def _lay_off(state: GameState, seat: int, action: LayOff) -> Result:
    c = _card(state, action.card)
    index = _meld_index(action.meld)
    end = action.end
    if end is not None and not isinstance(end, End):
        raise InvalidActionError(f"unknown end {end!r}")
    _require_play(state, seat)
    rules = state.rules
    if c.is_joker and not rules.layoff_jokers:
        raise IllegalActionError(Reason.LAYOFF_JOKER_NOT_ALLOWED, "jokers cannot be laid off")
    if not state.opened[seat]:
        raise IllegalActionError(Reason.NOT_OPEN, "lay your contract before laying off")
    if state.laid_this_turn and not rules.layoff_on_opening_turn:
        raise IllegalActionError(
            Reason.LAYOFF_ON_OPENING_TURN, "no lay-offs on the turn the contract was laid"
        )
    if index >= len(state.table):
        raise IllegalActionError(Reason.NO_SUCH_MELD, f"there is no meld {index} on the table")
    _require_in_hand(state, seat, c)
    meld = state.table[index]
    if meld.kind is _SET and end is not None:
        raise IllegalActionError(Reason.LAYOFF_DOES_NOT_FIT, "a set has no ends")
    grown = lay_off(meld, c, rules, end)
    hand = hand_without(state.hands[seat], c)
    _check_last_card(state, hand)
    hands = list(state.hands)
    hands[seat] = hand
    table = list(state.table)
    table[index] = grown
    base = state.evolve(hands=tuple(hands), table=tuple(table), action_count=state.action_count + 1)
    if meld.kind is _SET:
        side: str | None = None
    else:
        side = _LOW_NAME if grown.rank < meld.rank else _HIGH_NAME
    events = [
        Event(
            _LAID_OFF,
            seat,
            {"card": card_json(c), "meld": meld_json(grown, index), "end": side},
        )
    ]
    return _after_laying(base, events, seat)


def _swap_joker(state: GameState, seat: int, action: SwapJoker) -> Result:
    c = _card(state, action.card)
    index = _meld_index(action.meld)
    _require_play(state, seat)
    rules = state.rules
    if not rules.joker_swap:
        raise IllegalActionError(Reason.SWAP_NOT_ALLOWED, "this rule set has no joker swaps")
    if index >= len(state.table):
        raise IllegalActionError(Reason.NO_SUCH_MELD, f"there is no meld {index} on the table")
    _require_in_hand(state, seat, c)
    meld, joker = swap_joker(state.table[index], c, rules)
    hands = list(state.hands)
    hands[seat] = hand_with(hand_without(state.hands[seat], c), joker)
    table = list(state.table)
    table[index] = meld
    nxt = state.evolve(hands=tuple(hands), table=tuple(table), action_count=state.action_count + 1)
    events = [
        Event(
            _JOKER_SWAPPED,
            seat,
            {"card": card_json(c), "joker": card_json(joker), "meld": meld_json(meld, index)},
        )
    ]
    return nxt, events


def _after_laying(state: GameState, events: list[Event], seat: int) -> Result:
    """After ``seat`` laid cards on the table (a contract, an extra meld, a lay-off): the
    round ends if its hand is empty, or if the round is now dead (every seat open, every
    meld full: nobody can empty a hand any more), scored as a dry stock is.  Only these
    actions can make a round dead: a joker swap leaves every meld's size and every seat's
    openness as they were, and a draw, a discard or a claim touches neither."""
    if not state.hands[seat]:
        return _end_round(state, events, "went_out", seat)
    if state.round_is_dead():
        return _end_round(state, events, "dead", None)
    return state, events


# ---------------------------------------------------------------------- the end of a turn


def _discard(state: GameState, seat: int, action: Discard) -> Result:
    c = _card(state, action.card)
    _require_play(state, seat)
    if not state.contract.discards:
        raise IllegalActionError(
            Reason.NO_DISCARD_THIS_ROUND, "there are no discards this round: end your turn"
        )
    _require_in_hand(state, seat, c)
    if c.id == state.blocked_card:
        raise IllegalActionError(
            Reason.BLOCKED_DISCARD, "you cannot discard the card you took from the discard pile"
        )
    hand = hand_without(state.hands[seat], c)
    hands = list(state.hands)
    hands[seat] = hand
    discards = (*state.discards, c)
    events = [Event(_DISCARDED, seat, {"card": card_json(c), "discard_size": len(discards)})]
    if not hand:
        base = state.evolve(
            hands=tuple(hands), discards=discards, action_count=state.action_count + 1
        )
        return _end_round(base, events, "went_out", seat)
    return _complete_turn(
        state, seat, events, hands=tuple(hands), discards=discards, discarded=True
    )


def _end_turn(state: GameState, seat: int, action: EndTurn) -> Result:
    _require_play(state, seat)
    if state.contract.discards:
        raise IllegalActionError(Reason.END_TURN_NOT_ALLOWED, "end your turn with a discard")
    return _complete_turn(
        state, seat, [], hands=state.hands, discards=state.discards, discarded=False
    )


def _complete_turn(
    state: GameState,
    seat: int,
    events: list[Event],
    *,
    hands: tuple[tuple[Card, ...], ...],
    discards: tuple[Card, ...],
    discarded: bool,
) -> Result:
    """A turn completes: a stalemate may settle the round, else a claim window opens or
    the next seat's turn starts."""
    rules = state.rules
    turns = state.turns_completed + 1
    events.append(Event(_TURN_ENDED, seat, {"turns_completed": turns}))
    reason: str | None = None
    if rules.stalemate is _EXHAUSTIONS and state.exhaustions >= rules.max_exhaustions:
        reason = "exhaustions"
    elif rules.turn_cap is not None and turns >= rules.turn_cap:
        reason = "turn_cap"
    if reason is not None:
        base = state.evolve(
            hands=hands,
            discards=discards,
            turns_completed=turns,
            action_count=state.action_count + 1,
        )
        return _end_round(base, events, reason, None)
    if claims.opens(rules, discarded):
        return claims.open_window(
            state, seat, events, hands=hands, discards=discards, turns_completed=turns
        )
    nxt_seat = (seat + 1) % state.seats
    events.append(Event(_TURN_STARTED, nxt_seat, {"round": state.round_number}))
    nxt = state.evolve(
        phase=DRAW_PHASE,
        current=nxt_seat,
        hands=hands,
        discards=discards,
        taken_from_discard=None,
        laid_this_turn=False,
        turns_completed=turns,
        action_count=state.action_count + 1,
    )
    return nxt, events


def _end_round(state: GameState, events: list[Event], reason: str, out: int | None) -> Result:
    """Settle the round of ``state`` (already updated by the action) and go on: the next
    round is dealt in the same action, or the game is over."""
    rules = state.rules
    penalties = [sum(rules.penalty(c) for c in hand) for hand in state.hands]
    scores = tuple(s + p for s, p in zip(state.scores, penalties, strict=True))
    events.append(
        Event(
            _ROUND_ENDED,
            out,
            {
                "round": state.round_number,
                "reason": reason,
                "penalties": penalties,
                "scores": list(scores),
                "round_seed": round_seed(state.seed, state.round_number).hex(),
            },
        )
    )
    if state.round_number < rules.rounds:
        nxt, dealt = dealing.deal(
            type(state),
            rules,
            state.seats,
            state.seed,
            state.round_number + 1,
            scores,
            state.stock_orders,
            state.action_count,
        )
        events.extend(dealt)
        return nxt, events
    final = state.evolve(
        phase=GAME_OVER,
        scores=scores,
        claim_answers=(),
        taken_from_discard=None,
        laid_this_turn=False,
    )
    events.append(
        Event(
            _GAME_ENDED,
            None,
            {"scores": list(scores), "winners": list(final.winners()), "seed": state.seed.hex()},
        )
    )
    return final, events


def abandon(state: GameState) -> Result:
    """:meth:`GameState.abandon`: the game over where it stands, the round in play
    unscored, no winners."""
    if state.phase is GAME_OVER:
        raise IllegalActionError(Reason.GAME_OVER, "the game is over")
    final = state.evolve(
        phase=GAME_OVER,
        abandoned=True,
        claim_answers=(),
        taken_from_discard=None,
        laid_this_turn=False,
        action_count=state.action_count + 1,
    )
    event = Event(
        _GAME_ABANDONED,
        None,
        {"round": state.round_number, "scores": list(state.scores), "seed": state.seed.hex()},
    )
    return final, [event]


#: each action type's transition
HANDLERS: dict[type, _Handler] = {
    Draw: _draw,
    LayContract: _lay_contract,
    ExtraMeld: _extra_meld,
    LayOff: _lay_off,
    SwapJoker: _swap_joker,
    Discard: _discard,
    EndTurn: _end_turn,
    Claim: claims.answer,
    PassClaim: claims.answer,
}
