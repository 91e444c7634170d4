"""Dealing: a round's deck (seeded shuffle or an arranged order), its deal, and arranged decks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from engine.cards import Card, card, card_json, cards_from_codes, cards_json, full_deck
from engine.errors import InvalidActionError
from engine.events import Event, EventType, contract_json
from engine.game.hands import hand_with
from engine.game.phase import Phase
from engine.rulesets import RuleSet
from engine.shuffle import commitment, round_seed, shuffled

if TYPE_CHECKING:
    from engine.game.state import GameState, Result

StockOrders = tuple[tuple[int, tuple[int, ...]], ...]


def check_stock_orders(rules: RuleSet, orders: Mapping[int, Sequence[int]]) -> StockOrders:
    """Arranged decks by round, validated: each holds every card id of the deck once."""
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


def first_seat(seats: int, round_number: int) -> int:
    """The seat dealt first, who also plays first: the deal moves on one seat a round."""
    return (round_number - 1) % seats


def deal(
    state_class: type[GameState],
    rules: RuleSet,
    seats: int,
    seed: bytes,
    round_number: int,
    scores: tuple[int, ...],
    stock_orders: StockOrders,
    action_count: int,
) -> Result:
    """The state at the start of a round, and its ``round_started``/``turn_started`` events.

    ``state_class`` is GameState, handed in by the caller: the state's own module calls
    this one (a new game), so this one may not import it back."""
    contract = rules.contracts[round_number - 1]
    seed_of_round = round_seed(seed, round_number)
    arranged = dict(stock_orders).get(round_number)
    if arranged is None:
        deck = shuffled(full_deck(rules.decks, rules.jokers), seed_of_round, 0)
    else:
        deck = [card(i, rules.decks) for i in arranged]
    first = first_seat(seats, round_number)
    dealt: list[list[Card]] = [[] for _ in range(seats)]
    count = seats * contract.deal
    for j in range(count):  # one card at a time, round-robin from the first seat
        dealt[(first + j) % seats].append(deck[j])
    discards: tuple[Card, ...] = ()
    if rules.initial_upcard:
        discards = (deck[count],)
        count += 1
    hands = tuple(hand_with((), *h) for h in dealt)
    state = state_class(
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
                "contract": contract_json(rules.contracts[round_number - 1]),
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
    first = first_seat(seats, round_number)
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
