"""Scenario tests of the game state machine (engine/game/).

One or more tests for every rule of RULES.md and for both columns of every row of
its decision table, plus the engine's own decisions (docs/DECISIONS.md).

Positions are built with :func:`build`: card codes name physical cards in order of
appearance (hands seat by seat, then table melds, discard pile bottom to top, stock
top to bottom), so the first ``7H`` named is deck 0's and the second deck 1's.
Every card not named goes to the bottom of the stock (``rest="stock"``), under the
discard pile (``rest="discards"``) or into a seat's hand (``rest=seat``).  The state
then goes through ``GameState.from_dict``, so it is a complete, validated position.
Whole games start from ``GameState.new_game(..., stock_orders={round: order})`` with
``order`` from :func:`engine.game.arrange_deck`.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

import pytest

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
from engine.cards import SUITS, Card, card, cards_from_codes, full_deck
from engine.errors import IllegalActionError, InvalidActionError, Reason
from engine.events import Event, EventType
from engine.game import GameState, Phase, arrange_deck
from engine.game.state import evolve
from engine.melds import End, build_meld
from engine.rulesets import (
    CONTRACT,
    WHISKERTRAIL,
    Contract,
    MeldKind,
    MeldRequirement,
    RuleSet,
)
from engine.shuffle import round_seed, shuffled

W = WHISKERTRAIL
C = CONTRACT
SET = MeldKind.SET
RUN = MeldKind.RUN
STOCK = Draw(DrawSource.STOCK)
PILE = Draw(DrawSource.DISCARD)
SEED = b"scenario"
_R5 = MeldRequirement(RUN, 5)

TableEntry = tuple[int, str, Sequence[str]] | tuple[int, str, Sequence[str], int]


# ---------------------------------------------------------------------------- helpers


def build(
    rules: RuleSet,
    hands: Sequence[Sequence[str]],
    *,
    stock: Sequence[str] = (),
    discards: Sequence[str] = (),
    table: Sequence[TableEntry] = (),
    phase: Phase = Phase.PLAY,
    current: int = 0,
    round_number: int = 1,
    opened: Sequence[bool] | None = None,
    rest: str | int = "stock",
    taken: str | None = None,
    laid_this_turn: bool = False,
    exhaustions: int = 0,
    epoch: int = 0,
    turns_completed: int = 0,
    scores: Sequence[int] | None = None,
) -> GameState:
    """A complete position (see the module docstring)."""
    seats = len(hands)
    named = [code for h in hands for code in h]
    named += [code for entry in table for code in entry[2]]
    named += list(discards) + list(stock)
    chosen = iter(cards_from_codes(named, rules.decks, rules.jokers))
    hand_cards = [[next(chosen) for _ in h] for h in hands]
    melds = []
    for entry in table:
        owner, kind, codes = entry[0], entry[1], entry[2]
        start = entry[3] if len(entry) == 4 else None
        cards = [next(chosen) for _ in codes]
        melds.append(build_meld(MeldKind(kind), cards, rules, None, start).with_owner(owner))
    pile = [next(chosen) for _ in discards]
    stk = [next(chosen) for _ in stock]
    used = {c.id for h in hand_cards for c in h} | {c.id for m in melds for c in m.cards}
    used |= {c.id for c in pile} | {c.id for c in stk}
    free = [c for c in full_deck(rules.decks, rules.jokers) if c.id not in used]
    if rest == "stock":
        stk += free
    elif rest == "discards":
        pile = free + pile
    else:
        assert isinstance(rest, int)
        hand_cards[rest] += free
    if opened is None:
        opened = [any(m.owner == s for m in melds) for s in range(seats)]
    taken_id = None
    if taken is not None:
        taken_id = next(c.id for c in hand_cards[current] if c.code == taken)
    state = GameState(
        rules=rules,
        seats=seats,
        seed=SEED,
        round_number=round_number,
        phase=phase,
        current=current,
        hands=tuple(tuple(sorted(h)) for h in hand_cards),
        stock=tuple(stk),
        discards=tuple(pile),
        table=tuple(melds),
        opened=tuple(opened),
        scores=tuple(scores) if scores is not None else (0,) * seats,
        taken_from_discard=taken_id,
        laid_this_turn=laid_this_turn,
        claim_answers=(None,) * seats if phase is Phase.CLAIM else (),
        exhaustions=exhaustions,
        epoch=epoch,
        turns_completed=turns_completed,
    )
    return GameState.from_dict(state.to_dict())


def cid(state: GameState, seat: int, code: str, nth: int = 0) -> int:
    """The id of the ``nth`` card with this code in a seat's hand (by id order)."""
    return [c.id for c in state.hands[seat] if c.code == code][nth]


def codes(cards: Sequence[Card]) -> list[str]:
    return sorted(c.code for c in cards)


def meld_codes(state: GameState) -> list[list[str]]:
    return [[c.code for c in m.cards] for m in state.table]


def types_of(events: Sequence[Event]) -> list[str]:
    return [str(e.type) for e in events]


def event(events: Sequence[Event], kind: EventType) -> Event:
    found = [e for e in events if e.type == kind]
    assert len(found) == 1, f"{kind}: {types_of(events)}"
    return found[0]


def play(state: GameState, seat: int, action: Action, *, listed: bool = True) -> GameState:
    """Apply an action that must be legal (and, by default, listed by legal_actions)."""
    if listed:
        assert action in state.legal_actions(seat), (action, state.legal_actions(seat))
    state.check(seat, action)
    return state.apply_action(seat, action)[0]


def play_events(state: GameState, seat: int, action: Action) -> tuple[GameState, list[Event]]:
    state.check(seat, action)
    return state.apply_action(seat, action)


def expect_illegal(state: GameState, seat: int, action: Action, reason: Reason) -> None:
    """Refused with ``reason`` by apply_action and check, not listed, state unchanged."""
    before = state.to_dict()
    with pytest.raises(IllegalActionError) as info:
        state.apply_action(seat, action)
    assert info.value.reason is reason, info.value
    with pytest.raises(IllegalActionError) as again:
        state.check(seat, action)
    assert again.value.reason is reason
    assert action not in state.legal_actions(seat)
    assert state.to_dict() == before
    assert GameState.from_dict(before) == state


def expect_invalid(state: GameState, seat: Any, action: Any) -> None:
    before = state.to_dict()
    with pytest.raises(InvalidActionError):
        state.apply_action(seat, action)
    with pytest.raises(InvalidActionError):
        state.check(seat, action)
    assert state.to_dict() == before


def penalty(rules: RuleSet, hand_codes: Sequence[str]) -> int:
    return sum(rules.penalty(c) for c in cards_from_codes(hand_codes, rules.decks, rules.jokers))


C_OTHERS = (["2D", "3D"], ["4S", "5S"], ["6C", "7C"])


def cstate(seat0: Sequence[str], **kw: Any) -> GameState:
    """A 4-seat ``contract`` position; seats 1..3 hold small filler hands."""
    hands = kw.pop("hands", None) or [list(seat0), *map(list, C_OTHERS)]
    return build(C, hands, **kw)


def wstate(seat0: Sequence[str], seat1: Sequence[str] = ("2D", "3D"), **kw: Any) -> GameState:
    """A 2-seat ``whiskertrail`` position."""
    return build(W, [list(seat0), list(seat1)], **kw)


# ---------------------------------------------------------------------------- dealing


def _dealt(deck: Sequence[Card], seats: int, first: int, deal: int) -> list[list[int]]:
    hands: list[list[int]] = [[] for _ in range(seats)]
    for j in range(seats * deal):
        hands[(first + j) % seats].append(deck[j].id)
    return [sorted(h) for h in hands]


def test_seeded_deal_follows_the_documented_order() -> None:
    state = GameState.new_game(W, 3, SEED)
    deck = shuffled(full_deck(2, 4), round_seed(SEED, 1), 0)
    assert [[c.id for c in h] for h in state.hands] == _dealt(deck, 3, 0, 10)
    assert state.discards == (deck[30],)  # the upcard
    assert state.stock == tuple(deck[31:])
    assert (state.phase, state.current, state.round_number) == (Phase.DRAW, 0, 1)
    assert GameState.new_game(W, 3, SEED) == state
    assert GameState.new_game(W, 3, b"other") != state


def test_contract_deal_has_no_upcard() -> None:
    state = GameState.new_game(C, 4, SEED)
    assert state.discards == ()
    assert [len(h) for h in state.hands] == [10] * 4
    assert len(state.stock) == 107 - 40
    assert state.legal_actions(0) == [STOCK]


def test_arranged_deck_deals_the_named_hands() -> None:
    hands = [
        ["8H", "8S", "8D", "KC", "KD", "KH", "2C", "5D", "9S", "JH"],
        ["8H", "3C", "4C", "5C", "6C", "7C", "TD", "JD", "QD", "JK"],
    ]
    order = arrange_deck(W, 2, 1, hands, upcard="AS", stock=["QC", "QH"])
    state = GameState.new_game(W, 2, SEED, stock_orders={1: order})
    assert codes(state.hands[0]) == sorted(hands[0])
    assert codes(state.hands[1]) == sorted(hands[1])
    # the two 8H are the two physical copies: seat 0 got deck 0's
    assert cid(state, 0, "8H") == 33 and cid(state, 1, "8H") == 33 + 52
    assert [c.code for c in state.discards] == ["AS"]
    assert [c.code for c in state.stock[:2]] == ["QC", "QH"]
    assert len(state.all_cards()) == 108


