"""The ``search`` bot: legal moves, reproducible from its seed, within its budget, blind to
the hidden cards, and its sampled worlds hold every card once, consistent with its view."""

from __future__ import annotations

import copy
import dataclasses
import random
from collections import Counter
from collections.abc import Iterator

import pytest

from clients.bots.base import Bot, Situation
from clients.bots.expert import ExpertBot
from clients.bots.search import SearchBot, TableMemory, sample_world
from clients.turn import engine_turn
from engine.actions import Action
from engine.cards import full_deck
from engine.game import GameState, Phase
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from engine.views import seat_view

ONE_ROUND = {
    "whiskertrail": dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:1]),
    "contract": dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[1:2]),
}
SEATS = {"whiskertrail": 2, "contract": 4}


class QuickSearch(SearchBot):
    budget_rollouts = 4
    horizon_turns = 16


def _bots(rules: RuleSet, seats: int, seed: int) -> list[Bot]:
    bots: list[Bot] = [QuickSearch(seed), *(ExpertBot(seed + s) for s in range(1, seats))]
    for s, bot in enumerate(bots):
        bot.setup(rules, s)
    return bots


def _game(ruleset: str, seed: int) -> Iterator[tuple[GameState, list[Bot]]]:
    """One round, search in seat 0: each state before a move of the search seat (with
    the bots as they are then), and the end."""
    rules = ONE_ROUND[ruleset]
    seats = SEATS[ruleset]
    state = GameState.new_game(rules, seats, bytes([seed]) * 8)
    bots = _bots(rules, seats, seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        seat = state.to_act[0]
        if seat == 0:
            yield state, bots
        state, _, _ = engine_turn(state, seat, bots[seat], rng)
    yield state, bots


def _moves(ruleset: str, seed: int) -> list[Action]:
    rules = ONE_ROUND[ruleset]
    seats = SEATS[ruleset]
    state = GameState.new_game(rules, seats, bytes([seed]) * 8)
    bots = _bots(rules, seats, seed)
    rng = random.Random(seed)
    moves = []
    while not state.is_terminal():
        seat = state.to_act[0]
        legal = state.legal_actions(seat)
        state, action, _ = engine_turn(state, seat, bots[seat], rng)
        assert action in legal
        if seat == 0:
            moves.append(action)
    search = bots[0]
    assert isinstance(search, SearchBot) and search.searched > 0
    return moves


@pytest.mark.parametrize("ruleset", ["whiskertrail", "contract"])
def test_it_plays_legal_moves_and_is_reproducible_from_its_seed(ruleset: str) -> None:
    first = _moves(ruleset, 3)
    assert _moves(ruleset, 3) == first


@pytest.mark.parametrize("ruleset", ["whiskertrail", "contract"])
def test_its_choices_are_blind_to_the_hidden_cards(ruleset: str) -> None:
    """At each of its decisions, the same bot (memory and generator copied) in a state
    whose opponents' hands and stock are dealt otherwise — the same seat view — chooses
    the same move."""
    shuffler = random.Random(7)
    checked = 0
    for state, bots in _game(ruleset, 5):
        if state.is_terminal():
            break
        hidden = [c for s in range(1, state.seats) for c in state.hands[s]] + list(state.stock)
        shuffler.shuffle(hidden)
        hands, at = [state.hands[0]], 0
        for s in range(1, state.seats):
            size = len(state.hands[s])
            hands.append(tuple(sorted(hidden[at : at + size], key=lambda c: c.id)))
            at += size
        other = dataclasses.replace(state, hands=tuple(hands), stock=tuple(hidden[at:]))
        assert other != state and seat_view(other, 0) == seat_view(state, 0)
        legal = state.legal_actions(0)
        a, b = copy.deepcopy(bots[0]), copy.deepcopy(bots[0])
        rng = random.Random(1)
        assert a.choose(Situation.from_state(state, 0), legal, rng) == b.choose(
            Situation.from_state(other, 0), legal, rng
        )
        checked += 1
        if checked == 12:
            break
    assert checked == 12


@pytest.mark.parametrize("ruleset", ["whiskertrail", "contract"])
def test_it_plays_at_most_its_budget_of_rollouts_per_decision(ruleset: str) -> None:
    rules = ONE_ROUND[ruleset]
    seats = SEATS[ruleset]
    state = GameState.new_game(rules, seats, b"budget!!")
    bots = _bots(rules, seats, 1)
    search = bots[0]
    assert isinstance(search, SearchBot)
    rng = random.Random(1)
    most = 0
    while not state.is_terminal():
        seat = state.to_act[0]
        before = search.rollouts
        state, _, _ = engine_turn(state, seat, bots[seat], rng)
        most = max(most, search.rollouts - before)
    assert 0 < most <= QuickSearch.budget_rollouts


@pytest.mark.parametrize("ruleset", ["whiskertrail", "contract"])
def test_its_worlds_hold_every_card_once_as_the_seat_sees_them(ruleset: str) -> None:
    """Sampled worlds: every card of the deck exactly once; the seat's hand, the table,
    the pile's top and every size as in the view; the pile cards it remembers in the
    pile and the cards it saw an opponent take in that opponent's hand; and what it
    remembers is true of the real game."""
    rules = ONE_ROUND[ruleset]
    deck = Counter(c.id for c in full_deck(rules.decks, rules.jokers))
    worlds = 0
    for state, bots in _game(ruleset, 2):
        if state.is_terminal():
            break
        search = bots[0]
        assert isinstance(search, SearchBot)
        sit = Situation.from_state(state, 0)
        memory = copy.deepcopy(search.memory)
        memory.observe(sit)
        # the memory is true of the real game
        real_pile = [c.id for c in state.discards]
        assert set(memory.pile) <= set(real_pile)
        assert memory.unknown + len(memory.pile) == len(real_pile)
        for seat, cards in memory.held.items():
            assert cards <= {c.id for c in state.hands[seat]}
        world = sample_world(sit, memory, random.Random(worlds))
        assert world is not None
        worlds += 1
        every = [c.id for h in world.hands for c in h] + [c.id for c in world.stock]
        every += [c.id for c in world.discards] + [c.id for m in world.table for c in m.cards]
        assert Counter(every) == deck
        assert world.hands[0] == state.hands[0] and world.table == state.table
        assert [len(h) for h in world.hands] == [len(h) for h in state.hands]
        assert len(world.stock) == len(state.stock)
        assert world.discards[-1:] == state.discards[-1:]
        assert [c.id for c in world.discards[len(world.discards) - len(memory.pile) :]] == (
            memory.pile
        )
        for seat, held in memory.held.items():
            assert held <= {c.id for c in world.hands[seat]}
        assert world.legal_actions(0) == state.legal_actions(0)
        if world.phase is Phase.CLAIM:
            assert world.to_act[0] in range(world.seats)
    assert worlds > 10


def test_it_remembers_the_card_an_opponent_took_from_the_pile() -> None:
    """Two seats: it discarded X on A; at its next turn the pile has as many cards, topped
    by Y: the opponent took X (and holds it until it shows on the table or the pile)."""
    rules = WHISKERTRAIL
    deck = full_deck(rules.decks, rules.jokers)
    hand = deck[20:30]
    memory = TableMemory()

    def look(top: int, size: int, sizes: tuple[int, int] = (10, 10)) -> None:
        memory.observe(
            Situation(
                rules,
                1,
                0,
                "draw",
                hand,
                False,
                (),
                deck[top],
                None,
                2,
                0,
                sizes,
                (False, False),
                (0, 0),
                size,
                60,
            )
        )

    look(top=1, size=1)
    memory.discarded(2)
    look(top=3, size=2)  # the opponent took 2 and discarded 3
    assert memory.pile == [1, 3] and memory.held == {1: {2}}
    memory.discarded(4)
    look(top=5, size=4)  # it drew from the stock: 4 stays, 5 on it
    assert memory.pile == [1, 3, 4, 5] and memory.held == {1: {2}}
    look(top=2, size=5)  # the opponent discarded 2 again
    assert memory.pile == [1, 3, 4, 5, 2] and memory.held == {}
