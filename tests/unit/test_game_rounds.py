"""Scenario tests of the game state machine (engine/game/), continued from
test_game_rules.py: May I? claims, contract's round 7, the stock running out and
the turn cap, every refusal reason, legal actions and the stored form.
Positions: tests/support/scenarios.py.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from engine.actions import (
    Action,
    Claim,
    Discard,
    Draw,
    EndTurn,
    ExtraMeld,
    LayContract,
    LayOff,
    MeldSpec,
    PassClaim,
    SwapJoker,
)
from engine.cards import card
from engine.errors import IllegalActionError, InvalidActionError, Reason
from engine.events import Event, EventType
from engine.game import GameState, Phase
from engine.melds import End
from engine.shuffle import round_seed, shuffled
from tests.support.scenarios import (
    PILE,
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
    penalty,
    play,
    play_events,
    types_of,
    wstate,
)

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
    made = state.evolve(**changes)
    assert made == dataclasses.replace(state, **changes) and made is not state
    assert made._memo is None and made.stock is state.stock  # unchanged fields are shared
    with pytest.raises(TypeError):
        state.evolve(no_such_field=1)  # type: ignore[call-arg]


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
