"""Scenario tests of the game state machine (engine/game/): dealing, drawing, discarding,
laying the contract, lay-offs, joker swaps, extra melds and going out.

One or more tests for every rule of RULES.md and for both columns of every row of
its decision table, plus the engine's own decisions (docs/DECISIONS.md); the rest
(May I?, round 7, the stock running out, every refusal reason, legal actions and
the stored form) are in test_game_rounds.py.  Positions: tests/support/scenarios.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from engine.actions import (
    Claim,
    Discard,
    ExtraMeld,
    LayContract,
    LayOff,
    MeldSpec,
    SwapJoker,
)
from engine.cards import SUITS, Card, full_deck
from engine.errors import InvalidActionError, Reason
from engine.events import EventType
from engine.game import GameState, Phase, arrange_deck
from engine.melds import End
from engine.rulesets import (
    Contract,
    MeldRequirement,
    RuleSet,
)
from engine.shuffle import round_seed, shuffled
from tests.support.scenarios import (
    PILE,
    R5,
    RUN,
    SEED,
    SET,
    STOCK,
    C,
    TableEntry,
    W,
    build,
    cid,
    codes,
    cstate,
    event,
    expect_illegal,
    expect_invalid,
    meld_codes,
    penalty,
    play,
    play_events,
    types_of,
    wstate,
)

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
        contracts=(Contract("group + long sequence", (MeldRequirement(SET, 3), R5), deal=10),),
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
    c = cstate(
        ["JH", "JC", "JS", "2D"],
        table=[(0, "set", ["JC", "JD", "JS"])],
        opened=[True, True, True, False],
    )
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
