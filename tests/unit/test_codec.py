"""services.codec: a move rewrites only what it changed of the stored state, and
the result is the message a whole rewrite gives (hypothesis over random games)."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.game import GameState
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from glintwick import convert
from glintwick.v1 import storage_pb2 as spb
from services import codec
from tests.support import CUSTOM_MAYI, CUSTOM_MIX

ALL_RULES = (WHISKERTRAIL, CONTRACT, CUSTOM_MIX, CUSTOM_MAYI)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=st.sampled_from(ALL_RULES),
    data=st.data(),
    rng_seed=st.integers(0, 2**32 - 1),
    arranged=st.booleans(),
)
def test_updating_the_stored_state_move_by_move_equals_writing_it_whole(
    rules: RuleSet, data: st.DataObject, rng_seed: int, arranged: bool
) -> None:
    seats = data.draw(st.integers(rules.min_players, rules.max_players))
    rng = random.Random(rng_seed)
    orders = None
    if arranged:  # an explicit deck for round 1 (CreateGameFromDeck)
        deck = list(range(rules.deck_size))
        rng.shuffle(deck)
        orders = {1: deck}
    state = GameState.new_game(rules, seats, b"codec", stock_orders=orders)
    rules_message = convert.rules_to_pb(state.rules)
    # one message carried through the game, as the service carries its record
    carried = codec.state_to_pb(state, rules_message)
    for _ in range(data.draw(st.integers(1, 400))):
        if state.is_terminal():
            break
        seat = state.to_act[0]
        after, _ = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
        # from a fresh copy of the whole message, and along the carried one
        fresh = spb.EngineState()
        fresh.CopyFrom(codec.state_to_pb(state, rules_message))
        codec.update_state_pb(fresh, state, after)
        codec.update_state_pb(carried, state, after)
        whole = codec.state_to_pb(after, rules_message)
        assert fresh == whole
        assert carried == whole
        assert codec.state_from_pb(carried, state.rules) == after
        state = after


def test_an_unchanged_field_is_not_rewritten_and_a_changed_one_is() -> None:
    """The rewrite follows the engine's sharing: a field whose value is the same
    object is left alone (a stale message shows it), any other field is written."""
    state = GameState.new_game(WHISKERTRAIL, 2, b"codec")
    seat = state.to_act[0]
    after, _ = state.apply_action(seat, state.legal_actions(seat)[0])
    assert after.discards is state.discards or after.stock is state.stock
    message = codec.state_to_pb(state, convert.rules_to_pb(WHISKERTRAIL))
    del message.discards[:]  # a stale field the update has no reason to touch
    del message.stock[:]
    codec.update_state_pb(message, state, after)
    changed_stock = after.stock is not state.stock
    assert list(message.stock) == ([c.id for c in after.stock] if changed_stock else [])
    changed_discards = after.discards is not state.discards
    assert list(message.discards) == ([c.id for c in after.discards] if changed_discards else [])