def test_stock_orders_must_be_whole_decks() -> None:
    with pytest.raises(InvalidActionError):
        GameState.new_game(W, 2, SEED, stock_orders={1: list(range(107))})
    with pytest.raises(InvalidActionError):
        GameState.new_game(W, 2, SEED, stock_orders={9: list(range(108))})
    with pytest.raises(InvalidActionError):
        GameState.new_game(C, 3, SEED)  # contract is played by 4 seats
    with pytest.raises(InvalidActionError):
        GameState.new_game(W, 5, SEED)


@pytest.mark.parametrize("round_number", range(1, 8))
def test_round_k_starts_with_seat_k_mod_n(round_number: int) -> None:
    seats = 3
    goer = (round_number + 1) % seats  # any seat: it goes out by discarding its last card
    hands = [["2C", "3C"], ["4D", "5D"], ["6H", "7H"]]
    hands[goer] = ["9S"]
    state = build(W, hands, round_number=round_number, current=goer)
    nxt, events = play_events(state, goer, Discard(cid(state, goer, "9S")))
    assert nxt.round_number == round_number + 1
    assert nxt.current == round_number % seats  # round k (from 0) starts with seat k mod n
    assert nxt.phase is Phase.DRAW
    deck = shuffled(full_deck(2, 4), round_seed(SEED, round_number + 1), 0)
    deal = W.contract(round_number + 1).deal
    assert [[c.id for c in h] for h in nxt.hands] == _dealt(deck, seats, nxt.current, deal)
    assert types_of(events)[-2:] == ["round_started", "turn_started"]
    assert event(events, EventType.TURN_STARTED).seat == nxt.current


# ---------------------------------------------------------------------------- drawing


def test_whiskertrail_draws_from_stock_or_the_first_upcard() -> None:
    state = wstate(["2C", "9S"], phase=Phase.DRAW, discards=["KH"], stock=["5D"])
    assert state.legal_actions(0) == [STOCK, PILE]
    assert state.legal_actions(1) == []
    from_stock, events = play_events(state, 0, STOCK)
    assert codes(from_stock.hands[0]) == ["2C", "5D", "9S"]
    assert from_stock.phase is Phase.PLAY and from_stock.taken_from_discard is None
    drew = event(events, EventType.DREW)
    assert drew.for_seat(0)["card"]["code"] == "5D"
    assert "card" not in drew.for_seat(1) and "card" not in drew.for_seat(None)
    from_pile = play(state, 0, PILE)
    assert codes(from_pile.hands[0]) == ["2C", "9S", "KH"]
    assert from_pile.discards == ()
    assert from_pile.taken_from_discard == cid(from_pile, 0, "KH")


def test_the_first_face_up_card_of_a_new_game_may_be_drawn() -> None:
    state = GameState.new_game(W, 2, SEED)
    upcard = state.discards[-1]
    nxt = play(state, 0, PILE)
    assert upcard in nxt.hands[0] and nxt.discards == ()


def test_contract_draws_from_the_stock_only() -> None:
    state = cstate(["2C", "9S"], phase=Phase.DRAW, discards=["KH"])
    assert state.legal_actions(0) == [STOCK]
    expect_illegal(state, 0, PILE, Reason.DISCARD_DRAW_NOT_ALLOWED)


def test_draw_phase_refusals() -> None:
    drawing = wstate(["2C", "9S"], phase=Phase.DRAW, discards=["KH"])
    expect_illegal(drawing, 0, Discard(cid(drawing, 0, "2C")), Reason.MUST_DRAW_FIRST)
    expect_illegal(drawing, 1, STOCK, Reason.NOT_YOUR_TURN)
    playing = wstate(["2C", "9S"], discards=["KH"])
    expect_illegal(playing, 0, STOCK, Reason.ALREADY_DREW)
    empty_pile = wstate(["2C", "9S"], phase=Phase.DRAW)
    expect_illegal(empty_pile, 0, PILE, Reason.DISCARD_PILE_EMPTY)


# ---------------------------------------------------------------------------- discarding


def test_card_taken_from_the_pile_cannot_be_discarded_but_its_twin_can() -> None:
    state = wstate(["2C", "7H"], phase=Phase.DRAW, discards=["7H"])
    taken = state.discards[-1].id
    drawn = play(state, 0, PILE)
    assert drawn.taken_from_discard == taken
    expect_illegal(drawn, 0, Discard(taken), Reason.BLOCKED_DISCARD)
    twin = next(c.id for c in drawn.hands[0] if c.code == "7H" and c.id != taken)
    assert twin % 52 == taken % 52
    after = play(drawn, 0, Discard(twin))
    assert after.discards[-1].id == twin and after.current == 1
    # the block lasts one turn only: the card is an ordinary card next turn
    later = build(W, [["2C", "7H"], ["3D", "4D"]], current=0)
    assert Discard(cid(later, 0, "7H")) in later.legal_actions(0)


def test_action_leaving_only_the_taken_card_is_refused() -> None:
    # seat 0 is open and holds 9H (fits the run) and KS, taken from the pile
    state = wstate(
        ["9H", "KS"],
        ["2D", "3D"],
        table=[(1, "run", ["5H", "6H", "7H", "8H"]), (0, "set", ["4C", "4D", "4S"])],
        taken="KS",
    )
    expect_illegal(state, 0, LayOff(cid(state, 0, "9H"), 0), Reason.LAST_CARD_BLOCKED)
    assert state.legal_actions(0) == [Discard(cid(state, 0, "9H"))]
    # laying off the taken card itself is fine
    ks = cid(state, 0, "KS")
    with_k = build(
        W,
        [["9H", "KS"], ["2D", "3D"]],
        table=[(1, "run", ["5H", "6H", "7H", "8H"]), (0, "set", ["KC", "KD", "KH"])],
        taken="KS",
    )
    assert LayOff(ks, 1) in with_k.legal_actions(0)
    play(with_k, 0, LayOff(ks, 1))


def test_contract_or_extra_meld_leaving_only_the_taken_card_is_refused() -> None:
    # round 1 (2 sets of 3): the hand is both sets plus the card taken from the pile
    state = wstate(["8H", "8S", "8D", "KC", "KD", "KH", "2S"], taken="2S")
    expect_illegal(state, 0, LayContract(), Reason.LAST_CARD_BLOCKED)
    # the same hand when the 2S came from the stock: laying down is fine
    free = wstate(["8H", "8S", "8D", "KC", "KD", "KH", "2S"])
    assert LayContract() in free.legal_actions(0)
    # an extra meld that would leave the taken card alone
    meld = wstate(
        ["5C", "6C", "7C", "8C", "2S"], table=[(0, "set", ["9D", "9S", "9H"])], taken="2S"
    )
    spec = MeldSpec(RUN, tuple(cid(meld, 0, x) for x in ("5C", "6C", "7C", "8C")))
    expect_illegal(meld, 0, ExtraMeld(spec), Reason.LAST_CARD_BLOCKED)
    assert all(not isinstance(a, ExtraMeld) for a in meld.legal_actions(0))


def test_discard_ends_the_turn_and_passes_to_the_next_seat() -> None:
    state = build(W, [["2C"], ["3D"], ["4H", "9S"]], current=2)
    nxt, events = play_events(state, 2, Discard(cid(state, 2, "9S")))
    assert (nxt.current, nxt.phase, nxt.turns_completed) == (0, Phase.DRAW, 1)
    assert nxt.discards[-1].code == "9S"
    assert types_of(events) == ["discarded", "turn_ended", "turn_started"]


# ---------------------------------------------------------------------------- laying the contract


WHISKER_HAND = ["8H", "8S", "8D", "KC", "KD", "KH", "2C", "5D", "9S", "JH", "3C"]


def test_whiskertrail_lays_the_contract_automatically() -> None:
    state = wstate(WHISKER_HAND)
    assert LayContract() in state.legal_actions(0)
    nxt, events = play_events(state, 0, LayContract())
    assert sorted(sorted(m) for m in meld_codes(nxt)) == [["8D", "8H", "8S"], ["KC", "KD", "KH"]]
    assert all(m.owner == 0 for m in nxt.table)
    assert nxt.opened == (True, False) and nxt.laid_this_turn
    assert codes(nxt.hands[0]) == ["2C", "3C", "5D", "9S", "JH"]
    laid = event(events, EventType.LAID_CONTRACT)
    assert laid.public["automatic"] is True and len(laid.public["melds"]) == 2
    expect_illegal(nxt, 0, LayContract(), Reason.ALREADY_OPEN)


def test_whiskertrail_has_no_explicit_contract() -> None:
    state = wstate(WHISKER_HAND)
    spec = (
        MeldSpec(SET, tuple(cid(state, 0, x) for x in ("8H", "8S", "8D"))),
        MeldSpec(SET, tuple(cid(state, 0, x) for x in ("KC", "KD", "KH"))),
    )
    expect_illegal(state, 0, LayContract(spec), Reason.EXPLICIT_SELECTION_NOT_ALLOWED)


def test_whiskertrail_contract_melds_have_exactly_their_size() -> None:
    state = wstate(["8H", "8S", "8D", "8C", "KC", "KD", "KH", "KS", "2C", "5D", "9S"])
    nxt = play(state, 0, LayContract())
    assert [len(m.cards) for m in nxt.table] == [3, 3]
    left = codes(nxt.hands[0])
    assert sum(1 for x in left if x[0] == "8") == 1 and sum(1 for x in left if x[0] == "K") == 1


