"""The dead round (docs/RULES.md, rule 6), on positions and games hypothesis draws.

Positions: `contract` round 1 with every seat open (two groups each, of three or four
cards, jokers among them), seat 0 to play with a few loose cards; whatever it lays off,
the round ends dead exactly when that fills the last group and leaves cards in hand,
scored as a dry stock, the deck whole, and the same action gives the same result.
Games: round 1 played by greedy bots under the preset and without the rule, every
invariant checked after every action (a dead round never goes on), replayed to the
same events.
"""

from __future__ import annotations

import dataclasses
import random

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from clients.bots import make_bot
from clients.turn import engine_turn
from engine.actions import Action, LayOff
from engine.cards import full_deck
from engine.events import Event
from engine.game import GameState, Phase
from engine.rulesets import CONTRACT, RuleSet
from tests.support import InvariantChecker
from tests.support.scenarios import TableEntry, build

NO_DEAD = dataclasses.replace(CONTRACT, name="contract-no-dead", dead_round_ends=False)
RANKS = "A23456789TJQK"
SUITS = "CDHS"

PROPS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def open_tables(draw: st.DrawFn) -> tuple[RuleSet, GameState]:
    """A round-1 position, every seat open with two groups, seat 0 to play."""
    rules = draw(st.sampled_from([CONTRACT, NO_DEAD]))
    ranks = draw(st.permutations(RANKS))[:9]  # eight groups' ranks, and one for loose cards
    jokers = 3
    table: list[TableEntry] = []
    fitting: list[str] = []  # the cards that fit a group of three
    for i, rank in enumerate(ranks[:8]):
        suits = draw(st.permutations(SUITS))
        size = draw(st.sampled_from([3, 4, 4]))
        codes = [rank + s for s in suits[:size]]
        if jokers and draw(st.booleans()):  # a joker stands for one of the suits
            codes[draw(st.integers(0, size - 1))] = "JK"
            jokers -= 1
        table.append((i // 2, "set", codes))
        if size == 3:
            fitting += [rank + s for s in SUITS if rank + s not in codes]
    assume(fitting)  # a group of three at least: the round is not dead yet
    loose = ranks[8]
    pool = fitting + ["JK"] * jokers + [loose + s for s in "DHS"]
    hand = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4))
    others = [[loose + "C", loose + "D"], [loose + "H"], [loose + "S", loose + "C"]]
    named = hand + [c for h in others for c in h] + [c for e in table for c in e[2]]
    assume(named.count("JK") <= rules.jokers)
    assume(all(named.count(c) <= rules.decks for c in set(named) - {"JK"}))
    return rules, build(rules, [hand, *others], table=table)


def _key(events: list[Event]) -> list[tuple[str, int | None, str]]:
    return [(str(e.type), e.seat, repr(sorted(e.public.items()))) for e in events]


@PROPS
@given(drawn=open_tables(), choice=st.integers(0, 1_000))
def test_a_lay_off_ends_the_round_dead_exactly_when_it_fills_the_last_group(
    drawn: tuple[RuleSet, GameState], choice: int
) -> None:
    rules, state = drawn
    assert state.phase is Phase.PLAY and all(state.opened) and not state.round_is_dead()
    layoffs: list[Action] = [a for a in state.legal_actions(0) if isinstance(a, LayOff)]
    if not layoffs:
        return
    action = layoffs[choice % len(layoffs)]
    assert isinstance(action, LayOff)
    after, events = state.apply_action(0, action)
    again, events_again = state.apply_action(0, action)
    assert after == again and _key(events) == _key(events_again)  # deterministic
    hand_left = [c for c in state.hands[0] if c.id != action.card]
    sizes = [len(m.cards) + (1 if i == action.meld else 0) for i, m in enumerate(state.table)]
    full = all(size == 4 for size in sizes)
    ended = [e for e in events if e.type == "round_ended"]
    if not hand_left:
        assert [e.public["reason"] for e in ended] == ["went_out"]
    elif full and rules.dead_round_ends:
        assert [e.public["reason"] for e in ended] == ["dead"] and ended[0].seat is None
        penalties = [sum(rules.penalty(c) for c in h) for h in (hand_left, *state.hands[1:])]
        assert ended[0].public["penalties"] == penalties
        assert after.round_number == 2 and after.scores == tuple(penalties)
    else:
        assert ended == [] and after.round_number == 1 and not after.round_is_dead()
    deck = sorted(c.id for c in full_deck(rules.decks, rules.jokers))
    assert sorted(c.id for c in after.all_cards()) == deck  # conserved


GREEDY = settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@GREEDY
@given(rules=st.sampled_from([CONTRACT, NO_DEAD]), seed=st.binary(min_size=4, max_size=16))
def test_a_groups_round_by_greedy_bots_keeps_every_invariant_and_replays(
    rules: RuleSet, seed: bytes
) -> None:
    state, first = GameState.new_game_with_events(rules, 4, seed)
    checker = InvariantChecker(state, first)
    bots = [make_bot("greedy", s) for s in range(4)]
    for s, bot in enumerate(bots):
        bot.setup(rules, s)
    rng = random.Random(seed)
    actions: list[tuple[int, Action]] = []
    log: list[Event] = []
    reasons: list[str] = []
    while state.round_number == 1:
        seat = state.to_act[0]
        nxt, action, events = engine_turn(state, seat, bots[seat], rng)
        checker.step(state, seat, action, nxt, events, deep=False)
        actions.append((seat, action))
        log.extend(events)
        reasons += [str(e.public["reason"]) for e in events if e.type == "round_ended"]
        state = nxt
    assert len(reasons) == 1
    assert reasons[0] != "dead" or rules.dead_round_ends
    # the same actions on a fresh game: the same events
    replayed, _ = GameState.new_game_with_events(rules, 4, seed)
    again: list[Event] = []
    for seat, action in actions:
        replayed, events = replayed.apply_action(seat, action)
        again.extend(events)
    assert replayed == state and _key(again) == _key(log)
