"""Random playouts: whole games by bots, with every invariant checked after each action."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from clients.bots import make_bot
from clients.bots.base import Bot, Situation
from clients.turn import engine_turn
from engine.actions import (
    Action,
)
from engine.events import Event
from engine.game import GameState
from engine.rulesets import RuleSet
from tests.support.agents import UniformBot
from tests.support.common import PlayoutFailure, action_text
from tests.support.invariants import InvariantChecker

# --------------------------------------------------------------------------- playouts


@dataclass
class Playout:
    """A finished random game and what it took to play it."""

    final: GameState
    steps: int
    actions: list[tuple[int, Action]]
    events: list[Event]


def random_playout(
    rules: RuleSet,
    seats: int,
    seed: bytes,
    rng: random.Random,
    *,
    check: bool = True,
    deep_every: int = 1,
    agent: Bot | None = None,
    max_steps: int = 500_000,
    keep_log: bool = False,
) -> Playout:
    """Play one game to the end with ``agent`` (default :class:`UniformBot`) at every seat,
    checking invariants after each action.

    ``deep_every``: run the expensive checks every that many steps (and at every
    round boundary); 0 never (beyond round boundaries).
    """
    player = agent if agent is not None else UniformBot()
    state, first_events = GameState.new_game_with_events(rules, seats, seed)
    checker = InvariantChecker(state, first_events) if check else None
    actions: list[tuple[int, Action]] = []
    events: list[Event] = list(first_events) if keep_log else []
    steps = 0
    last = ""
    try:
        while not state.is_terminal():
            if steps >= max_steps:
                raise AssertionError(f"no end after {max_steps} steps")
            to_act = state.to_act
            seat = to_act[rng.randrange(len(to_act))]
            last = f" by seat {seat} in {state.phase}"
            nxt, action, new_events = engine_turn(state, seat, player, rng)
            last = f" at {action_text(action)}{last}"
            steps += 1
            if keep_log:
                actions.append((seat, action))
                events.extend(new_events)
            if checker is not None:
                deep = deep_every > 0 and steps % deep_every == 0
                checker.step(state, seat, action, nxt, new_events, deep=deep)
            state = nxt
        if checker is not None:
            _check_game_over(state)
    except Exception as exc:
        raise PlayoutFailure(
            f"{rules.name} seats={seats} seed={seed.hex()} step={steps}{last}: "
            f"{type(exc).__name__}: {exc} (replay with the same rng seed and policy)"
        ) from exc
    return Playout(state, steps, actions, events)


def _check_game_over(state: GameState) -> None:
    assert state.is_terminal(), "the loop ended before the game"
    assert state.round_number == state.rules.rounds
    assert all(s >= 0 for s in state.scores)
    for seat in range(state.seats):
        assert state.legal_actions(seat) == [], "legal actions after the game ended"


def play_random_game(
    rules: RuleSet,
    seats: int,
    seed: bytes,
    rng: random.Random,
    check: bool = True,
    *,
    deep_every: int = 1,
    agent: Bot | None = None,
) -> tuple[GameState, int]:
    """Play one complete random game; returns the final state and the number of steps."""
    playout = random_playout(
        rules, seats, seed, rng, check=check, deep_every=deep_every, agent=agent
    )
    return playout.final, playout.steps


def iter_states(
    rules: RuleSet, seats: int, seed: bytes, actions: Iterable[tuple[int, Action]]
) -> Iterator[tuple[GameState, list[Event]]]:
    """Replay logged actions from a new game: yields (state after, events) per action."""
    state = GameState.new_game(rules, seats, seed)
    for seat, action in actions:
        state, events = state.apply_action(seat, action)
        yield state, events


def bot_moves(rules: RuleSet, seats: int, make: type[Bot], seed: bytes) -> list[Action]:
    """Every action of a whole game with a ``make`` bot (seeded by its seat) in each seat."""
    bots = [make(s) for s in range(seats)]
    for s, bot in enumerate(bots):
        bot.setup(rules, s)
    state = GameState.new_game(rules, seats, seed)
    rng = random.Random(0)
    out = []
    while not state.is_terminal():
        seat = state.to_act[0]
        state, action, _ = engine_turn(state, seat, bots[seat], rng)  # refuses illegal moves
        out.append(action)
    return out


def legal_game(rules: RuleSet, names: list[str], seed: bytes, rng: random.Random) -> int:
    """One whole game of the named bots, seats acting in a random order where several may
    (May I? windows); every action a bot picks must be among the legal ones. Steps."""
    state = GameState.new_game(rules, len(names), seed)
    bots = [make_bot(name, s) for s, name in enumerate(names)]
    for s, bot in enumerate(bots):
        bot.setup(rules, s)
    steps = 0
    while not state.is_terminal():
        seat = state.to_act[rng.randrange(len(state.to_act))]
        legal = state.legal_actions(seat)
        action = bots[seat].choose(Situation.from_state(state, seat), legal, rng)
        assert action in legal, (rules.name, steps, action)
        state, _ = state.apply_action(seat, action)
        steps += 1
        assert steps < 200_000
    return steps
