"""One situation for a bot, in process or over the API: ``Situation.from_pb`` of a seat's
view message is exactly ``Situation.from_state`` of the engine state, every field.

In process a bot gets ``Situation.from_state``; through the API (``clients.turn.
wire_choice``) the one read from the seat's view message.  Compared here at every
step of real games, for every seat: the golden games (both presets and two custom rule
sets, random and greedy play, every seat count) and random games drawn by hypothesis;
and each field is shown to be read from the message (a message changed in that field
gives a situation changed in it), so the comparison cannot pass by reading nothing.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clients.bots.base import Situation
from engine.actions import action_from_dict
from engine.game import GameState
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from engine.views import build_seat_view
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from tests.golden_games import load, rule_sets
from tests.support import CUSTOM_MAYI, CUSTOM_MIX
from tests.support.wire import wire_situation


def assert_same(wire: Situation, direct: Situation, where: str) -> None:
    """Field by field: equal values of the same types (a list is not a tuple, nor a
    number a bool), down to the items of the tuples."""
    for name in Situation._fields:
        got, expected = getattr(wire, name), getattr(direct, name)
        assert type(got) is type(expected), (where, name, got, expected)
        assert got == expected, (where, name, got, expected)
        if isinstance(expected, tuple):
            assert [type(x) for x in got] == [type(x) for x in expected], (where, name)


def check_every_seat(state: GameState, where: str) -> None:
    for seat in range(state.seats):
        assert_same(wire_situation(state, seat), Situation.from_state(state, seat), where)


# --------------------------------------------------------------------------- the golden games


def _golden_games() -> list[tuple[int, dict[str, Any]]]:
    """The first golden game of each rule set, seat count and kind of play."""
    chosen: dict[tuple[str, int, str], tuple[int, dict[str, Any]]] = {}
    for index, transcript in enumerate(load()):
        key = (transcript["rules"]["name"], transcript["seats"], transcript["players"])
        chosen.setdefault(key, (index, transcript))
    return list(chosen.values())


GOLDEN = _golden_games()


@pytest.mark.parametrize("name", [r.name for r in rule_sets()])
def test_every_seats_situation_is_the_same_along_the_golden_games(name: str) -> None:
    games = [(i, t) for i, t in GOLDEN if t["rules"]["name"] == name]
    assert {t["players"] for _, t in games} == {"random", "greedy"}
    phases: set[str] = set()
    for index, transcript in games:
        rules = RuleSet.from_dict(transcript["rules"])
        state = GameState.new_game(rules, transcript["seats"], bytes.fromhex(transcript["seed"]))
        for step, (seat, action, _, _) in enumerate(transcript["steps"]):
            check_every_seat(state, f"golden game {index}, step {step}")
            phases.add(state.phase.value)
            state, _ = state.apply_action(seat, action_from_dict(action))
        check_every_seat(state, f"golden game {index}, the end")
        phases.add(state.phase.value)
    assert {"draw", "play", "game_over"} <= phases


# --------------------------------------------------------------------------- random games


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=st.sampled_from([WHISKERTRAIL, CONTRACT, CUSTOM_MIX, CUSTOM_MAYI]),
    data=st.data(),
    seed=st.binary(min_size=1, max_size=8),
    choices=st.integers(0, 2**32 - 1),
)
def test_every_seats_situation_is_the_same_along_random_games(
    rules: RuleSet, data: st.DataObject, seed: bytes, choices: int
) -> None:
    seats = data.draw(st.integers(rules.min_players, rules.max_players))
    rng = random.Random(choices)
    state = GameState.new_game(rules, seats, seed)
    for step in range(data.draw(st.integers(50, 400))):
        check_every_seat(state, f"step {step}")
        if state.is_terminal():
            break
        seat = state.to_act[rng.randrange(len(state.to_act))]
        state, _ = state.apply_action(seat, rng.choice(state.legal_actions(seat)))


# --------------------------------------------------------------------------- every field read

_Change = Callable[[pb.View], None]


def _flip_opened(seat: int) -> _Change:
    def change(view: pb.View) -> None:
        view.players[seat].opened = not view.players[seat].opened

    return change


def _other_seat(view: pb.View) -> None:
    view.seat = (view.seat + 1) % view.seats


def _one_card_less(view: pb.View) -> None:
    del view.hand[0]


def _one_meld_less(view: pb.View) -> None:
    del view.table[-1]


def _no_discard_top(view: pb.View) -> None:
    view.ClearField("discard_top")


def _taken(view: pb.View) -> None:
    view.taken_from_discard.CopyFrom(view.hand[0])


def _bigger_hand(view: pb.View) -> None:
    view.players[1].hand_size += 1


def _higher_score(view: pb.View) -> None:
    view.players[1].score += 1


def _plus_one(name: str) -> _Change:
    def change(view: pb.View) -> None:
        setattr(view, name, getattr(view, name) + 1)

    return change


def _negated(name: str) -> _Change:
    def change(view: pb.View) -> None:
        setattr(view, name, not getattr(view, name))

    return change


def _another_phase(view: pb.View) -> None:
    view.phase = "claim" if view.phase != "claim" else "draw"


#: per field of Situation (the rule set aside: the caller gives it), a change of the
#: message in that field alone
CHANGES: dict[str, _Change] = {
    "round_number": _plus_one("round"),
    "seat": _other_seat,
    "phase": _another_phase,
    "hand": _one_card_less,
    "opened": _flip_opened(0),
    "table": _one_meld_less,
    "discard_top": _no_discard_top,
    "taken_from_discard": _taken,
    "seats": _plus_one("seats"),
    "current": _plus_one("current"),
    "hand_sizes": _bigger_hand,
    "opened_seats": _flip_opened(1),
    "scores": _higher_score,
    "discard_size": _plus_one("discard_size"),
    "stock_size": _plus_one("stock_size"),
    "laid_this_turn": _negated("laid_this_turn"),
    "exhaustions": _plus_one("exhaustions"),
    "turns_completed": _plus_one("turns_completed"),
}


def _a_state_with_melds_on_the_table() -> GameState:
    rng = random.Random(5)
    state = GameState.new_game(WHISKERTRAIL, 2, b"situation/melds")
    while not (state.table and state.discards and state.taken_from_discard is None):
        seat = state.to_act[0]
        state, _ = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
    return state


def test_every_field_is_read_from_the_message() -> None:
    """A view message changed in one field gives a situation changed in that field:
    ``from_pb`` reads every field from the message (none is a constant or taken from
    elsewhere), so the comparisons above compare what the message says."""
    assert set(CHANGES) == set(Situation._fields) - {"rules"}
    state = _a_state_with_melds_on_the_table()
    message = convert.view_to_pb(build_seat_view(state, 0), "g", state.action_count, 0.0)
    original = Situation.from_pb(message, state.rules)
    assert original == Situation.from_state(state, 0)
    for name, change in CHANGES.items():
        changed = pb.View()
        changed.CopyFrom(message)
        change(changed)
        assert changed != message, name
        assert getattr(Situation.from_pb(changed, state.rules), name) != getattr(original, name), (
            name
        )
