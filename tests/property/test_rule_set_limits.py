"""Any rule set the validator accepts plays to its end and stores (issue 14, defect 2).

Rule sets are drawn across (and past) the documented limits; a refused one must be
refused with InvalidActionError, an accepted one plays random games to the end with
every state storable (``services.codec.state_to_pb``: int32 scores, uint32 counts).
Turn caps stay small so each example is quick (the test is bounded to well under 30 s).
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from clients.bots.random_bot import RandomBot
from clients.turn import engine_turn
from engine.errors import InvalidActionError
from engine.game import GameState
from engine.rulesets import MAX_PENALTY, RuleSet
from glintwick import convert
from services import codec

#: actions per game before the test calls the game stuck (a round ends within its
#: turn cap, every turn takes a few actions)
MAX_ACTIONS = 20_000


#: a field pushed past its limit, in about one example in eight
BEYOND: dict[str, Any] = {
    "decks": 5,
    "jokers": 17,
    "max_players": 9,
    "joker_penalty": MAX_PENALTY + 1,
    "face_penalty": 4294967295,
    "min_naturals_per_meld": 4,
    "turn_cap": 0,
}


@st.composite
def rule_sets(draw: st.DrawFn) -> dict[str, Any]:
    penalty = st.integers(0, MAX_PENALTY)
    distinct = draw(st.booleans())
    set_max = 4 if distinct else draw(st.sampled_from([None, 4, 5, 8]))
    run_min = draw(st.integers(3, 5))
    contracts = []
    for i in range(draw(st.integers(1, 6))):
        melds: list[dict[str, Any]] = []
        for _ in range(draw(st.integers(1, 3))):
            kind = draw(st.sampled_from(["set", "run"]))
            low = 3 if kind == "set" else run_min
            high = (set_max or 6) if kind == "set" else 7
            melds.append({"kind": kind, "size": draw(st.integers(low, min(high, 6)))})
        required = sum(int(m["size"]) for m in melds)
        contracts.append(
            {
                "name": f"c{i}",
                "melds": melds,
                "deal": required + draw(st.integers(0, 3)),
                "discards": draw(st.booleans()),
            }
        )
    may_i = draw(st.booleans())
    max_players = draw(st.integers(2, 6))
    data = {
        "name": "drawn",
        "contracts": contracts,
        "jokers": draw(st.integers(0, 16)),
        "decks": draw(st.integers(2, 4)),
        "min_players": draw(st.integers(2, max_players)),
        "max_players": max_players,
        "exact_contract_sizes": draw(st.booleans()),
        "set_min": 3,
        "set_max": set_max,
        "set_distinct_suits": distinct,
        "run_min": run_min,
        "ace_high": draw(st.booleans()),
        "max_jokers_per_meld": draw(st.sampled_from([None, 0, 1, 2])),
        "min_naturals_per_meld": draw(st.integers(1, 3)),
        "joker_penalty": draw(penalty),
        "ace_penalty": draw(penalty),
        "face_penalty": draw(penalty),
        "draw_from_discard": not may_i,
        "initial_upcard": draw(st.booleans()),
        "explicit_contract": draw(st.booleans()),
        "layoff_jokers": draw(st.booleans()),
        "layoff_on_opening_turn": draw(st.booleans()),
        "extra_melds": draw(st.booleans()),
        "joker_swap": draw(st.booleans()),
        "may_i": may_i,
        "claim_penalty_cards": draw(st.integers(0, 3)),
        "stalemate": draw(st.sampled_from(["exhaustions", "dry"])),
        "max_exhaustions": draw(st.integers(1, 3)),
        "turn_cap": draw(st.integers(1, 12)),
    }
    if draw(st.integers(0, 7)) == 0:
        field = draw(st.sampled_from(sorted(BEYOND)))
        data[field] = BEYOND[field]
    return data


def play_and_store(rules: RuleSet, seats: int, seed: int) -> GameState:
    convert.rules_to_pb(rules)  # (the API's message takes it, as the store's does)
    rules_message = codec.stored_rules(rules)
    state = GameState.new_game(rules, seats, f"limits:{seed}".encode())
    rng = random.Random(seed)
    player = RandomBot(seed)
    codec.state_to_pb(state, rules_message)
    for _ in range(MAX_ACTIONS):
        if state.is_terminal():
            return state
        seat = state.to_act[0] if len(state.to_act) == 1 else rng.choice(state.to_act)
        state, _, _ = engine_turn(state, seat, player, rng)
        stored = codec.state_to_pb(state, rules_message)  # raises on an unstorable value
        assert list(stored.scores) == list(state.scores)
    raise AssertionError(f"{rules.name}: no end after {MAX_ACTIONS} actions")


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=rule_sets(), seed=st.integers(0, 2**16))
def test_every_accepted_rule_set_plays_to_the_end_and_stores(
    data: dict[str, Any], seed: int
) -> None:
    try:
        rules = RuleSet.from_dict(data)
    except InvalidActionError as refused:
        note(f"refused: {refused}")
        assert any(data[f] == v for f, v in BEYOND.items()) or "contract" in str(refused)
        return
    seats = random.Random(seed).randint(rules.min_players, rules.max_players)
    final = play_and_store(rules, seats, seed)
    assert all(0 <= score <= 2**31 - 1 for score in final.scores)


def test_the_largest_scores_the_limits_allow_still_store() -> None:
    """Every round at the top penalty, the most rounds, the biggest deck, no discards:
    the scores grow as fast as the limits let them, and still store."""
    contract = {
        "name": "hold",
        "melds": [{"kind": "run", "size": 13}] * 3,
        "deal": 40,
        "discards": False,
    }
    data = RuleSet.from_dict(
        {
            "name": "heaviest",
            "contracts": [contract] * 32,
            "jokers": 16,
            "decks": 4,
            "min_players": 2,
            "max_players": 2,
            "joker_penalty": MAX_PENALTY,
            "ace_penalty": MAX_PENALTY,
            "face_penalty": MAX_PENALTY,
            "turn_cap": 3,
        }
    )
    final = play_and_store(data, 2, 1)
    assert max(final.scores) > 32 * 40 * 10  # the penalties counted, and stored