def test_contract_contract_melds_are_minimums() -> None:
    state = cstate(["8H", "8S", "8D", "8C", "KC", "KD", "KH", "2C", "5D", "9S", "4H"])
    nxt = play(state, 0, LayContract())
    assert sorted(len(m.cards) for m in nxt.table) == [3, 4]  # all four 8s laid
    spec = (
        MeldSpec(SET, tuple(cid(state, 0, x) for x in ("8H", "8S", "8D", "8C"))),
        MeldSpec(SET, tuple(cid(state, 0, x) for x in ("KC", "KD", "KH"))),
    )
    explicit = play(state, 0, LayContract(spec), listed=False)
    assert meld_codes(explicit) == [["8C", "8D", "8H", "8S"], ["KC", "KD", "KH"]]


def test_contract_not_available_is_refused() -> None:
    state = wstate(["8H", "8S", "KD", "KH", "2C", "5D", "9S", "JH", "3C", "4D", "6S"])
    expect_illegal(state, 0, LayContract(), Reason.CONTRACT_NOT_AVAILABLE)
    contract = cstate(["8H", "8S", "KD", "KH", "2C", "5D", "9S", "JH", "3C", "4D", "6S"])
    expect_illegal(contract, 0, LayContract(), Reason.CONTRACT_NOT_AVAILABLE)


def test_contract_explicit_selection_is_validated() -> None:
    # round 2: 1 group + 1 sequence
    hand = ["9D", "TD", "JD", "JK", "3C", "3D", "3H", "3S", "KC", "2H", "6S"]
    state = cstate(hand, round_number=2)
    jk = cid(state, 0, "JK")
    group = MeldSpec(SET, tuple(cid(state, 0, x) for x in ("3C", "3D", "3H")))
    # descending cards and a named start: the joker stands for 8D, below the 9D
    seq = MeldSpec(RUN, (cid(state, 0, "JD"), cid(state, 0, "TD"), cid(state, 0, "9D"), jk), 8)
    nxt = play(state, 0, LayContract((seq, group)), listed=False)
    run = nxt.table[0]
    assert (run.rank, run.suit, run.cards[0].id) == (8, SUITS.index("D"), jk)
    assert nxt.table[1].kind is SET and nxt.opened[0]
    # the same without a start: the lowest start (joker low too)
    low = play(state, 0, LayContract((MeldSpec(RUN, seq.cards), group)), listed=False)
    assert low.table[0].rank == 8
    # wrong kinds, bad melds, cards not held, too small
    two_groups = (group, MeldSpec(SET, (cid(state, 0, "3S"), cid(state, 0, "KC"), jk)))
    expect_illegal(state, 0, LayContract(two_groups), Reason.SELECTION_DOES_NOT_MATCH_CONTRACT)
    bad_run = MeldSpec(RUN, (cid(state, 0, "9D"), cid(state, 0, "TD"), cid(state, 0, "2H"), jk))
    expect_illegal(state, 0, LayContract((bad_run, group)), Reason.INVALID_MELD)
    short = MeldSpec(RUN, (cid(state, 0, "9D"), cid(state, 0, "TD"), jk))
    expect_illegal(state, 0, LayContract((short, group)), Reason.INVALID_MELD)
    not_held = MeldSpec(SET, (cid(state, 0, "3C"), cid(state, 0, "3D"), 3 + 13 * 2 + 52))
    expect_illegal(state, 0, LayContract((seq, not_held)), Reason.CARD_NOT_IN_HAND)
    mixed_suits = MeldSpec(SET, tuple(cid(state, 0, x) for x in ("3C", "3D", "3H", "3S")))
    play(state, 0, LayContract((seq, mixed_suits)), listed=False)
    expect_invalid(state, 0, LayContract((seq, MeldSpec(SET, (*group.cards, group.cards[0])))))
    expect_invalid(state, 0, LayContract((seq, group, MeldSpec(SET, seq.cards[:3]))))
    expect_invalid(state, 0, LayContract(()))


def test_explicit_melds_must_reach_their_requirement_sizes_in_a_custom_rule_set() -> None:
    # rules come from the fields, not the name: a contract-like set whose round 1 asks
    # for a group and a sequence of at least 5
    house = dataclasses.replace(
        C,
        name="house",
        contracts=(Contract("group + long sequence", (MeldRequirement(SET, 3), _R5), deal=10),),
    )
    hand = ["3C", "3D", "3H", "4S", "5S", "6S", "7S", "8S", "KD", "2H"]
    state = build(house, [hand, ["2D"], ["4D"], ["5D"]])
    group = MeldSpec(SET, tuple(cid(state, 0, x) for x in ("3C", "3D", "3H")))
    four = MeldSpec(RUN, tuple(cid(state, 0, x) for x in ("4S", "5S", "6S", "7S")))
    expect_illegal(state, 0, LayContract((group, four)), Reason.SELECTION_DOES_NOT_MATCH_CONTRACT)
    five = MeldSpec(RUN, (*four.cards, cid(state, 0, "8S")))
    nxt = play(state, 0, LayContract((group, five)), listed=False)
    assert [len(m.cards) for m in nxt.table] == [3, 5]
    assert LayContract() in state.legal_actions(0)


def test_contract_groups_need_distinct_suits() -> None:
    state = cstate(["8H", "8H", "8D", "KC", "KD", "KH", "2C", "5D", "9S", "4H", "6H"])
    twins = MeldSpec(SET, (cid(state, 0, "8H"), cid(state, 0, "8H", 1), cid(state, 0, "8D")))
    kings = MeldSpec(SET, tuple(cid(state, 0, x) for x in ("KC", "KD", "KH")))
    expect_illegal(state, 0, LayContract((twins, kings)), Reason.INVALID_MELD)
    expect_illegal(state, 0, LayContract(), Reason.CONTRACT_NOT_AVAILABLE)


# decision table: must a player lay the contract as soon as it can? -- no (both)
@pytest.mark.parametrize("rules", [W, C])
def test_laying_down_is_the_players_choice(rules: RuleSet) -> None:
    hand = ["8H", "8S", "8D", "KC", "KD", "KH", "2C", "5D", "9S", "JH", "3C"]
    state = wstate(hand) if rules is W else cstate(hand)
    legal = state.legal_actions(0)
    assert LayContract() in legal and Discard(cid(state, 0, "2C")) in legal
    nxt = play(state, 0, Discard(cid(state, 0, "2C")))
    assert not nxt.opened[0] and not nxt.table


# decision table: two sets of the same rank in one contract -- allowed (both)
def test_two_sets_of_one_rank_whiskertrail() -> None:
    hand = ["8H", "8S", "8D", "8C", "8H", "8S", "8D", "8C", "2C", "5D"]
    state = wstate(hand, round_number=6)  # 2 sets of 4
    nxt = play(state, 0, LayContract())
    assert sorted(len(m.cards) for m in nxt.table) == [4, 4]
    assert all(m.rank == 8 for m in nxt.table)
    assert codes(nxt.hands[0]) == ["2C", "5D"]


def test_two_groups_of_one_rank_contract_each_with_distinct_suits() -> None:
    hand = ["8H", "8S", "8D", "8C", "8H", "8S", "2C", "5D", "9S", "4H", "6H"]
    state = cstate(hand)
    first = MeldSpec(SET, tuple(cid(state, 0, x) for x in ("8H", "8S", "8D")))
    second = MeldSpec(SET, (cid(state, 0, "8C"), cid(state, 0, "8H", 1), cid(state, 0, "8S", 1)))
    nxt = play(state, 0, LayContract((first, second)), listed=False)
    assert [m.rank for m in nxt.table] == [8, 8]
    auto = play(state, 0, LayContract())
    assert sorted(len(m.cards) for m in auto.table) == [3, 3]
    for m in auto.table:
        assert len({c.suit for c in m.cards}) == len(m.cards)


