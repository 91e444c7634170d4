"""The ``search`` bot: legal moves, reproducible from its seed, within its budget, blind to
the hidden cards, and its sampled worlds hold every card once, consistent with its view."""

from __future__ import annotations

import copy
import dataclasses
import random
from collections import Counter
from collections.abc import Iterator, Sequence

import pytest

from clients.bots.base import Bot, Situation
from clients.bots.expert import ExpertBot
from clients.bots.search import SearchBot, TableMemory, sample_world
from clients.turn import engine_turn
from engine.actions import Action, Draw, DrawSource
from engine.cards import full_deck
from engine.game import GameState, Phase
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from engine.views import seat_view

ONE_ROUND = {
    "whiskertrail": dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:1]),
    "contract": dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[1:2]),
}
ONE_ROUND["whiskertrail-4"] = ONE_ROUND["whiskertrail"]
SEATS = {"whiskertrail": 2, "contract": 4, "whiskertrail-4": 4}


class QuickSearch(SearchBot):
    worlds = 2
    min_worlds = 1
    min_overrule = 2
    horizon_turns = 16
    search_discards = {"whiskertrail": "all", "contract": "all"}  # noqa: RUF012


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
    assert 0 < most <= QuickSearch.worlds * QuickSearch.max_candidates == search.budget_rollouts


@pytest.mark.parametrize("ruleset", ["whiskertrail", "contract", "whiskertrail-4"])
def test_its_worlds_hold_every_card_once_as_the_seat_sees_them(ruleset: str) -> None:
    """Sampled worlds: every card of the deck exactly once; the seat's hand, the table,
    the pile's top and every size as in the view; the pile cards it remembers in the
    pile and the cards it saw an opponent take in that opponent's hand; and what it
    remembers is true of the real game."""
    rules = ONE_ROUND[ruleset]
    deck = Counter(c.id for c in full_deck(rules.decks, rules.jokers))
    worlds = 0
    seeds = (2, 3, 4, 5, 6) if SEATS[ruleset] > 2 else (2,)  # fewer looks a round at four seats
    for state, bots in (x for seed in seeds for x in _game(ruleset, seed)):
        if state.is_terminal():
            continue
        search = bots[0]
        assert isinstance(search, SearchBot)
        sit = Situation.from_state(state, 0)
        memory = copy.deepcopy(search.memory)
        memory.observe(sit)
        # the memory is true of the real game
        real_pile = [c.id for c in state.discards]
        assert set(memory.pile) <= set(real_pile), "it believes a taken card is in the pile"
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


class NeverOverrules(SearchBot):
    """Searches every decision it may, with a bar no challenger can clear."""

    worlds = 2
    min_worlds = 2
    horizon_turns = 8
    margin = float("inf")
    search_discards = {"whiskertrail": "all", "contract": "all"}  # noqa: RUF012


@pytest.mark.parametrize("ruleset", ["whiskertrail", "contract"])
def test_without_an_overrule_it_plays_exactly_expert(ruleset: str) -> None:
    """Its moves are expert's unless a search overrules one: with no overrule possible,
    a round played with it in seat 0 is the round played with expert there, move for move
    (its searches change no memory of the expert it plays over)."""
    rules = ONE_ROUND[ruleset]
    seats = SEATS[ruleset]

    def play(first: Bot) -> list[Action]:
        bots: list[Bot] = [first, *(ExpertBot(9 + s) for s in range(1, seats))]
        for s, bot in enumerate(bots):
            bot.setup(rules, s)
        state = GameState.new_game(rules, seats, b"sameplay")
        rng = random.Random(4)
        moves = []
        while not state.is_terminal():
            seat = state.to_act[0]
            state, action, _ = engine_turn(state, seat, bots[seat], rng)
            moves.append(action)
        return moves

    search = NeverOverrules(9)
    assert play(search) == play(ExpertBot(9))
    assert search.searched > 0 and search.overruled == 0


def test_it_does_not_search_the_rounds_the_turn_cap_ends() -> None:
    """Contract's rounds of sets only (1 and 4) run to the 200-turn cap; rolling one out
    costs 5-10x another round, so the bot plays expert's moves there without a search."""
    rules = dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[:1])
    bots: list[Bot] = [QuickSearch(2), *(ExpertBot(s) for s in range(1, 4))]
    for s, bot in enumerate(bots):
        bot.setup(rules, s)
    state = GameState.new_game(rules, 4, b"capround")
    rng = random.Random(2)
    while not state.is_terminal():
        seat = state.to_act[0]
        state, _, _ = engine_turn(state, seat, bots[seat], rng)
    search = bots[0]
    assert isinstance(search, SearchBot)
    assert search.decisions > 30 and search.searched == 0 and search.rollouts == 0


class Scripted(SearchBot):
    """Rollout values given per candidate: (expert's move, the challenger) per world."""

    worlds = 8
    values: list[tuple[float, float]] = []  # noqa: RUF012

    def _rollout(
        self,
        world: GameState,
        seat: int,
        action: Action,
        base: ExpertBot,
        others: Sequence[ExpertBot] | None = None,
    ) -> float:
        self.rollouts += 1
        expert, challenger = self.values[(self.rollouts - 1) // 2]
        return expert if self.rollouts % 2 else challenger


@pytest.mark.parametrize(
    ("values", "overrule", "worlds"),
    [
        ([(20.0, 10.0), (30.0, 19.0), (25.0, 16.0), (40.0, 31.0)] * 2, True, 8),  # 10 a world
        ([(20.0, 18.0)] * 8, False, 8),  # 2 a world: under the 3-point margin
        ([(60.0, 0.0), (0.0, 40.0), (50.0, 0.0), (0.0, 30.0)] * 2, False, 8),  # noise
        ([(10.0, 10.0)] * 8, False, 3),  # no challenger ahead after 3 worlds: stop
        ([(10.0, 20.0)] * 8, False, 3),
    ],
)
def test_it_overrules_expert_only_with_strong_evidence(
    values: list[tuple[float, float]], overrule: bool, worlds: int
) -> None:
    """A challenger replaces expert's move only when it saves ``margin`` points a round on
    average over at least ``min_overrule`` paired worlds and ``z`` (2.5) standard errors;
    once ``min_worlds`` are played with no challenger ahead, the search stops."""
    state = GameState.new_game(WHISKERTRAIL, 2, b"scripted")
    while state.to_act[0] != 0 or Draw(DrawSource.DISCARD) not in state.legal_actions(0):
        state, _, _ = engine_turn(state, state.to_act[0], ExpertBot(0), random.Random(0))
    bot = Scripted(1)
    bot.values = values
    bot.setup(WHISKERTRAIL, 0)
    sit = Situation.from_state(state, 0)
    bot.memory.observe(sit)
    expert, other = Draw(DrawSource.STOCK), Draw(DrawSource.DISCARD)
    chosen = bot._search(sit, [expert, other], bot.base.clone())
    assert chosen == (other if overrule else expert)
    assert bot.rollouts == 2 * worlds