# decision table: two runs of one suit, even adjacent -- allowed: separate melds (both)
def test_two_adjacent_runs_of_one_suit_whiskertrail() -> None:
    hand = ["3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "2C", "KD"]
    state = wstate(hand, round_number=5)  # 2 runs of 4
    nxt = play(state, 0, LayContract())
    assert sorted((m.rank, m.high) for m in nxt.table) == [(3, 6), (7, 10)]


def test_two_adjacent_runs_of_one_suit_contract() -> None:
    hand = ["3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "2C", "KD", "5H"]
    state = cstate(hand, round_number=3)  # 2 sequences
    low = MeldSpec(RUN, tuple(cid(state, 0, x) for x in ("3S", "4S", "5S", "6S")))
    high = MeldSpec(RUN, tuple(cid(state, 0, x) for x in ("7S", "8S", "9S", "TS")))
    nxt = play(state, 0, LayContract((low, high)), listed=False)
    assert [(m.rank, m.high) for m in nxt.table] == [(3, 6), (7, 10)]
    assert LayContract() in state.legal_actions(0)


# ---------------------------------------------------------------------------- lay-offs


# decision table: extra melds or lay-offs before opening -- refused (both)
def test_lay_offs_and_extra_melds_before_opening_are_refused() -> None:
    table: list[TableEntry] = [(1, "run", ["5H", "6H", "7H", "8H"])]
    w = wstate(["9H", "4C", "5C", "6C", "7C"], table=table)
    expect_illegal(w, 0, LayOff(cid(w, 0, "9H"), 0), Reason.NOT_OPEN)
    run = MeldSpec(RUN, tuple(cid(w, 0, x) for x in ("4C", "5C", "6C", "7C")))
    expect_illegal(w, 0, ExtraMeld(run), Reason.NOT_OPEN)
    c = cstate(["9H", "4C", "5C", "6C", "7C"], table=table)
    expect_illegal(c, 0, LayOff(cid(c, 0, "9H"), 0), Reason.NOT_OPEN)


def test_lay_off_ends_move_after_each_lay_off() -> None:
    state = wstate(
        ["9H", "TH", "4H", "3C", "2D"],
        ["KS", "QS"],
        table=[(1, "run", ["5H", "6H", "7H", "8H"]), (0, "set", ["JC", "JD", "JS"])],
    )
    th = cid(state, 0, "TH")
    expect_illegal(state, 0, LayOff(th, 0), Reason.LAYOFF_DOES_NOT_FIT)
    state = play(state, 0, LayOff(cid(state, 0, "9H"), 0))  # onto another player's meld
    assert (state.table[0].rank, state.table[0].high) == (5, 9)
    state = play(state, 0, LayOff(th, 0))  # the new high end is 10
    state = play(state, 0, LayOff(cid(state, 0, "4H"), 0))
    assert [c.code for c in state.table[0].cards] == ["4H", "5H", "6H", "7H", "8H", "9H", "TH"]
    assert state.table[0].owner == 1
    expect_illegal(state, 0, LayOff(cid(state, 0, "3C"), 0), Reason.LAYOFF_DOES_NOT_FIT)
    expect_illegal(state, 0, LayOff(cid(state, 0, "3C"), 5), Reason.NO_SUCH_MELD)


def test_lay_off_on_sets() -> None:
    w = wstate(["JH", "JC", "2D"], table=[(0, "set", ["JC", "JD", "JS"])])
    w2 = play(w, 0, LayOff(cid(w, 0, "JC"), 0))  # whiskertrail: duplicate suits fine
    assert len(w2.table[0].cards) == 4
    expect_illegal(w, 0, LayOff(cid(w, 0, "JH"), 0, End.HIGH), Reason.LAYOFF_DOES_NOT_FIT)
    c = cstate(["JH", "JC", "JS", "2D"], table=[(0, "set", ["JC", "JD", "JS"])], opened=[True] * 4)
    expect_illegal(c, 0, LayOff(cid(c, 0, "JC"), 0), Reason.LAYOFF_DOES_NOT_FIT)  # suit held
    c2 = play(c, 0, LayOff(cid(c, 0, "JH"), 0))
    expect_illegal(c2, 0, LayOff(cid(c2, 0, "JS"), 0), Reason.LAYOFF_DOES_NOT_FIT)  # full: 4


# decision table: lay off a joker -- whiskertrail refused, contract allowed (default high)
def test_whiskertrail_refuses_joker_lay_offs() -> None:
    state = wstate(["JK", "2D", "3C"], table=[(0, "run", ["5H", "6H", "7H", "8H"])])
    expect_illegal(state, 0, LayOff(cid(state, 0, "JK"), 0), Reason.LAYOFF_JOKER_NOT_ALLOWED)
    expect_illegal(
        state, 0, LayOff(cid(state, 0, "JK"), 0, End.LOW), Reason.LAYOFF_JOKER_NOT_ALLOWED
    )


def test_contract_joker_lay_off_defaults_to_the_high_end() -> None:
    table: list[TableEntry] = [
        (1, "run", ["5S", "6S", "7S", "8S"]),
        (1, "run", ["JD", "QD", "KD", "AD"]),
        (1, "run", ["AC", "2C", "3C", "4C"]),
        (1, "set", ["9C", "9D", "9H"]),
    ]
    state = cstate(["JK", "2H", "3H"], table=table, opened=[True] * 4)
    jk = cid(state, 0, "JK")
    legal = state.legal_actions(0)
    assert {a for a in legal if isinstance(a, LayOff)} == {
        LayOff(jk, 0, End.LOW),
        LayOff(jk, 0, End.HIGH),
        LayOff(jk, 1, End.LOW),  # J..A (ace high) grows downwards only
        LayOff(jk, 2, End.HIGH),  # A..4 (ace low) grows upwards only
        LayOff(jk, 3, None),
    }
    high = play(state, 0, LayOff(jk, 0), listed=False)
    assert (high.table[0].rank, high.table[0].high) == (5, 9) and high.table[0].cards[-1].id == jk
    low = play(state, 0, LayOff(jk, 0, End.LOW))
    assert (low.table[0].rank, low.table[0].cards[0].id) == (4, jk)
    top = play(state, 0, LayOff(jk, 1), listed=False)
    assert top.table[1].rank == 10  # the high end is not legal: default low
    expect_illegal(state, 0, LayOff(jk, 2, End.LOW), Reason.LAYOFF_DOES_NOT_FIT)


# decision table: natural onto the end a joker holds -- whiskertrail refused, contract: a swap
def test_whiskertrail_natural_onto_a_joker_position_is_refused() -> None:
    table: list[TableEntry] = [(1, "run", ["5S", "6S", "7S", "JK"], 5)]  # the joker is 8S
    state = wstate(["8S", "9S", "2D"], table=table, opened=[True, True])
    expect_illegal(state, 0, LayOff(cid(state, 0, "8S"), 0), Reason.POSITION_HELD_BY_JOKER)
    expect_illegal(state, 0, SwapJoker(cid(state, 0, "8S"), 0), Reason.SWAP_NOT_ALLOWED)
    nxt = play(state, 0, LayOff(cid(state, 0, "9S"), 0))
    assert nxt.table[0].cards[3].is_joker and nxt.table[0].high == 9


def test_contract_natural_onto_a_joker_position_is_a_swap() -> None:
    table: list[TableEntry] = [(1, "run", ["5S", "6S", "7S", "JK"], 5)]
    state = cstate(["8S", "8S", "2D"], table=table, opened=[True, True, False, False])
    eight = cid(state, 0, "8S")
    expect_illegal(state, 0, LayOff(eight, 0), Reason.POSITION_HELD_BY_JOKER)
    # either physical copy may be swapped in
    assert SwapJoker(eight, 0) in state.legal_actions(0)
    assert SwapJoker(cid(state, 0, "8S", 1), 0) in state.legal_actions(0)
    nxt, events = play_events(state, 0, SwapJoker(eight, 0))
    assert [c.code for c in nxt.table[0].cards] == ["5S", "6S", "7S", "8S"]
    assert "JK" in codes(nxt.hands[0]) and eight not in [c.id for c in nxt.hands[0]]
    assert event(events, EventType.JOKER_SWAPPED).public["joker"]["code"] == "JK"
    expect_illegal(state, 0, SwapJoker(cid(state, 0, "2D"), 0), Reason.SWAP_DOES_NOT_MATCH)


def test_jokers_in_sets_are_never_swapped() -> None:
    table: list[TableEntry] = [(1, "set", ["7C", "7D", "JK"])]
    state = cstate(["7H", "7S", "2D"], table=table, opened=[True, True, False, False])
    expect_illegal(state, 0, SwapJoker(cid(state, 0, "7H"), 0), Reason.SWAP_NOT_ALLOWED)
    assert not any(isinstance(a, SwapJoker) for a in state.legal_actions(0))
    w = wstate(["7H", "2D"], table=[(1, "set", ["7C", "7D", "JK"])])
    expect_illegal(w, 0, SwapJoker(cid(w, 0, "7H"), 0), Reason.SWAP_NOT_ALLOWED)


def test_a_joker_taken_back_loses_its_role() -> None:
    # before opening (swaps need no contract): take the joker that stood for 8S ...
    table: list[TableEntry] = [(1, "run", ["5S", "6S", "7S", "JK"], 5)]
    hand = ["8S", "9D", "TD", "JD", "3C", "3D", "3H", "4C", "6C", "2H", "KC"]
    state = cstate(hand, round_number=2, table=table, opened=[False, True, False, False])
    state = play(state, 0, SwapJoker(cid(state, 0, "8S"), 0))
    jk = cid(state, 0, "JK")
    # ... and lay it as the queen of diamonds in a sequence of the contract
    seq = MeldSpec(RUN, (cid(state, 0, "9D"), cid(state, 0, "TD"), cid(state, 0, "JD"), jk), 9)
    group = MeldSpec(SET, tuple(cid(state, 0, x) for x in ("3C", "3D", "3H")))
    state = play(state, 0, LayContract((seq, group)), listed=False)
    new_run = state.table[1]
    position = [c.id for c in new_run.cards].index(jk)
    assert (new_run.suit, new_run.rank_at(position)) == (SUITS.index("D"), 12)
    assert not any(c.is_joker for c in state.table[0].cards)


def test_swap_is_allowed_before_opening_and_on_the_lay_down_turn() -> None:
    table: list[TableEntry] = [(1, "run", ["5S", "6S", "7S", "JK"], 5)]
    closed = cstate(["8S", "2D"], table=table, opened=[False, True, False, False])
    assert SwapJoker(cid(closed, 0, "8S"), 0) in closed.legal_actions(0)
    laid = cstate(["8S", "2D"], table=table, opened=[True, True, False, False], laid_this_turn=True)
    play(laid, 0, SwapJoker(cid(laid, 0, "8S"), 0))


# decision table: lay the contract and go out the same turn; contract: no lay-off that turn
def test_contract_no_lay_off_on_the_lay_down_turn() -> None:
    hand = ["8H", "8S", "8D", "KC", "KD", "KH", "9S"]
    state = cstate(hand, table=[(1, "run", ["5S", "6S", "7S", "8S"])], opened=[False, True] * 2)
    state = play(state, 0, LayContract())
    nine = cid(state, 0, "9S")
    expect_illegal(state, 0, LayOff(nine, 0), Reason.LAYOFF_ON_OPENING_TURN)
    assert state.legal_actions(0) == [Discard(nine)]
    out, events = play_events(state, 0, Discard(nine))  # going out by discarding the last card
    assert out.round_number == 2 and event(events, EventType.ROUND_ENDED).seat == 0
    assert event(events, EventType.ROUND_ENDED).public["penalties"][0] == 0
    assert "claim_window_opened" not in types_of(events)  # no window after going out
    # next turn the lay-off is fine
    later = cstate(
        ["9S", "2C"], table=[(1, "run", ["5S", "6S", "7S", "8S"])], opened=[True, True] * 2
    )
    play(later, 0, LayOff(cid(later, 0, "9S"), 0))


def test_whiskertrail_lays_off_on_the_opening_turn_and_goes_out() -> None:
    hand = ["8H", "8S", "8D", "KC", "KD", "KH", "9S"]
    state = wstate(hand, table=[(1, "run", ["5S", "6S", "7S", "8S"])], opened=[False, True])
    state = play(state, 0, LayContract())
    out, events = play_events(state, 0, LayOff(cid(state, 0, "9S"), 0))
    ended = event(events, EventType.ROUND_ENDED)
    assert (ended.seat, ended.public["reason"]) == (0, "went_out")
    assert out.round_number == 2


def test_whiskertrail_lays_the_contract_and_goes_out_by_discarding() -> None:
    state = wstate(["8H", "8S", "8D", "KC", "KD", "KH", "2C"])
    state = play(state, 0, LayContract())
    out, events = play_events(state, 0, Discard(cid(state, 0, "2C")))
    ended = event(events, EventType.ROUND_ENDED)
    assert (ended.seat, ended.public["reason"], out.round_number) == (0, "went_out", 2)


def test_whiskertrail_goes_out_by_laying_the_contract() -> None:
    state = wstate(["8H", "8S", "8D", "KC", "KD", "KH"], ["2D", "QS"], scores=[5, 7])
    out, events = play_events(state, 0, LayContract())
    ended = event(events, EventType.ROUND_ENDED)
    assert (ended.seat, ended.public["penalties"]) == (0, [0, 12])
    assert out.scores == (5, 19)


def test_contract_goes_out_by_laying_every_card() -> None:
    # round 5 (2 groups + 1 sequence): the whole hand is the contract
    hand = ["8S", "8D", "8C", "KC", "KD", "KH", "KS", "4H", "5H", "6H", "7H", "8H", "9H"]
    state = cstate(hand, round_number=5)
    out, events = play_events(state, 0, LayContract())
    assert event(events, EventType.ROUND_ENDED).public["reason"] == "went_out"
    assert out.round_number == 6


# ---------------------------------------------------------------------------- extra melds


# decision table: new melds after opening -- whiskertrail extra melds, contract refused
def test_whiskertrail_extra_melds_once_open() -> None:
    state = wstate(
        ["4C", "5C", "6C", "7C", "QD", "QH", "QS", "2D", "JK", "9H", "KS"],
        table=[(0, "set", ["9C", "9D", "9S"])],
    )
    run = MeldSpec(RUN, tuple(cid(state, 0, x) for x in ("4C", "5C", "6C", "7C")))
    queens = MeldSpec(SET, tuple(cid(state, 0, x) for x in ("QD", "QH", "QS")))
    jk = cid(state, 0, "JK")
    listed = {a.meld for a in state.legal_actions(0) if isinstance(a, ExtraMeld)}
    assert listed == {
        run,
        queens,
        MeldSpec(RUN, (*run.cards, jk)),
        MeldSpec(SET, (*queens.cards, jk)),
    }
    nxt, events = play_events(state, 0, ExtraMeld(run))
    assert nxt.table[1].owner == 0 and (nxt.table[1].rank, nxt.table[1].high) == (4, 7)
    assert event(events, EventType.EXTRA_MELD).public["meld"]["index"] == 1
    with_joker = play(state, 0, ExtraMeld(MeldSpec(RUN, (*run.cards, jk))))
    assert with_joker.table[1].rank == 3 and with_joker.table[1].cards[0].id == jk
    bad = MeldSpec(SET, (cid(state, 0, "QD"), cid(state, 0, "QH"), cid(state, 0, "KS")))
    expect_illegal(state, 0, ExtraMeld(bad), Reason.INVALID_MELD)
    placed = MeldSpec(RUN, (*run.cards, jk), start=4)
    expect_illegal(state, 0, ExtraMeld(placed), Reason.EXPLICIT_SELECTION_NOT_ALLOWED)
    play(state, 0, ExtraMeld(MeldSpec(RUN, (*run.cards, jk), start=3)), listed=False)


def test_whiskertrail_extra_meld_on_the_opening_turn_and_going_out_by_meld() -> None:
    state = wstate(["8H", "8S", "8D", "KC", "KD", "KH", "4C", "5C", "6C", "7C"])
    state = play(state, 0, LayContract())
    run = MeldSpec(RUN, tuple(cid(state, 0, x) for x in ("4C", "5C", "6C", "7C")))
    out, events = play_events(state, 0, ExtraMeld(run))
    assert event(events, EventType.ROUND_ENDED).seat == 0 and out.round_number == 2


def test_whiskertrail_unsorted_extra_meld_is_normalised() -> None:
    state = wstate(
        ["7C", "4C", "6C", "5C", "2D", "QS", "QH", "QD"], table=[(0, "set", ["9C", "9D", "9S"])]
    )
    run = MeldSpec(RUN, tuple(cid(state, 0, x) for x in ("7C", "4C", "6C", "5C")))
    nxt = play(state, 0, ExtraMeld(run), listed=False)
    assert [c.code for c in nxt.table[1].cards] == ["4C", "5C", "6C", "7C"]
    queens = MeldSpec(SET, tuple(cid(state, 0, x) for x in ("QS", "QD", "QH")))
    nxt = play(state, 0, ExtraMeld(queens), listed=False)
    assert [c.code for c in nxt.table[1].cards] == ["QD", "QH", "QS"]


def test_contract_has_no_extra_melds() -> None:
    state = cstate(
        ["4C", "5C", "6C", "7C", "2D"],
        table=[(0, "set", ["9C", "9D", "9S"]), (0, "set", ["KC", "KD", "KS"])],
    )
    run = MeldSpec(RUN, tuple(cid(state, 0, x) for x in ("4C", "5C", "6C", "7C")))
    expect_illegal(state, 0, ExtraMeld(run), Reason.EXTRA_MELD_NOT_ALLOWED)
    assert not any(isinstance(a, ExtraMeld) for a in state.legal_actions(0))


def test_canonical_extra_melds_fill_gaps_with_a_joker() -> None:
    state = wstate(
        ["3D", "4D", "6D", "7D", "8H", "8C", "JK", "KS", "KS"],
        table=[(0, "set", ["9C", "9D", "9S"])],
    )
    jk = cid(state, 0, "JK")
    listed = {a.meld for a in state.legal_actions(0) if isinstance(a, ExtraMeld)}
    ids = [cid(state, 0, x) for x in ("3D", "4D", "6D", "7D")]
    assert MeldSpec(RUN, (ids[0], ids[1], jk, ids[2], ids[3])) in listed
    assert MeldSpec(SET, (cid(state, 0, "8C"), cid(state, 0, "8H"), jk)) in listed
    kings = (cid(state, 0, "KS"), cid(state, 0, "KS", 1))
    assert MeldSpec(SET, (*kings, jk)) in listed  # duplicate suits are fine in whiskertrail
    for spec in listed:
        play(state, 0, ExtraMeld(spec))


# ---------------------------------------------------------------------------- going out


@pytest.mark.parametrize("rules", [W, C])
def test_going_out_by_discard_and_scoring(rules: RuleSet) -> None:
    other = ["JK", "AS", "KD", "7C"]
    hands = [["2C"], other] + ([["2D"], ["3D"]] if rules is C else [])
    state = build(rules, hands)
    out, events = play_events(state, 0, Discard(cid(state, 0, "2C")))
    ended = event(events, EventType.ROUND_ENDED)
    joker = 25 if rules is W else 15
    assert penalty(rules, other) == joker + 15 + 10 + 7
    expected = [0, joker + 15 + 10 + 7] + ([2, 3] if rules is C else [])
    assert ended.public["penalties"] == expected
    assert list(out.scores) == expected
    assert ended.public["reason"] == "went_out" and ended.seat == 0
    assert "claim_window_opened" not in types_of(events)  # no window after going out


def test_going_out_by_lay_off_in_contract() -> None:
    state = cstate(["9S"], table=[(1, "run", ["5S", "6S", "7S", "8S"])], opened=[True] * 4)
    out, events = play_events(state, 0, LayOff(cid(state, 0, "9S"), 0))
    assert event(events, EventType.ROUND_ENDED).public["penalties"][0] == 0
    assert out.round_number == 2 and out.current == 1


def test_laid_contract_removes_no_penalty() -> None:
    state = wstate(
        ["2C"],
        ["QS", "AH", "JK"],
        table=[(1, "set", ["9C", "9D", "9S"]), (1, "set", ["KC", "KD", "KS"])],
    )
    assert state.opened == (False, True)
    out, events = play_events(state, 0, Discard(cid(state, 0, "2C")))
    assert event(events, EventType.ROUND_ENDED).public["penalties"] == [0, 10 + 15 + 25]
    assert out.scores == (0, 50)


def test_penalty_values() -> None:
    assert penalty(W, ["JK"]) == 25 and penalty(C, ["JK"]) == 15
    assert penalty(W, ["AS", "AC"]) == 30 and penalty(C, ["AD"]) == 15
    assert penalty(W, ["JH", "QD", "KS"]) == 30 and penalty(C, ["TC", "9D", "2H"]) == 21


def test_last_round_ends_the_game_and_ties_all_win() -> None:
    state = wstate(["2C"], ["TC", "QD"], round_number=8, scores=[30, 10])
    out, events = play_events(state, 0, Discard(cid(state, 0, "2C")))
    assert out.phase is Phase.GAME_OVER and out.is_terminal() and out.to_act == ()
    assert out.scores == (30, 30)
    assert out.winners() == (0, 1) and out.returns() == (-30.0, -30.0)
    ended = event(events, EventType.GAME_ENDED)
    assert ended.public["winners"] == [0, 1] and ended.public["seed"] == SEED.hex()
    assert out.legal_actions(0) == [] and out.legal_actions(1) == []
    expect_illegal(out, 1, STOCK, Reason.GAME_OVER)
    expect_illegal(out, 0, Claim(), Reason.GAME_OVER)
    alone = wstate(["2C"], ["TC", "QD"], round_number=8, scores=[30, 0])
    final = play(alone, 0, Discard(cid(alone, 0, "2C")))
    assert final.winners() == (1,)


# ---------------------------------------------------------------------------- May I?


def discard_in_contract(discarder: int = 0) -> GameState:
    hands = [["9D", "2C"], ["3C", "4C"], ["5H", "6H"], ["7S", "8S"]]
    hands[discarder] = ["9D", "2C"] if discarder == 0 else hands[discarder] + ["9D"]
    state = build(C, hands, current=discarder, stock=["QS", "QH"], discards=["KC"])
    return play(state, discarder, Discard(cid(state, discarder, "9D")))


def test_claim_window_opens_after_a_discard() -> None:
    state = discard_in_contract()
    assert state.phase is Phase.CLAIM and state.current == 1 and state.claim_discarder == 0
    assert state.to_act == (1, 2, 3)
    assert state.legal_actions(0) == []
    assert state.legal_actions(2) == [Claim(), PassClaim()]
    expect_illegal(state, 0, Claim(), Reason.OWN_DISCARD)
    expect_illegal(state, 1, STOCK, Reason.CLAIM_WINDOW_OPEN)
    expect_illegal(state, 0, Discard(cid(state, 0, "2C")), Reason.CLAIM_WINDOW_OPEN)


@pytest.mark.parametrize(
    "answers",
    [
        [(3, True), (2, True), (1, False)],
        [(1, False), (2, True), (3, True)],
        [(2, True), (3, True), (1, False)],
    ],
)
def test_may_i_priority_is_by_seat_order_not_answer_order(answers: list[tuple[int, bool]]) -> None:
    state = discard_in_contract()
    nine = state.discards[-1]
    events: list[Event] = []
    for seat, claim in answers:
        assert state.phase is Phase.CLAIM
        state, events = play_events(state, seat, Claim() if claim else PassClaim())
        assert event(events, EventType.CLAIM_ANSWERED).public["claim"] is claim
        if state.phase is Phase.CLAIM:
            expect_illegal(state, seat, PassClaim(), Reason.ALREADY_ANSWERED)
    awarded = event(events, EventType.CLAIM_AWARDED)
    assert awarded.seat == 2
    assert codes(state.hands[2]) == ["5H", "6H", "9D", "QS"]  # the discard + one penalty card
    assert nine not in state.discards and [c.code for c in state.discards] == ["KC"]
    assert state.stock[0].code == "QH"
    assert awarded.for_seat(2)["penalty"] == [{"id": cid(state, 2, "QS"), "code": "QS"}]
    assert "penalty" not in awarded.for_seat(1) and "penalty" not in awarded.for_seat(None)
    assert (state.phase, state.current) == (Phase.DRAW, 1)
    assert state.legal_actions(1) == [STOCK]


def test_the_next_seat_may_claim_and_then_draws_as_usual() -> None:
    state = discard_in_contract()
    for seat in (3, 1, 2):
        state = play(state, seat, Claim())
    assert codes(state.hands[1]) == ["3C", "4C", "9D", "QS"]
    state = play(state, 1, STOCK)
    assert codes(state.hands[1]) == ["3C", "4C", "9D", "QH", "QS"]


def test_claims_have_no_limit_and_need_no_open_seat() -> None:
    hands = [["9D", "2C", "JS"], ["3C", "4C", "TH"], ["5H", "6H"], ["7S", "8S"]]
    state = build(
        C,
        hands,
        stock=["QS", "QH", "QD", "QC"],
        discards=["KC"],
        table=[(1, "set", ["AC", "AD", "AH"])],
    )
    assert state.opened == (False, True, False, False)
    state = play(state, 0, Discard(cid(state, 0, "9D")))
    for seat in (1, 2, 3):
        state = play(state, seat, Claim())
    assert "9D" in codes(state.hands[1])  # the open seat 1 comes first
    state = play(state, 1, STOCK)
    state = play(state, 1, Discard(cid(state, 1, "TH")))
    for seat in (2, 3, 0):
        state = play(state, seat, Claim())
    assert codes(state.hands[2]) == ["5H", "6H", "QD", "TH"]
    state = play(state, 2, STOCK)
    state = play(state, 2, Discard(cid(state, 2, "5H")))
    for seat in (3, 0, 1):
        state = play(state, seat, PassClaim() if seat == 3 else Claim())
    # seat 0 (not open) wins now; its penalty card is the first card under QS..QC
    assert codes(state.hands[0]) == ["2C", "5C", "5H", "JS"]


def test_claim_priority_wraps_around_the_table() -> None:
    state = discard_in_contract(discarder=3)
    assert state.current == 0 and state.to_act == (0, 1, 2)
    state = play(state, 2, Claim())
    state = play(state, 1, Claim())
    state = play(state, 0, PassClaim())
    assert "9D" in codes(state.hands[1]) and "9D" not in codes(state.hands[2])


def test_nobody_claims() -> None:
    state = discard_in_contract()
    for seat in (2, 3, 1):
        state, events = play_events(state, seat, PassClaim())
    closed = event(events, EventType.CLAIM_WINDOW_CLOSED)
    assert closed.public["winner"] is None
    assert state.discards[-1].code == "9D" and state.phase is Phase.DRAW and state.current == 1


def test_claim_refused_while_the_stock_is_empty() -> None:
    hands = [["9D", "2C"], ["3C", "4C"], ["5H", "6H"], ["7S", "8S"]]
    state = build(C, hands, discards=["KC"], rest=3)
    state = play(state, 0, Discard(cid(state, 0, "9D")))
    assert state.stock == () and state.phase is Phase.CLAIM
    assert state.legal_actions(1) == [PassClaim()]
    expect_illegal(state, 1, Claim(), Reason.CLAIM_STOCK_EMPTY)
    play(state, 1, PassClaim())


def test_claims_outside_a_window_are_refused() -> None:
    state = cstate(["2C", "9D"], discards=["KC"])
    expect_illegal(state, 1, Claim(), Reason.NO_CLAIM_WINDOW)
    w = wstate(["2C", "9D"], discards=["KC"])
    expect_illegal(w, 1, Claim(), Reason.NO_CLAIM_WINDOW)
    expect_illegal(w, 1, PassClaim(), Reason.NO_CLAIM_WINDOW)
    after = play(w, 0, Discard(cid(w, 0, "9D")))
    assert after.phase is Phase.DRAW  # whiskertrail has no claim window


# ---------------------------------------------------------------------------- round 7


def test_contract_round_7_has_no_discards() -> None:
    state = cstate(["2C", "9D"], round_number=7)
    expect_illegal(state, 0, Discard(cid(state, 0, "9D")), Reason.NO_DISCARD_THIS_ROUND)
    assert state.legal_actions(0)[-1] == EndTurn()
    assert not any(isinstance(a, Discard) for a in state.legal_actions(0))
    nxt, events = play_events(state, 0, EndTurn())
    assert (nxt.phase, nxt.current, nxt.turns_completed) == (Phase.DRAW, 1, 1)
    assert "claim_window_opened" not in types_of(events)
    assert codes(nxt.hands[0]) == ["2C", "9D"]
    expect_illegal(nxt, 1, EndTurn(), Reason.MUST_DRAW_FIRST)
    other_round = cstate(["2C", "9D"], round_number=6)
    expect_illegal(other_round, 0, EndTurn(), Reason.END_TURN_NOT_ALLOWED)


def test_contract_round_7_ends_the_instant_a_hand_is_empty() -> None:
    state = cstate(
        ["9S"], round_number=7, table=[(1, "run", ["5S", "6S", "7S", "8S"])], opened=[True] * 4
    )
    out, events = play_events(state, 0, LayOff(cid(state, 0, "9S"), 0))
    assert out.phase is Phase.GAME_OVER
    assert event(events, EventType.ROUND_ENDED).public["penalties"][0] == 0


# ---------------------------------------------------------------------------- the stock runs out


def test_whiskertrail_first_exhaustion_reshuffles_the_pile() -> None:
    state = wstate(["2C"], ["3D"], phase=Phase.DRAW, stock=["5D"], discards=["9H"], rest="discards")
    pile = state.discards
    nxt, events = play_events(state, 0, STOCK)
    assert nxt.exhaustions == 1 and nxt.epoch == 1
    assert nxt.stock == tuple(shuffled(pile[:-1], round_seed(SEED, 1), 1))
    assert [c.code for c in nxt.discards] == ["9H"]
    assert types_of(events) == ["drew", "stock_exhausted", "stock_reshuffled"]
    assert event(events, EventType.STOCK_RESHUFFLED).public == {"cards": len(pile) - 1, "epoch": 1}
    after = play(nxt, 0, Discard(cid(nxt, 0, "2C")))
    assert after.round_number == 1 and after.phase is Phase.DRAW


def test_whiskertrail_second_exhaustion_reshuffles_again() -> None:
    state = wstate(
        ["2C"], ["3D"], phase=Phase.DRAW, stock=["5D"], discards=["9H"], rest="discards",
        exhaustions=1, epoch=1,
    )  # fmt: skip
    nxt = play(state, 0, STOCK)
    assert (nxt.exhaustions, nxt.epoch) == (2, 2)
    assert nxt.stock == tuple(shuffled(state.discards[:-1], round_seed(SEED, 1), 2))


def test_whiskertrail_third_exhaustion_settles_at_the_end_of_the_turn() -> None:
    state = wstate(
        ["2C", "AS"], ["3D", "JK"], phase=Phase.DRAW, stock=["5D"], discards=["9H"],
        rest="discards", exhaustions=2, epoch=2,
    )  # fmt: skip
    drawn, events = play_events(state, 0, STOCK)
    assert drawn.exhaustions == 3 and drawn.stock == () and drawn.round_number == 1
    assert event(events, EventType.STOCK_EXHAUSTED).public == {"count": 3, "settles": True}
    assert "stock_reshuffled" not in types_of(events)
    assert drawn.phase is Phase.PLAY  # the turn goes on
    out, events = play_events(drawn, 0, Discard(cid(drawn, 0, "5D")))
    ended = event(events, EventType.ROUND_ENDED)
    assert (ended.seat, ended.public["reason"]) == (None, "exhaustions")
    assert ended.public["penalties"] == [2 + 15, 3 + 25]
    assert out.round_number == 2 and out.scores == (17, 28)


def test_whiskertrail_going_out_after_the_third_exhaustion_ends_at_once() -> None:
    state = wstate(
        ["9H"], ["3D"], phase=Phase.DRAW, stock=["TH"], discards=["2S"], rest="discards",
        exhaustions=2, table=[(0, "run", ["5H", "6H", "7H", "8H"])],
    )  # fmt: skip
    state = play(state, 0, STOCK)
    state = play(state, 0, LayOff(cid(state, 0, "9H"), 0))
    out, events = play_events(state, 0, LayOff(cid(state, 0, "TH"), 0))
    assert event(events, EventType.ROUND_ENDED).public["reason"] == "went_out"
    assert out.round_number == 2


def test_whiskertrail_reshuffle_with_nothing_to_shuffle() -> None:
    state = wstate(["2C"], ["3D"], phase=Phase.DRAW, stock=["5D"], discards=["9H"], rest=1)
    nxt, events = play_events(state, 0, STOCK)
    assert nxt.stock == () and nxt.exhaustions == 1 and nxt.epoch == 0
    assert types_of(events) == ["drew", "stock_exhausted", "stock_not_reshuffled"]
    nxt = play(nxt, 0, Discard(cid(nxt, 0, "2C")))
    # the next player draws from the discard pile: the stock is empty
    assert nxt.legal_actions(1) == [PILE]
    expect_illegal(nxt, 1, STOCK, Reason.STOCK_EMPTY)
    nxt = play(nxt, 1, PILE)
    assert nxt.exhaustions == 1 and nxt.stock == () and codes(nxt.discards) == ["9H"]
    assert "2C" in codes(nxt.hands[1])
    nxt = play(nxt, 1, Discard(cid(nxt, 1, "3D")))
    assert nxt.legal_actions(0) == [PILE] and nxt.exhaustions == 1


@pytest.mark.parametrize(("done", "ends"), [(198, False), (199, True)])
def test_whiskertrail_turn_cap(done: int, ends: bool) -> None:
    state = wstate(["2C", "9S"], ["3D", "AC"], turns_completed=done)
    out, events = play_events(state, 0, Discard(cid(state, 0, "9S")))
    if ends:
        ended = event(events, EventType.ROUND_ENDED)
        assert ended.public["reason"] == "turn_cap" and ended.seat is None
        assert out.round_number == 2 and out.scores == (2, 18)
    else:
        assert out.round_number == 1 and out.turns_completed == 199


def test_contract_dry_stock_ends_the_round_with_nobody_out() -> None:
    hands = [["9D", "2C"], ["3C", "4C"], ["5H", "6H"], ["7S", "8S"]]
    state = build(C, hands, phase=Phase.DRAW, discards=["KC"], rest=3)
    assert state.legal_actions(0) == [STOCK]
    out, events = play_events(state, 0, STOCK)
    ended = event(events, EventType.ROUND_ENDED)
    assert (ended.seat, ended.public["reason"]) == (None, "dry")
    big = penalty(C, [c.code for c in state.hands[3]])
    assert ended.public["penalties"] == [11, 7, 11, big]
    assert out.round_number == 2 and out.scores == (11, 7, 11, big)


def test_contract_empty_stock_reshuffles_the_pile_on_a_draw() -> None:
    hands = [["9D", "2C"], ["3C", "4C"], ["5H", "6H"], ["7S", "8S"]]
    state = build(C, hands, phase=Phase.DRAW, discards=["AS", "4D", "KC"], rest=3)
    pile = state.discards
    out, events = play_events(state, 0, STOCK)
    new_stock = shuffled(pile[:-1], round_seed(SEED, 1), 1)
    assert new_stock[0] in out.hands[0] and out.stock == tuple(new_stock[1:])
    assert [c.code for c in out.discards] == ["KC"] and out.epoch == 1
    assert types_of(events) == ["stock_reshuffled", "drew"]


# ---------------------------------------------------------------------------- every reason


def _reason_cases() -> dict[Reason, tuple[GameState, int, Action]]:
    w_draw = wstate(["2C", "9S"], phase=Phase.DRAW, discards=["KH"])
    w_play = wstate(["2C", "9S", "JK"], table=[(1, "run", ["5H", "6H", "7H", "8H"])])
    w_open = wstate(["2C", "9S", "JK", "4C"], table=[(0, "run", ["5H", "6H", "7H", "8H"])])
    w_taken = wstate(["2C", "9S", "4C"], taken="9S", table=[(0, "set", ["TH", "TD", "TC"])])
    w_last = wstate(["9H", "KS"], table=[(0, "run", ["5H", "6H", "7H", "8H"])], taken="KS")
    w_no_stock = wstate(["2C"], phase=Phase.DRAW, discards=["9H"], rest=1)
    w_no_pile = wstate(["2C"], phase=Phase.DRAW)
    c_draw = cstate(["2C"], phase=Phase.DRAW, discards=["KC"])
    c_play = cstate(["2C", "9S", "8S", "3C"], table=[(1, "run", ["5S", "6S", "7S", "JK"], 5)])
    c_joker = cstate(["8S", "2C"], table=[(0, "run", ["5S", "6S", "7S", "JK"], 5)])
    c_laid = cstate(["2C", "9S"], table=[(0, "run", ["5S", "6S", "7S", "8S"])], laid_this_turn=True)
    c_twos = cstate(["2C", "2D", "2H", "5S"])
    c_window = discard_in_contract()
    answered = play(c_window, 2, PassClaim())
    empty = build(C, [["9D", "2C"], ["3C"], ["5H"], ["7S"]], discards=["KC"], rest=3)
    dry_window = play(empty, 0, Discard(cid(empty, 0, "9D")))
    r7 = cstate(["2C", "9S"], round_number=7)
    last = wstate(["2C"], ["TC"], round_number=8)
    over = play(last, 0, Discard(cid(last, 0, "2C")))
    twos = MeldSpec(SET, tuple(cid(c_twos, 0, x) for x in ("2C", "2D", "2H")))
    junk = MeldSpec(SET, tuple(cid(w_open, 0, x) for x in ("2C", "9S", "4C")))
    return {
        Reason.GAME_OVER: (over, 0, STOCK),
        Reason.NOT_YOUR_TURN: (w_draw, 1, STOCK),
        Reason.MUST_DRAW_FIRST: (w_draw, 0, Discard(cid(w_draw, 0, "2C"))),
        Reason.ALREADY_DREW: (w_play, 0, PILE),
        Reason.STOCK_EMPTY: (w_no_stock, 0, STOCK),
        Reason.DISCARD_PILE_EMPTY: (w_no_pile, 0, PILE),
        Reason.DISCARD_DRAW_NOT_ALLOWED: (c_draw, 0, PILE),
        Reason.CARD_NOT_IN_HAND: (w_play, 0, Discard(cid(w_play, 0, "2C") + 52)),
        Reason.NOT_OPEN: (w_play, 0, LayOff(cid(w_play, 0, "9S"), 0)),
        Reason.ALREADY_OPEN: (w_open, 0, LayContract()),
        Reason.CONTRACT_NOT_AVAILABLE: (w_play, 0, LayContract()),
        Reason.EXPLICIT_SELECTION_NOT_ALLOWED: (w_play, 0, LayContract((twos,))),
        Reason.SELECTION_DOES_NOT_MATCH_CONTRACT: (c_twos, 0, LayContract((twos,))),
        Reason.INVALID_MELD: (w_open, 0, ExtraMeld(junk)),
        Reason.NO_SUCH_MELD: (w_open, 0, LayOff(cid(w_open, 0, "9S"), 7)),
        Reason.LAYOFF_DOES_NOT_FIT: (w_open, 0, LayOff(cid(w_open, 0, "2C"), 0)),
        Reason.LAYOFF_JOKER_NOT_ALLOWED: (w_open, 0, LayOff(cid(w_open, 0, "JK"), 0)),
        Reason.LAYOFF_ON_OPENING_TURN: (c_laid, 0, LayOff(cid(c_laid, 0, "9S"), 0)),
        Reason.POSITION_HELD_BY_JOKER: (c_joker, 0, LayOff(cid(c_joker, 0, "8S"), 0)),
        Reason.EXTRA_MELD_NOT_ALLOWED: (c_play, 0, ExtraMeld(twos)),
        Reason.SWAP_NOT_ALLOWED: (w_open, 0, SwapJoker(cid(w_open, 0, "9S"), 0)),
        Reason.SWAP_DOES_NOT_MATCH: (c_play, 0, SwapJoker(cid(c_play, 0, "9S"), 0)),
        Reason.BLOCKED_DISCARD: (w_taken, 0, Discard(cid(w_taken, 0, "9S"))),
        Reason.LAST_CARD_BLOCKED: (w_last, 0, LayOff(cid(w_last, 0, "9H"), 0)),
        Reason.NO_DISCARD_THIS_ROUND: (r7, 0, Discard(cid(r7, 0, "2C"))),
        Reason.END_TURN_NOT_ALLOWED: (c_play, 0, EndTurn()),
        Reason.CLAIM_WINDOW_OPEN: (c_window, 1, STOCK),
        Reason.NO_CLAIM_WINDOW: (c_play, 1, PassClaim()),
        Reason.ALREADY_ANSWERED: (answered, 2, Claim()),
        Reason.OWN_DISCARD: (c_window, 0, PassClaim()),
        Reason.CLAIM_STOCK_EMPTY: (dry_window, 2, Claim()),
    }


def test_every_reason_is_covered() -> None:
    assert set(_reason_cases()) == set(Reason)


@pytest.mark.parametrize("reason", list(Reason))
def test_each_reason_refuses_and_leaves_the_state_unchanged(reason: Reason) -> None:
    state, seat, action = _reason_cases()[reason]
    expect_illegal(state, seat, action, reason)


def test_malformed_actions_are_invalid() -> None:
    state = wstate(["2C", "9S"], table=[(0, "run", ["5H", "6H", "7H", "8H"])])
    nine = cid(state, 0, "9S")
    expect_invalid(state, 2, Discard(nine))  # no seat 2
    expect_invalid(state, -1, Discard(nine))
    expect_invalid(state, True, Discard(nine))
    expect_invalid(state, 0, Discard(108))  # whiskertrail has ids 0..107
    expect_invalid(state, 0, Discard(-3))
    expect_invalid(state, 0, LayOff(nine, -1))
    expect_invalid(state, 0, "discard")
    expect_invalid(state, 0, Draw("stock"))  # type: ignore[arg-type]
    expect_invalid(state, 0, ExtraMeld(MeldSpec(SET, (nine, nine, 1))))
    expect_invalid(state, 0, ExtraMeld(MeldSpec(SET, (nine, 1, 2), start=3)))
    expect_invalid(state, 0, ExtraMeld(MeldSpec(RUN, (nine, 1, 2, 3), start=15)))
    expect_invalid(state, 0, ExtraMeld(MeldSpec(RUN, ())))
    contract = cstate(["2C"])
    expect_invalid(contract, 0, Discard(107))  # contract has 3 jokers: ids 0..106
    with pytest.raises(InvalidActionError):
        state.legal_actions(2)


# ---------------------------------------------------------------------------- legal actions


def test_listed_lay_offs_are_exactly_the_accepted_ones() -> None:
    shared: list[TableEntry] = [
        (1, "run", ["5S", "6S", "7S", "JK"], 5),
        (1, "run", ["2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD", "KD"]),
        (1, "set", ["9C", "9D", "9H"]),
        (1, "run", ["AC", "2C", "3C", "JK"]),
    ]
    ace_high: TableEntry = (1, "run", ["JH", "QH", "KH", "AH"])
    hand = ["8S", "4S", "9S", "AD", "AD", "9S", "TH", "JK", "5C", "KC", "9C"]
    positions = [
        build(W, [hand, ["2H"]], table=shared, opened=[True, True]),
        build(C, [hand, ["2H"], ["3H"], ["4H"]], table=[*shared, ace_high], opened=[True] * 4),
    ]
    for state in positions:
        listed = {(a.card, a.meld) for a in state.legal_actions(0) if isinstance(a, LayOff)}
        accepted = set()
        for c in state.hands[0]:
            for index in range(len(state.table)):
                for end in (None, End.LOW, End.HIGH):
                    try:
                        state.check(0, LayOff(c.id, index, end))
                    except IllegalActionError:
                        continue
                    accepted.add((c.id, index))
        assert listed == accepted and listed
        for action in state.legal_actions(0):
            state.check(0, action)
    # an ace fits both ends of 2..K where aces are high: both ends are listed by name
    for state, ends in zip(positions, ({None}, {End.LOW, End.HIGH}), strict=True):
        ace = cid(state, 0, "AD")
        listed_ends = {
            a.end
            for a in state.legal_actions(0)
            if isinstance(a, LayOff) and a.card == ace and a.meld == 1
        }
        assert listed_ends == ends
        low = play(state, 0, LayOff(ace, 1, End.LOW), listed=End.LOW in ends)
        assert (low.table[1].rank, low.table[1].high) == (1, 13)
    high = play(positions[1], 0, LayOff(cid(positions[1], 0, "AD"), 1, End.HIGH))
    assert (high.table[1].rank, high.table[1].high) == (2, 14)
    jokers_listed = [
        a for a in positions[1].legal_actions(0) if isinstance(a, LayOff) and a.card >= 104
    ]
    assert len(jokers_listed) == 7  # both ends of two runs, one end of two, the set
    assert not [a for a in positions[0].legal_actions(0) if isinstance(a, LayOff) and a.card >= 104]


def test_legal_actions_of_random_positions_all_apply() -> None:
    rng = random.Random(7)
    for rules, seats in ((W, 2), (C, 4)):
        state = GameState.new_game(rules, seats, SEED)
        for _ in range(300):
            if state.is_terminal():
                break
            for seat in range(seats):
                legal = state.legal_actions(seat)
                assert bool(legal) == (seat in state.to_act)
                for action in legal:
                    state.check(seat, action)
            seat = rng.choice(state.to_act)
            state = state.apply_action(seat, rng.choice(state.legal_actions(seat)))[0]


# ---------------------------------------------------------------------------- serialisation


def test_to_dict_round_trips_and_from_dict_validates() -> None:
    state = discard_in_contract()
    assert GameState.from_dict(state.to_dict()) == state
    data = state.to_dict()
    data["stock"] = data["stock"][1:]  # a card goes missing
    with pytest.raises(InvalidActionError):
        GameState.from_dict(data)
    data = state.to_dict()
    data["surprise"] = 1
    with pytest.raises(InvalidActionError):
        GameState.from_dict(data)
    data = state.to_dict()
    data["table"] = [{"kind": "run", "cards": [1, 2, 40], "rank": 2, "suit": 0, "owner": 0}]
    with pytest.raises(InvalidActionError):
        GameState.from_dict(data)
    data = state.to_dict()
    data["phase"] = "draw"  # claim answers outside a window
    with pytest.raises(InvalidActionError):
        GameState.from_dict(data)


def test_stored_form_keys_follow_the_field_list_and_defaults_may_be_left_out() -> None:
    state = discard_in_contract()
    data = state.to_dict()
    names = [f.name for f in dataclasses.fields(GameState) if f.init]
    assert list(data) == [("round" if n == "round_number" else n) for n in names]
    defaults = {f.name for f in dataclasses.fields(GameState) if f.init}
    defaults -= {f.name for f in dataclasses.fields(GameState) if f.default is dataclasses.MISSING}
    dealt = GameState.new_game(W, 3, SEED)
    short = {k: v for k, v in dealt.to_dict().items() if k not in defaults}
    assert GameState.from_dict(short) == dealt
    claim_without_answers = {k: v for k, v in data.items() if k != "claim_answers"}
    with pytest.raises(InvalidActionError, match="claim window needs"):
        GameState.from_dict(claim_without_answers)


def test_evolve_is_dataclasses_replace() -> None:
    state = discard_in_contract()
    changes: dict[str, Any] = {
        "phase": Phase.DRAW,
        "current": 2,
        "claim_answers": (),
        "turns_completed": 9,
        "taken_from_discard": state.discards[-1].id,
    }
    made = evolve(state, **changes)
    assert made == dataclasses.replace(state, **changes) and made is not state
    assert made._memo is None and made.stock is state.stock  # unchanged fields are shared
    with pytest.raises(TypeError):
        evolve(state, no_such_field=1)


def test_replaying_the_same_actions_gives_the_same_states_and_events() -> None:
    def run() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        rng = random.Random(11)
        state = GameState.new_game(W, 3, SEED)
        states: list[dict[str, Any]] = []
        events: list[dict[str, Any]] = []
        for _ in range(200):
            seat = rng.choice(state.to_act)
            state, evs = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
            states.append(state.to_dict())
            events.extend(e.to_dict() for e in evs)
        return states, events

    assert run() == run()


def test_card_ids_are_physical_cards() -> None:
    assert card(33).code == "8H" and card(33 + 52).code == "8H" and card(104).is_joker
